// The tenant's operations (GET /v1/operations): each cancel or replay by filter, its state and
// progress, in creation order, a page at a time.

import { api } from "../api.js";
import { badge, errorBox, h, link, replace, table } from "../dom.js";
import { filterForm, pager } from "../filters.js";
import { count, shortId, when } from "../format.js";
import { describeFilter } from "../task-filter.js";

const PAGE = 50;

export async function renderOperations({ main, query, signal }) {
  const form = filterForm({
    id: "operations-filters",
    label: "Filter operations",
    query,
    segments: ["operations"],
    fields: [{ name: "state", label: "State", type: "select", options: [["", "any"], ["running", "running"], ["stopped", "stopped"], ["done", "done"]] }],
  });
  const results = h("div", { id: "operations-results" }, h("p", { class: "muted" }, "Loading…"));
  replace(
    main,
    h("h1", { tabindex: "-1" }, "Operations"),
    h("p", { class: "muted" }, "A cancel or a replay of every task that matches a filter, started from a task list (select, then “Select all that match this filter”)."),
    form,
    results,
  );
  let page;
  try {
    page = await api("GET", "/v1/operations", { signal, query: { state: query.state, after: query.after, limit: PAGE } });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    replace(results, errorBox(error));
    return;
  }
  const rows = page.operations.map((op) => [
    link(shortId(op.id), "operations", op.id),
    op.action,
    h("span", {}, describeFilter(op.filter ?? {}, op.action)),
    badge(op.state),
    `${count(op.done)} done, ${count(op.skipped)} skipped, ${count(op.failed)} failed of ${count(op.matched)} matched`,
    when(op.createdAt),
    when(op.endedAt),
  ]);
  replace(
    results,
    rows.length ? table("Operations", ["Operation", "Action", "Filter", "State", "Progress", "Created", "Ended"], rows) : h("p", { class: "notice" }, page.next ? "None on this stretch; look further with Next page." : "No operations."),
    pager({ query, next: page.next, segments: ["operations"] }),
  );
}
