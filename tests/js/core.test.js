// The player's rules (convviz/player/core.js), with the data the Python side sends.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  actionOf,
  arrival,
  barMarks,
  focusOf,
  frameOfStep,
  frameUpdate,
  linkedBoxes,
  nearestKey,
  nextKey,
  outline,
  playOrder,
  stepTarget,
  takes,
  terms,
} from "../../convviz/player/core.js";

const KEYMAP = { next: ["PageDown", "n"], back: ["PageUp", "p"], blank: ["b", "."], play: [" "] };

test("one playback policy: reduced motion always wins, stills open on the result", () => {
  assert.deepEqual(arrival({ play: "auto", pres: true, reduce: false }), {
    frame: "first",
    autoplay: true,
    glide: true,
  });
  assert.equal(arrival({ play: "auto", pres: false, reduce: false }).autoplay, false);
  assert.equal(arrival({ play: "auto", pres: true, reduce: false, heavy: true }).autoplay, false);
  for (const play of ["auto", "stills"]) {
    const reduced = arrival({ play, pres: true, reduce: true });
    assert.deepEqual(reduced, { frame: "last", autoplay: false, glide: false });
  }
  assert.deepEqual(arrival({ play: "stills", pres: true, reduce: false }), {
    frame: "last",
    autoplay: false,
    glide: true,
  });
});

test("a key is an action of the sent key map; a clicker's keys pass a slider, never a field", () => {
  assert.equal(actionOf("PageDown", KEYMAP), "next");
  assert.equal(actionOf(".", KEYMAP), "blank");
  assert.equal(actionOf("x", KEYMAP), null);
  assert.equal(takes("text", "next"), false);
  assert.equal(takes("slider", "next"), true);
  assert.equal(takes("slider", "play"), false);
  assert.equal(takes(null, "play"), true);
  assert.equal(takes(null, null), false);
  assert.equal(takes("toggle", "play"), false); // space toggles a checkbox Tabbed to
  assert.equal(takes("toggle", "next"), true);
  assert.equal(takes("toggle", "forth"), true); // ← → are not a checkbox's
});

test("where the keyboard is", () => {
  const el = (tagName, extra = {}) => ({
    tagName,
    getAttribute: (name) => extra[name] ?? null,
    classList: { contains: (c) => (extra.class || "").split(" ").includes(c) },
    ...extra,
  });
  assert.equal(focusOf(el("BODY")), null);
  assert.equal(focusOf(el("INPUT", { type: "text" })), "text");
  assert.equal(focusOf(el("INPUT", { type: "range" })), "slider");
  assert.equal(focusOf(el("INPUT", { type: "range", class: "scrub" })), "control");
  assert.equal(focusOf(el("BUTTON")), "control");
  assert.equal(focusOf(el("DIV", { role: "combobox" })), "text");
  assert.equal(focusOf(null), null);
  // a checkbox or switch: its own space when reached with the keyboard, the page's when clicked
  const keyboard = { matches: (q) => q === ":focus-visible" };
  const clicked = { matches: () => false };
  assert.equal(focusOf(el("INPUT", { type: "checkbox", ...keyboard })), "toggle");
  assert.equal(focusOf(el("INPUT", { type: "checkbox", ...clicked })), "control");
  assert.equal(focusOf(el("BUTTON", { role: "switch", ...keyboard })), "toggle");
  assert.equal(focusOf(el("BUTTON", keyboard)), "control");
});

test("a motion steps and settles on keyframes; a sliding window frame by frame", () => {
  const keys = [0, 8, 16, 20];
  assert.equal(stepTarget(keys, 0, 1, 21), 8);
  assert.equal(stepTarget(keys, 9, -1, 21), 8);
  assert.equal(stepTarget(keys, 20, 1, 21), 20);
  assert.equal(stepTarget(keys, 0, -1, 21), 0);
  assert.equal(stepTarget([], 3, 1, 5), 4);
  assert.equal(stepTarget([], 4, 1, 5), 4);
  assert.equal(nearestKey(keys, 11), 8);
  assert.equal(nearestKey(keys, 13), 16);
  assert.equal(nextKey(keys, 9, 21), 16);
  assert.deepEqual(playOrder(keys, 21, false), keys);
  assert.equal(playOrder(keys, 21, true).length, 21);
});

test("a click on an output cell shows the frame that computes it", () => {
  assert.equal(frameOfStep([0, 5, 10, 15], 7), 1);
  assert.equal(frameOfStep([0, 5, 10, 15], 15), 3);
  assert.equal(frameOfStep([0, 1, 2], 0), 0);
});

test("a formula breaks only before + and =", () => {
  assert.deepEqual(terms("y₀₀ = x·w + x·w = 3"), ["y₀₀", "= x·w", "+ x·w", "= 3"]);
});

test("hover outlines the linked cells from the relation Python sent", () => {
  // a 3×3 operand, 2×2 kernel, 2×2 output, stride 1
  const link = {
    panels: [
      { key: "x", origin: [-1, 0], shape: [3, 3] },
      { key: "w", origin: [0, 0], shape: [2, 2] },
      { key: "y", origin: [0, 0], shape: [2, 2] },
    ],
    windows: [
      [0, 1, 0, 1],
      [0, 1, 1, 2],
      [1, 2, 0, 1],
      [1, 2, 1, 2],
    ],
    readers: [[0, 0], [0, 1, 1, 0], [1, 1], [0, 2, 2, 0], [0, 3, 1, 2, 2, 1, 3, 0]],
    kernel: [2, 2],
  };
  assert.deepEqual(linkedBoxes(link, "y", 1, 0), [[[1, 2, 0, 1]], [[0, 1, 0, 1]], [[1, 1, 0, 0]]]);
  const [op, taps, outs] = linkedBoxes(link, "x", 1, 1); // the centre: read by all four
  assert.deepEqual(op, [[1, 1, 1, 1]]);
  assert.deepEqual(taps, [[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]]);
  assert.deepEqual(outs, [[0, 0, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]]);
  assert.equal(linkedBoxes(link, "w", 0, 0), null);
  assert.equal(linkedBoxes({ ...link, readers: null }, "x", 0, 0), null);
  const o = outline([0, 0, 0, 0], [-1, 0]);
  assert.deepEqual(o.x, [-0.5, 0.5, 0.5, -0.5, -0.5, null]);
  assert.deepEqual(o.y, [-1.5, -1.5, -0.5, -0.5, -1.5, null]);
});

test("the stage bar lights the frame's stage and those it passed", () => {
  const order = ["1 · a", "2 · b", "3 · c"];
  const buttons = { "1 · a": 0, "2 · b": 1, "3 · c": 2 };
  assert.deepEqual(barMarks(order, buttons, "2 · b", 4), ["done", "now", "", ""]);
});

test("a stepwise frame is one update: dotted paths, one value per trace, typed arrays whole", () => {
  const x = { dtype: "i1", bdata: "AAE=" };
  const frame = {
    traces: [3, 5],
    data: [
      { type: "heatmap", x, text: [["1", "2"]] },
      { type: "scatter", y: [0, 1], textfont: { color: ["#000"] } },
    ],
    layout: { annotations: [{ text: "w" }] },
  };
  assert.deepEqual(frameUpdate(frame), {
    restyle: {
      x: [x, undefined],
      text: [[["1", "2"]], undefined],
      y: [undefined, [0, 1]],
      "textfont.color": [undefined, ["#000"]],
    },
    relayout: { annotations: [{ text: "w" }] },
    traces: [3, 5],
  });
  assert.deepEqual(frameUpdate({ traces: [0], data: [{}] }).relayout, {});
});
