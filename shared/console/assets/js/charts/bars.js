// Bar charts: the series of a bucket side by side (`stacked: false`) or one on another
// (`stacked: true`); each bucket is a focusable column over the picture (see axes.js, readout.js).

import { column, frame } from "./axes.js";
import { s } from "./svg.js";

/** `{box, overlay, columns}` for `chart` (series of numbers); `names[i]` names bucket i's column. */
export function barChart(chart, { stacked }, label, names) {
  const value = (series, i) => (typeof series.values[i] === "number" ? series.values[i] : 0);
  let max = 0;
  chart.starts.forEach((_, i) => {
    const values = chart.series.map((series) => value(series, i));
    max = Math.max(max, stacked ? values.reduce((a, b) => a + b, 0) : Math.max(0, ...values));
  });
  const geometry = frame(chart, max, label);
  const { y, band, x } = geometry;
  const gap = Math.min(2, band * 0.15);
  const columns = chart.starts.map((_, i) => {
    let base = 0;
    const width = stacked ? band - 2 * gap : (band - 2 * gap) / chart.series.length;
    chart.series.forEach((series, k) => {
      const v = value(series, i);
      if (v <= 0) return;
      const from = stacked ? base : 0;
      const left = stacked ? x(i) + gap : x(i) + gap + k * width;
      geometry.plot.append(s("rect", { class: `chart-bar tone-${series.tone ?? k}`, x: left, y: y(from + v), width: Math.max(0.5, width), height: Math.max(0.5, y(from) - y(from + v)) }));
      base += v;
    });
    return column(chart, geometry, i, names[i]);
  });
  return { box: geometry.box, overlay: geometry.columns, columns };
}
