// Batches of any size: chunks of at most 1,000 items (and 6,000,000 bytes), a bounded number
// in flight, every item's answer back in the items' order.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, MAX_BATCH_BYTES, chunkItems } from "../../dist/index.js";
import { createBody, fastRetry, startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

// Answers each item by its effect key: "bad-*" is a 400, the rest 201 with the key echoed; the
// first chunk is answered last, so the order cannot come from the order of the answers.
function batchServer() {
  return startStub((req, n) => ({
    status: 200,
    delayMs: n === 1 ? 150 : 10,
    body: {
      results: req.body.tasks.map((item) =>
        item.effectKey.startsWith("bad-")
          ? { status: 400, error: { code: "INVALID_REQUEST", message: "the request is invalid", details: [{ path: "stepKey", message: "is required" }] } }
          : { status: 201, task: { id: taskBody().id, runId: null, stepKey: item.stepKey, effectKey: item.effectKey, status: "queued", createdAt: taskBody().createdAt } },
      ),
    },
  }));
}

test("2,500 items go as 1,000 + 1,000 + 500, at most `concurrency` at once, answered in order", async () => {
  const s = await batchServer();
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const items = Array.from({ length: 2500 }, (_, i) => createBody(i % 997 === 5 ? `bad-${i}` : `k-${i}`));
  const results = await client.createTasks(items, { concurrency: 2 });
  assert.deepEqual(s.requests.map((r) => r.body.tasks.length), [1000, 1000, 500]);
  assert.ok(s.maxInFlight <= 2, `at most 2 chunks in flight, saw ${s.maxInFlight}`);
  assert.equal(results.length, 2500);
  results.forEach((result, i) => {
    if (i % 997 === 5) {
      assert.equal(result.ok, false);
      assert.equal(result.status, 400);
      assert.equal(result.error.code, "INVALID_REQUEST");
    } else {
      assert.equal(result.ok, true);
      assert.equal(result.created, true);
      assert.equal(result.task.effectKey, `k-${i}`);
    }
  });
});

test("chunkSize and concurrency 1 send one chunk at a time", async () => {
  const s = await batchServer();
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const results = await client.createTasks(Array.from({ length: 25 }, (_, i) => createBody(`k-${i}`)), { chunkSize: 10, concurrency: 1 });
  assert.deepEqual(s.requests.map((r) => r.body.tasks.length), [10, 10, 5]);
  assert.equal(s.maxInFlight, 1);
  assert.deepEqual(results.map((r) => r.task.effectKey), Array.from({ length: 25 }, (_, i) => `k-${i}`));
});

test("a chunk refused as a whole fails the call and stops the chunks not yet sent", async () => {
  const s = await startStub(() => ({ status: 413, body: { error: { code: "AI_TASK_INPUT_TOO_LARGE", message: "too large" } } }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  const error = await client.createTasks(Array.from({ length: 3000 }, (_, i) => createBody(`k-${i}`)), { concurrency: 1 }).catch((e) => e);
  assert.equal(error.code, "AI_TASK_INPUT_TOO_LARGE");
  assert.equal(s.requests.length, 1);
});

test("items are also chunked by size, so no request passes 6,000,000 bytes", () => {
  const big = "x".repeat(90_000);
  const items = Array.from({ length: 200 }, (_, i) => ({ ...createBody(`k-${i}`), request: { kind: "generate_text", prompt: "p", input: big } }));
  const chunks = chunkItems(items, 1000);
  assert.ok(chunks.length >= 3);
  assert.deepEqual(chunks.map((c) => c.start), chunks.map((_, i) => chunks.slice(0, i).reduce((n, c) => n + c.items.length, 0)));
  for (const chunk of chunks) assert.ok(Buffer.byteLength(JSON.stringify({ tasks: chunk.items })) <= MAX_BATCH_BYTES);
  assert.equal(chunks.reduce((n, c) => n + c.items.length, 0), 200);
});

test("an empty batch sends nothing", async () => {
  const s = await batchServer();
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  assert.deepEqual(await client.createTasks([]), []);
  assert.equal(s.requests.length, 0);
});

test("items refused with a retryAfter are sent again once it passed; other refusals stay as answered", async () => {
  const summary = (item) => ({ status: 201, task: { id: taskBody().id, runId: null, stepKey: item.stepKey, effectKey: item.effectKey, status: "queued", createdAt: taskBody().createdAt } });
  const s = await startStub((req, n) => ({
    status: 200,
    body: {
      results: req.body.tasks.map((item) =>
        n === 1 && item.effectKey === "k-1"
          ? { status: 429, error: { code: "WORKFLOW_AI_RATE_LIMIT", message: "rate limited", retryAfter: 1 } }
          : item.effectKey === "k-2"
            ? { status: 429, error: { code: "WORKFLOW_AI_CAPACITY", message: "at capacity" } }
            : summary(item),
      ),
    },
  }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  const results = await client.createTasks([0, 1, 2, 3].map((i) => createBody(`k-${i}`)));
  assert.deepEqual(results.map((r) => r.status), [201, 201, 429, 201]);
  assert.equal(results[1].task.effectKey, "k-1");
  assert.equal(results[2].error.code, "WORKFLOW_AI_CAPACITY");
  assert.deepEqual(s.requests.map((r) => r.body.tasks.map((t) => t.effectKey)), [["k-0", "k-1", "k-2", "k-3"], ["k-1"]]);
  assert.ok(s.requests[1].at - s.requests[0].at >= 950, "the refused item waited for its retryAfter");

  const s2 = await startStub(() => ({ status: 200, body: { results: [{ status: 429, error: { code: "WORKFLOW_AI_RATE_LIMIT", message: "m", retryAfter: 1 } }] } }));
  stubs.push(s2);
  const client2 = new AitasksClient({ baseUrl: s2.url, token: "t", retry: fastRetry });
  const once = await client2.createTasks([createBody("k")], { retryRefusedItems: false });
  assert.equal(once[0].status, 429);
  assert.equal(once[0].error.retryAfter, 1);
  assert.equal(s2.requests.length, 1);
});
