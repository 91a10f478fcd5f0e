// A table of tasks, as listings answer them.

import { badge, h, link, table } from "./dom.js";
import { duration, shortId, when } from "./format.js";

export const TASK_COLUMNS = ["Task", "Step", "Kind", "Model", "Status", "Attempts", "Created", "Took"];

export function taskRow(task) {
  return [
    link(shortId(task.id), "tasks", task.id),
    task.stepKey ?? "",
    task.kind ?? "",
    task.modelId ?? "",
    badge(task.status),
    String(task.attempts ?? ""),
    when(task.createdAt),
    duration(task.createdAt, task.completedAt),
  ];
}

/** The page's tasks; an empty page that has a `next` looked at part of the tasks only. */
export function taskTable(tasks, next) {
  if (!tasks.length) return h("p", { class: "notice" }, next ? "No task on this stretch matches; look further with Next page." : "No tasks match.");
  return table("Tasks", TASK_COLUMNS, tasks.map(taskRow));
}

/** Tasks counted by status: badges with their counts. */
export function statusCounts(counts, more) {
  const order = ["queued", "running", "succeeded", "failed", "canceled"];
  return h(
    "span",
    { class: "counts" },
    order.filter((s) => counts[s]).map((s) => h("span", { class: `status status-${s}`, "data-count": s }, `${s} ${counts[s]}`)),
    order.every((s) => !counts[s]) ? h("span", { class: "muted" }, "no tasks") : null,
    more ? h("span", { class: "muted" }, "(first 1,000 counted)") : null,
  );
}
