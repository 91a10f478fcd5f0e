// A task's history, each from its own route: its replays (GET .../replays), attempts
// (GET .../attempts), completion events, callbacks (never a token) and the provider batch of a
// deferred task.

import { api } from "../api.js";
import { badge, errorBox, facts, h, link, table } from "../dom.js";
import { count, duration, shortId, usd, when } from "../format.js";

export async function historySections(task, signal) {
  const base = `/v1/tasks/${encodeURIComponent(task.id)}`;
  const [attempts, events, callbacks, batch, replays] = await Promise.all([
    read(`${base}/attempts`, signal),
    read(`${base}/events`, signal),
    read(`${base}/callbacks`, signal),
    read(`${base}/batch`, signal),
    read(`${base}/replays`, signal),
  ]);
  return [
    section("replays", "Replays", replays, (answer) =>
      answer.replays.length
        ? [table("Replays", ["Replay", "Status", "Effect key", "Created", "By operation"], answer.replays.map((r) => [
          link(shortId(r.id), "tasks", r.id),
          badge(r.status),
          r.effectKey,
          when(r.createdAt),
          r.operationId ? link(shortId(r.operationId), "operations", r.operationId) : "",
        ])), more(answer)]
        : h("p", { class: "muted" }, "Not replayed.")),
    section("attempts", "Attempts", attempts, (answer) =>
      answer.attempts.length
        ? [table("Attempts", ["#", "Started", "Ended", "Took", "Outcome", "Profile", "Model", "Error", "Tokens in / out", { label: "Cost", num: true }], answer.attempts.map((a) => [
          String(a.attempt),
          when(a.startedAt),
          when(a.endedAt),
          duration(a.startedAt, a.endedAt),
          a.outcome ? badge(a.outcome) : "running",
          a.profile ?? "",
          a.modelId ?? "",
          a.errorCode ? h("span", { class: "attempt-error" }, h("strong", {}, a.errorCode), a.errorMessage ? `: ${a.errorMessage}` : "") : "",
          a.usage ? `${count(a.usage.inputTokens)} / ${count(a.usage.outputTokens)}` : "",
          typeof a.estimatedCostUsd === "number" ? usd(a.estimatedCostUsd) : "",
        ])), more(answer)]
        : h("p", { class: "muted" }, "No attempt yet.")),
    section("events", "Completion events", events, (answer) =>
      answer.events.length
        ? [table("Completion events", ["Type", "Status", "Created", "Delivered"], answer.events.map((e) => [e.type, badge(e.status), when(e.createdAt), e.deliveredAt ? when(e.deliveredAt) : "owed"])), more(answer)]
        : h("p", { class: "muted" }, "None (a task has one when it ends; delivered ones are pruned after a while).")),
    section("callbacks", "Callbacks", callbacks, (answer) =>
      answer.callbacks.length
        ? [table("Callbacks", ["Kind", "State", "Attached", "Heartbeat", "Due", "Ended", { label: "Tries", num: true }], answer.callbacks.map((c) => [c.kind, c.state, when(c.attachedAt), when(c.heartbeatAt), when(c.dueAt), when(c.endedAt), String(c.tries)])), more(answer)]
        : h("p", { class: "muted" }, "No workflow waits on this task through a callback.")),
    section("batch", "Provider batch", batch, (answer) =>
      facts([
        ["Provider", answer.provider],
        ["Provider's batch id", answer.providerBatchId ?? "not accepted yet"],
        ["Status", answer.status],
        ["Outcome", answer.outcome ?? ""],
        ["Requests", count(answer.requests)],
        ["Your tasks still pending", count(answer.pending)],
        ["Created", when(answer.createdAt)],
        ["Submitted", when(answer.submittedAt)],
        ["Ended", when(answer.endedAt)],
      ]), (error) => (error.code === "NOT_IN_BATCH" ? h("p", { class: "muted" }, "In no provider batch (it was not deferred, or its batch is not formed yet or was pruned).") : null)),
  ];
}

async function read(path, signal) {
  try {
    return { answer: await api("GET", path, { signal }) };
  } catch (error) {
    if (error.name === "AbortError") throw error;
    return { error };
  }
}

function more(answer) {
  return answer.more ? h("p", { class: "muted" }, "Only the first 100 are shown.") : null;
}

function section(id, title, { answer, error }, render, onError) {
  const content = error ? (onError?.(error) ?? errorBox(error)) : render(answer);
  return h("section", { "aria-labelledby": `h-${id}`, id: `task-${id}` }, h("h2", { id: `h-${id}` }, title), content);
}
