// The keyboard grids' and the announcer's rules (convviz/player/core.js), with the data the
// Python side sends (a click trace's meta.grid, player_data's words).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  cellRect,
  cellSentence,
  csv,
  fill,
  focusOf,
  gridMove,
  speakIn,
  stepOf,
  takes,
} from "../../convviz/player/core.js";

// x̃ 5×5, then y 2×3 (the kernel between them is no grid of its own: it is not clickable)
const GRIDS = [
  { h: 5, w: 5 },
  { h: 2, w: 3 },
];

test("the arrow keys walk a grid and go on into the next at its edges, on the same row", () => {
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 1, c: 3 }, "ArrowRight"), { g: 0, r: 1, c: 4 });
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 1, c: 4 }, "ArrowRight"), { g: 1, r: 1, c: 0 });
  // a taller grid's low row lands on the shorter grid's last row
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 4, c: 4 }, "ArrowRight"), { g: 1, r: 1, c: 0 });
  assert.deepEqual(gridMove(GRIDS, { g: 1, r: 0, c: 0 }, "ArrowLeft"), { g: 0, r: 0, c: 4 });
  // the ends stop it
  assert.deepEqual(gridMove(GRIDS, { g: 1, r: 1, c: 2 }, "ArrowRight"), { g: 1, r: 1, c: 2 });
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 0, c: 0 }, "ArrowLeft"), { g: 0, r: 0, c: 0 });
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 0, c: 2 }, "ArrowUp"), { g: 0, r: 0, c: 2 });
  assert.deepEqual(gridMove(GRIDS, { g: 1, r: 1, c: 2 }, "ArrowDown"), { g: 1, r: 1, c: 2 });
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 2, c: 2 }, "ArrowDown"), { g: 0, r: 3, c: 2 });
});

test("Home and End reach a row's ends, Ctrl+Home and Ctrl+End the figure's; other keys are not the grid's", () => {
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 3, c: 2 }, "Home"), { g: 0, r: 3, c: 0 });
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 3, c: 2 }, "End"), { g: 0, r: 3, c: 4 });
  assert.deepEqual(gridMove(GRIDS, { g: 1, r: 1, c: 2 }, "Home", true), { g: 0, r: 0, c: 0 });
  assert.deepEqual(gridMove(GRIDS, { g: 0, r: 3, c: 2 }, "End", true), { g: 1, r: 1, c: 2 });
  for (const key of ["PageDown", "PageUp", " ", "Enter", "a"]) {
    assert.equal(gridMove(GRIDS, { g: 0, r: 0, c: 0 }, key), null);
  }
});

test("every cell of every grid is reached by the arrow keys from the first", () => {
  const seen = new Set();
  const walk = (at) => {
    const id = `${at.g}:${at.r}:${at.c}`;
    if (seen.has(id)) return;
    seen.add(id);
    for (const key of ["ArrowRight", "ArrowLeft", "ArrowUp", "ArrowDown"]) walk(gridMove(GRIDS, at, key));
  };
  walk({ g: 0, r: 0, c: 0 });
  assert.equal(seen.size, 5 * 5 + 2 * 3);
});

test("in a grid its keys are its own; a clicker's still move the lecture; Escape leaves it", () => {
  const cell = { tagName: "DIV", getAttribute: (a) => (a === "role" ? "gridcell" : null) };
  assert.equal(focusOf(cell), "grid");
  for (const action of ["forth", "backstep", "first", "last", "play"]) assert.equal(takes("grid", action), false);
  for (const action of ["next", "back", "blank", "full", "whole"]) assert.equal(takes("grid", action), true);
});

const WORDS = {
  cell: "{name} row {row}, column {col}: {value}",
  blank: "no number",
  minus: "−",
  roles: { p: "padding", z: "a zero the dilation inserted" },
};

test("a cell's name is a sentence: its grid, its row and column as the axes label them, its number, role and sum", () => {
  const grid = {
    name: "x̃",
    shape: [2, 3],
    origin: [-1, -1],
    values: ["0", "0", "0", "0", "5", ""],
    roles: "ppp.z.",
    sums: ["", "", "", "", "the sum of 2 products: 1 times 2 plus 3 times 1", ""],
  };
  assert.equal(cellSentence(WORDS, grid, 0), "x̃ row −1, column −1: 0, padding");
  assert.equal(
    cellSentence(WORDS, grid, 4),
    "x̃ row 0, column 0: 5, a zero the dilation inserted, the sum of 2 products: 1 times 2 plus 3 times 1",
  );
  assert.equal(cellSentence(WORDS, grid, 5), "x̃ row 0, column 1: no number");
  assert.equal(fill("step {step} of {count}: {said}", { step: 4, count: 17, said: "y" }), "step 4 of 17: y");
  assert.equal(fill("{unknown} stays", {}), "{unknown} stays");
});

test("a cell's box on the chart: its grid's plot area and the axes' ranges (rows down a reversed axis)", () => {
  // a 2×3 grid labelled from (-1, -1), drawn in a 60×40 px area at (10, 20)
  const area = { x: 10, y: 20, width: 60, height: 40 };
  const box = cellRect(area, [-1.5, 1.5], [0.5, -1.5], [-1, -1], 1, 2);
  assert.deepEqual(box, { left: 50, top: 40, width: 20, height: 20 });
  assert.deepEqual(cellRect(area, [-1.5, 1.5], [0.5, -1.5], [-1, -1], 0, 0), {
    left: 10,
    top: 20,
    width: 20,
    height: 20,
  });
});

test("CSV: a field with a comma, a quote or a line break is quoted", () => {
  assert.equal(csv([["∂L/∂x", "0", "1"], ["0", "1.5", "-2"]]), "∂L/∂x,0,1\r\n0,1.5,-2\r\n");
  assert.equal(csv([["a, b", 'say "hi"', "x\ny"]]), '"a, b","say ""hi""","x\ny"\r\n');
});

test("the announcer's pace: a step at once after 0.5 s, else when 0.5 s have passed; the last at once", () => {
  assert.equal(speakIn(1000, null, false), 0);
  assert.equal(speakIn(1000, 400, false), 0);
  assert.equal(speakIn(1000, 800, false), 300);
  assert.equal(speakIn(1000, 990, true), 0);
});

test("which frames are steps: every frame of a sliding window, a motion's keyframes", () => {
  assert.deepEqual(stepOf([], 3, 10), [4, 10]);
  assert.equal(stepOf([], 10, 10), null);
  assert.deepEqual(stepOf([0, 8, 15, 22], 15, 23), [3, 4]);
  assert.equal(stepOf([0, 8, 15, 22], 9, 23), null);
});
