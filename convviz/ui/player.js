// The player of one animated plotly chart: step / play / pause / scrub / speed, the formula of the
// frame shown, keyboard control and hover linking, all in the browser (no server round trip).
// The chart is found by its Streamlit key; its frames are driven with plotly's own animate.

const TYPING_ROLES = /^(spinbutton|combobox|textbox|listbox)$/;
const CONTROL_INPUTS = /^(checkbox|radio|button|submit|reset|color|file)$/;

function registry() {
  // one keyboard listener per page, shared by every player on it
  if (!window.__convviz) {
    window.__convviz = { players: new Map(), last: null };
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("click", onStageButton, true);
  }
  return window.__convviz;
}

function focusOf(event) {
  // what holds the keyboard: "text" (a field typed in: every key is its own), "slider" (a
  // control's arrows, Home/End and space are its own), "control" (a toggle or button just
  // clicked, or a player's scrub: the keys are the players', as they are the page's) or null
  const el = event.composedPath ? event.composedPath()[0] : event.target;
  if (!el || !el.tagName || el === document.body) return null;
  if (el.classList.contains("scrub")) return "control"; // a player's own
  const role = (el.getAttribute && el.getAttribute("role")) || "";
  if (el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable) return "text";
  if (el.tagName === "INPUT" && el.type === "range") return "slider";
  if (el.tagName === "INPUT" && !CONTROL_INPUTS.test(el.type)) return "text";
  if (TYPING_ROLES.test(role)) return "text";
  return role === "slider" ? "slider" : "control";
}

function clickButton(key) {
  // a stage button of the storyboard, else the page button (nav_next / nav_next_page)
  const button = document.querySelector(`.st-key-${key} button, .st-key-${key}_page button`);
  if (button && !button.disabled) button.click();
  return Boolean(button);
}

function stagedPlayer(reg) {
  // the page's motion through stages (the whole backward pass), if it plays one
  return [...reg.players.values()].find((p) => p.primary && p.stages);
}

function onStageButton(event) {
  // the storyboard's Back / Next while the whole pass plays: its previous / next stage, as
  // PageUp / PageDown; past its ends the click goes on to the server (the pages around)
  const button = event.target.closest && event.target.closest(".st-key-nav_back, .st-key-nav_next");
  const staged = button && stagedPlayer(window.__convviz);
  if (staged && staged.stage(button.matches(".st-key-nav_next") ? 1 : -1)) {
    event.preventDefault();
    event.stopPropagation();
  }
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const focus = focusOf(event);
  const next = { n: 1, PageDown: 1, p: -1, PageUp: -1 }[event.key];
  if (focus === "text" || (focus === "slider" && !next)) return;
  const taken = () => {
    event.preventDefault();
    event.stopPropagation();
    // a toggle or button clicked a moment ago lets go of the keyboard: the next keys are the
    // page's too (and space does not flip the toggle)
    if (focus && document.activeElement && document.activeElement.blur) document.activeElement.blur();
  };
  const reg = window.__convviz;
  const staged = stagedPlayer(reg);
  if (next && staged) {
    // a motion through stages (the whole backward pass) is one story: the next stage of the same
    // animation, and past its ends the pages around it (not a stage of the storyboard alone)
    const page = next > 0 ? "end_next_page" : "end_back_page";
    if (staged.stage(next) || clickButton(page)) return taken();
  }
  // n / p; PageDown / PageUp are the page buttons' own shortcuts, which Streamlit does not
  // take while a control has the keyboard
  if (next && (event.key.length === 1 || focus)) {
    if (clickButton(next > 0 ? "nav_next" : "nav_back")) taken();
    return;
  }
  const player = reg.players.get(reg.last) || [...reg.players.values()].find((p) => p.primary);
  if (!player) return;
  const actions = {
    ArrowRight: () => player.step(1),
    ArrowLeft: () => player.step(-1),
    " ": () => player.toggle(),
    Home: () => player.show(0),
    End: () => player.show(player.count - 1),
  };
  if (actions[event.key]) {
    taken();
    actions[event.key]();
  }
}

// Accessibility hook (issue 31), for the playback policy to take over: the reader's
// prefers-reduced-motion, or the app's "Reduce motion" (still=1, sent as d.reduced and kept on
// <html data-cv-motion="none"> for any script to read): no gliding, play steps keyframe to
// keyframe, nothing plays by itself.
function reduceMotion(d) {
  if (d && "reduced" in d) document.documentElement.dataset.cvMotion = d.reduced ? "none" : "";
  const media = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)");
  return Boolean(media && media.matches) || document.documentElement.dataset.cvMotion === "none";
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
  if (text) node.textContent = text;
  return node;
}

// A formula's line, broken (when it must wrap) only before its " + " and " = ": each term in an
// unbreakable span ("∂L/" | "∂y" and "x[n=0," | "c=0]" broke mid-symbol); the text is unchanged.
function formulaLine(line) {
  const div = el("div");
  line.split(/ (?=[+=] )/).forEach((term, i) => {
    if (i) div.append(" ");
    div.append(el("span", { class: "term" }, term));
  });
  return div;
}

// --- hover linking: outlines on the cells linked to the one under the pointer ------------------

function box(r0, r1, c0, c1, origin) {
  const [oy, ox] = origin;
  const x0 = c0 + ox - 0.5, x1 = c1 + ox + 0.5, y0 = r0 + oy - 0.5, y1 = r1 + oy + 0.5;
  return { x: [x0, x1, x1, x0, x0, null], y: [y0, y0, y1, y1, y0, null] };
}

function boxes(cells, origin) {
  const out = { x: [], y: [] };
  cells.forEach(([r, c]) => {
    const b = box(r, r, c, c, origin);
    out.x.push(...b.x);
    out.y.push(...b.y);
  });
  return out;
}

function linked(link, key, r, c) {
  // [operand cells, kernel taps, output cells] linked to panel `key`'s cell (r, c)
  const [op, kern, out] = link.panels;
  const [dh, dw] = link.dilation, [kh, kw] = link.kernel;
  if (key === out.key) {
    const t = r * out.shape[1] + c;
    const r0 = link.r0[t], c0 = link.c0[t];
    return [
      [box(r0, r0 + dh * (kh - 1), c0, c0 + dw * (kw - 1), op.origin)],
      [box(0, kh - 1, 0, kw - 1, kern.origin)],
      [box(r, r, c, c, out.origin)],
    ];
  }
  if (key !== op.key) return null;
  const outs = [], taps = [];
  for (let t = 0; t < link.r0.length; t++) {
    const i = (r - link.r0[t]) / dh, j = (c - link.c0[t]) / dw;
    if (Number.isInteger(i) && Number.isInteger(j) && i >= 0 && i < kh && j >= 0 && j < kw) {
      outs.push([Math.floor(t / out.shape[1]), t % out.shape[1]]);
      taps.push([i, j]);
    }
  }
  return [[box(r, r, c, c, op.origin)], [boxes(taps, kern.origin)], [boxes(outs, out.origin)]];
}

function drawLinks(gd, link, shapes) {
  const xs = shapes.map((s) => s.flatMap((b) => b.x));
  const ys = shapes.map((s) => s.flatMap((b) => b.y));
  window.Plotly.restyle(gd, { x: xs, y: ys }, link.traces);
}

// --- where a motion is: the page's stage bar, or a strip of the stages in the player -------------

// the stage now in the theme's accent (white on it 5.3:1; on the value scale's orange, 2.9:1)
const NOW = {
  background: "var(--cv-a11y-accent)", color: "var(--cv-a11y-on-accent)",
  "border-color": "var(--cv-a11y-accent)",
};
const DONE = { background: "#fdf2e7" };

function paint(button, style) {
  ["background", "color", "border-color"].forEach((k) => button.style.removeProperty(k));
  Object.entries(style).forEach(([k, v]) => button.style.setProperty(k, v, "important"));
}

function stageIndicator(d, reg) {
  // d.stages: the motion's stages in order; d.follow: {key, buttons: stage → button index} of the
  // page's stage bar (a Streamlit segmented control) that the frames light up
  const order = d.stages || [];
  const none = { order, strip: null, mark: () => {}, clear: () => {} };
  if (order.length < 2) return none;
  const bar = () =>
    d.follow ? [...document.querySelectorAll(`.st-key-${d.follow.key} button`)] : [];
  let strip = null, chips = [];
  if (!d.follow) {
    strip = el("div", { class: "stages", "data-testid": "player-stages" });
    chips = order.map((s, i) => {
      const b = el("button", { type: "button", title: `go to ${s}` }, s);
      b.addEventListener("click", () => reg.players.get(d.chart).show(d.labels.indexOf(s)));
      strip.appendChild(b);
      if (i < order.length - 1) strip.appendChild(el("span", { class: "arrow" }, "→"));
      return b;
    });
  }
  let marked = null;
  const mark = (stage) => {
    const at = order.indexOf(stage);
    chips.forEach((c, i) => {
      c.className = i === at ? "now" : i < at ? "done" : "";
      c.dataset.cvStage = i === at ? "now" : i < at ? "done" : "";
    });
    const buttons = bar();
    if (!buttons.length) return;
    const now = d.follow.buttons[stage];
    const key = `${stage}|${buttons.length}`;
    if (marked === key && buttons[now] && buttons[now].dataset.cvStage === "now") return;
    buttons.forEach((b, i) => {
      const done = order.some((s, j) => j < at && d.follow.buttons[s] === i);
      const state = i === now ? "now" : done ? "done" : "";
      b.dataset.cvStage = state;
      paint(b, state === "now" ? NOW : state === "done" ? DONE : {});
    });
    marked = key;
  };
  const clear = () => bar().forEach((b) => {
    b.dataset.cvStage = "";
    paint(b, {});
  });
  return { order, strip, mark, clear };
}

// --- the player ------------------------------------------------------------------------------------

export default function (component) {
  const { parentElement, data } = component;
  const reg = registry();
  // the app sends JSON bytes (see player.py); the exported HTML passes the object itself
  const d = ArrayBuffer.isView(data) ? JSON.parse(new TextDecoder().decode(data)) : data;
  const count = d.names.length;
  let cur = d.active, timer = null, speed = 1, gdBound = null;
  // the frame plotly has finished drawing (-1 while one is on its way): tests wait on it
  let shown = d.active;
  reduceMotion(d);

  const chart = () => document.querySelector(`.st-key-${d.chart} .js-plotly-plot`);
  const root = el("div", { class: `player${d.pres ? " pres" : ""}`, "data-testid": "player" });
  root.dataset.chart = d.chart;
  const bar = el("div", { class: "bar" });
  const button = (label, title, fn, cls = "") => {
    const b = el("button", { type: "button", title, class: cls }, label);
    b.addEventListener("click", () => {
      reg.last = d.chart;
      fn();
    });
    bar.appendChild(b);
    return b;
  };
  button("|◀", "First step (Home)", () => show(0));
  button("◀", "Previous step (←)", () => step(-1));
  const playButton = button("▶ Play", "Play / pause (space)", () => toggle(), "play");
  button("▶", "Next step (→)", () => step(1));
  button("▶|", "Last step (End)", () => show(count - 1));
  const speeds = el("span", { class: "speeds" });
  d.speeds.forEach((s) => {
    const b = el("button", { type: "button", class: s === 1 ? "on" : "", title: `${s}× speed` }, `${s}×`);
    b.addEventListener("click", () => {
      speed = s;
      speeds.querySelectorAll("button").forEach((x) => x.classList.toggle("on", x === b));
      if (timer) start();
    });
    speeds.appendChild(b);
  });
  bar.appendChild(speeds);
  const scrub = el("input", {
    type: "range", min: 0, max: count - 1, step: 1, "aria-label": "step", class: "scrub",
  });
  scrub.value = cur;
  const onScrub = (event) => {
    const frame = Number(scrub.value); // read before stop() redraws the bar
    reg.last = d.chart;
    stop();
    // a motion glides under the dragging hand; let go, it settles on the nearest keyframe
    show(event.type === "change" ? nearestKey(frame) : frame);
  };
  scrub.addEventListener("input", onScrub);
  scrub.addEventListener("change", onScrub);
  bar.appendChild(scrub);
  const label = el("span", { class: "label", "data-testid": "player-label" });
  bar.appendChild(label);
  if (d.hint) bar.appendChild(el("span", { class: "hint", title: d.hint }, d.hint));
  root.appendChild(bar);
  const stages = stageIndicator(d, reg);
  if (stages.strip) root.appendChild(stages.strip);
  const caption = el("div", { class: "caption", "data-testid": "player-formula" });
  root.appendChild(caption);
  parentElement.querySelectorAll(".player").forEach((old) => old.remove());
  parentElement.appendChild(root);

  function render() {
    scrub.value = cur;
    const sampled = d.sampled > 1 ? ` (1 step in ${d.sampled} shown)` : "";
    label.textContent = `step ${cur + 1}/${count}${sampled} → ${d.prefix}${d.labels[cur]}${d.suffix}`;
    caption.replaceChildren(...(d.captions[cur] || []).map(formulaLine));
    playButton.textContent = timer ? "❚❚ Pause" : "▶ Play";
    stages.mark(d.labels[cur]);
  }

  function show(i) {
    cur = Math.max(0, Math.min(count - 1, i));
    const gd = chart();
    if (gd && window.Plotly && gd._fullLayout) {
      const name = d.names[cur], target = cur;
      let drawn;
      shown = -1;
      if (d.smooth && !reduceMotion()) {
        // a motion: its markers glide to the frame (a redraw per frame costs ~5× more); the
        // frame's layout (the stage bar) is applied after, as a transition leaves it out
        const ms = Math.min(d.frame_ms / speed, 400);
        drawn = window.Plotly.animate(gd, [name], {
          mode: "immediate",
          frame: { duration: ms, redraw: false },
          transition: { duration: ms * 0.9, easing: "linear" },
        }).then(() => {
          const frame = gd._transitionData && gd._transitionData._frameHash[name];
          if (frame && frame.layout && Object.keys(frame.layout).length) {
            return window.Plotly.relayout(gd, frame.layout);
          }
        });
      } else {
        drawn = window.Plotly.animate(gd, [name], {
          mode: "immediate",
          frame: { duration: 0, redraw: true },
          transition: { duration: 0 },
        });
      }
      drawn.then(() => {
        if (cur === target) shown = target;
      }, () => {}); // interrupted by the next frame: that one applies its own
    }
    render();
  }
  // a motion's keyframes (d.keys) are where its scenes arrive; between them the window is on
  // its way (half a cell across) and the formula names a cell not yet written: a pause or a
  // released scrub settles on a keyframe, as a step does
  function nearestKey(i) {
    const keys = d.keys || [];
    if (!keys.length) return i;
    return keys.reduce((best, k) => (Math.abs(k - i) < Math.abs(best - i) ? k : best));
  }
  function nextKey(i) {
    const keys = d.keys || [];
    return keys.length ? (keys.find((k) => k >= i) ?? count - 1) : i;
  }
  function step(delta) {
    // a motion steps from keyframe to keyframe (d.keys); a sliding window, frame by frame
    stop();
    const keys = d.keys || [];
    if (!keys.length) return show(cur + delta);
    const to = delta > 0 ? keys.find((k) => k > cur) : keys.filter((k) => k < cur).pop();
    show(to === undefined ? (delta > 0 ? count - 1 : 0) : to);
  }
  function start() {
    clearInterval(timer);
    timer = setInterval(() => {
      if (!root.isConnected) return retire();
      if (cur >= count - 1) return stop();
      show(reduceMotion() ? nextKey(cur + 1) : cur + 1); // reduced: keyframe to keyframe
    }, (reduceMotion() && d.keys && d.keys.length ? 8 : 1) * d.frame_ms / speed);
    render();
  }
  function stop() {
    clearInterval(timer);
    timer = null;
    render();
  }
  function toggle() {
    if (timer) {
      stop();
      if (nextKey(cur) !== cur) show(nextKey(cur)); // the scene on its way arrives
      return;
    }
    if (cur >= count - 1) show(0); // from the start when the result is on screen
    start();
  }

  // hover linking, once the chart is drawn (it may be drawn after this player)
  const onHover = (ev) => {
    const point = ev.points && ev.points[0];
    const cd = point && point.customdata;
    if (!cd) return;
    const shapes = linked(d.link, cd[0], cd[1], cd[2]);
    if (shapes) drawLinks(gdBound, d.link, shapes);
  };
  const onUnhover = () => drawLinks(gdBound, d.link, [[], [], []]);
  // a click on a result cell shows its frame and formula at once (the server's rerun for the
  // selection follows); frames are in raster order of the result, perhaps 1 in `sampled`
  const onClick = (ev) => {
    const cd = ev.points && ev.points[0] && ev.points[0].customdata;
    const out = d.link.panels[2];
    if (!cd || cd[0] !== out.key) return;
    const t = cd[1] * out.shape[1] + cd[2];
    let i = 0;
    while (i + 1 < count && d.steps[i + 1] <= t) i++;
    reg.last = d.chart;
    stop();
    show(i);
  };
  // (again whenever Streamlit draws the chart into a new element, e.g. after a resize; and at
  // once when a press starts, so a click just after a redraw is not left to the server)
  const bindChart = () => {
    const gd = chart();
    if (!d.link || !gd || gd === gdBound || !gd._fullLayout || !gd.on) return;
    gdBound = gd;
    gd.on("plotly_hover", onHover);
    gd.on("plotly_unhover", onUnhover);
    gd.on("plotly_click", onClick);
  };
  const bind = setInterval(() => {
    if (!root.isConnected) return retire(); // a rerun drew a new player in its place
    stages.mark(d.labels[cur]); // the page's stage bar may have been drawn anew
    bindChart();
  }, 100);
  document.addEventListener("pointerdown", bindChart, { capture: true });

  function stage(delta) {
    // the first frame of the next (previous) stage; false past the ends
    const at = stages.order.indexOf(d.labels[cur]);
    const want = stages.order[at + delta];
    if (at < 0 || want === undefined) return false;
    stop();
    show(d.labels.indexOf(want));
    return true;
  }
  const self = {
    primary: d.primary, count, show, step, toggle, stage, current: () => cur, chart: d.chart,
    stages: stages.order.length > 1, reduced: reduceMotion, // autoplay asks this first
    shown: () => shown, // the frame on the chart, drawn: the tests' "settled" (tests/live.py)
  };
  reg.players.set(d.chart, self);
  render();
  function retire() {
    // stop for good: without this a replaced player's timers would go on driving the chart and
    // lighting the stage bar with its own (stale) frame
    clearInterval(timer);
    clearInterval(bind);
    document.removeEventListener("pointerdown", bindChart, { capture: true });
    timer = null;
    if (reg.players.get(d.chart) === self) {
      // gone without a successor: leave the page's stage bar as the server drew it
      reg.players.delete(d.chart);
      stages.clear();
    }
  }
  return () => {
    retire();
    if (gdBound && gdBound.removeListener) {
      gdBound.removeListener("plotly_hover", onHover);
      gdBound.removeListener("plotly_unhover", onUnhover);
      gdBound.removeListener("plotly_click", onClick);
    }
  };
}
