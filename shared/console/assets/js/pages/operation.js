// One operation (GET /v1/operations/{id}): its filter, its progress (matched, done, skipped,
// failed and why) with a progress bar, read again every REFRESH_MS while it runs; Stop.
// `matched` grows as the operation walks its pages: while it runs, the bar measures against the
// count the list showed when it was confirmed (`?expected=N`) when there was one, and is
// indeterminate otherwise.

import { api, sleep } from "../api.js";
import { announce, badge, errorBox, facts, h, replace, table } from "../dom.js";
import { count, when } from "../format.js";
import { describeFilter } from "../task-filter.js";

const REFRESH_MS = 1500;

export async function renderOperation({ main, id, query, signal }) {
  const expected = /^\d+$/.test(query.expected ?? "") ? Number(query.expected) : null;
  const path = `/v1/operations/${encodeURIComponent(id)}`;
  let operation;
  try {
    operation = await api("GET", path, { signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    if (error.status === 404) {
      replace(main, h("h1", { tabindex: "-1" }, "Operation not found"), h("p", { class: "error", role: "alert" }, `No operation ${id} is visible with this token (404 ${error.code}).`), h("p", {}, h("a", { href: "#/operations" }, "The operations")));
      return;
    }
    replace(main, h("h1", { tabindex: "-1" }, "Operation"), errorBox(error));
    return;
  }
  const heading = h("h1", { tabindex: "-1" });
  const toolbar = h("div", { class: "toolbar" });
  const live = h("p", { class: "live", id: "live" });
  const body = h("div", { id: "operation-body" });
  replace(main, heading, toolbar, live, body);

  const draw = (op) => {
    replace(heading, `Operation: ${op.action} `, h("span", { id: "operation-state" }, badge(op.state)));
    const stop = h("button", { type: "button", class: "danger", id: "stop-operation" }, "Stop");
    stop.addEventListener("click", async () => {
      stop.disabled = true;
      try {
        const stopped = await api("POST", `${path}/stop`, { signal });
        announce(`The operation is ${stopped.state}.`);
        operation = stopped;
        draw(stopped);
      } catch (error) {
        if (error.name === "AbortError") return;
        toolbar.append(errorBox(error));
        stop.disabled = false;
      }
    });
    replace(toolbar, op.state === "running" ? stop : null, h("a", { href: "#/operations" }, "All operations"));
    replace(body, ...sections(op, expected));
  };
  draw(operation);

  while (operation.state === "running" && !signal.aborted) {
    replace(live, `Live: read again every ${REFRESH_MS / 1000} s while it runs.`);
    await sleep(REFRESH_MS, signal);
    if (signal.aborted) return;
    try {
      const next = await api("GET", path, { signal });
      if (next.state !== operation.state) announce(`The operation is ${next.state}.`);
      operation = next;
      draw(operation);
    } catch (error) {
      if (error.name === "AbortError") return;
      replace(live, `Live updates paused (${error.code}); trying again.`);
      await sleep(error.retryAfter ? error.retryAfter * 1000 : 5000, signal);
    }
  }
  if (!signal.aborted) replace(live, operation.state === "done" ? "This operation has acted on every task it matched." : `This operation is ${operation.state}.`);
}

function sections(op, expected) {
  const processed = (op.done ?? 0) + (op.skipped ?? 0) + (op.failed ?? 0);
  const running = op.state === "running";
  const total = running ? (expected === null ? null : Math.max(expected, op.matched)) : op.matched;
  const bar = total === null
    ? h("progress", { id: "operation-progress", "aria-label": "Tasks acted on" })
    : h("progress", { id: "operation-progress", max: String(Math.max(total, 1)), value: String(total > 0 ? processed : running ? 0 : 1), "aria-label": "Tasks acted on" });
  const said = running
    ? `${count(processed)} processed of ${count(op.matched)} matched so far${expected === null ? "" : ` (about ${count(expected)} expected)`}; still walking the tasks`
    : `${count(processed)} of ${count(op.matched)} matched tasks processed`;
  const numbers = (label) => ({ label, num: true });
  return [
    h("section", { "aria-labelledby": "h-progress" },
      h("h2", { id: "h-progress" }, "Progress"),
      h("div", { class: "progress" }, bar, h("span", { id: "operation-processed" }, said)),
      table("Counts", [numbers("Matched"), numbers("Done"), numbers("Skipped"), numbers("Failed")], [[
        h("span", { id: "operation-matched" }, count(op.matched)),
        h("span", { id: "operation-done" }, count(op.done)),
        h("span", { id: "operation-skipped" }, count(op.skipped)),
        h("span", { id: "operation-failed" }, count(op.failed)),
      ]]),
      h("p", { class: "muted" }, op.action === "cancel" ? "Done: canceled (a queued task) or cancel requested (a running one)." : "Done: a replay made.")),
    reasons("skipped", "Skipped, and why", op.skippedBecause),
    reasons("failed", "Failed, and why", op.failedBecause),
    h("section", { "aria-labelledby": "h-operation" },
      h("h2", { id: "h-operation" }, "Operation"),
      facts([
        ["Id", h("span", { class: "mono" }, op.id)],
        ["Action", op.action],
        ["Filter", h("span", { id: "operation-filter" }, describeFilter(op.filter ?? {}, op.action))],
        ["Acts on", "tasks created before the operation was"],
        ["Recompute", op.action === "replay" ? (op.recompute ? "yes: the result cache is skipped" : "no") : ""],
        ["Created", when(op.createdAt)],
        ["Updated", when(op.updatedAt)],
        ["Ended", when(op.endedAt)],
      ])),
  ];
}

function reasons(id, title, because) {
  const entries = Object.entries(because ?? {});
  return h("section", { "aria-labelledby": `h-${id}`, id: `operation-${id}-because` },
    h("h2", { id: `h-${id}` }, title),
    entries.length ? table(title, ["Code", { label: "Tasks", num: true }], entries.map(([code, n]) => [h("code", {}, code), count(n)])) : h("p", { class: "muted" }, "None."));
}
