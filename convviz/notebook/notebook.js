// convviz in a notebook's output (or a page saved from one): mounts a stage's plotly figure and the
// app's player (convviz/player, window.convvizPlayer) under it, from the view the Python side wrote
// (convviz/notebook/view.py: View.data). A classic script, defined once per page: every output
// that arrives before it waits in window.__convvizQueue and is mounted when it comes.
//
// The player's look stays inside its own shadow root (player.css would reach the notebook's own
// .label, .bar and .hint otherwise); its keys act only inside an output that has the keyboard
// (data-convviz-keys, the player's `within`): a click in the output gives it the keyboard.
(() => {
  if (window.convvizNotebook) return;
  let made = 0;
  const notebook = { css: "", config: {}, mount };
  window.convvizNotebook = notebook;

  function lines(box, said) {
    if (!box) return;
    box.replaceChildren(
      ...(said || []).map((line) => {
        const div = document.createElement("div");
        div.textContent = line;
        return div;
      }),
    );
  }

  function takeKeys(root, key) {
    if (root.dataset.cvKeys === key) return;
    root.dataset.cvKeys = key;
    root.setAttribute("data-convviz-keys", "");
    if (!root.hasAttribute("tabindex")) root.tabIndex = -1;
    const last = () => {
      if (window.__convviz) window.__convviz.last = root.dataset.cvKeys;
    };
    root.addEventListener("focusin", last);
    root.addEventListener("pointerdown", (event) => {
      last();
      // a click on the chart gives this output the keyboard (a button takes its own focus)
      if (!event.composedPath().some((n) => n.tagName === "BUTTON" || n.tagName === "INPUT")) {
        root.focus({ preventScroll: true });
      }
    });
  }

  // Mount (or, for a root already mounted, redraw in place) the view in `root`; resolves to the
  // player (null for a still).
  function mount(root, view) {
    const data = view || JSON.parse(root.querySelector("script.cv-view").textContent);
    const key = root.dataset.cvKey || `cvnb${++made}x${Math.floor(Math.random() * 1e6)}`;
    root.dataset.cvKey = key;
    for (const old of root.querySelectorAll(".cv-fallback")) old.remove();
    const box = root.querySelector(".cv-chart");
    box.dataset.cvChart = key;
    const plot = box.querySelector(".cv-plot");
    const { data: traces, layout, frames } = data.figure;
    const draw = plot.classList.contains("js-plotly-plot") ? window.Plotly.react : window.Plotly.newPlot;
    lines(root.querySelector(".cv-formula"), data.lines);
    return draw(plot, { data: traces, layout, frames, config: notebook.config }).then(() => {
      const host = root.querySelector(".cv-player");
      if (!data.player) {
        if (host.shadowRoot) host.shadowRoot.replaceChildren();
        return null;
      }
      const shadow = host.shadowRoot || host.attachShadow({ mode: "open" });
      const style = document.createElement("style");
      style.textContent = notebook.css;
      const inner = document.createElement("div");
      shadow.replaceChildren(style, inner);
      const said = { ...data.player, chart: key, find: `[data-cv-chart="${key}"]` };
      window.convvizPlayer({ parentElement: inner, data: said });
      takeKeys(root, key);
      const player = window.__convviz.players.get(key);
      if (data.step !== null && data.step !== undefined) player.show(data.step, false);
      return player;
    });
  }

  notebook.ready = () => {
    // the keyboard grids over every chart of the page (convviz/player/grid.js), once a page
    if (window.convvizGrids && notebook.gridWords) window.convvizGrids({ data: notebook.gridWords });
    const queue = window.__convvizQueue || [];
    window.__convvizQueue = [];
    for (const go of queue) go();
  };
})();
