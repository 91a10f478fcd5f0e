// One task: what it was asked, what it answered, what it cost, its attempts, events, callbacks,
// provider batch, replays and timings. An open task can be canceled, an ended one replayed. While it is queued or running the page long-polls
// (GET /v1/tasks/{id}?wait=20) and redraws when it changes, without a reload; beside that, an
// on-demand task's answer grows as the model writes it (live-output.js), until the task ends.

import { api, apiAnswer, isTerminal, sleep } from "../api.js";
import { announce, badge, errorBox, facts, h, link, replace, route } from "../dom.js";
import { confirmDialog } from "../dialog.js";
import { count, duration, usd, when } from "../format.js";
import { jsonView } from "../json-view.js";
import { liveOutput } from "../live-output.js";
import { historySections } from "./task-history.js";

const WAIT_SECONDS = 20;

export async function renderTask({ main, id, signal }) {
  let task;
  try {
    task = await api("GET", `/v1/tasks/${encodeURIComponent(id)}`, { signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    if (error.status === 404) {
      replace(main, h("h1", { tabindex: "-1", id: "not-found" }, "Task not found"), h("p", { class: "error", role: "alert" }, `No task ${id} is visible with this token (404 ${error.code}).`), h("p", {}, h("a", { href: "#/" }, "Back to the runs")));
      return;
    }
    replace(main, h("h1", { tabindex: "-1" }, "Task"), errorBox(error));
    return;
  }
  const heading = h("h1", { tabindex: "-1" });
  const toolbar = h("div", { class: "toolbar" });
  const live = h("p", { class: "live", id: "live", "aria-live": "off" });
  const body = h("div", { id: "task-body" });
  const history = h("div", { id: "task-history" });
  const request = h("div", {});
  replace(main, heading, toolbar, live, body, history, request);

  // The answer as it is written: an open task's, unless deferred (a provider batch has no stream).
  const stream = isTerminal(task.status) || task.deferredBy ? null : liveOutput(id);
  const draw = async (current) => {
    replace(heading, `Task ${current.stepKey} `, badge(current.status));
    heading.querySelector(".status").id = "task-status";
    if (!isTerminal(current.status)) replace(live, waiting(current));
    replace(toolbar, isTerminal(current.status) ? replayButton(current, signal) : cancelButton(current, signal, (updated) => show(updated, true)), h("button", { type: "button", class: "secondary", id: "refresh", onclick: () => window.dispatchEvent(new HashChangeEvent("hashchange")) }, "Refresh"));
    replace(body, ...taskSections(current, stream?.panel));
    replace(request, h("section", { "aria-labelledby": "h-request" }, h("h2", { id: "h-request" }, "Request"), h("div", { id: "task-request" }, jsonView(current.request, "Request"))));
    replace(history, ...(await historySections(current, signal)));
  };
  // Both loops below show what they read: one draw at a time, and only when the task changed
  // (or `always`: a cancel's answer).
  let drawing = draw(task);
  const show = (next, always = false) => {
    const same = next.status === task.status && next.updatedAt === task.updatedAt && next.attempts === task.attempts;
    if (same && !always) return drawing;
    if (next.status !== task.status) announce(`The task is now ${next.status}.`);
    task = next;
    drawing = drawing.catch(() => {}).then(() => draw(next));
    return drawing;
  };
  await drawing;

  // Live: hold a long poll open until the task changes, redraw, again until it ends.
  const followTask = async () => {
    while (!isTerminal(task.status) && !signal.aborted) {
      replace(live, waiting(task));
      let next;
      try {
        next = await api("GET", `/v1/tasks/${encodeURIComponent(id)}`, { signal, query: { wait: WAIT_SECONDS } });
      } catch (error) {
        if (error.name === "AbortError") return;
        replace(live, `Live updates paused (${error.code}); trying again in 5 s.`);
        await sleep(5000, signal);
        continue;
      }
      await show(next);
    }
  };
  // Each read of the stream tells the task's status: when it differs from the page's (queued
  // to running; the end), read the task now, not at the end of the task's long poll.
  let refreshing = null;
  const refresh = () => {
    refreshing ??= api("GET", `/v1/tasks/${encodeURIComponent(id)}`, { signal })
      .then((next) => show(next), () => {}) // On an error the task's own long poll reads it again.
      .finally(() => { refreshing = null; });
    return refreshing;
  };
  const streaming = new AbortController();
  signal.addEventListener("abort", () => streaming.abort(), { once: true });
  const followStream = async () => {
    if (!stream) return;
    const ended = await stream.follow(streaming.signal, (status) => {
      if (status !== task.status) refresh();
    });
    if (ended && !signal.aborted) await refresh();
  };
  const streamed = followStream();
  await followTask();
  streaming.abort();
  await streamed;
  if (!signal.aborted) replace(live, `This task has ended: ${task.status}.`);
}

function waiting(task) {
  return `Live: waiting for this ${task.status} task to change (long poll, ${WAIT_SECONDS} s at a time).`;
}

function cancelButton(task, signal, redraw) {
  const button = h("button", { type: "button", class: "danger", id: "cancel-task" }, "Cancel task");
  button.addEventListener("click", async () => {
    const yes = await confirmDialog({
      title: "Cancel this task?",
      message: task.status === "running" ? "It is running: its provider call is aborted and it ends canceled." : "It ends canceled and is never run.",
      confirm: "Cancel task",
    });
    if (!yes) return;
    button.disabled = true;
    try {
      const canceled = await api("POST", `/v1/tasks/${encodeURIComponent(task.id)}/cancel`, { signal });
      await redraw(canceled);
    } catch (error) {
      if (error.name === "AbortError") return;
      button.after(errorBox(error));
      button.disabled = false;
    }
  });
  return button;
}

/** Replay an ended task: a new task with its request, model, owner and scope; then its page. */
function replayButton(task, signal) {
  const button = h("button", { type: "button", id: "replay-task" }, "Replay");
  button.addEventListener("click", async () => {
    const recompute = h("input", { type: "checkbox", id: "dialog-recompute" });
    const yes = await confirmDialog({
      title: "Replay this task?",
      message: [
        "A new task is made with the same request, model, owner and scope, and runs now. This task stays as it is.",
        h("label", { class: "check" }, recompute, "Recompute: skip the result cache (call the model again even for a request it has answered)"),
      ],
      confirm: "Replay",
      keep: "Do nothing",
      danger: false,
    });
    if (!yes) return;
    button.disabled = true;
    try {
      const { status, json: replay } = await apiAnswer("POST", `/v1/tasks/${encodeURIComponent(task.id)}/replay`, { signal, body: recompute.checked ? { recompute: true } : undefined });
      announce(status === 201 ? "Replayed: the new task is shown." : "This replay was asked before: its task is shown.");
      window.location.hash = route("tasks", replay.id);
    } catch (error) {
      if (error.name === "AbortError") return;
      button.after(errorBox(error));
      button.disabled = false;
    }
  });
  return button;
}

function taskSections(task, streamPanel) {
  const usage = task.usage ?? null;
  return [
    h("div", { class: "grid3" },
      h("section", { "aria-labelledby": "h-overview" }, h("h2", { id: "h-overview" }, "Overview"), facts([
        ["Id", h("span", { class: "mono" }, task.id)],
        ["Kind", task.kind],
        ["Model", task.modelId + (task.modelRef ? ` (${task.modelRef.provider} ${task.modelRef.model})` : "")],
        ["Run", task.runId ? link(task.runId, "runs", task.runId) : "none (owned by a scope)"],
        ["Replay of", task.replayOf ? h("span", { id: "task-replay-of" }, link(task.replayOf, "tasks", task.replayOf)) : null],
        ["Step key", task.stepKey],
        ["Effect key", task.effectKey],
        ["Attempts", String(task.attempts ?? 0)],
        ["Deferred until", when(task.deferredBy)],
        ["Usage subject", task.usageSubject ? `${task.usageSubject.type} ${task.usageSubject.id}` : task.usageUserId],
      ])),
      h("section", { "aria-labelledby": "h-timings" }, h("h2", { id: "h-timings" }, "Timings"), facts([
        ["Created", when(task.createdAt)],
        ["Started", when(task.startedAt)],
        ["Completed", when(task.completedAt)],
        ["Waited in queue", duration(task.createdAt, task.startedAt)],
        ["Ran for", duration(task.startedAt, task.completedAt)],
        ["In all", duration(task.createdAt, task.completedAt)],
        ["Cancel requested", when(task.cancelRequestedAt)],
        ["Updated", when(task.updatedAt)],
      ])),
      h("section", { "aria-labelledby": "h-usage" }, h("h2", { id: "h-usage" }, "Usage and cost"), usage
        ? facts([
          ["Input tokens", count(usage.inputTokens)],
          ["Output tokens", count(usage.outputTokens)],
          ["Model", usage.model],
          ["Estimated cost", h("span", { id: "task-cost" }, typeof usage.estimatedCostUsd === "number" ? usd(usage.estimatedCostUsd) : "no prices configured for this profile")],
        ])
        : h("p", { class: "muted" }, task.attempts === 0 && task.output !== null ? "None: the output came from the result cache." : "No usage yet.")),
    ),
    task.errorCode ? h("section", { "aria-labelledby": "h-error" }, h("h2", { id: "h-error" }, "Error"), h("div", { class: "error", id: "task-error" }, h("strong", {}, task.errorCode), ": ", task.errorMessage ?? "")) : null,
    h("section", { "aria-labelledby": "h-output" }, h("h2", { id: "h-output" }, "Output"), outputOf(task, streamPanel)),
  ];
}

/** The output; while the task is open, the answer's live panel when it has one. */
function outputOf(task, streamPanel) {
  if (task.output !== null && task.output !== undefined) return h("div", { id: "task-output" }, jsonView(task.output, "Output"));
  if (isTerminal(task.status)) return h("p", { class: "muted", id: "task-output" }, "No output.");
  return [h("p", { class: "muted", id: "task-output" }, "No output yet."), streamPanel];
}
