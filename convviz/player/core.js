// The player's rules, as pure functions of the data the Python side sends (no DOM, no plotly):
// which action a key is, how a stage opens (the playback policy), which frame a step, a scrub or a
// click lands on, which cells a hovered cell links. player.js (the DOM and plotly half) and the
// offline lecture use them; `node --test tests/js` checks them. An ES module: the Python side
// inlines it before player.js (without its `export` words).

const TYPING_ROLES = /^(spinbutton|combobox|textbox|listbox)$/;
const CONTROL_INPUTS = /^(checkbox|radio|button|submit|reset|color|file)$/;
const TOGGLE_INPUTS = /^checkbox$/;
const TOGGLE_ROLES = /^(checkbox|switch)$/;

// What holds the keyboard: "text" (a field typed in: every key is its own), "grid" (a keyboard
// grid's cell: its arrows, Home/End and Enter move and select in it), "slider" (a control's
// arrows, Home/End and space are its own), "toggle" (a checkbox or switch reached with the
// keyboard, :focus-visible: its space toggles it), "control" (a toggle
// or button just clicked, or a player's scrub: the keys are the players', as they are the page's)
// or null (the page).
export function focusOf(el) {
  if (!el || !el.tagName || el.tagName === "BODY" || el.tagName === "HTML") return null;
  if (el.classList?.contains("scrub")) return "control"; // a player's own
  const role = (el.getAttribute && el.getAttribute("role")) || "";
  if (role === "gridcell") return "grid"; // a keyboard grid's cell: its keys are the grid's
  const toggle = (el.tagName === "INPUT" && TOGGLE_INPUTS.test(el.type)) || TOGGLE_ROLES.test(role);
  if (toggle && el.matches?.(":focus-visible")) return "toggle";
  if (el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable) return "text";
  if (el.tagName === "INPUT" && el.type === "range") return "slider";
  if (el.tagName === "INPUT" && !CONTROL_INPUTS.test(el.type)) return "text";
  if (TYPING_ROLES.test(role)) return "text";
  return role === "slider" ? "slider" : "control";
}

// The action of a key: keymap is {action: [key, ...]} (convviz.model.lecture.KEYS); null: not ours.
export function actionOf(key, keymap) {
  for (const [action, keys] of Object.entries(keymap || {})) {
    if (keys.includes(key)) return action;
  }
  return null;
}

// Actions a clicker sends, which move through the lecture even while a slider has the keyboard.
export const LECTURE_ACTIONS = new Set(["next", "back", "whole", "blank", "full", "leave"]);

// Whether the page takes a key from where the keyboard is: never from a field typed in; from a
// slider or a keyboard grid only a clicker's (its arrows, Home/End and space are its own; in a
// grid Escape leaves it, unless the screen is blank); from a toggle reached
// with the keyboard all but space (which toggles it).
export function takes(focus, action) {
  if (!action || focus === "text") return false;
  if (focus === "toggle") return action !== "play";
  return (focus !== "slider" && focus !== "grid") || LECTURE_ACTIONS.has(action);
}

// The playback policy, owned here and nowhere else: how a stage opens when it is entered (by the
// clicker, a stage button, a page link) and whether cells glide.
//   play: "auto" (a lecturer's default) or "stills" (the URL's play=); pres: presentation mode;
//   reduce: the reader's prefers-reduced-motion (or the page's own "no motion" switch).
// Reduced motion always wins: no autoplay, no gliding, the stage's result. Stills: the result.
// Otherwise the first frame, played once on a projector; a layer too big to play smoothly
// (`heavy`: its frames would keep the browser too busy to answer) is not played by itself.
export function arrival({ play, pres, reduce, heavy = false }) {
  if (reduce || play === "stills") return { frame: "last", autoplay: false, glide: !reduce };
  return { frame: "first", autoplay: Boolean(pres) && !heavy, glide: true };
}

// A motion's keyframes are where its scenes arrive; between them the window is on its way (half a
// cell across) and the formula names a cell not yet written: a pause or a released scrub settles
// on a keyframe, as a step does.
export function nearestKey(keyframes, i) {
  if (!keyframes || !keyframes.length) return i;
  return keyframes.reduce((best, k) => (Math.abs(k - i) < Math.abs(best - i) ? k : best));
}

export function nextKey(keyframes, i, count) {
  if (!keyframes || !keyframes.length) return i;
  return keyframes.find((k) => k >= i) ?? count - 1;
}

// Where ← (delta −1) or → (+1) lands: the next keyframe of a motion, the next frame of a sliding
// window; the ends stop it.
export function stepTarget(keyframes, cur, delta, count) {
  if (!keyframes || !keyframes.length) return Math.max(0, Math.min(count - 1, cur + delta));
  const to = delta > 0 ? keyframes.find((k) => k > cur) : keyframes.filter((k) => k < cur).pop();
  if (to !== undefined) return to;
  return delta > 0 ? count - 1 : 0;
}

// While playing without gliding (reduced motion), the frames shown: the keyframes only.
export function playOrder(keyframes, count, glide) {
  if (glide || !keyframes || !keyframes.length) return [...Array(count).keys()];
  return keyframes;
}

// The frame that computes output cell t (row-major) when frames keep steps `steps` (perhaps 1 in
// `sampled`): the last frame at or before it.
export function frameOfStep(steps, t) {
  let i = 0;
  while (i + 1 < steps.length && steps[i + 1] <= t) i++;
  return i;
}

// A formula's line cut into its terms, so that it breaks (when it must wrap) only before " + "
// and " = ", never mid-symbol ("∂L/" | "∂y").
export function terms(line) {
  return line.split(/ (?=[+=] )/);
}

// The outlines of the cells linked to panel `key`'s cell (r, c), from the relation the Python
// side computed (render/plotly/sweeps.py): [operand boxes, kernel boxes, output boxes], each
// box [r0, r1, c0, c1] in the panel's array indices; null when the cell links nothing.
export function linkedBoxes(link, key, r, c) {
  const [op, , out] = link.panels;
  if (key === out.key) {
    const t = r * out.shape[1] + c;
    const w = link.windows[t];
    if (!w) return null;
    return [[w], [[0, link.kernel[0] - 1, 0, link.kernel[1] - 1]], [[r, r, c, c]]];
  }
  if (key !== op.key || !link.readers) return null;
  const pairs = link.readers[r * op.shape[1] + c] || [];
  const taps = [], outs = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const [t, tap] = [pairs[i], pairs[i + 1]];
    outs.push([Math.floor(t / out.shape[1]), Math.floor(t / out.shape[1]), t % out.shape[1], t % out.shape[1]]);
    const [ti, tj] = [Math.floor(tap / link.kernel[1]), tap % link.kernel[1]];
    taps.push([ti, ti, tj, tj]);
  }
  return [[[r, r, c, c]], taps, outs];
}

// A box [r0, r1, c0, c1] as the corners of its outline on axes whose labels start at origin.
export function outline(box, origin) {
  const [r0, r1, c0, c1] = box;
  const [oy, ox] = origin;
  const x0 = c0 + ox - 0.5, x1 = c1 + ox + 0.5, y0 = r0 + oy - 0.5, y1 = r1 + oy + 0.5;
  return { x: [x0, x1, x1, x0, x0, null], y: [y0, y0, y1, y1, y0, null] };
}

// The state of each button of a stage bar while a motion plays through stages: "now" for the
// frame's stage, "done" for those it passed, "" else. order: the motion's stages in order;
// buttons: {stage: index of its button}; count: the bar's buttons.
export function barMarks(order, buttons, stage, count) {
  const at = order.indexOf(stage);
  const now = buttons[stage];
  return [...Array(count).keys()].map((i) => {
    if (i === now) return "now";
    return order.some((s, j) => j < at && buttons[s] === i) ? "done" : "";
  });
}

// A stepwise animation's frame (a sliding window, a run's steps: each frame redraws its grids) as
// one Plotly.update: {restyle, relayout, traces}. frame: {traces, data, layout}, as plotly's frames
// hold it. Each trace's entries become plotly's dotted paths ("textfont.color"; a typed array,
// {dtype, bdata}, is one value), each path's values one per trace (undefined: that trace keeps
// its own, as plotly's restyle reads it).
export function frameUpdate(frame) {
  const restyle = {};
  const n = frame.traces.length;
  const leaves = (entries, path, k) => {
    for (const [key, value] of Object.entries(entries)) {
      if (key === "type") continue;
      const at = path ? `${path}.${key}` : key;
      const nested = value && typeof value === "object" && !Array.isArray(value) && !("bdata" in value);
      if (nested) leaves(value, at, k);
      else {
        restyle[at] ??= new Array(n).fill(undefined);
        restyle[at][k] = value;
      }
    }
  };
  frame.data.forEach((entries, k) => {
    leaves(entries, "", k);
  });
  return { restyle, relayout: frame.layout || {}, traces: frame.traces };
}

// --- the announcer (one polite live region a page): what a step does, at a pace to follow ------

// ms to wait before a step may be said: none for the last step of a play (`final`) or once `gap`
// ms have passed since the last was said (last: when, or null); else until they have.
export function speakIn(now, last, final, gap = 500) {
  if (final || last === null || now - last >= gap) return 0;
  return gap - (now - last);
}

// Whether frame i is a step the announcer says (a keyframe of a motion, any frame of a sliding
// window), and which: [its number from 1, how many]; null for a frame on the way.
export function stepOf(keyframes, i, count) {
  if (!keyframes || !keyframes.length) return i >= 0 && i < count ? [i + 1, count] : null;
  const at = keyframes.indexOf(i);
  return at < 0 ? null : [at + 1, keyframes.length];
}

// A template of the Python side's words with its {names} filled in.
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (all, name) => (name in values ? String(values[name]) : all));
}

// --- keyboard grids (grid.js): a figure's grids walked cell by cell ------------------------------

// Where a key moves the keyboard's cell in a figure's grids (grids: [{h, w}] in reading order;
// at: {g, r, c}): an arrow one cell (left and right go on into the grid before or after, on the
// same row as far as it reaches), Home / End a row's ends, Ctrl+Home / Ctrl+End the first grid's
// first cell and the last grid's last; null when the key is not the grid's.
export function gridMove(grids, at, key, ctrl = false) {
  const { g, r, c } = at;
  const { h, w } = grids[g];
  const to = (gi, ri, ci) => ({ g: gi, r: Math.max(0, Math.min(grids[gi].h - 1, ri)), c: ci });
  if (ctrl && key === "Home") return { g: 0, r: 0, c: 0 };
  if (ctrl && key === "End") {
    const last = grids.length - 1;
    return { g: last, r: grids[last].h - 1, c: grids[last].w - 1 };
  }
  switch (key) {
    case "ArrowUp":
      return { g, r: Math.max(0, r - 1), c };
    case "ArrowDown":
      return { g, r: Math.min(h - 1, r + 1), c };
    case "ArrowLeft":
      if (c > 0) return { g, r, c: c - 1 };
      return g > 0 ? to(g - 1, r, grids[g - 1].w - 1) : { g, r, c };
    case "ArrowRight":
      if (c < w - 1) return { g, r, c: c + 1 };
      return g < grids.length - 1 ? to(g + 1, r, 0) : { g, r, c };
    case "Home":
      return { g, r, c: 0 };
    case "End":
      return { g, r, c: w - 1 };
    default:
      return null;
  }
}

// The sentence a grid's cell i (row-major) is named by: "∂L/∂x row 1, column 2: 14, the sum of 6
// products: 1 times 6 plus …". words: the Python side's ({cell, blank, minus, roles}); grid: its
// click markers' meta ({name, shape, origin, values (a list), roles?, sums?}).
export function cellSentence(words, grid, i) {
  const w = grid.shape[1];
  const [oy, ox] = grid.origin;
  const value = grid.values[i] === "" ? words.blank : grid.values[i];
  const index = (n) => (n < 0 ? `${words.minus || "-"}${-n}` : String(n));
  const [row, col] = [index(Math.floor(i / w) + oy), index((i % w) + ox)];
  let said = fill(words.cell, { name: grid.name, row, col, value });
  const role = grid.roles && words.roles[grid.roles[i]];
  if (role) said += `, ${role}`;
  const sum = grid.sums && grid.sums[i];
  if (sum) said += `, ${sum}`;
  return said;
}

// Cell (r, c)'s box in a chart's px, from its grid's plot area (the px box of its axes: x, y,
// width, height) and the axes' ranges (x left to right; y bottom to top, reversed: row 0 on top).
export function cellRect(area, xrange, yrange, origin, r, c) {
  const across = area.width / (xrange[1] - xrange[0]);
  const down = area.height / (yrange[0] - yrange[1]);
  return {
    left: area.x + (c + origin[1] - 0.5 - xrange[0]) * across,
    top: area.y + (r + origin[0] - 0.5 - yrange[1]) * down,
    width: across,
    height: down,
  };
}

// Rows of fields as CSV (RFC 4180): a field with a comma, a quote or a line break is quoted.
export function csv(rows) {
  const field = (v) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return `${rows.map((row) => row.map(field).join(",")).join("\r\n")}\r\n`;
}
