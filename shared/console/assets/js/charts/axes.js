// A chart's drawing area: the picture (an SVG, role="img", named by its summary: the grid, the
// value ticks, the time labels and the marks) and over it a layer of the same size with one
// column per bucket, the elements that take focus and hover and are named by their numbers (a
// list, so that they are not children of the image). The page scales both (a fixed view box).

import { h } from "../dom.js";
import { labelled, linear, niceTicks, shortTime } from "./scale.js";
import { s } from "./svg.js";

export const BOX = { width: 600, height: 160, left: 64, right: 8, top: 10, bottom: 24 };

/**
 * The frame of `chart` for values up to `max`: `{box, svg, plot, y, band, x, columns}`; marks go
 * in `plot`, `y(value)` is a value's height, bucket `i` spans `x(i)` to `x(i) + band`, and
 * `columns` holds the focusable columns once `column` has made them.
 */
export function frame(chart, max, label) {
  const { ticks, top } = niceTicks(max, { integers: chart.integers });
  const bottom = BOX.height - BOX.bottom;
  const y = linear(top, bottom, BOX.top);
  const width = BOX.width - BOX.left - BOX.right;
  const band = width / Math.max(1, chart.starts.length);
  const x = (i) => BOX.left + i * band;
  const viewBox = `0 0 ${BOX.width} ${BOX.height}`;
  const svg = s("svg", { viewBox, role: "img", "aria-label": label, class: "chart-svg", id: `${chart.id}-svg` });
  const grid = s("g", { class: "chart-grid" });
  for (const tick of ticks) {
    grid.append(
      s("line", { x1: BOX.left, x2: BOX.width - BOX.right, y1: y(tick), y2: y(tick), class: tick === 0 ? "chart-base" : null }),
      s("text", { x: BOX.left - 6, y: y(tick) + 4, "text-anchor": "end" }, (chart.tick ?? chart.format)(tick)),
    );
  }
  for (const i of labelled(chart.starts.length)) {
    grid.append(s("text", { x: x(i) + band / 2, y: BOX.height - 6, "text-anchor": "middle" }, shortTime(chart.starts[i], chart.bucketSeconds)));
  }
  const plot = s("g", { class: "chart-plot" });
  svg.append(grid, plot);
  const columns = s("svg", { viewBox, class: "chart-overlay", role: "list", "aria-label": `${chart.title}, bucket by bucket` });
  const box = h("div", { class: "chart-box" }, svg, columns);
  return { box, svg, plot, y, band, x, columns };
}

/** Bucket `i`'s column, in the layer over the picture: focusable, named by its numbers. */
export function column(chart, geometry, i, name) {
  const group = s("g", { class: "chart-col", tabindex: "-1", role: "listitem", "data-start": chart.starts[i], "data-index": i, "aria-label": name },
    s("rect", { class: "chart-hit", x: geometry.x(i), y: BOX.top, width: geometry.band, height: BOX.height - BOX.bottom - BOX.top }));
  geometry.columns.append(group);
  return group;
}
