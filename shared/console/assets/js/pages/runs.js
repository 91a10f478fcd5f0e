// The tenant's runs: filters (state, scope, time), each run's tasks counted by status as a
// progress bar (over its first 1,000 tasks, as GET /v1/runs counts them), keyset pages.

import { api } from "../api.js";
import { badge, errorBox, h, link, replace, table } from "../dom.js";
import { filterForm, pager } from "../filters.js";
import { shortId, when } from "../format.js";
import { progressBar } from "../progress-bar.js";

const PAGE = 25;

export async function renderRuns({ main, query, signal }) {
  const form = filterForm({
    id: "runs-filters",
    label: "Filter runs",
    query,
    segments: [],
    fields: [
      { name: "status", label: "Run state", type: "select", options: [["", "any"], ["running", "running"], ["canceled", "canceled"]] },
      { name: "scopeId", label: "Scope", type: "text" },
      { name: "createdAfter", label: "Created after", type: "time" },
      { name: "createdBefore", label: "Created before", type: "time" },
    ],
  });
  const results = h("div", { id: "runs-results" }, h("p", { class: "muted" }, "Loading…"));
  const scopeLink = h("p", {}, "Tasks without a run belong to a scope: ", query.scopeId ? link(`the tasks of scope ${query.scopeId}`, "scopes", query.scopeId) : "filter by a scope to see its tasks.");
  replace(main, h("h1", { tabindex: "-1" }, "Runs"), form, scopeLink, results);
  let page;
  try {
    page = await api("GET", "/v1/runs", {
      signal,
      query: { status: query.status, scopeId: query.scopeId, createdAfter: query.createdAfter, createdBefore: query.createdBefore, after: query.after, limit: PAGE },
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    replace(results, errorBox(error));
    return;
  }
  const rows = page.runs.map((run) => [
    link(shortId(run.id), "runs", run.id),
    link(run.scopeId, "scopes", run.scopeId),
    badge(run.state),
    progressBar(run.tasks ?? {}, { id: `runbar-${run.id}`, label: `Tasks of run ${shortId(run.id)} done`, bound: run.tasks?.more ? "(first 1,000 tasks counted: the run has more)" : null }),
    when(run.createdAt),
  ]);
  replace(
    results,
    page.runs.length ? table("Runs", ["Run", "Scope", "State", "Tasks", "Created"], rows) : h("p", { class: "notice" }, page.next ? "No run on this stretch matches; look further with Next page." : "No runs match."),
    pager({ query, next: page.next, segments: [] }),
  );
}
