// The tenant's summary: charts of its activity over a window (pages/activity.js), then tables
// from GET /v1/summary: tasks by status, and tokens and estimated cost by day and model, over a
// time range of creation.

import { api } from "../api.js";
import { errorBox, h, replace, table } from "../dom.js";
import { activitySection } from "./activity.js";
import { filterForm } from "../filters.js";
import { count, usd, when } from "../format.js";
import { statusCounts } from "../task-table.js";

export async function renderSummary({ main, query, signal }) {
  const form = filterForm({
    id: "summary-filters",
    label: "Time range",
    query,
    segments: ["summary"],
    fields: [
      { name: "createdAfter", label: "Tasks created after", type: "time" },
      { name: "createdBefore", label: "Tasks created before", type: "time" },
    ],
  });
  const results = h("div", { id: "summary-results" }, h("p", { class: "muted" }, "Loading…"));
  const activity = activitySection({ query, signal });
  replace(main, h("h1", { tabindex: "-1" }, "Summary"), activity.section, h("h2", { id: "h-summary-tables" }, "Tasks and cost by creation time"), form, results);
  // Drawn beside the tables' read; live for the last hour until the page is left.
  activity.start();
  let summary;
  try {
    summary = await api("GET", "/v1/summary", { signal, query: { createdAfter: query.createdAfter, createdBefore: query.createdBefore } });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    replace(results, errorBox(error));
    return;
  }
  const statuses = ["queued", "running", "succeeded", "failed", "canceled"];
  const byModel = new Map();
  for (const row of summary.costs) {
    const total = byModel.get(row.modelId) ?? { tasks: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, priced: false };
    total.tasks += row.tasks;
    total.inputTokens += row.inputTokens ?? 0;
    total.outputTokens += row.outputTokens ?? 0;
    if (typeof row.estimatedCostUsd === "number") {
      total.estimatedCostUsd += row.estimatedCostUsd;
      total.priced = true;
    }
    byModel.set(row.modelId, total);
  }
  const numbers = (label) => ({ label, num: true });
  replace(
    results,
    h("p", { class: "muted" }, `From ${when(summary.createdAfter)} to ${when(summary.createdBefore)}.`),
    summary.complete ? null : h("p", { class: "notice", role: "note" }, `Partial: counted over the first ${count(summary.examined)} tasks of the range. Narrow the range for exact figures.`),
    h("section", { "aria-labelledby": "h-by-status" },
      h("h2", { id: "h-by-status" }, "Tasks by status"),
      h("p", { id: "summary-status" }, statusCounts(summary.tasks, false)),
      table("Tasks by status", statuses.map(numbers), [statuses.map((s) => count(summary.tasks[s] ?? 0))])),
    h("section", { "aria-labelledby": "h-by-model" },
      h("h2", { id: "h-by-model" }, "Cost by model"),
      byModel.size
        ? table("Cost by model", ["Model", numbers("Tasks"), numbers("Input tokens"), numbers("Output tokens"), numbers("Estimated cost")], [...byModel].map(([model, t]) => [model, count(t.tasks), count(t.inputTokens), count(t.outputTokens), t.priced ? usd(t.estimatedCostUsd) : "no prices"]))
        : h("p", { class: "muted" }, "No task with usage in this range.")),
    h("section", { "aria-labelledby": "h-by-day" },
      h("h2", { id: "h-by-day" }, "Cost by day and model"),
      summary.costs.length
        ? table("Cost by day and model", ["Day", "Model", numbers("Tasks"), numbers("Input tokens"), numbers("Output tokens"), numbers("Estimated cost")], summary.costs.map((r) => [r.day, r.modelId, count(r.tasks), count(r.inputTokens), count(r.outputTokens), typeof r.estimatedCostUsd === "number" ? usd(r.estimatedCostUsd) : "no prices"]))
        : h("p", { class: "muted" }, "No task with usage in this range.")),
  );
}
