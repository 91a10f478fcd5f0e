// The history reads: each route and query parameter as the API takes it, each answer as it comes;
// a task in no provider batch is null, another error is thrown with its code.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, AitasksError } from "../../dist/index.js";
import { startStub } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

const TASK = "0190f3c2-0000-7000-8000-000000000001";

test("attempts, summary, runs and a narrowed listing are asked and read as documented", async () => {
  const attempts = {
    attempts: [
      { attempt: 1, startedAt: "2026-02-01T10:00:00Z", endedAt: "2026-02-01T10:00:01Z", outcome: "retried", profile: null, modelId: null,
        errorCode: "WORKFLOW_AI_PROVIDER_ERROR", errorMessage: "HTTP 500", usage: null, estimatedCostUsd: null },
      { attempt: 2, startedAt: "2026-02-01T10:00:03Z", endedAt: "2026-02-01T10:00:04Z", outcome: "succeeded", profile: "default",
        modelId: "m", errorCode: null, errorMessage: null, usage: { inputTokens: 11, outputTokens: 7 }, estimatedCostUsd: 0.5 },
    ],
    more: false,
  };
  const summary = {
    createdAfter: "2026-01-25T00:00:00Z", createdBefore: "2026-02-01T00:00:00Z",
    tasks: { queued: 0, running: 0, succeeded: 2, failed: 0, canceled: 0 },
    costs: [{ day: "2026-01-31", modelId: "default", tasks: 2, inputTokens: 22, outputTokens: 14, estimatedCostUsd: 1 }],
    examined: 2, complete: true,
  };
  const s = await startStub((req) => {
    if (req.path === `/v1/tasks/${TASK}/attempts`) return { status: 200, body: attempts };
    if (req.path === "/v1/summary") return { status: 200, body: summary };
    if (req.path === "/v1/runs") return { status: 200, body: { runs: [] } };
    if (req.path === "/v1/tasks") return { status: 200, body: { tasks: [] } };
    if (req.path === `/v1/tasks/${TASK}/batch`) return { status: 404, body: { error: { code: "NOT_IN_BATCH", message: "in no batch" } } };
    return { status: 404, body: { error: { code: "NOT_FOUND", message: "no such task" } } };
  });
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });

  const read = await client.getTaskAttempts(TASK);
  assert.deepEqual(read.attempts.map((a) => [a.attempt, a.outcome, a.errorCode]), [[1, "retried", "WORKFLOW_AI_PROVIDER_ERROR"], [2, "succeeded", null]]);
  assert.deepEqual(read.attempts[1].usage, { inputTokens: 11, outputTokens: 7 });
  const totals = await client.getSummary({ createdBefore: "2026-02-01T00:00:00Z" });
  assert.equal(totals.costs[0].inputTokens, 22);
  assert.deepEqual((await client.listRuns({ scopeId: "inbox", status: "running" })).runs, []);
  assert.deepEqual((await client.listTasks({ scopeId: "inbox", kind: "classify", modelId: "default", createdAfter: "2026-01-31T00:00:00Z" })).tasks, []);
  assert.equal(await client.getTaskBatch(TASK), null);
  await assert.rejects(client.getTaskEvents("0190f3c2-0000-7000-8000-000000000009"), (error) => error instanceof AitasksError && error.status === 404 && error.code === "NOT_FOUND");

  assert.deepEqual(
    s.requests.map((r) => [r.path, r.query]),
    [
      [`/v1/tasks/${TASK}/attempts`, {}],
      ["/v1/summary", { createdBefore: "2026-02-01T00:00:00Z" }],
      ["/v1/runs", { scopeId: "inbox", status: "running" }],
      ["/v1/tasks", { scopeId: "inbox", kind: "classify", modelId: "default", createdAfter: "2026-01-31T00:00:00Z" }],
      [`/v1/tasks/${TASK}/batch`, {}],
      ["/v1/tasks/0190f3c2-0000-7000-8000-000000000009/events", {}],
    ],
  );
});
