// The sidebar's page links (sidebar.py: `page_links`): one element, not a Streamlit page link
// each. Each link carries this view's query (a link opened in a new tab shows the same layer);
// a plain click switches pages inside the app, as Streamlit's own links do: the address changes
// and Streamlit follows it (its back and forward handling). A click that opens a new tab or
// window is the browser's. The link of the page shown is marked (aria-current).
const ICON = { class: "cv-nav-icon", "aria-hidden": "true" };

function el(tag, attrs, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

function mark(root) {
  for (const a of root.querySelectorAll("a[data-cv-page]")) {
    if (a.pathname === location.pathname) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

function go(event) {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  const link = event.currentTarget;
  if (link.pathname === location.pathname) return;
  history.pushState(null, "", link.href);
  window.dispatchEvent(new PopStateEvent("popstate"));
  mark(link.closest("nav"));
}

export default function ({ data: sent, parentElement }) {
  // JSON bytes (sidebar.py, `page_links`), or handed on decoded by the sidebar's component
  const data = ArrayBuffer.isView(sent) ? JSON.parse(new TextDecoder().decode(sent)) : sent;
  let root = parentElement.querySelector(".cv-nav-root"); // beside the component's own style
  if (!root) {
    root = el("div", { class: "cv-nav-root" });
    parentElement.append(root);
  }
  const query = data.query ? `?${data.query}` : "";
  const links = data.pages.map((p) => {
    // relative to the page shown: every page is one step under the app's address
    const a = el("a", { href: `./${p.path}${query}`, "data-cv-page": p.path },
      [el("span", ICON, [p.icon]), el("span", {}, [p.label])]);
    a.addEventListener("click", go);
    return el("li", {}, [a]);
  });
  // the sidebar's name, or a section's heading (the Overview's "Where next")
  const title = data.heading
    ? el("h2", { class: "cv-nav-heading" }, [data.title])
    : el("p", { class: "cv-nav-title" }, [data.title]);
  const nav = el("nav", data.heading ? { class: "cv-nav cv-nav-section", "aria-label": data.title }
    : { class: "cv-nav", "aria-label": "Pages" },
    [title, el("ul", {}, links)]);
  root.replaceChildren(nav);
  mark(nav);
  const onPop = () => mark(nav);
  window.addEventListener("popstate", onPop);
  return () => window.removeEventListener("popstate", onPop);
}
