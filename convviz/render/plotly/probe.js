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
  // the texts a scatter trace's SVG shows (a point plotly dropped is not drawn); null: no group
  paintedText(gd, name) {
    const g = [...gd.querySelectorAll(".scatterlayer .trace")].find(
      (el) => el.__data__?.[0]?.trace.name === name,
    );
    return g ? [...g.querySelectorAll(".textpoint text")].map((t) => t.textContent) : null;
  },
};
