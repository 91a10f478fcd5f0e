// Retries: 429 and 5xx are sent again with jittered backoff and never sooner than Retry-After;
// a 4xx never is; a run create like any call, with the same Idempotency-Key on every attempt.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, AitasksError, backoffDelay, parseRetryAfter } from "../../dist/index.js";
import { createBody, fastRetry, startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

async function stub(handler) {
  const s = await startStub(handler);
  stubs.push(s);
  return s;
}

const error = (status, code, headers = {}) => ({ status, headers, body: { error: { code, message: `${code} message` } } });

test("a 503 and a 500 are retried, then the task is answered", async () => {
  const s = await stub((_req, n) => (n === 1 ? error(503, "UNAVAILABLE") : n === 2 ? error(500, "INTERNAL") : { status: 201, body: taskBody() }));
  const retries = [];
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry, onRetry: (e) => retries.push(e.status) });
  const { task, created } = await client.createTask(createBody());
  assert.equal(created, true);
  assert.equal(task.status, "queued");
  assert.equal(s.requests.length, 3);
  assert.deepEqual(retries, [503, 500]);
  // Every attempt sends the same body.
  assert.deepEqual(s.requests.map((r) => r.body.effectKey), ["e", "e", "e"]);
});

test("a 429 with Retry-After waits at least that long before the next attempt", async () => {
  const s = await stub((_req, n) => (n === 1 ? error(429, "WORKFLOW_AI_RATE_LIMIT", { "retry-after": "1" }) : { status: 200, body: taskBody() }));
  const delays = [];
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry, onRetry: (e) => delays.push(e.delayMs) });
  const { created } = await client.createTask(createBody());
  assert.equal(created, false);
  assert.equal(s.requests.length, 2);
  assert.deepEqual(delays, [1000]);
  const gap = s.requests[1].at - s.requests[0].at;
  assert.ok(gap >= 950, `the retry came ${gap} ms after the 429, before its Retry-After of 1 s`);
});

test("a read over the tenant's read rate (429 WORKFLOW_AI_READ_RATE) is sent again after its Retry-After", async () => {
  const summary = {
    createdAfter: "2026-01-01T00:00:00Z", createdBefore: "2026-01-08T00:00:00Z",
    tasks: { queued: 0, running: 0, succeeded: 2, failed: 0, canceled: 0 }, costs: [], examined: 2, complete: true,
  };
  const s = await stub((_req, n) => (n === 1 ? error(429, "WORKFLOW_AI_READ_RATE", { "retry-after": "1" }) : { status: 200, body: summary }));
  const delays = [];
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry, onRetry: (e) => delays.push(e.delayMs) });
  const answered = await client.getSummary();
  assert.equal(answered.tasks.succeeded, 2);
  assert.equal(s.requests.length, 2);
  assert.deepEqual(delays, [1000]);
  assert.ok(s.requests[1].at - s.requests[0].at >= 950, "waited for Retry-After");
  // Past what the policy waits, the refusal is the answer, with its code and Retry-After.
  const spent = await stub(() => error(429, "WORKFLOW_AI_READ_RATE", { "retry-after": "900" }));
  const refused = await new AitasksClient({ baseUrl: spent.url, token: "t", retry: fastRetry }).getSummary().catch((e) => e);
  assert.ok(refused instanceof AitasksError);
  assert.equal(refused.code, "WORKFLOW_AI_READ_RATE");
  assert.equal(refused.retryAfterSeconds, 900);
  assert.equal(spent.requests.length, 1);
});

for (const [status, code] of [
  [400, "INVALID_REQUEST"],
  [401, "UNAUTHORIZED"],
  [404, "NOT_FOUND"],
  [409, "WORKFLOW_AI_RUN_UNAVAILABLE"],
  [413, "AI_TASK_INPUT_TOO_LARGE"],
]) {
  test(`a ${status} is never retried and becomes an AitasksError`, async () => {
    const s = await stub(() => error(status, code, { "apigw-requestid": "req-123" }));
    const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
    const failure = await client.createTask(createBody()).catch((e) => e);
    assert.ok(failure instanceof AitasksError);
    assert.equal(failure.status, status);
    assert.equal(failure.code, code);
    assert.equal(failure.requestId, "req-123");
    assert.equal(failure.retryable, false);
    assert.equal(s.requests.length, 1);
  });
}

test("retries stop after maxAttempts; the last refusal is thrown", async () => {
  const s = await stub(() => error(502, "BAD_GATEWAY"));
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: { ...fastRetry, maxAttempts: 3 } });
  const failure = await client.getTask("0190f3c2-0000-7000-8000-000000000001").catch((e) => e);
  assert.ok(failure instanceof AitasksError);
  assert.equal(failure.status, 502);
  assert.equal(failure.retryable, true);
  assert.equal(s.requests.length, 3);
});

test("a Retry-After beyond maxRetryAfterMs is not waited for: the error says when to come back", async () => {
  const s = await stub(() => error(429, "WORKFLOW_AI_TENANT_QUOTA", { "retry-after": "3600" }));
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  const failure = await client.createTask(createBody()).catch((e) => e);
  assert.equal(failure.code, "WORKFLOW_AI_TENANT_QUOTA");
  assert.equal(failure.retryAfterSeconds, 3600);
  assert.equal(s.requests.length, 1);
});

test("a run create sends one Idempotency-Key on every attempt, so it is retried like any call", async () => {
  const run = { id: "0190f3c2-0000-7000-8000-0000000000aa", appId: "app", scopeId: "s", state: "running", cancelRequestedAt: null, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" };
  const s1 = await stub((_r, n) => (n === 1 ? error(500, "INTERNAL") : n === 2 ? { destroy: true } : n === 3 ? error(503, "UNAVAILABLE") : { status: 200, body: run }));
  const client1 = new AitasksClient({ baseUrl: s1.url, token: "t", retry: fastRetry });
  assert.equal((await client1.createRun({ scopeId: "s" })).id, run.id);
  assert.equal(s1.requests.length, 4, "a 500, a dropped connection and a 503 (each may have made the run), then the run");
  const keys = s1.requests.map((r) => r.headers["idempotency-key"]);
  assert.match(keys[0], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(keys, [keys[0], keys[0], keys[0], keys[0]], "one key for the call");

  // Another call: another key. A key of the caller's: sent as given.
  await client1.createRun({ scopeId: "s" });
  await client1.createRun({ scopeId: "s" }, { idempotencyKey: "order-7/run" });
  const [other, given] = s1.requests.slice(4).map((r) => r.headers["idempotency-key"]);
  assert.notEqual(other, keys[0]);
  assert.equal(given, "order-7/run");

  const s2 = await stub(() => error(422, "IDEMPOTENCY_KEY_REUSED"));
  const client2 = new AitasksClient({ baseUrl: s2.url, token: "t", retry: fastRetry });
  const failure = await client2.createRun({ scopeId: "other" }, { idempotencyKey: "order-7/run" }).catch((e) => e);
  assert.equal(failure.status, 422);
  assert.equal(failure.code, "IDEMPOTENCY_KEY_REUSED");
  assert.equal(s2.requests.length, 1);
});

test("a dropped connection is retried for idempotent calls and reported as CONNECTION_ERROR at the end", async () => {
  const s = await stub((_r, n) => (n === 1 ? { destroy: true } : { status: 200, body: taskBody({ status: "running" }) }));
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  assert.equal((await client.getTask("0190f3c2-0000-7000-8000-000000000001")).status, "running");
  assert.equal(s.requests.length, 2);

  const dead = await stub(() => ({ destroy: true }));
  const client2 = new AitasksClient({ baseUrl: dead.url, token: "t", retry: { ...fastRetry, maxAttempts: 2 } });
  const failure = await client2.cancelTask("0190f3c2-0000-7000-8000-000000000001").catch((e) => e);
  assert.ok(failure instanceof AitasksError);
  assert.equal(failure.status, 0);
  assert.equal(failure.code, "CONNECTION_ERROR");
  assert.equal(dead.requests.length, 2);
});

test("an abort during the backoff ends the call at once with the abort reason, and nothing more is sent", async () => {
  const s = await stub(() => error(429, "WORKFLOW_AI_RATE_LIMIT", { "retry-after": "30" }));
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  const controller = new AbortController();
  const pending = client.createTask(createBody(), { signal: controller.signal });
  await new Promise((r) => setTimeout(r, 100));
  controller.abort(new Error("stop"));
  await assert.rejects(pending, /stop/);
  assert.equal(s.requests.length, 1);
});

test("the token provider: a static token, or a function asked before every attempt", async () => {
  const s = await stub((_r, n) => (n === 1 ? error(503, "UNAVAILABLE") : { status: 200, body: taskBody() }));
  let minted = 0;
  const client = new AitasksClient({ baseUrl: s.url, token: async () => `fresh-${++minted}`, retry: fastRetry });
  await client.getTask("0190f3c2-0000-7000-8000-000000000001");
  assert.deepEqual(s.requests.map((r) => r.headers.authorization), ["Bearer fresh-1", "Bearer fresh-2"]);

  const s2 = await stub(() => ({ status: 200, body: taskBody() }));
  await new AitasksClient({ baseUrl: s2.url, token: "static-jwt" }).getTask("0190f3c2-0000-7000-8000-000000000001");
  assert.equal(s2.requests[0].headers.authorization, "Bearer static-jwt");
});

test("backoff: full jitter under a doubling ceiling, never below Retry-After", () => {
  const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 60000 };
  const top = { ...policy, random: () => 0.999999 };
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, undefined, top)), [99, 199, 399, 799, 999, 999]);
  assert.equal(backoffDelay(3, undefined, { ...policy, random: () => 0 }), 0);
  const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(4, undefined, { ...policy, random: Math.random })));
  assert.ok(spread.size > 10, "the delays are spread, not one fixed value");
  for (const d of spread) assert.ok(d >= 0 && d < 800);
  assert.equal(backoffDelay(1, 5000, top), 5000);
  assert.equal(parseRetryAfter("12"), 12000);
  assert.equal(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString(), Date.now()) > 8000, true);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter(null), undefined);
});
