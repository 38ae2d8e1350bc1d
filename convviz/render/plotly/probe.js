// What plotly has drawn, for the tests and scripts that measure a page (not the app: player.js
// reads none of this). The one place that reads plotly.js's private state: the drawn layout
// (`_fullLayout`: axes placed in pixels), the decoded traces (`_fullData`), the frames a chart
// holds (`_transitionData`) and the data d3 binds to a trace's SVG group (`__data__`). A plotly
// upgrade that moves them breaks these functions, in one file. `plotly_adapter.probing` wraps a
// page function so that it can call them.
// biome-ignore lint/correctness/noUnusedVariables: the page functions that `probing` wraps call it
const cvPlotly = {
  // the chart has been laid out (its axes placed)
  drawn: (gd) => Boolean(gd?._fullLayout),
  // the traces as drawn: typed-array specs decoded, defaults filled
  traces: (gd) => gd._fullData,
  trace: (gd, name) => gd._fullData.find((d) => d.name === name),
  annotations: (gd) => gd._fullLayout.annotations,
  frameCount: (gd) => gd._transitionData._frames.length,
  // an axis ('xaxis', 'yaxis3'): where it lies in the chart (px) and its data range
  axis(gd, name) {
    const a = gd._fullLayout[name];
    return {
      start: a._offset,
      length: a._length,
      range: a.range,
      domain: a.domain,
      px: (v) => a._offset + a.d2p(v),
    };
  },
  // the chart's x (or y) axes in order: 'xaxis', 'xaxis2', …
  axisNames: (gd, letter) =>
    Object.keys(gd._fullLayout).filter((k) => new RegExp(`^${letter}axis\\d*$`).test(k)),
  // page pixels of data point (x, y) on axes xa, ya (a grid's cell (row, col) is (col, row))
  pagePoint(gd, xa, ya, x, y) {
    const b = gd.getBoundingClientRect();
    return [b.left + cvPlotly.axis(gd, xa).px(x), b.top + cvPlotly.axis(gd, ya).px(y)];
  },
  // what each grid (a subplot: 'xy', 'x2y2', …) shows on screen now: `filled`, a cell drawn in a
  // colour (a heatmap's picture of a trace holding a value, or a visible filled marker), and
  // `numbers`, the visible texts holding a digit. A grid whose layers a redraw dropped shows
  // neither: the blank frame a slow laptop paints (tests/test_browser_playback.py).
  painted(gd) {
    // plotly styles its points inline: read there (no style recalculation per sample)
    const opacity = (el) => (el.style.opacity === "" ? 1 : Number(el.style.opacity));
    const filled = (p) => {
      const clear = /^(none|transparent)$/.test(p.style.fill) || /, 0\)$/.test(p.style.fill);
      const faded = p.style.fillOpacity !== "" && Number(p.style.fillOpacity) < 0.05;
      return opacity(p) > 0.05 && p.style.fill !== "" && !clear && !faded;
    };
    const valued = (cd) =>
      Array.from(cd?.z || []).some((row) => Array.from(row || []).some((v) => Number.isFinite(v)));
    const out = {};
    for (const [id, plot] of Object.entries(gd._fullLayout._plots)) {
      const g = plot.plotgroup?.node();
      if (!g) continue;
      const maps = [...g.querySelectorAll(".heatmaplayer .hm")].filter(
        (hm) => hm.querySelector("image") && valued(hm.__data__?.[0]),
      );
      const traces = [...g.querySelectorAll(".scatterlayer .trace")].filter((t) => opacity(t) > 0.05);
      const marks = traces.some((t) => [...t.querySelectorAll(".points path.point")].some(filled));
      const texts = [
        ...g.querySelectorAll(".heatmaplayer text"),
        ...traces.flatMap((t) => [...t.querySelectorAll(".textpoint text")]),
      ];
      out[id] = {
        filled: maps.length > 0 || marks,
        numbers: texts.filter((t) => /\d/.test(t.textContent) && opacity(t) > 0.05).length,
      };
    }
    return out;
  },
  // the texts a scatter trace's SVG shows (a point plotly dropped is not drawn); null: no group
  paintedText(gd, name) {
    const g = [...gd.querySelectorAll(".scatterlayer .trace")].find(
      (el) => el.__data__?.[0]?.trace.name === name,
    );
    return g ? [...g.querySelectorAll(".textpoint text")].map((t) => t.textContent) : null;
  },
};
