// Acting on a list's selection: Replay or Cancel, after a confirmation that says how many tasks.
// Tasks selected one by one are acted on one by one (POST /v1/tasks/{id}/replay or /cancel; a
// selection is at most a page); "all that match this filter" becomes an operation over the
// list's filter (POST /v1/operations), whose page then follows its progress.

import { api, apiAnswer, idempotencyKey, isTerminal } from "./api.js";
import { announce, errorBox, h, link, replace, route } from "./dom.js";
import { confirmDialog } from "./dialog.js";
import { count, shortId } from "./format.js";
import { DEFAULT_STATUSES, describeFilter, operationFilter } from "./task-filter.js";

/** How many single calls run at once. */
const AT_ONCE = 4;

const ACTIONS = {
  cancel: {
    verb: "Cancel",
    done: "canceled",
    can: (task) => !isTerminal(task.status),
    cannot: ["has ended already", "have ended already"],
    explain: "Queued tasks end canceled; running ones are aborted and end canceled.",
  },
  replay: {
    verb: "Replay",
    done: "replayed",
    can: (task) => isTerminal(task.status),
    cannot: ["has not ended (only an ended task is replayed)", "have not ended (only an ended task is replayed)"],
    explain: "Each gets a new task with the same request, model, owner and scope; the tasks themselves stay as they are.",
  },
};

/**
 * The actions bar of a task list. `list`: `{ownerKey: "runId" | "scopeId", ownerId, query}` (the
 * list's filter); `current()`: `{tasks, complete}` (the page now shown, and whether it is every
 * task the filter matches); `onActed()`: list again.
 */
export function bulkActions({ selection, list, current, onActed, signal }) {
  const summary = h("span", { id: "selection-count", "aria-live": "polite" });
  const matching = h("button", { type: "button", class: "secondary", id: "select-matching" }, "Select all that match this filter");
  const clear = h("button", { type: "button", class: "secondary", id: "clear-selection" }, "Clear selection");
  const replay = h("button", { type: "button", id: "bulk-replay" }, "Replay…");
  const cancel = h("button", { type: "button", class: "danger", id: "bulk-cancel" }, "Cancel…");
  const outcome = h("div", { id: "bulk-outcome" });
  const bar = h("div", { class: "bulk", id: "bulk-actions", role: "group", "aria-label": "Act on the selected tasks" }, h("div", { class: "toolbar" }, summary, matching, clear, replay, cancel), outcome);

  const draw = () => {
    const n = selection.tasks.size;
    if (selection.allMatching) {
      const known = current().complete ? ` (${count(current().tasks.length)} now)` : "";
      replace(summary, h("strong", {}, `Every task that matches this filter${known}`), " is selected.");
    } else {
      replace(summary, n ? `${count(n)} selected on this page.` : "No task selected.");
    }
    matching.hidden = selection.allMatching;
    clear.disabled = !n && !selection.allMatching;
    replay.disabled = cancel.disabled = !n && !selection.allMatching;
  };
  selection.onChange(draw);
  draw();

  matching.addEventListener("click", () => {
    selection.selectAllMatching();
    clear.focus();
  });
  clear.addEventListener("click", () => selection.clear());
  for (const [button, action] of [[replay, "replay"], [cancel, "cancel"]]) {
    button.addEventListener("click", async () => {
      replace(outcome);
      button.disabled = true;
      try {
        if (selection.allMatching) await byFilter(action, list, current(), outcome, signal);
        else if (await oneByOne(action, selection.selected, outcome, signal)) {
          selection.clear();
          onActed();
        }
      } catch (error) {
        if (error.name === "AbortError") return;
        replace(outcome, errorBox(error));
      } finally {
        draw();
      }
    });
  }
  return bar;
}

async function byFilter(action, list, shown, outcome, signal) {
  const { verb } = ACTIONS[action];
  const filter = operationFilter(list);
  const statuses = filter.status ?? DEFAULT_STATUSES[action];
  // Known when the list shows every task the filter matches; otherwise the operation counts.
  const known = shown.complete ? shown.tasks.filter((t) => statuses.includes(t.status)).length : null;
  if (known === 0) {
    replace(outcome, h("p", { class: "notice", role: "status" }, `Nothing to ${action}: no task of this list is ${statuses.join(" or ")}.`));
    return;
  }
  const howMany = known === null ? "all matching tasks" : `${count(known)} ${known === 1 ? "task" : "tasks"}`;
  const recompute = recomputeBox(action);
  const yes = await confirmDialog({
    title: `${verb} ${howMany}?`,
    message: [
      h("p", { id: "dialog-count" }, `${verb} acts on every task that matches this filter and was created before now: `, h("strong", {}, howMany), "."),
      h("p", {}, "Filter: ", describeFilter(filter, action), "."),
      h("p", {}, ACTIONS[action].explain, " It runs as an operation, in pages; its page shows its progress, and it can be stopped there."),
      recompute,
    ],
    confirm: `${verb} ${howMany}`,
    keep: "Do nothing",
    danger: action === "cancel",
  });
  if (!yes) return;
  const body = { action, filter };
  if (recompute?.querySelector("input").checked) body.recompute = true;
  const operation = await api("POST", "/v1/operations", { body, signal, headers: { "idempotency-key": idempotencyKey() } });
  announce(`The ${action} operation started.`);
  window.location.hash = route("operations", operation.id, known === null ? {} : { expected: known });
}

/** Act on each selected task it applies to; true when something was done. */
async function oneByOne(action, selected, outcome, signal) {
  const { verb, done, can, cannot } = ACTIONS[action];
  const targets = selected.filter(can);
  const left = selected.length - targets.length;
  const leftText = left ? `${count(left)} of the selected tasks ${cannot[left === 1 ? 0 : 1]}: left as ${left === 1 ? "it is" : "they are"}.` : null;
  if (!targets.length) {
    replace(outcome, h("p", { class: "notice", role: "status" }, selected.length === 1 ? `Nothing to ${action}: the selected task ${cannot[0]}.` : `Nothing to ${action}: the selected tasks ${cannot[1]}.`));
    return false;
  }
  const howMany = `${count(targets.length)} ${targets.length === 1 ? "task" : "tasks"}`;
  const recompute = recomputeBox(action);
  const yes = await confirmDialog({
    title: `${verb} ${howMany}?`,
    message: [h("p", { id: "dialog-count" }, `${verb} the `, h("strong", {}, howMany), " selected, one by one."), leftText, ACTIONS[action].explain, recompute],
    confirm: `${verb} ${howMany}`,
    keep: "Do nothing",
    danger: action === "cancel",
  });
  if (!yes) return false;
  const body = action === "replay" && recompute.querySelector("input").checked ? { recompute: true } : undefined;
  replace(outcome, h("p", { class: "live" }, `${verb}: ${howMany}…`));
  const results = await eachAtMost(AT_ONCE, targets, async (task) => {
    try {
      return { task, answer: await apiAnswer("POST", `/v1/tasks/${encodeURIComponent(task.id)}/${action}`, { body, signal }) };
    } catch (error) {
      if (error.name === "AbortError") throw error;
      return { task, error };
    }
  });
  replace(outcome, report(action, done, results, leftText));
  announce(`${verb}: ${results.filter((r) => !r.error).length} of ${targets.length} done.`);
  return true;
}

function recomputeBox(action) {
  if (action !== "replay") return null;
  return h("label", { class: "check" }, h("input", { type: "checkbox", id: "dialog-recompute" }), "Recompute: skip the result cache (call the model again even for a request it has answered)");
}

function report(action, done, results, leftText) {
  const ok = results.filter((r) => !r.error);
  const refused = new Map();
  for (const { task, error } of results.filter((r) => r.error)) {
    const key = error.code ?? "ERROR";
    const entry = refused.get(key) ?? { error, tasks: [] };
    entry.tasks.push(task);
    refused.set(key, entry);
  }
  const lines = [h("p", { class: "notice", role: "status", id: "bulk-done" }, `${count(ok.length)} of ${count(results.length)} ${done}.`, leftText ? ` ${leftText}` : "")];
  if (action === "replay" && ok.length) {
    const existing = ok.filter((r) => r.answer.status === 200).length;
    lines.push(h("p", {}, "Their replays: ", ok.flatMap((r, i) => [i ? ", " : "", link(shortId(r.answer.json.id), "tasks", r.answer.json.id)]), existing ? ` (${existing} asked before: the existing replay is shown)` : ""));
  }
  for (const [, { error, tasks }] of refused) {
    const box = errorBox(error);
    box.append(h("p", {}, `${tasks.length === 1 ? "Task" : "Tasks"} `, tasks.flatMap((t, i) => [i ? ", " : "", link(shortId(t.id), "tasks", t.id)]), "."));
    lines.push(box);
  }
  return lines;
}

/** `work` over `items`, at most `limit` at a time; the results in the items' order. */
async function eachAtMost(limit, items, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
