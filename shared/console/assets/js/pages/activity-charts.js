// The summary page's four charts, from one answer of GET /v1/activity: throughput (tasks
// created, succeeded and failed per bucket), failures by error code, latency (p50 and p95 of the
// queue wait and of the run time) and estimated cost by model. Error codes and model ids are
// the API's text: they only ever become text (see charts/figure.js).

import { count, usd } from "../format.js";

/** The codes or models a chart names; the rest are summed as one more series. */
const MOST_SERIES = 5;

/** The chart specs (charts/figure.js) of `activity`, a window described by `windowText`. */
export function activityCharts(activity, windowText) {
  const buckets = activity.buckets ?? [];
  const base = { bucketSeconds: activity.bucketSeconds, starts: buckets.map((b) => b.start), windowText };
  return [throughput(base, buckets), failures(base, buckets), latency(base, buckets), cost(base, buckets)];
}

function throughput(base, buckets) {
  return {
    ...base, id: "chart-throughput", title: "Throughput", kind: "bars", summary: "sum", integers: true, format: count,
    series: [
      { label: "created", values: buckets.map((b) => b.created ?? 0), tone: 0 },
      { label: "succeeded", values: buckets.map((b) => b.succeeded ?? 0), tone: 1 },
      { label: "failed", values: buckets.map((b) => b.failed ?? 0), tone: 2 },
    ],
  };
}

function failures(base, buckets) {
  const series = topSeries(buckets, (b) => b.failures, (f) => f.errorCode, (f) => f.tasks ?? 0, "other codes");
  return {
    ...base, id: "chart-failures", title: "Failures by error code", kind: "stacked", summary: "sum", integers: true, format: count,
    series: series.map((s, k) => ({ ...s, tone: [2, 3, 4, 5, 6, 7][k] })),
    note: series.length ? null : "No task failed in this window.",
  };
}

function latency(base, buckets) {
  const of = (field, p) => buckets.map((b) => (typeof b[field]?.[p] === "number" ? b[field][p] : null));
  return {
    ...base, id: "chart-latency", title: "Latency", kind: "line", summary: "max", format: millis, tick: millis,
    series: [
      { label: "queue wait p50", values: of("queueWaitMs", "p50"), tone: 0 },
      { label: "queue wait p95", values: of("queueWaitMs", "p95"), tone: 0, dashed: true },
      { label: "run time p50", values: of("runMs", "p50"), tone: 3 },
      { label: "run time p95", values: of("runMs", "p95"), tone: 3, dashed: true },
    ],
    note: "Of the tasks that ended in each bucket: creation to first start, and the last attempt's run.",
  };
}

function cost(base, buckets) {
  const priced = buckets.some((b) => (b.models ?? []).some((m) => typeof m.estimatedCostUsd === "number"));
  const value = priced ? (m) => m.estimatedCostUsd ?? 0 : (m) => (m.inputTokens ?? 0) + (m.outputTokens ?? 0);
  const series = topSeries(buckets, (b) => b.models, (m) => m.modelId, value, "other models");
  const unpriced = new Set();
  for (const b of buckets) for (const m of b.models ?? []) if (m.estimatedCostUsd === null || m.estimatedCostUsd === undefined) unpriced.add(m.modelId);
  let note = null;
  if (!series.length) note = "No task with usage in this window.";
  else if (!priced) note = "No price is known for these models: the chart shows their tokens (input and output) instead.";
  else if (unpriced.size) note = `No price is known for ${[...unpriced].join(", ")}: counted as $0.`;
  return {
    ...base, id: "chart-cost", title: priced || !series.length ? "Estimated cost by model" : "Tokens by model", kind: "stacked", summary: "sum",
    integers: !priced, format: priced ? usd : count, tick: priced ? dollars : count,
    series: series.map((s, k) => ({ ...s, tone: k })),
    note,
  };
}

/**
 * Series by a name inside each bucket (`listOf(bucket)` → items, `nameOf(item)`, `valueOf(item)`):
 * the `MOST_SERIES` largest in the window by name, and the rest as one `rest` series.
 */
function topSeries(buckets, listOf, nameOf, valueOf, rest) {
  const totals = new Map();
  for (const b of buckets) for (const item of listOf(b) ?? []) totals.set(nameOf(item), (totals.get(nameOf(item)) ?? 0) + valueOf(item));
  const names = [...totals].filter(([, total]) => total > 0).sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0]))).map(([name]) => name);
  const kept = names.length > MOST_SERIES + 1 ? names.slice(0, MOST_SERIES) : names;
  const series = kept.map((name) => ({ label: String(name), values: buckets.map((b) => (listOf(b) ?? []).filter((item) => nameOf(item) === name).reduce((sum, item) => sum + valueOf(item), 0)) }));
  if (kept.length < names.length) {
    const others = new Set(names.slice(kept.length));
    series.push({ label: rest, values: buckets.map((b) => (listOf(b) ?? []).filter((item) => others.has(nameOf(item))).reduce((sum, item) => sum + valueOf(item), 0)) });
  }
  return series;
}

/** Milliseconds as a person reads them: "120 ms", "1.5 s", "2.5 min". */
export function millis(ms) {
  if (typeof ms !== "number") return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${Number((ms / 1000).toFixed(1))} s`;
  if (ms < 3600000) return `${Number((ms / 60000).toFixed(1))} min`;
  return `${Number((ms / 3600000).toFixed(1))} h`;
}

/** A dollar tick: short ("$0.0002"), as exact as the tick is. */
function dollars(amount) {
  if (amount === 0) return "$0";
  if (amount >= 1) return `$${amount.toFixed(2)}`;
  const digits = Math.min(10, 1 - Math.floor(Math.log10(amount)));
  return `$${amount.toFixed(digits).replace(/0+$/, "")}`;
}
