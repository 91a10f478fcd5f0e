// A chart as the page shows it: a <figure> with its caption and legend; the SVG (role="img",
// named by a summary of its numbers) under its layer of focusable buckets; a readout line with
// the numbers of the bucket under the pointer or the focus; and "Show the numbers", the same
// numbers as a table. Every text, the API's model ids and error codes among them, goes in as
// text nodes.

import { h, table } from "../dom.js";
import { barChart } from "./bars.js";
import { lineChart } from "./line.js";
import { wireReadout } from "./readout.js";
import { bucketSpan } from "./scale.js";

const present = (v) => typeof v === "number" && Number.isFinite(v);
/** Whether a value is worth showing: any number for a latency (0 ms is one), above 0 for a sum. */
const shown = (chart, v) => present(v) && (chart.summary === "max" || v > 0);

/**
 * `chart`: `{id, title, kind: "bars" | "stacked" | "line", bucketSeconds, starts: [ISO],
 * series: [{label, values, tone?, dashed?}], format(n), tick?(n), integers?, summary: "sum" |
 * "max", windowText, note?}`. Sums are summarised by their totals, others (latencies) by their highest value.
 */
export function chartFigure(chart) {
  const texts = chart.starts.map((start, i) => `${bucketSpan(start, chart.bucketSeconds)}: ${bucketNumbers(chart, i)}`);
  const label = summaryOf(chart);
  const { box, overlay, columns } = chart.kind === "line" ? lineChart(chart, label, texts) : barChart(chart, { stacked: chart.kind === "stacked" }, label, texts);
  const readout = h("p", { class: "chart-readout", id: `${chart.id}-readout`, "aria-live": "polite" });
  wireReadout(overlay, columns, readout, texts, "Hover over a bucket, or Tab to the chart and use the arrow keys, for its numbers.");
  const legend = h("ul", { class: "chart-legend", "aria-label": `${chart.title}: legend` },
    chart.series.map((series, k) => h("li", {}, h("span", { class: `swatch tone-${series.tone ?? k}${series.dashed ? " dashed" : ""}`, "aria-hidden": "true" }), series.label)));
  return h("figure", { class: "chart", id: chart.id },
    h("figcaption", {}, h("span", {}, h("strong", {}, chart.title), " ", h("span", { class: "muted" }, chart.windowText)), legend),
    box,
    readout,
    chart.note ? h("p", { class: "muted chart-note" }, chart.note) : null,
    numbersTable(chart));
}

/** Bucket i's numbers: "created 3, succeeded 2, failed 1". A stacked chart names only its
 * non-zero parts (with their total); a line names a missing value "no sample". */
export function bucketNumbers(chart, i) {
  if (chart.kind === "stacked") {
    const parts = chart.series.filter((series) => present(series.values[i]) && series.values[i] > 0);
    if (!parts.length) return "none";
    const total = parts.reduce((sum, series) => sum + series.values[i], 0);
    const named = parts.map((series) => `${series.label} ${chart.format(series.values[i])}`).join(", ");
    return parts.length > 1 ? `${chart.format(total)} in all: ${named}` : named;
  }
  return chart.series.map((series) => `${series.label} ${present(series.values[i]) ? chart.format(series.values[i]) : "no sample"}`).join(", ");
}

/** The SVG's name: what it shows, and its totals (or highest values). */
export function summaryOf(chart) {
  const head = `${chart.title}, ${chart.windowText}`;
  const any = chart.series.some((series) => series.values.some((v) => shown(chart, v)));
  if (!any) return `${head}: nothing in this window.`;
  const parts = chart.series.map((series) => {
    if (chart.summary === "sum") return `${series.label} ${chart.format(series.values.filter(present).reduce((a, b) => a + b, 0))}`;
    let top = null;
    series.values.forEach((v, i) => {
      if (present(v) && (top === null || v > series.values[top])) top = i;
    });
    return top === null ? `${series.label}: no sample` : `${series.label} highest ${chart.format(series.values[top])} (${bucketSpan(chart.starts[top], chart.bucketSeconds)})`;
  });
  return `${head}. ${chart.summary === "sum" ? "In all: " : ""}${parts.join("; ")}.`;
}

/** "Show the numbers": the buckets with something in them, a row each. */
function numbersTable(chart) {
  const rows = chart.starts
    .map((start, i) => ({ start, i }))
    .filter(({ i }) => chart.series.some((series) => shown(chart, series.values[i])))
    .map(({ start, i }) => [bucketSpan(start, chart.bucketSeconds), ...chart.series.map((series) => (present(series.values[i]) ? chart.format(series.values[i]) : "–"))]);
  const columns = ["Bucket", ...chart.series.map((series) => ({ label: series.label, num: true }))];
  return h("details", { class: "chart-numbers", id: `${chart.id}-numbers` },
    h("summary", {}, "Show the numbers"),
    rows.length ? table(`${chart.title}, ${chart.windowText}`, columns, rows) : h("p", { class: "muted" }, "Nothing in this window."),
    rows.length && rows.length < chart.starts.length ? h("p", { class: "muted" }, `Buckets with nothing in them are left out (${rows.length} of ${chart.starts.length} shown).`) : null);
}
