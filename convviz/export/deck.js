// The offline lecture's deck: one stage per screen, the stage bar and counter, the way back and on.
// The keys are the player's (player.js presses #deck-next / #deck-back and the bar's buttons);
// this moves the deck, shows the stage bar's group of the stage's page, tells a stage's player it
// has arrived (it opens as the playback policy says), and zooms the deck (drawn for the screen its
// data-width × data-height says) to the window, as the app grows its page with the screen.
(() => {
  const deck = document.getElementById("deck");
  const stages = [...document.querySelectorAll("section.stage")];
  const bar = [...document.querySelectorAll("#deck-head .stage-button")];
  const width = Number(deck.dataset.width);
  const height = Number(deck.dataset.height);
  // a stage that plays through others (the whole pass): its button again goes back
  const covers = (i) => stages[i] && "covers" in stages[i].dataset;
  const counter = document.getElementById("deck-counter");
  let at = -1;
  let left = 0; // the stage the whole pass was entered from
  const player = (i) => {
    const chart = stages[i] && stages[i].dataset.chart;
    return chart && window.__convviz ? window.__convviz.players.get(chart) : null;
  };
  function go(i) {
    if (i < 0 || i >= stages.length || i === at) return false;
    const was = player(at);
    if (was) was.pause();
    if (!covers(i)) left = i;
    at = i;
    for (const [j, s] of stages.entries()) s.classList.toggle("shown", j === i);
    bar.forEach((b, j) => {
      b.dataset.cvNow = j === i ? "1" : "";
    });
    for (const g of document.querySelectorAll("#deck-head .group")) {
      g.classList.toggle("now", g.contains(bar[i]));
    }
    counter.textContent = `${i + 1} / ${stages.length}`;
    document.body.dataset.stage = String(i);
    const now = player(i);
    if (now) now.arrive();
    history.replaceState(null, "", `#${i + 1}`);
    return true;
  }
  document.getElementById("deck-next").addEventListener("click", () => go(at + 1));
  document.getElementById("deck-back").addEventListener("click", () => go(at - 1));
  for (const [j, b] of bar.entries()) {
    b.addEventListener("click", () => {
      // the whole pass's button again: back to the stage it was entered from
      if (j === at && covers(j)) go(left);
      else go(j);
    });
  }
  function fit() {
    const scale = Math.min(window.innerWidth / width, window.innerHeight / height);
    deck.style.transform = `scale(${scale})`;
    deck.style.marginLeft = `${Math.max(0, (window.innerWidth - width * scale) / 2)}px`;
  }
  window.addEventListener("resize", fit);
  fit();
  go(Math.max(0, Math.min(stages.length - 1, Number(location.hash.slice(1)) - 1 || 0)));
})();
