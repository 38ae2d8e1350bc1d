// The sidebar's controls (sidebar.py): every control of the layer, drawn from the server's items
// as native, labelled HTML controls, and each change sent back as an edit (the page links are
// nav.js's).
// Streamlit calls this function again after every run (new values, the edits it applied): the
// controls are kept and their values updated in place, so the one being used keeps the
// keyboard; they are drawn anew only when the set of controls changes (a padding kind, the
// axes), and the focus goes back to the control that had it.
// Edits are numbered in this tab; each one is sent with every edit the server has not applied
// yet (`acked`), so none is lost when two arrive while one run is under way.

window.__cvSidebar ||= { n: 0, pending: [], session: null, several: null, open: false };
const REG = window.__cvSidebar;

export default function ({ data: d, parentElement, setTriggerValue }) {
  // d: the items, the session and its last applied edit (sidebar.py's data, decoded once)
  if (REG.session !== d.session) REG.pending = []; // a new session: the old one's edits are its own
  REG.session = d.session;
  REG.n = Math.max(REG.n, d.acked); // a reloaded tab on the same session numbers on from there
  REG.pending = REG.pending.filter((e) => e.n > d.acked);
  REG.send = (f, v) => {
    REG.n += 1;
    REG.pending.push({ n: REG.n, f, v });
    setTriggerValue("edit", { session: d.session, edits: REG.pending });
  };
  const shape = JSON.stringify(d.items, (k, v) => (k === "v" || k === "open" ? undefined : v));
  // the component's shadow root: its focused control is its own activeElement, not the page's
  let root = parentElement.querySelector(".cv-sidebar");
  if (!root || root.dataset.shape !== shape) {
    const had = root ? focused(root)?.dataset.f : null;
    const fresh = el("div", { class: "cv-sidebar" }, d.items.map(build));
    fresh.dataset.shape = shape;
    if (root) root.replaceWith(fresh);
    else parentElement.append(fresh);
    root = fresh;
    if (had) root.querySelector(`[data-f="${had}"]`)?.focus({ preventScroll: true });
  }
  update(root, d.items);
}

function focused(root) {
  const active = root.getRootNode().activeElement;
  return active && root.contains(active) ? active : null;
}

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, v);
  for (const c of [].concat(children)) node.append(c);
  return node;
}

const id = (f) => `cv-side-${f}`;

// --- drawing -------------------------------------------------------------------------------------

function build(item) {
  const kind = {
    rule: () => el("hr"), heading: (i) => el("p", { class: "cv-heading" }, i.text),
    caption: (i) => el("p", { class: "cv-caption" }, i.text),
    row: (i) => el("div", { class: `cv-row${i.bottom ? " cv-bottom" : ""}` }, i.items.map(build)),
    group, toggle: flag, check: flag, select, number, slider, button,
  }[item.t];
  return kind(item);
}

function group(item) {
  const box = el("details", { class: "cv-group" }, [el("summary", {}, item.label), ...item.items.map(build)]);
  box.addEventListener("toggle", () => {
    REG.open = box.open;
  });
  return box;
}

// A label, and the help its "?" shows (also read out with the control).
function labelled(item, control, after = []) {
  const help = item.help
    ? [el("span", { class: "cv-help", title: item.help, "aria-hidden": "true" }, "?"),
       el("span", { id: `${id(item.f)}-help`, class: "cv-hidden" }, item.help)]
    : [];
  if (item.help) control.setAttribute("aria-describedby", `${id(item.f)}-help`);
  control.id = id(item.f);
  control.dataset.f = item.f;
  control.setAttribute("aria-label", item.label); // its name alone (a slider's label shows its value)
  return [el("label", { for: id(item.f) }, [el("span", {}, item.label), ...after]), ...help];
}

function flag(item) {
  const box = el("input", { type: "checkbox", role: item.t === "toggle" ? "switch" : null });
  box.addEventListener("change", () => REG.send(item.f, box.checked));
  return el("div", { class: `cv-${item.t}` }, [box, ...labelled(item, box)]);
}

function select(item) {
  const menu = el("select", {}, item.options.map(([value, word]) => el("option", { value }, word)));
  menu.addEventListener("change", () => REG.send(item.f, menu.value));
  return el("div", { class: "cv-field" }, [...labelled(item, menu), menu]);
}

// A number field: sent when typed and committed (Enter, leaving it) or stepped (its arrows);
// not overwritten by a run while it holds typing not yet sent.
function number(item) {
  const field = el("input", { type: "number", inputmode: "numeric", step: 1, min: item.min, max: item.max });
  const commit = () => {
    field.dataset.typing = "";
    const v = field.value.trim() === "" ? null : Number(field.value);
    if (v === field.sent) return;
    field.sent = v;
    REG.send(item.f, v);
  };
  field.addEventListener("input", (e) => {
    if (e.inputType) field.dataset.typing = "1"; // typed; an arrow's step has no input type
    else commit();
  });
  field.addEventListener("change", commit);
  field.addEventListener("keydown", (e) => e.key === "Enter" && commit());
  return el("div", { class: "cv-field" }, [...labelled(item, field), field]);
}

function slider(item) {
  const range = el("input", { type: "range", min: item.min, max: item.max, step: 1 });
  const shown = el("output", { for: id(item.f) });
  range.addEventListener("input", () => {
    shown.textContent = range.value;
  });
  range.addEventListener("change", () => REG.send(item.f, Number(range.value)));
  return el("div", { class: "cv-field cv-slider" }, [...labelled(item, range, [shown]), range]);
}

function button(item) {
  const press = el("button", { type: "button", title: item.help, "data-f": item.f }, item.label);
  press.addEventListener("click", () => REG.send(item.f, true));
  return press;
}

// --- the values of this run ---------------------------------------------------------------------

function update(root, items) {
  const all = [];
  const walk = (list) => {
    for (const item of list) {
      all.push(item);
      if (item.items) walk(item.items);
    }
  };
  walk(items);
  for (const item of all) {
    if (item.t === "group") {
      const box = root.querySelector("details.cv-group");
      if (REG.several !== item.open) REG.several = REG.open = item.open; // a count crossed 1
      if (box.open !== REG.open) box.open = REG.open;
    }
    if (!("v" in item)) continue;
    const control = root.querySelector(`[data-f="${item.f}"]`);
    if (item.t === "toggle" || item.t === "check") control.checked = Boolean(item.v);
    else if (item.t === "number") {
      if (control.dataset.typing && control === focused(root)) continue;
      control.value = item.v ?? "";
      control.sent = item.v;
    } else {
      control.value = String(item.v);
      if (item.t === "slider") control.parentElement.querySelector("output").textContent = item.v;
    }
  }
}
