// The player of one animated plotly chart: step / play / pause / scrub / speed, the formula of the
// frame shown, the keys of a clicker and hover linking, all in the browser (no server round trip).
//
// Everything it knows comes from the data the Python side sends (convviz/ui/player.py): the
// frames' names, keyframes and cells, the captions, the key names, the buttons the clicker
// presses, the element to find its chart in, the playback policy's inputs. It talks to plotly
// through its public API (Plotly.animate, Plotly.restyle, gd.on) and follows the chart across
// Streamlit's redraws with a MutationObserver. Its rules are core.js's, its page helpers dom.js's
// (both inlined before it). Each step it shows is said by the page's announcer (dom.js), once,
// at a pace a listener can follow; a stage entered says what it did with its first step.

function registry() {
  // one keyboard listener and one blank screen per page, shared by every player on it
  if (!window.__convviz) {
    // kept: per chart, where its last player was ({cur, playing, active}), for the next one
    window.__convviz = { players: new Map(), kept: new Map(), last: null, shown: null, lecture: null };
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("click", onLectureClick, true);
  }
  return window.__convviz;
}

// The accessibility hook (issue 31): a reader's prefers-reduced-motion, or the app's "Reduce
// motion" (still=1, sent as d.reduced and kept on <html data-cv-motion="none"> for any script to
// read and set) stops autoplay and gliding (the playback policy, player_core.arrival).
function reduceMotion(d) {
  if (d && "reduced" in d) document.documentElement.dataset.cvMotion = d.reduced ? "none" : "";
  const media = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)");
  return Boolean(media && media.matches) || document.documentElement.dataset.cvMotion === "none";
}

function formulaLine(line) {
  const div = el("div");
  terms(line).forEach((term, i) => {
    if (i) div.append(" ");
    div.append(el("span", { class: "term" }, term));
  });
  return div;
}

// --- the lecture's keys: the clicker, the blank screen, full screen ----------------------------

function press(selector, index = 0) {
  const buttons = selector ? [...document.querySelectorAll(selector)] : [];
  const button = buttons[index];
  if (button && !button.disabled) button.click();
  return Boolean(button);
}

function blank(on) {
  // a black screen over everything, as slide software's B / . (again, or Esc, to come back)
  let cover = document.getElementById("cv-blank");
  if (on === undefined) on = !cover;
  if (on && !cover) {
    cover = el("div", { id: "cv-blank", "data-testid": "blank-screen" });
    document.body.appendChild(cover);
  } else if (!on && cover) cover.remove();
  return on;
}

function fullScreen() {
  if (document.fullscreenElement) return document.exitFullscreen?.();
  return document.documentElement.requestFullscreen?.().catch(() => {});
}

// A stage entered through the lecture (its keys, Back / Next, the stage bar) opens as the playback
// policy says; a page opened otherwise (a link, a reload, the sidebar) on a laptop opens as the
// server drew it (a selected cell's frame, or the result).
function entering(pressed) {
  if (pressed) window.__convviz.entering = true;
  return pressed;
}

function onLectureClick(event) {
  const lecture = window.__convviz.lecture;
  if (!lecture || !event.target.closest) return;
  const { next, back, bar } = lecture.buttons;
  if ([next, back, bar].some((sel) => sel && event.target.closest(sel))) entering(true);
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const reg = window.__convviz;
  const lecture = reg.lecture;
  if (!lecture) return;
  const path = event.composedPath ? event.composedPath() : [event.target];
  const target = path[0];
  // a host that shares the page (a notebook) keeps its keys outside the element it names
  if (lecture.within && !path.some((node) => node.matches?.(lecture.within))) return;
  const action = actionOf(event.key, lecture.keymap);
  if (!takes(focusOf(target), action)) return;
  const taken = () => {
    event.preventDefault();
    event.stopPropagation();
    // a toggle or button clicked a moment ago lets go of the keyboard: the next keys are the
    // page's too (and space does not press it again)
    const held = document.activeElement;
    if (held && held !== document.body && held.blur) held.blur();
  };
  if (document.getElementById("cv-blank")) {
    // a blank screen: the blank key or Esc brings the page back; nothing else moves behind it
    if (action !== "full") {
      if (action === "blank" || action === "leave") blank(false);
      if (action !== "leave") taken();
      return;
    }
  }
  const { buttons } = lecture;
  const doing = {
    next: () => entering(press(buttons.next)),
    back: () => entering(press(buttons.back)),
    blank: () => blank(true),
    full: () => fullScreen(),
    whole: () => lecture.whole && entering(press(buttons.bar, lecture.whole.toggle)),
  };
  if (doing[action]) {
    if (doing[action]() !== false) taken();
    return;
  }
  const player = reg.players.get(reg.last) || [...reg.players.values()].find((p) => p.primary);
  if (!player) return;
  const acts = {
    forth: () => player.step(1),
    backstep: () => player.step(-1),
    play: () => player.toggle(),
    first: () => player.show(0),
    last: () => player.show(player.count - 1),
  };
  if (acts[action]) {
    taken();
    acts[action]();
  }
}

// --- where a motion is: the page's stage bar, or a strip of the stages in the player -------------

function stageIndicator(d, reg) {
  // d.stages: the motion's stages in order; d.follow: {stage: index of its button} of the page's
  // stage bar (a Streamlit segmented control, d.buttons.bar) that the frames light up
  const order = d.stages || [];
  const none = { order, strip: null, mark: () => {}, clear: () => {} };
  if (order.length < 2) return none;
  const bar = () => (d.follow ? [...document.querySelectorAll(d.buttons.bar)] : []);
  let strip = null;
  let chips = [];
  if (!d.follow && d.strip !== false) {
    strip = el("div", { class: "stages", "data-testid": "player-stages" });
    chips = order.map((s, i) => {
      const b = el("button", { type: "button", title: `go to ${s}` }, s);
      b.addEventListener("click", () => reg.players.get(d.chart).show(d.labels.indexOf(s)));
      strip.appendChild(b);
      if (i < order.length - 1) strip.appendChild(el("span", { class: "arrow" }, "→"));
      return b;
    });
  }
  const mark = (stage) => {
    const at = order.indexOf(stage);
    chips.forEach((c, i) => {
      c.className = i === at ? "now" : i < at ? "done" : "";
      c.dataset.cvStage = c.className;
    });
    const buttons = bar();
    if (!buttons.length) return;
    barMarks(order, d.follow, stage, buttons.length).forEach((state, i) => {
      if (buttons[i].dataset.cvStage !== state) buttons[i].dataset.cvStage = state;
    });
  };
  const clear = () =>
    bar().forEach((b) => {
      b.dataset.cvStage = "";
    });
  return { order, strip, mark, clear };
}

// --- the player ------------------------------------------------------------------------------------

export default function (component) {
  const { parentElement, data } = component;
  const reg = registry();
  // the app sends JSON bytes (see player.py); the offline lecture passes the object itself
  const d = ArrayBuffer.isView(data) ? JSON.parse(new TextDecoder().decode(data)) : data;
  reg.lecture = { keymap: d.keymap, buttons: d.buttons, whole: d.whole, within: d.within };
  reduceMotion(d);
  const count = d.names.length;
  // the frames' names: a new layer (a stride, a size) draws other frames, opened as the server drew them
  const frames = d.names.join("\n");
  // entered (a new stage on screen) or drawn again (a rerun, a resize: where it was, playing on)
  const entered = d.primary && reg.shown !== d.stage;
  if (d.primary) reg.shown = d.stage;
  const before = reg.players.get(d.chart);
  if (before) before.retire();
  const kept = entered ? null : reg.kept.get(d.chart);
  let cur = d.active;
  // the frame plotly has finished drawing (-1 while one is on its way): tests wait on it
  let shown = d.active;
  let timer = null;
  let speed = 1;
  let gd = null;
  // the announcer: the frame last said (what is on screen as the page opens needs no words),
  // when, a step waiting for its turn, and a stage's arrival said with its first step
  let said = kept ? kept.said : cur;
  let saidAt = null;
  let saying = null;
  let arriving = "";

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
      for (const x of speeds.querySelectorAll("button")) x.classList.toggle("on", x === b);
      if (timer) start();
    });
    speeds.appendChild(b);
  });
  bar.appendChild(speeds);
  const scrub = el("input", {
    type: "range",
    min: 0,
    max: count - 1,
    step: 1,
    "aria-label": "step",
    class: "scrub",
  });
  scrub.value = cur;
  const onScrub = (event) => {
    const frame = Number(scrub.value); // read before stop() redraws the bar
    reg.last = d.chart;
    stop();
    // a motion glides under the dragging hand; let go, it settles on the nearest keyframe (and
    // is said: while dragging, at the announcer's pace)
    const done = event.type === "change";
    show(done ? nearestKey(d.keys, frame) : frame, true, done);
  };
  scrub.addEventListener("input", onScrub);
  scrub.addEventListener("change", onScrub);
  bar.appendChild(scrub);
  const label = el("span", { class: "label", "data-testid": "player-label" });
  bar.appendChild(label);
  if (d.hint) bar.appendChild(el("span", { class: "hint", title: d.hint_all || d.hint }, d.hint));
  root.appendChild(bar);
  const stages = stageIndicator(d, reg);
  if (stages.strip) root.appendChild(stages.strip);
  const caption = el("div", { class: "caption", "data-testid": "player-formula" });
  root.appendChild(caption);
  for (const old of parentElement.querySelectorAll(".player")) old.remove();
  parentElement.appendChild(root);

  function render() {
    scrub.value = cur;
    const sampled = d.sampled > 1 ? ` (1 step in ${d.sampled} shown)` : "";
    // on a projector shorter ("27/28 · " and the stage), so the bar keeps one row
    const at = d.pres ? `${cur + 1}/${count}${sampled} · ` : `step ${cur + 1}/${count}${sampled} → `;
    label.textContent = `${at}${d.prefix}${d.labels[cur]}${d.suffix}`;
    scrub.setAttribute("aria-valuetext", label.textContent);
    caption.replaceChildren(...(d.captions[cur] || []).map(formulaLine));
    playButton.textContent = timer ? "❚❚ Pause" : "▶ Play";
    root.dataset.frame = String(cur);
    root.dataset.playing = timer ? "1" : "";
    reg.kept.set(d.chart, { cur, playing: Boolean(timer), selection: d.selection, frames, said });
    stages.mark(d.labels[cur]);
  }

  function draw(glide) {
    if (!gd || !window.Plotly) return;
    const target = cur;
    shown = -1;
    drawn(target, glide).then(
      () => {
        if (cur === target) shown = target;
      },
      () => {}, // interrupted by the next frame: that one says when it is drawn
    );
  }

  function drawn(i, glide) {
    // a stepwise animation (a sliding window, a run's steps) redraws its grids each frame: one
    // update, drawn in this task (d.frames, sent to the player, not to plotly). Plotly's animate
    // would run it as a transition, which replots the scatter traces alone and drops the heatmaps
    // until a redraw a timer later: the blank grids a slow laptop paints in between.
    if (d.frames) {
      const { restyle, relayout, traces } = frameUpdate(d.frames[i]);
      return window.Plotly.update(gd, restyle, relayout, traces);
    }
    // a motion: its markers glide to the frame (no redraw); reduced motion, a jump
    const ms = glide && !reduceMotion() ? Math.min(d.frame_ms / speed, 400) : 0;
    return window.Plotly.animate(gd, [d.names[i]], {
      mode: "immediate",
      frame: { duration: ms, redraw: false },
      transition: { duration: ms * 0.9, easing: "linear" },
    });
  }

  function show(i, glide = true, final = !timer) {
    cur = Math.max(0, Math.min(count - 1, i));
    draw(glide);
    render();
    say(cur, final || cur === count - 1);
  }
  function stepWords(i) {
    const [n, of] = stepOf(d.keys, i, count);
    const what = (d.says && d.says[i]) || `${d.prefix}${d.labels[i]}${d.suffix}`;
    return fill(d.words.step, { step: n, count: of, said: what });
  }
  function say(i, final) {
    // a step said once, never a frame on the way; while playing fast, at most one each 0.5 s
    // (player_core.speakIn), the last always
    clearTimeout(saying);
    saying = null;
    if (i === said || !stepOf(d.keys, i, count) || !d.words) return;
    const speak = () => {
      saying = null;
      said = i;
      saidAt = performance.now();
      announce(arriving ? `${arriving} ${stepWords(i)}` : stepWords(i));
      arriving = "";
      render();
    };
    const wait = speakIn(performance.now(), saidAt, final);
    if (wait) saying = setTimeout(speak, wait);
    else speak();
  }
  function step(delta) {
    stop();
    show(stepTarget(d.keys, cur, delta, count));
  }
  function start() {
    // play on from here, frame by frame (reduced motion: keyframe by keyframe, no gliding)
    clearInterval(timer);
    const glide = !reduceMotion();
    const order = playOrder(d.keys, count, glide);
    const ms = glide ? d.frame_ms : Math.max(d.frame_ms * 6, 700);
    timer = setInterval(() => {
      if (!root.isConnected) return retire();
      const next = order.find((f) => f > cur);
      if (next === undefined) return stop();
      show(next, glide);
    }, ms / speed);
    render();
  }
  function stop() {
    clearInterval(timer);
    timer = null;
    render();
    if (saying) say(cur, true); // paused: where it stopped is said now
  }
  function toggle() {
    if (timer) {
      stop();
      const key = nextKey(d.keys, cur, count);
      if (key !== cur) show(key); // the scene on its way arrives
      return;
    }
    if (cur >= count - 1) show(0, false); // from the start when the result is on screen
    start();
  }

  // hover linking: outlines on the cells linked to the one under the pointer (the relation is the
  // Python side's, `d.link`)
  const drawLinks = (boxes) => {
    const shapes = boxes.map((list, i) => list.map((b) => outline(b, d.link.panels[i].origin)));
    const xs = shapes.map((s) => s.flatMap((o) => o.x));
    const ys = shapes.map((s) => s.flatMap((o) => o.y));
    window.Plotly.restyle(gd, { x: xs, y: ys }, d.link.traces);
  };
  const onHover = (ev) => {
    const cd = ev.points && ev.points[0] && ev.points[0].customdata;
    const boxes = cd && linkedBoxes(d.link, cd[0], cd[1], cd[2]);
    if (boxes) drawLinks(boxes);
  };
  const onUnhover = () => drawLinks([[], [], []]);
  // a click on a result cell shows its frame and formula at once (the server's rerun for the
  // selection follows)
  const onClick = (ev) => {
    const cd = ev.points && ev.points[0] && ev.points[0].customdata;
    const out = d.link.panels[2];
    if (!cd || cd[0] !== out.key) return;
    reg.last = d.chart;
    stop();
    show(frameOfStep(d.steps, cd[1] * out.shape[1] + cd[2]));
  };

  let opened = false;
  function open() {
    // the chart is drawn: the stage opens as the policy says, once
    opened = true;
    if (kept && kept.selection === d.selection && kept.frames === frames) {
      // drawn again (a resize, presentation mode switched): where the last player was, playing
      // on; a new selection or a new layer opens where the server drew it
      if (kept.cur !== d.active) show(kept.cur, false);
      else render(); // the chart is drawn on that frame: a redraw would only cost
      cur = kept.cur;
      if (kept.playing) start();
      return;
    }
    if (!entered) return render(); // as the server drew it
    if (reg.entering || d.pres) return arrive(); // through the lecture, or on a projector
    render(); // a laptop's page as the server opened it
  }
  function arrive() {
    // a stage entered: it opens as the playback policy says (player_core.arrival)
    reg.last = d.chart;
    reg.entering = false;
    const now = arrival({ play: d.play, pres: d.pres, reduce: reduceMotion(), heavy: d.heavy });
    stop();
    said = -1; // the stage's first frame is said, with what the stage did
    arriving = d.arrived || "";
    show(now.frame === "first" ? 0 : count - 1, false);
    if (now.autoplay && count > 1) start();
  }
  const bindChart = () => {
    const box = document.querySelector(d.find);
    const found = box && box.querySelector(".js-plotly-plot");
    // drawn: plotly's event API and its SVG are in place
    if (!found || found === gd || typeof found.on !== "function" || !found.querySelector(".main-svg")) {
      stages.mark(d.labels[cur]); // the page's stage bar may have been drawn anew
      return;
    }
    gd = found;
    if (d.link) {
      gd.on("plotly_hover", onHover);
      gd.on("plotly_unhover", onUnhover);
      gd.on("plotly_click", onClick);
    }
    if (!opened) open();
    else if (cur !== d.active) show(cur, false); // drawn anew on its base frame: back to ours
    else render();
  };
  let queued = false;
  const observer = new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      if (!root.isConnected) return retire();
      bindChart();
    });
  });
  observer.observe(document.body, { childList: true, subtree: true });

  const self = {
    primary: d.primary,
    count,
    show,
    step,
    toggle,
    chart: d.chart,
    current: () => cur,
    playing: () => Boolean(timer),
    shown: () => shown, // the frame on the chart, drawn: the tests' "settled" (tests/live.py)
    reduced: reduceMotion, // autoplay asks this first
    arrive,
    pause: () => stop(),
  };
  reg.players.set(d.chart, self);
  render();
  bindChart();
  function retire() {
    // stop for good: a replaced player's timer would go on driving the chart
    clearInterval(timer);
    clearTimeout(saying);
    timer = null;
    observer.disconnect();
    if (reg.players.get(d.chart) === self) {
      // gone without a successor: leave the page's stage bar as the server drew it
      reg.players.delete(d.chart);
      stages.clear();
    }
  }
  self.retire = retire;
  return () => {
    retire();
    if (gd && gd.removeListener) {
      gd.removeListener("plotly_hover", onHover);
      gd.removeListener("plotly_unhover", onUnhover);
      gd.removeListener("plotly_click", onClick);
    }
  };
}
