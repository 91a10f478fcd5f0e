// A table of tasks, as listings answer them; with a Selection, each row has a checkbox (and the
// header one for the whole page).

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
export function taskTable(tasks, next, selection) {
  if (!tasks.length) return h("p", { class: "notice" }, next ? "No task on this stretch matches; look further with Next page." : "No tasks match.");
  if (!selection) return table("Tasks", TASK_COLUMNS, tasks.map(taskRow));
  const all = selection.allMatching;
  const pageBox = h("input", {
    type: "checkbox",
    id: "select-page",
    "aria-label": "Select every task on this page",
    checked: all || tasks.every((t) => selection.has(t.id)),
    disabled: all,
    onchange: (event) => selection.setPage(tasks, event.target.checked),
  });
  const rows = tasks.map((task) => [
    h("input", {
      type: "checkbox",
      class: "select-task",
      "data-task": task.id,
      "aria-label": `Select task ${shortId(task.id)} (${task.status})`,
      checked: selection.has(task.id),
      disabled: all,
      onchange: (event) => selection.set(task, event.target.checked),
    }),
    ...taskRow(task),
  ]);
  return table("Tasks", [pageBox, ...TASK_COLUMNS], rows);
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
