// A run's tasks (or a scope's): the run and its progress bar (live, run-progress.js), filters
// (status, kind, model, time), keyset pages, and live progress of the listed tasks: while a
// listed task is queued or running the page is listed again every REFRESH_MS, without a reload.
// Tasks are selected (some, or all that match the filter) and replayed or canceled after a
// confirmation. A run can be canceled (after a confirmation).

import { api, sleep } from "../api.js";
import { bulkActions } from "../bulk-actions.js";
import { announce, badge, errorBox, facts, h, link, replace } from "../dom.js";
import { confirmDialog } from "../dialog.js";
import { filterForm, pager } from "../filters.js";
import { when } from "../format.js";
import { runProgress } from "../run-progress.js";
import { Selection } from "../selection.js";
import { statusCounts, taskTable } from "../task-table.js";

const PAGE = 50;
const REFRESH_MS = 2000;

const KINDS = [["", "any"], ["generate_text", "generate_text"], ["classify", "classify"], ["classify_many", "classify_many"], ["extract_data", "extract_data"]];
const STATUSES = [["", "any"], ["queued", "queued"], ["running", "running"], ["succeeded", "succeeded"], ["failed", "failed"], ["canceled", "canceled"]];

export async function renderTasks({ main, id, query, owner, signal }) {
  const segments = [owner === "run" ? "runs" : "scopes", id];
  const header = h("div", { id: "owner" });
  const heading = h("h1", { tabindex: "-1" }, owner === "run" ? "Run" : `Scope ${id}`);
  const form = filterForm({
    id: "task-filters",
    label: "Filter tasks",
    query,
    segments,
    fields: [
      { name: "status", label: "Status", type: "select", options: STATUSES },
      { name: "kind", label: "Kind", type: "select", options: KINDS },
      { name: "modelId", label: "Model", type: "text" },
      { name: "createdAfter", label: "Created after", type: "time" },
      { name: "createdBefore", label: "Created before", type: "time" },
    ],
  });
  const counts = h("p", { id: "page-counts" });
  const live = h("p", { class: "live", id: "live" });
  const results = h("div", { id: "tasks-results" }, h("p", { class: "muted" }, "Loading…"));
  const selection = new Selection();
  const progress = owner === "run" ? runProgress(id, signal) : null;
  const follower = listFollower({ owner, id, query, segments, selection, counts, live, results, signal });
  const actions = bulkActions({
    selection,
    signal,
    list: { ownerKey: owner === "run" ? "runId" : "scopeId", ownerId: id, query },
    current: () => ({ tasks: follower.shown.tasks, complete: !follower.shown.next && !query.after }),
    onActed: () => {
      follower.wake();
      progress?.wake();
    },
  });
  replace(main, heading, header, progress?.panel, h("h2", {}, "Tasks"), form, actions, counts, live, results);

  if (owner === "run") {
    try {
      const run = await api("GET", `/v1/runs/${encodeURIComponent(id)}`, { signal });
      renderRun(header, heading, run, signal);
      progress.follow();
    } catch (error) {
      if (error.name === "AbortError") throw error;
      if (error.status === 404) {
        replace(main, h("h1", { tabindex: "-1" }, "Run not found"), h("p", { class: "error", role: "alert" }, `No run ${id} is visible with this token (404 ${error.code}).`));
        return;
      }
      replace(header, errorBox(error));
    }
  }
  await follower.follow();
}

/**
 * Lists the page, again every REFRESH_MS while a listed task is open; `wake()` lists again at
 * once (after an action), following again if it had stopped.
 */
function listFollower({ owner, id, query, segments, selection, counts, live, results, signal }) {
  const state = { shown: { tasks: [], next: undefined }, listed: "", following: false, kicked: false, early: null };
  let previous = "";
  selection.onChange(() => {
    for (const box of results.querySelectorAll("input[type=checkbox]")) {
      box.checked = box.id === "select-page" ? selection.allMatching || state.shown.tasks.every((t) => selection.has(t.id)) : selection.has(box.dataset.task);
      box.disabled = selection.allMatching;
    }
  });

  const listOnce = async () => {
    const page = await api("GET", "/v1/tasks", {
      signal,
      query: {
        [owner === "run" ? "runId" : "scopeId"]: id,
        status: query.status,
        kind: query.kind,
        modelId: query.modelId,
        createdAfter: query.createdAfter,
        createdBefore: query.createdBefore,
        after: query.after,
        limit: PAGE,
      },
    });
    const tally = {};
    for (const task of page.tasks) tally[task.status] = (tally[task.status] ?? 0) + 1;
    replace(counts, "On this page: ", statusCounts(tally, false));
    // Drawn again only when it changed: a checkbox in focus stays in focus.
    const listed = JSON.stringify(page);
    if (listed !== state.listed) {
      state.listed = listed;
      state.shown = page;
      replace(results, taskTable(page.tasks, page.next, selection), pager({ query, next: page.next, segments }));
      selection.refresh(page.tasks);
    }
    const summary = JSON.stringify(tally);
    if (previous && summary !== previous) announce(`Tasks changed: ${Object.entries(tally).map(([s, n]) => `${n} ${s}`).join(", ")}`);
    previous = summary;
    return page.tasks.some((t) => t.status === "queued" || t.status === "running");
  };

  const loop = async () => {
    for (;;) {
      state.kicked = false;
      let open;
      try {
        open = await listOnce();
      } catch (error) {
        if (error.name === "AbortError") throw error;
        // Over the tenant's read rate while following live: say so, and list again once it allows.
        if (previous && error.status === 429 && error.retryAfter !== undefined && error.retryAfter <= 60) {
          replace(live, errorBox(error));
          await sleep(error.retryAfter * 1000, signal);
          if (signal.aborted) return;
          continue;
        }
        replace(results, errorBox(error));
        replace(live, "");
        return;
      }
      if (!open && !state.kicked) {
        replace(live, "Every task on this page has ended.");
        return;
      }
      replace(live, `Live: listed again every ${REFRESH_MS / 1000} s while a task is queued or running.`);
      if (!state.kicked) {
        state.early = new AbortController();
        const stop = () => state.early.abort();
        signal.addEventListener("abort", stop, { once: true });
        await sleep(REFRESH_MS, state.early.signal);
        signal.removeEventListener("abort", stop);
      }
      if (signal.aborted) return;
    }
  };

  const follow = async () => {
    state.following = true;
    try {
      await loop();
    } finally {
      state.following = false;
    }
  };

  return {
    get shown() {
      return state.shown;
    },
    follow,
    wake() {
      if (!state.following) {
        follow().catch(() => {});
        return;
      }
      state.kicked = true;
      state.early?.abort();
    },
  };
}

function renderRun(header, heading, run, signal) {
  replace(heading, "Run ", h("span", { class: "mono" }, run.id), " ", badge(run.state));
  const cancel = h("button", { type: "button", class: "danger", id: "cancel-run", disabled: run.state === "canceled" }, "Cancel run");
  cancel.addEventListener("click", async () => {
    const yes = await confirmDialog({
      title: "Cancel this run?",
      message: "Its queued tasks end canceled, its running tasks are aborted, and no task can join it afterwards. This cannot be undone.",
      confirm: "Cancel run",
    });
    if (!yes) return;
    cancel.disabled = true;
    try {
      const canceled = await api("POST", `/v1/runs/${encodeURIComponent(run.id)}/cancel`, { signal });
      renderRun(header, heading, canceled, signal);
      announce("The run was canceled.");
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (error) {
      if (error.name !== "AbortError") header.append(errorBox(error));
      cancel.disabled = false;
    }
  });
  replace(
    header,
    facts([
      ["Scope", link(run.scopeId, "scopes", run.scopeId)],
      ["Actor", run.actor?.userId],
      ["Created", when(run.createdAt)],
      ["Updated", when(run.updatedAt)],
      ["Cancel requested", when(run.cancelRequestedAt)],
    ]),
    h("div", { class: "toolbar" }, cancel),
  );
}
