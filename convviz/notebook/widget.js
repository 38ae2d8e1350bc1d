// convviz.Widget's browser half (anywidget): the stage the kernel sends (_view) mounted by
// notebook.js with the app's player, redrawn in place when the kernel sends another; the frame the
// player rests on sent back as `step`, a clicked cell as `selected`, `formula` written under it.
// plotly.js is asked of the kernel once a page (a custom message) rather than sent with every
// widget. Python prepends the player and notebook.js (convviz/notebook/widget.py).

function plotlyReady(model) {
  if (window.Plotly) return Promise.resolve();
  if (!window.__convvizPlotly) {
    window.__convvizPlotly = new Promise((resolve) => {
      model.on("msg:custom", (msg, buffers) => {
        if (msg.kind !== "plotly" || window.Plotly) return resolve();
        const script = document.createElement("script");
        script.textContent = new TextDecoder().decode(buffers[0]);
        document.head.appendChild(script);
        resolve();
      });
      model.send({ kind: "plotly" });
    });
  }
  return window.__convvizPlotly;
}

// the chart is a figure named by the stage's short description and described by the long one
// under it ("In words"), as convviz.show's output is (page.py: fragment)
const SHELL = `<p class="cv-heading"></p><p class="cv-caption"></p><p class="cv-note"></p>
<div class="cv-chart" role="figure"><div class="cv-plot"></div></div><div class="cv-player"></div>
<div class="cv-formula"></div><div class="cv-selected" data-testid="widget-formula"></div>
<details class="cv-words"><summary>In words</summary><p class="cv-long"></p></details>`;
let widgets = 0; // each widget's long description has an id of its own on the page

function words(root, view, formula) {
  const put = (cls, text) => {
    root.querySelector(cls).textContent = text || "";
  };
  put(".cv-heading", view.heading);
  put(".cv-caption", view.caption);
  put(".cv-note", view.note);
  put(".cv-selected", formula);
  put(".cv-long", view.long);
  root.querySelector(".cv-chart").setAttribute("aria-label", view.short || view.heading || "");
}

async function render({ model, el }) {
  await plotlyReady(model);
  const root = document.createElement("div");
  root.className = "convviz-nb";
  root.innerHTML = `<style>${window.convvizNotebook.style}</style>${SHELL}`;
  widgets += 1;
  const long = `cv-widget-long-${widgets}`;
  root.querySelector(".cv-long").id = long;
  root.querySelector(".cv-chart").setAttribute("aria-describedby", long);
  el.appendChild(root);
  let player = null;
  const host = root.querySelector(".cv-player");
  // the frame the player rests on (not every frame it plays) is the kernel's `step`
  const rest = new MutationObserver(() => {
    const at = host.shadowRoot?.querySelector(".player");
    if (!at || at.dataset.playing) return;
    const frame = Number(at.dataset.frame);
    if (frame !== model.get("step")) {
      model.set("step", frame);
      model.save_changes();
    }
  });
  const draw = async () => {
    const view = model.get("_view");
    words(root, view, model.get("formula"));
    player = await window.convvizNotebook.mount(root, view);
    rest.disconnect();
    if (host.shadowRoot) {
      rest.observe(host.shadowRoot, { subtree: true, attributes: true, childList: true });
    }
    root.dataset.cvDrawn = String((Number(root.dataset.cvDrawn) || 0) + 1); // tests wait on it
  };
  await draw();
  // a click on a cell: the kernel reads it (w.selected) and writes its sum (w.formula)
  root.querySelector(".cv-plot").on("plotly_click", (event) => {
    const cd = event.points?.[0]?.customdata;
    if (!cd || cd.length < 3) return;
    model.set("selected", [String(cd[0]), Number(cd[1]), Number(cd[2])]);
    model.save_changes();
  });
  const onView = () => draw();
  const onStep = () => {
    const step = model.get("step");
    if (player && step !== null && player.current() !== step) player.show(step, false);
  };
  const onFormula = () => words(root, model.get("_view"), model.get("formula"));
  model.on("change:_view", onView);
  model.on("change:step", onStep);
  model.on("change:formula", onFormula);
  return () => {
    rest.disconnect();
    model.off("change:_view", onView);
    model.off("change:step", onStep);
    model.off("change:formula", onFormula);
  };
}

export default { render };
