// End to end against the dev server (every function of the stack, on Postgres and the
// SQS-compatible server) with the stub provider: runs, creates of each kind, idempotency, get,
// wait, cancel during a wait, cancel of a run, errors as the API answers them.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AitasksClient, AitasksError, AitasksWaitTimeoutError } from "../../dist/index.js";
import { SLOW } from "../support/stub-provider.mjs";
import { PRICES, devToken, startStack, tenant } from "../support/stack.mjs";

let stack;
let client;
let app;

before(async () => {
  stack = await startStack();
  app = tenant("tasks");
  client = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(app) });
});
after(async () => {
  await stack?.stop();
});

const classify = (input, prompt = "Spam?") => ({ kind: "classify", prompt, input, choices: ["spam", "ham"] });

async function untilStatus(id, statuses, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    const task = await client.getTask(id);
    if (statuses.includes(task.status) || Date.now() > until) return task;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a run: create, get; a run's task is created once per effect key and waited for", async () => {
  const run = await client.createRun({ scopeId: "inbox", actor: { userId: "u1" } });
  assert.equal(run.state, "running");
  assert.equal(run.scopeId, "inbox");
  assert.equal((await client.getRun(run.id)).id, run.id);

  const body = { runId: run.id, stepKey: "spam", effectKey: `${run.id}/mail-1`, modelId: "default", request: classify("WIN A PRIZE") };
  const first = await client.createTask(body);
  assert.equal(first.created, true);
  assert.equal(first.task.runId, run.id);
  const again = await client.createTask(body);
  assert.equal(again.created, false);
  assert.equal(again.task.id, first.task.id);

  const done = await client.waitForTask(first.task, { timeoutMs: 30_000 });
  assert.equal(done.status, "succeeded");
  assert.ok(["spam", "ham"].includes(done.output), `output ${done.output}`);
  // The usage and its cost at the profile's prices (docs/api.md, "Bodies").
  assert.equal(done.usage.inputTokens, 120);
  assert.equal(done.usage.outputTokens, 8);
  const expected = (120 * PRICES.inputPerMillion + 8 * PRICES.outputPerMillion) / 1e6;
  assert.ok(Math.abs(done.usage.estimatedCostUsd - expected) < 1e-9, `cost ${done.usage.estimatedCostUsd}, expected ${expected}`);

  const byKey = await client.getTaskByEffectKey(`${run.id}/mail-1`);
  assert.equal(byKey.id, first.task.id);
  assert.equal(byKey.status, "succeeded");
});

test("every kind, as an application-owned task, with typed outputs of the right shape", async () => {
  const owner = { scopeId: "kinds", usageSubject: { type: "user", id: "u7" } };
  const make = (effectKey, request, extra = {}) => client.createTask({ owner, stepKey: effectKey, effectKey: `kinds/${effectKey}`, modelId: "default", request, ...extra });
  const created = await Promise.all([
    make("text", { kind: "generate_text", prompt: "Summarize", input: { text: "long" }, maxOutputChars: 100 }),
    make("one", classify("hello")),
    make("many", { kind: "classify_many", prompt: "Topics?", input: "x", choices: ["a", "b", "c"], minChoices: 1, maxChoices: 2 }),
    make(
      "extract",
      {
        kind: "extract_data",
        prompt: "Read the invoice",
        input: "Total 42 EUR",
        fields: [
          { name: "total", type: "number", description: "Total", required: true },
          { name: "currency", type: "choice", description: "Currency", required: true, choices: ["EUR", "USD"] },
          { name: "paidAt", type: "date_time", description: "Paid at", required: false },
        ],
      },
    ),
    make("deferred", { kind: "generate_text", prompt: "Later" }, { delivery: { deferred: { within: "PT2H" } } }),
  ]);
  const tasks = await client.waitForTasks(created.map((c) => c.task), { timeoutMs: 60_000 });
  assert.deepEqual(tasks.map((t) => t.status), Array(5).fill("succeeded"));
  const [text, one, many, extract, deferred] = tasks;
  assert.equal(typeof text.output, "string");
  assert.equal(text.kind, "generate_text");
  assert.ok(["spam", "ham"].includes(one.output));
  assert.ok(Array.isArray(many.output) && many.output.length >= 1 && many.output.every((c) => ["a", "b", "c"].includes(c)));
  assert.equal(extract.output.total, 42);
  assert.ok(["EUR", "USD"].includes(extract.output.currency));
  assert.equal(text.usageSubject?.id ?? text.usageUserId, "u7");
  // A deferred task on a profile without a batch API runs now; its window's end is on it.
  assert.ok(Date.parse(deferred.deferredBy) > Date.parse(deferred.createdAt));
});

test("a cancel during a wait: the waiting call returns the canceled task", async () => {
  const { task } = await client.createTask({ owner: { scopeId: "cancel" }, stepKey: "slow", effectKey: "cancel/slow-1", modelId: "default", request: classify("x", `Hold ${SLOW}`) });
  const waiting = client.waitForTask(task, { timeoutMs: 60_000 });
  assert.equal((await untilStatus(task.id, ["running"])).status, "running");
  const canceled = await client.cancelTask(task.id);
  assert.ok(canceled.cancelRequestedAt !== null);
  const ended = await waiting;
  assert.equal(ended.status, "canceled");
  assert.equal(ended.errorCode, "WORKFLOW_AI_CANCELED");
  assert.equal(ended.output, null);
  // A cancel of a terminal task changes nothing.
  const again = await client.cancelTask(task.id);
  assert.equal(again.status, "canceled");
  assert.equal(again.updatedAt, ended.updatedAt);
});

test("a wait ends at its deadline, or when its signal aborts; the task goes on", async () => {
  const { task } = await client.createTask({ owner: { scopeId: "cancel" }, stepKey: "slow", effectKey: "cancel/slow-2", modelId: "default", request: classify("y", `Hold ${SLOW}`) });
  const timedOut = await client.waitForTask(task, { timeoutMs: 1500 }).catch((e) => e);
  assert.ok(timedOut instanceof AitasksWaitTimeoutError, String(timedOut));
  assert.ok(["queued", "running"].includes(timedOut.task.status));

  const controller = new AbortController();
  const waiting = client.waitForTask(task, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("caller gave up")), 300);
  await assert.rejects(waiting, /caller gave up/);
  assert.ok(["queued", "running"].includes((await client.getTask(task.id)).status));
  assert.equal((await client.waitForTask((await client.cancelTask(task.id)).id, { timeoutMs: 30_000 })).status, "canceled");
});

test("a run's cancel ends its tasks, and the run takes no more", async () => {
  const run = await client.createRun({ scopeId: "cancel-run" });
  const results = await client.createTasks(
    [1, 2, 3].map((i) => ({ runId: run.id, stepKey: "slow", effectKey: `${run.id}/slow-${i}`, modelId: "default", request: classify(`${i}`, `Hold ${SLOW}`) })),
  );
  assert.deepEqual(results.map((r) => r.status), [201, 201, 201]);
  const canceledRun = await client.cancelRun(run.id);
  assert.equal(canceledRun.state, "canceled");
  assert.equal((await client.getRun(run.id)).state, "canceled");
  const tasks = await client.waitForTasks(results.map((r) => r.task), { timeoutMs: 60_000 });
  assert.deepEqual(tasks.map((t) => t.status), ["canceled", "canceled", "canceled"]);
  const refused = await client.createTask({ runId: run.id, stepKey: "late", effectKey: `${run.id}/late`, modelId: "default", request: classify("z") }).catch((e) => e);
  assert.ok(refused instanceof AitasksError);
  assert.equal(refused.status, 409);
  assert.equal(refused.code, "WORKFLOW_AI_RUN_UNAVAILABLE");
});

test("refusals are typed errors: invalid body, unknown model, bad token, another tenant's task", async () => {
  const invalid = await client
    .createTask({ owner: { scopeId: "bad" }, stepKey: "s", effectKey: "bad/1", modelId: "default", request: { kind: "classify", prompt: "p", input: 1, choices: ["only"] } })
    .catch((e) => e);
  assert.ok(invalid instanceof AitasksError);
  assert.equal(invalid.status, 400);
  assert.equal(invalid.code, "INVALID_REQUEST");
  assert.ok(invalid.details.some((d) => d.path.startsWith("request.choices")), JSON.stringify(invalid.details));

  // The callback form reaches the API as written: a callback id with a character the rule
  // refuses names its path, and stores nothing.
  const badCallback = await client
    .createTask({ owner: { scopeId: "bad" }, stepKey: "s", effectKey: "bad/cb", modelId: "default", request: classify("x"), callback: { lambdaDurable: { callbackId: "not valid!" } } })
    .catch((e) => e);
  assert.equal(badCallback.status, 400);
  assert.deepEqual(badCallback.details.map((d) => d.path), ["callback.lambdaDurable.callbackId"]);
  assert.equal((await client.getTaskByEffectKey("bad/cb").catch((e) => e)).code, "NOT_FOUND");

  const unknownModel = await client
    .createTask({ owner: { scopeId: "bad" }, stepKey: "s", effectKey: "bad/2", modelId: "no-such-model", request: classify("x") })
    .catch((e) => e);
  assert.equal(unknownModel.status, 400);
  assert.equal(unknownModel.code, "AI_MODEL_UNKNOWN");

  const stranger = new AitasksClient({ baseUrl: stack.baseUrl, token: devToken(app, "not-the-secret") });
  const unauthorized = await stranger.createRun({ scopeId: "x" }).catch((e) => e);
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.code, "UNAUTHORIZED");

  const { task } = await client.createTask({ owner: { scopeId: "mine" }, stepKey: "s", effectKey: "mine/1", modelId: "default", request: classify("x") });
  const other = new AitasksClient({ baseUrl: stack.baseUrl, token: devToken(tenant("other")) });
  const notFound = await other.getTask(task.id).catch((e) => e);
  assert.equal(notFound.status, 404);
  assert.equal(notFound.code, "NOT_FOUND");
});
