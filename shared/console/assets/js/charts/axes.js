// A chart's drawing area: the SVG (a fixed view box the page scales), its grid and value ticks,
// the time labels under the buckets, and one column per bucket: the element that takes focus and
// hover and holds that bucket's marks.

import { labelled, linear, niceTicks, shortTime } from "./scale.js";
import { s } from "./svg.js";

export const BOX = { width: 600, height: 160, left: 64, right: 8, top: 10, bottom: 24 };

/**
 * The frame of `chart` for values up to `max`: `{svg, plot, y, band, x}`; marks go in `plot`
 * (or in a column), `y(value)` is a value's height, bucket `i` spans `x(i)` to `x(i) + band`.
 */
export function frame(chart, max, label) {
  const { ticks, top } = niceTicks(max, { integers: chart.integers });
  const bottom = BOX.height - BOX.bottom;
  const y = linear(top, bottom, BOX.top);
  const width = BOX.width - BOX.left - BOX.right;
  const band = width / Math.max(1, chart.starts.length);
  const x = (i) => BOX.left + i * band;
  const svg = s("svg", { viewBox: `0 0 ${BOX.width} ${BOX.height}`, role: "img", "aria-label": label, class: "chart-svg", id: `${chart.id}-svg` });
  const grid = s("g", { class: "chart-grid", "aria-hidden": "true" });
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
  return { svg, plot, y, band, x };
}

/** Bucket `i`'s column: focusable, named by its numbers, holding `marks`. */
export function column(chart, geometry, i, name, marks) {
  const group = s("g", { class: "chart-col", tabindex: "-1", "data-start": chart.starts[i], "data-index": i, "aria-label": name });
  group.append(
    s("rect", { class: "chart-hit", x: geometry.x(i), y: BOX.top, width: geometry.band, height: BOX.height - BOX.bottom - BOX.top }),
    ...marks,
  );
  return group;
}
