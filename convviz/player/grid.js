// Keyboard grids (the ARIA grid pattern): every plotly figure whose click markers say their cells
// (meta.grid, convviz/render/plotly/grids.py: cell_meta) gets one Tab stop, a grid cell drawn
// over the chart; the arrow keys move it from cell to cell (on into the grid beside at a grid's
// edge), Home / End to a row's ends, Ctrl+Home / Ctrl+End to the first and the last cell; Enter
// selects the cell as a click does; Escape leaves. The cell's name is a sentence built from the
// figure's data and the Python side's words (`fill`, `cellSentence`). A mouse never focuses it
// (it lets the pointer through). Beside the grids, for the whole page: a link that skips to the
// main figure, the figures' long descriptions tied to them, a still stage's arrival said by the
// announcer, and each number table's CSV download, built here (no server widget per grid).
//
// One keyboard grid a chart lives just before plotly's own element, outside it, and is made again
// when the chart is drawn anew (Streamlit's reruns, a deck's stage); the cell the keyboard was
// on is kept per chart, and the focus comes back to it after a rerun that took it away.

function gridState() {
  return window.__convvizGrids;
}

function axisName(id) {
  // a trace's axis id ("x3") as its layout key ("xaxis3")
  return `${id[0]}axis${id.slice(1)}`;
}

function gridsOf(gd) {
  // the chart's grids: its click traces that say their cells, in the traces' order
  const out = [];
  (gd.data || []).forEach((t, index) => {
    const grid = t.meta && t.meta.grid;
    if (!grid || !Array.isArray(t.customdata)) return;
    const xa = t.xaxis || "x";
    const ya = t.yaxis || "y";
    const values = typeof grid.values === "string" ? grid.values.split("|") : grid.values;
    out.push({ ...grid, values, h: grid.shape[0], w: grid.shape[1], index, xa, ya, trace: t });
  });
  return out;
}

function cellBox(gd, grid, r, c) {
  // the cell's px box on the chart: its axes' plot area (the drag layer's rectangle of the
  // subplot, where plotly placed it) and their ranges
  const rect = gd.querySelector(`.draglayer .${grid.xa}${grid.ya} .nsewdrag`);
  const xaxis = gd.layout && gd.layout[axisName(grid.xa)];
  const yaxis = gd.layout && gd.layout[axisName(grid.ya)];
  if (!rect || !xaxis || !yaxis || !xaxis.range || !yaxis.range) return null;
  const area = {};
  for (const k of ["x", "y", "width", "height"]) area[k] = Number(rect.getAttribute(k));
  return cellRect(area, xaxis.range, yaxis.range, grid.origin, r, c);
}

function point(grid, at) {
  // the click marker of a cell, as plotly's events carry it
  const i = at.r * grid.w + at.c;
  const t = grid.trace;
  return {
    curveNumber: grid.index,
    pointNumber: i,
    pointIndex: i,
    x: at.c + grid.origin[1],
    y: at.r + grid.origin[0],
    customdata: t.customdata[i],
    data: t,
  };
}

function chartKey(gd) {
  // the chart's key: its host element's st-key-chart_… class (the app, the deck), else its id
  const host = gd.closest('[class*="st-key-chart_"]');
  const key = host && [...host.classList].find((c) => c.startsWith("st-key-chart_"));
  return key || gd.id || "chart";
}

function keyboardGrid(gd, reg) {
  // the keyboard grid of one chart (made once a chart; `update` follows its redraws)
  const key = chartKey(gd);
  const box = el("div", { role: "grid", class: "cv-grid", "data-testid": "keyboard-grid" });
  box.dataset.chart = key;
  let grids = [];
  let at = null;
  let cell = null;

  function sentence() {
    const grid = grids[at.g];
    return cellSentence(reg.words, grid, at.r * grid.w + at.c);
  }
  function place() {
    // the grid beside the chart at its top-left, the cell over its cell
    box.style.left = `${gd.offsetLeft}px`;
    box.style.top = `${gd.offsetTop}px`;
    const r = cellBox(gd, grids[at.g], at.r, at.c);
    if (!r || !cell) return;
    Object.assign(cell.style, {
      left: `${r.left}px`,
      top: `${r.top}px`,
      width: `${r.width}px`,
      height: `${r.height}px`,
    });
  }
  function draw(focus) {
    // the one cell the grid holds, made anew at each move: a new element focused is what a
    // screen reader announces
    const row = el("div", { role: "row", class: "cv-row" });
    const made = el("div", { role: "gridcell", tabindex: "0", class: "cv-cell" });
    made.setAttribute("aria-label", sentence());
    made.dataset.cell = grids[at.g].trace.customdata[at.r * grids[at.g].w + at.c].join(":");
    row.appendChild(made);
    const old = box.firstChild;
    box.appendChild(row);
    cell = made;
    place();
    if (focus) made.focus();
    if (old) old.remove();
    reg.kept.set(key, { ...at, name: grids[at.g].name });
    if (focus) hover();
  }
  function hover() {
    // the linked cells lit, as the pointer over the cell lights them (the player draws them)
    if (typeof gd.emit === "function") gd.emit("plotly_hover", { points: [point(grids[at.g], at)] });
  }
  function select() {
    // as a click on the cell: the player jumps to its frame, Streamlit selects its point
    const points = [point(grids[at.g], at)];
    gd.emit("plotly_click", { points });
    gd.emit("plotly_selected", { points });
  }
  box.addEventListener("keydown", (event) => {
    if (event.altKey || event.metaKey) return;
    if (event.key === "Enter") {
      event.preventDefault();
      select();
      return;
    }
    if (event.key === "Escape") {
      event.preventDefault();
      reg.focused = null;
      cell.blur();
      return;
    }
    const to = gridMove(grids, at, event.key, event.ctrlKey);
    if (!to) return;
    event.preventDefault();
    event.stopPropagation();
    at = to;
    draw(true);
  });
  box.addEventListener("focusin", () => {
    reg.focused = key;
  });
  box.addEventListener("focusout", (event) => {
    if (box.contains(event.relatedTarget)) return; // the next cell
    if (event.relatedTarget) reg.focused = null; // left for another element (not removed)
    if (typeof gd.emit === "function") gd.emit("plotly_unhover", {});
  });

  function update() {
    // the chart drawn (anew): its grids, the cell kept where it was (or where the figure opens)
    grids = gridsOf(gd);
    if (!grids.length) return box.remove();
    const kept = reg.kept.get(key);
    const g = kept ? grids.findIndex((x) => x.name === kept.name) : -1;
    if (g >= 0) at = { g, r: Math.min(kept.r, grids[g].h - 1), c: Math.min(kept.c, grids[g].w - 1) };
    else {
      const opens = grids.findIndex((x) => x.start);
      at = opens >= 0 ? { g: opens, r: grids[opens].start[0], c: grids[opens].start[1] } : { g: grids.length - 1, r: 0, c: 0 };
    }
    box.setAttribute("aria-label", fill(reg.words.grid, { figure: figureName(gd) }));
    // before the chart: the figure's first Tab stop (plotly's toolbar buttons come after it)
    if (!box.isConnected) gd.insertAdjacentElement("beforebegin", box);
    const had = cell && document.activeElement === cell;
    const lost = reg.focused === key && document.activeElement === document.body;
    draw(had || lost);
  }
  function focus() {
    if (!cell) return;
    cell.focus();
    hover();
  }
  return { gd, box, update, place, focus, data: null, layout: null };
}

function figureName(gd) {
  // what the chart's figure is called (its short text alternative), for the grid's own name
  const figure = gd.closest('[role="figure"]');
  return (figure && figure.getAttribute("aria-label")) || "Figure";
}

// --- the page: its charts' grids, the skip link, descriptions, arrivals, CSV downloads ----------

function scan(reg) {
  // every drawn chart has its keyboard grid, following its redraws (a new data or layout: a
  // rerun's Plotly.react); the rest of the page's parts
  for (const gd of reg.charts.keys()) if (!gd.isConnected) reg.charts.delete(gd);
  for (const gd of document.querySelectorAll(".js-plotly-plot")) {
    if (!gd.querySelector(".main-svg") || !gd.data) continue;
    let grid = reg.charts.get(gd);
    if (!grid) {
      grid = keyboardGrid(gd, reg);
      reg.charts.set(gd, grid);
    }
    if (grid.data !== gd.data || grid.layout !== gd.layout || !grid.box.isConnected) {
      grid.data = gd.data;
      grid.layout = gd.layout;
      grid.update();
    } else if (reg.focused === grid.box.dataset.chart) grid.place();
  }
  skipLink(reg);
  describe();
  arrive(reg);
}

function skipLink(reg) {
  // the first Tab stop of the page: a link to the main figure's keyboard grid
  if (document.getElementById("cv-skip")) return;
  const link = el("a", { id: "cv-skip", href: "#", class: "cv-skip" }, reg.words.skip);
  link.addEventListener("click", (event) => {
    event.preventDefault();
    const main = mainGrid(reg);
    if (main) main.focus();
  });
  document.body.insertBefore(link, document.body.firstChild);
}

function mainGrid(reg) {
  // the page's main figure (its primary player's chart), else its first shown chart with a grid
  // (a deck's other stages are hidden)
  const players = window.__convviz ? [...window.__convviz.players.values()] : [];
  const primary = players.find((p) => p.primary);
  const shown = (g) => (g.gd.checkVisibility ? g.gd.checkVisibility({ visibilityProperty: true }) : true);
  const grids = [...reg.charts.values()].filter((g) => g.box.isConnected && shown(g));
  return (primary && grids.find((g) => g.box.dataset.chart === `st-key-${primary.chart}`)) || grids[0];
}

function describe() {
  // a stage's long description (data-cv-describes: the chart it describes) tied to its figure
  for (const said of document.querySelectorAll("[data-cv-describes]")) {
    const chart = said.dataset.cvDescribes;
    const figure = document.querySelector(`.st-key-${chart} [role="figure"], .st-key-${chart}[role="figure"]`);
    if (!said.id) said.id = `cv-described-${chart}`;
    if (figure && figure.getAttribute("aria-describedby") !== said.id) {
      figure.setAttribute("aria-describedby", said.id);
    }
  }
}

function arrive(reg) {
  // a still stage reached (it has no player to say it): what it did, once; not the stage a page
  // opened on (a screen reader reads a page as it opens: reg.arrived null), but one reached from
  // another stage (a still one's words, or "" for an animated one: its player said it)
  const stage = document.querySelector("[data-cv-arrive]");
  const words = stage && stage.dataset.cvArrive;
  if (!words) {
    const players = window.__convviz ? [...window.__convviz.players.values()] : [];
    if (players.some((p) => p.primary)) reg.arrived = "";
    return;
  }
  if (words === reg.arrived) return;
  if (reg.arrived !== null) announce(words);
  reg.arrived = words;
}

function onCsv(event) {
  // a number table's CSV: its row and column names and each cell's full-precision number
  const button = event.composedPath().find((n) => n.dataset && "cvCsv" in n.dataset);
  if (!button) return;
  const table = button.closest(".cv-table").querySelector("table");
  const rows = [...table.rows].map((row) =>
    [...row.cells].map((c) => (c.dataset.v === undefined ? c.textContent.trim() : c.dataset.v)),
  );
  const url = URL.createObjectURL(new Blob([csv(rows)], { type: "text/csv" }));
  const link = el("a", { href: url, download: button.dataset.cvCsv });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function installGrids(words) {
  // once a page: the registry, its observer and the CSV buttons' listener
  if (gridState()) {
    gridState().words = words;
    return gridState();
  }
  const reg = { words, charts: new Map(), kept: new Map(), focused: null, arrived: null };
  window.__convvizGrids = reg;
  announcer();
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      scan(reg);
    });
  }).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", () => scan(reg));
  document.addEventListener("click", onCsv);
  // a pointer's press: the keyboard is not in a grid (a rerun it asks for gives no focus back)
  document.addEventListener("mousedown", () => {
    reg.focused = null;
  }, true);
  scan(reg);
  return reg;
}

export default function (component) {
  const { data } = component;
  const words = ArrayBuffer.isView(data) ? JSON.parse(new TextDecoder().decode(data)) : data;
  installGrids(words);
}
