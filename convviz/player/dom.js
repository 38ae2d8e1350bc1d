// What the player (player.js) and the keyboard grids (grid.js) share of the page: an element
// made (`el`) and the page's one announcer.

// biome-ignore lint/correctness/noUnusedVariables: player.js and grid.js, inlined after it, call it
function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

// The page's one announcer: a polite live region (role status) that a screen reader reads out
// when its text changes, shared by every player and keyboard grid on the page. It is made once,
// visually hidden (styled inline: a host's stylesheet may not reach it), before anything is said
// in it, so that the first words are heard too.
function announcer() {
  let region = document.getElementById("cv-announcer");
  if (!region) {
    region = document.createElement("div");
    region.id = "cv-announcer";
    region.className = "cv-sr";
    region.setAttribute("role", "status");
    region.setAttribute("aria-live", "polite");
    region.setAttribute("aria-atomic", "true");
    region.dataset.testid = "announcer";
    region.style.cssText =
      "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;" +
      "clip-path:inset(50%);white-space:nowrap;border:0";
    document.body.appendChild(region);
  }
  return region;
}

// biome-ignore lint/correctness/noUnusedVariables: player.js and grid.js, inlined after it, call it
function announce(text) {
  if (text) announcer().textContent = text;
}
