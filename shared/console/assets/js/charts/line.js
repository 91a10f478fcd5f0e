// A line chart: a line per series through its buckets' values, broken where a bucket has none
// (null: no sample), and a point per value; each bucket is a focusable column over the picture
// (see axes.js, readout.js).

import { column, frame } from "./axes.js";
import { s } from "./svg.js";

/** `{box, overlay, columns}` for `chart` (series of numbers or nulls); `names[i]` names bucket i. */
export function lineChart(chart, label, names) {
  const present = (v) => typeof v === "number" && Number.isFinite(v);
  const max = Math.max(0, ...chart.series.flatMap((series) => series.values.filter(present)));
  const geometry = frame(chart, max, label);
  const { y, band, x } = geometry;
  const middle = (i) => x(i) + band / 2;
  const lines = s("g");
  chart.series.forEach((series, k) => {
    let path = "";
    let drawing = false;
    series.values.forEach((v, i) => {
      if (!present(v)) {
        drawing = false;
        return;
      }
      path += `${drawing ? "L" : "M"}${middle(i).toFixed(2)} ${y(v).toFixed(2)} `;
      drawing = true;
    });
    if (path) lines.append(s("path", { d: path.trim(), class: `chart-line tone-${series.tone ?? k}${series.dashed ? " dashed" : ""}` }));
  });
  geometry.plot.append(lines);
  const columns = chart.starts.map((_, i) => {
    chart.series.forEach((series, k) => {
      if (present(series.values[i])) geometry.plot.append(s("circle", { class: `chart-point tone-${series.tone ?? k}`, cx: middle(i), cy: y(series.values[i]), r: 2.5 }));
    });
    return column(chart, geometry, i, names[i]);
  });
  return { box: geometry.box, overlay: geometry.columns, columns };
}
