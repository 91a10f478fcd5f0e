// Acting on many tasks: a replay, operations and holds, each asked as docs/api.md says (route,
// body, Idempotency-Key) and each answer read (201/202/200 told apart, refusals with their code).
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, AitasksError, AitasksWaitTimeoutError } from "../../dist/index.js";
import { fastRetry, startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

const TASK = "0190f3c2-0000-7000-8000-000000000001";
const REPLAY = "0190f3c2-0000-7000-8000-000000000002";
const OP = (n) => `0190f3c2-0000-7000-8000-0000000001${String(n).padStart(2, "0")}`;
const HOLD = "0190f3c2-0000-7000-8000-000000000201";

function operation(id, state, [matched, done, skipped, failed]) {
  return {
    id, action: "cancel", filter: { scopeId: "inbox" }, recompute: false, state, matched, done, skipped, failed,
    skippedBecause: skipped ? { ALREADY_ENDED: skipped } : {}, failedBecause: {},
    createdAt: "2026-02-01T10:00:00Z", updatedAt: "2026-02-01T10:00:01Z", endedAt: state === "running" ? null : "2026-02-01T10:00:02Z",
  };
}

function hold(released) {
  return {
    id: HOLD, target: { profile: "fast" }, kind: "manual", reason: "provider down", createdAt: "2026-02-01T10:00:00Z",
    releasedAt: released ? "2026-02-01T11:00:00Z" : null, releasedBy: released ? "person" : null,
  };
}

async function stub(handler) {
  const s = await startStub(handler);
  stubs.push(s);
  return { s, client: new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry }) };
}

test("a replay posts its options, tells a new task from the one its key found, and lists a task's replays", async () => {
  const replay = taskBody({ id: REPLAY, replayOf: TASK, effectKey: `replay:${TASK}` });
  const { s, client } = await stub((req, n) => {
    if (req.path.endsWith("/replays")) return { status: 200, body: { replays: [{ id: REPLAY, status: "queued", effectKey: replay.effectKey, createdAt: replay.createdAt, operationId: null }], more: false } };
    if (n === 4) return { status: 409, body: { error: { code: "TASK_NOT_ENDED", message: "still running" } } };
    return { status: n === 1 ? 201 : 200, body: replay };
  });
  const first = await client.replayTask(TASK);
  assert.deepEqual([first.created, first.task.replayOf], [true, TASK]);
  const second = await client.replayTask({ id: TASK }, { effectKey: "again", recompute: true });
  assert.deepEqual([second.created, second.task.id], [false, REPLAY]);
  const listed = await client.listTaskReplays(TASK);
  assert.deepEqual(listed.replays.map((r) => [r.id, r.operationId]), [[REPLAY, null]]);
  await assert.rejects(client.replayTask(TASK), (e) => e instanceof AitasksError && e.status === 409 && e.code === "TASK_NOT_ENDED");
  assert.deepEqual(
    s.requests.map((r) => [r.method, r.path, r.body]),
    [
      ["POST", `/v1/tasks/${TASK}/replay`, {}],
      ["POST", `/v1/tasks/${TASK}/replay`, { effectKey: "again", recompute: true }],
      ["GET", `/v1/tasks/${TASK}/replays`, undefined],
      ["POST", `/v1/tasks/${TASK}/replay`, {}],
    ],
  );
});

test("an operation's create sends one Idempotency-Key per call, the same on every attempt", async () => {
  const { s, client } = await stub((_req, n) => {
    if (n === 1) return { status: 503, body: { error: { code: "UNAVAILABLE", message: "down" } } };
    return { status: n === 2 ? 202 : 200, body: operation(OP(1), "running", [10, 4, 0, 0]) };
  });
  const input = { action: "cancel", filter: { scopeId: "inbox", kind: "extract_data", status: ["queued"] } };
  const made = await client.createOperation(input);
  assert.deepEqual([made.created, made.operation.state, made.operation.done], [true, "running", 4]);
  const again = await client.createOperation(input, { idempotencyKey: "nightly-cleanup" });
  assert.equal(again.created, false);
  await client.createOperation(input);
  const keys = s.requests.map((r) => r.headers["idempotency-key"]);
  assert.equal(keys[0], keys[1], "the retry after the 503 sent the first attempt's key");
  assert.match(keys[0], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(keys[2], "nightly-cleanup");
  assert.notEqual(keys[3], keys[0], "another call, another key");
  assert.ok(s.requests.every((r) => r.method === "POST" && r.path === "/v1/operations"));
  assert.deepEqual(s.requests[0].body, input);
});

test("operations are listed page by page, stopped, and waited for until they are no longer running", async () => {
  const { s, client } = await stub((req, n) => {
    if (req.path === "/v1/operations") {
      return req.query.after
        ? { status: 200, body: { operations: [operation(OP(2), "done", [3, 2, 1, 0])] } }
        : { status: 200, body: { operations: [operation(OP(1), "running", [5, 1, 0, 0])], next: OP(1) } };
    }
    if (req.path.endsWith("/stop")) return { status: 200, body: operation(OP(1), "stopped", [5, 2, 0, 0]) };
    return { status: 200, body: operation(OP(2), n < 6 ? "running" : "done", [3, Math.min(n - 3, 2), n < 6 ? 0 : 1, 0]) };
  });
  const listed = [];
  for await (const op of client.operations({ state: "running", limit: 1 })) listed.push(op.id);
  assert.deepEqual(listed, [OP(1), OP(2)]);
  const stopped = await client.stopOperation(OP(1));
  assert.equal(stopped.state, "stopped");
  const seen = [];
  const ended = await client.waitForOperation(OP(2), { intervalMs: 5, onProgress: (op) => seen.push(op.done) });
  assert.deepEqual([ended.state, ended.skippedBecause], ["done", { ALREADY_ENDED: 1 }]);
  assert.deepEqual(seen, [1, 2, 2]);
  assert.deepEqual(
    s.requests.map((r) => [r.method, r.path, r.query]),
    [
      ["GET", "/v1/operations", { state: "running", limit: "1" }],
      ["GET", "/v1/operations", { state: "running", limit: "1", after: OP(1) }],
      ["POST", `/v1/operations/${OP(1)}/stop`, {}],
      ["GET", `/v1/operations/${OP(2)}`, {}],
      ["GET", `/v1/operations/${OP(2)}`, {}],
      ["GET", `/v1/operations/${OP(2)}`, {}],
    ],
  );
});

test("a wait on an operation still running at its deadline rejects with it as last read", async () => {
  const { client } = await stub(() => ({ status: 200, body: operation(OP(1), "running", [7, 3, 0, 0]) }));
  const error = await client.waitForOperation(OP(1), { timeoutMs: 0, intervalMs: 5 }).catch((e) => e);
  assert.ok(error instanceof AitasksWaitTimeoutError, String(error));
  assert.deepEqual([error.task.state, error.task.done], ["running", 3]);
});

test("a hold is placed, listed and released; an automatic one is refused with its code", async () => {
  const { s, client } = await stub((req, n) => {
    if (req.method === "GET") return { status: 200, body: { holds: [hold(false)] } };
    if (req.path === "/v1/holds") return { status: n === 1 ? 201 : 200, body: hold(false) };
    if (n === 4) return { status: 200, body: hold(true) };
    return { status: 409, body: { error: { code: "HOLD_IS_AUTOMATIC", message: "the system's" } } };
  });
  const placed = await client.createHold({ profile: "fast", reason: "provider down" });
  assert.deepEqual([placed.created, placed.hold.kind, placed.hold.releasedAt], [true, "manual", null]);
  assert.equal((await client.createHold({ scopeId: "inbox" })).created, false);
  const active = [];
  for await (const h of client.holds({ state: "active" })) active.push(h.id);
  assert.deepEqual(active, [HOLD]);
  assert.equal((await client.releaseHold(HOLD)).releasedBy, "person");
  await assert.rejects(client.releaseHold(HOLD), (e) => e instanceof AitasksError && e.status === 409 && e.code === "HOLD_IS_AUTOMATIC");
  assert.deepEqual(
    s.requests.map((r) => [r.method, r.path, r.body ?? r.query]),
    [
      ["POST", "/v1/holds", { profile: "fast", reason: "provider down" }],
      ["POST", "/v1/holds", { scopeId: "inbox" }],
      ["GET", "/v1/holds", { state: "active" }],
      ["POST", `/v1/holds/${HOLD}/release`, {}],
      ["POST", `/v1/holds/${HOLD}/release`, {}],
    ],
  );
});
