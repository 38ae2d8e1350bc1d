// Reports the main column's width and the window's height when they differ from what the
// server sized the figures for, so figures fill the screen they are on (one rerun, not per frame).
export default function ({ data, setStateValue }) {
  let timer = null;
  const measure = () => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (!main) return;
    const css = getComputedStyle(main);
    const width = Math.round(
      main.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight),
    );
    const height = window.innerHeight;
    if (width < 200 || height < 200) return; // mid-navigation: nothing laid out yet
    const [w, h] = data.assumed;
    const fits = Math.abs(width - w) <= 16 && Math.abs(height - h) <= 16;
    document.body.dataset.cvViewport = fits ? "fitted" : "measuring"; // for tests and scripts
    if (!fits) setStateValue("viewport", [width, height]);
  };
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(measure, 250);
  };
  const observer = new ResizeObserver(later);
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (main) observer.observe(main);
  window.addEventListener("resize", later);
  later();
  return () => {
    clearTimeout(timer);
    observer.disconnect();
    window.removeEventListener("resize", later);
  };
}
