// Reports the main column's width, the window's height and the page's rem (presentation mode
// grows it with the screen) when they differ from what the server sized the figures for, so
// figures fill the screen they are on (one rerun, not per frame).
// A report sent while the reader is switching pages would rerun the page being left (it carries
// that page's id) and undo the switch: after a click on a page link, or on a button to another
// page (Next, Back: a clicker presses them), or once the URL has left the page, it stays silent;
// the next page mounts its own reporter.
// Streamlit calls this function again when `data` changes (the size the server now assumes)
// without ending the call before: each call takes over from the last, whose listeners would
// otherwise go on comparing with the old size and report again after every resize (a second
// full rerun after nearly every change).
// Where Streamlit draws the main column and its page links: sent by the Python side
// (viewport.py: STREAMLIT), whose browser test checks they still match.
export default function ({ data, setStateValue }) {
  // data: viewport.py's `data`, handed on by the sidebar's component (sidebar.py, `_SCRIPT`)
  const { main: MAIN, links: PAGE_LINKS, leaves: LEAVES } = data.find;
  const here = location.pathname;
  window.__cvViewportGeneration = (window.__cvViewportGeneration || 0) + 1;
  const generation = window.__cvViewportGeneration;
  // not "fitted" until this call has measured: a page drawn for another size is not at rest
  document.body.dataset.cvViewport = "measuring";
  let timer = null;
  let leaving = false;
  const onClick = (event) => {
    // the sidebar's links are in a component's shadow root: the click's path reaches them
    const link = event.composedPath().find((node) => node.matches?.(PAGE_LINKS));
    if ((link && link.pathname !== here) || event.target.closest?.(LEAVES)) leaving = true;
  };
  const measure = () => {
    if (generation !== window.__cvViewportGeneration) return stop(); // a newer call took over
    if (leaving || location.pathname !== here) return;
    const main = document.querySelector(MAIN);
    if (!main) return;
    const css = getComputedStyle(main);
    const width = Math.round(
      main.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight),
    );
    const height = window.innerHeight;
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
    if (width < 200 || height < 200) return; // mid-navigation: nothing laid out yet
    const [w, h, r] = data.assumed;
    const fits = Math.abs(width - w) <= 16 && Math.abs(height - h) <= 16 && Math.abs(rem - r) < 0.5;
    document.body.dataset.cvViewport = fits ? "fitted" : "measuring"; // for tests and scripts
    if (!fits) setStateValue("viewport", [width, height, rem]);
  };
  const later = () => {
    // a resize seen and not yet measured: not at rest (a report, and its rerun, may follow)
    if (!leaving && location.pathname === here && generation === window.__cvViewportGeneration)
      document.body.dataset.cvViewport = "measuring";
    clearTimeout(timer);
    timer = setTimeout(measure, 250);
  };
  let seenWidth = null;
  const observer = new ResizeObserver((entries) => {
    const width = Math.round(entries[entries.length - 1].contentRect.width);
    if (width === seenWidth) return; // the column grew or shrank in height only: nothing to report
    seenWidth = width;
    later();
  });
  const main = document.querySelector(MAIN);
  if (main) observer.observe(main);
  window.addEventListener("resize", later);
  document.addEventListener("click", onClick, true);
  later();
  function stop() {
    clearTimeout(timer);
    observer.disconnect();
    window.removeEventListener("resize", later);
    document.removeEventListener("click", onClick, true);
  }
  return stop;
}
