// The reads behind the pictures (docs/api.md, "History" and "Activity"), end to end against the
// dev server with the stub provider: a run's progress counted by status, and the tenant's
// activity in buckets (created, ended, usage by model), another tenant's tasks never in it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AitasksClient, AitasksError } from "../../dist/index.js";
import { devToken, startStack, tenant } from "../support/stack.mjs";

let stack;
let client;
let other;

before(async () => {
  stack = await startStack();
  client = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(tenant("charts")) });
  other = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(tenant("charts-other")) });
});
after(async () => {
  await stack?.stop();
});

const classify = (input) => ({ kind: "classify", prompt: "Spam?", input, choices: ["spam", "ham"] });

test("a run's progress counts its tasks by status, and another tenant's run is a 404", async () => {
  const run = await client.createRun({ scopeId: "charts" });
  const made = [];
  for (const key of ["a", "b", "c"]) {
    made.push((await client.createTask({ runId: run.id, stepKey: "s", effectKey: `${run.id}/${key}`, modelId: "default", request: classify(key) })).task);
  }
  for (const task of made) await client.waitForTask(task, { timeoutMs: 30_000 });
  const progress = await client.getRunProgress(run.id);
  assert.deepEqual(
    { total: progress.total, succeeded: progress.succeeded, queued: progress.queued, running: progress.running, complete: progress.complete },
    { total: 3, succeeded: 3, queued: 0, running: 0, complete: true },
  );
  assert.equal(progress.runId, run.id);
  await assert.rejects(other.getRunProgress(run.id), (error) => error instanceof AitasksError && error.status === 404);
});

test("the tenant's activity counts what its tasks did by the minute, never another tenant's", async () => {
  const from = new Date(Date.now() - 10 * 60_000).toISOString();
  const owner = { scopeId: "charts-activity" };
  const mine = await client.createTask({ owner, stepKey: "s", effectKey: `act/${Date.now()}`, modelId: "default", request: classify("mine") });
  await client.waitForTask(mine.task, { timeoutMs: 30_000 });
  const theirs = await other.createTask({ owner, stepKey: "s", effectKey: `act/${Date.now()}`, modelId: "default", request: classify("theirs") });
  await other.waitForTask(theirs.task, { timeoutMs: 30_000 });

  const activity = await client.getActivity({ bucket: 60, from });
  assert.equal(activity.bucketSeconds, 60);
  assert.equal(activity.complete, true);
  assert.ok(activity.buckets.length >= 10 && activity.buckets.length <= 12, `${activity.buckets.length} buckets`);
  const sum = (field) => activity.buckets.reduce((total, bucket) => total + bucket[field], 0);
  // The other tests of this file made three more tasks of this tenant, in the same minutes.
  assert.ok(sum("created") >= 1 && sum("created") <= 4, `created ${sum("created")}`);
  assert.equal(sum("created"), sum("succeeded"), "every task created here ended succeeded");
  const models = activity.buckets.flatMap((bucket) => bucket.models.map((m) => m.modelId));
  assert.ok(models.includes("default"), JSON.stringify(models));
  const theirActivity = await other.getActivity({ bucket: 60, from });
  assert.equal(theirActivity.buckets.reduce((total, bucket) => total + bucket.created, 0), 1, "only their own task");
  await assert.rejects(client.getActivity({ bucket: 61 }), (error) => error instanceof AitasksError && error.status === 400);
});
