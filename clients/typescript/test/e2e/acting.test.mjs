// End to end against the dev server: a replay (the original untouched, the same replay asked
// twice is one task), a cancel by filter followed to its end with exact counts, a hold placed,
// listed and released.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AitasksClient, AitasksError } from "../../dist/index.js";
import { SLOW } from "../support/stub-provider.mjs";
import { devToken, startStack, tenant } from "../support/stack.mjs";

let stack;
let client;

before(async () => {
  stack = await startStack();
  const app = tenant("acting");
  client = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(app) });
});
after(async () => {
  await stack?.stop();
});

const classify = (input, prompt = "Spam?") => ({ kind: "classify", prompt, input, choices: ["spam", "ham"] });
const create = (scopeId, effectKey, prompt) =>
  client.createTask({ owner: { scopeId }, stepKey: "label", effectKey, modelId: "default", request: classify(effectKey, prompt) });

test("a replay is a new task naming its original, made once however often it is asked; the original is untouched", async () => {
  const { task } = await create("replays", "r-1");
  const original = await client.waitForTask(task, { timeoutMs: 60_000 });
  assert.equal(original.status, "succeeded");
  const first = await client.replayTask(original, { recompute: true });
  assert.deepEqual([first.created, first.task.replayOf, first.task.effectKey], [true, original.id, `replay:${original.id}`]);
  const again = await client.replayTask(original.id);
  assert.deepEqual([again.created, again.task.id], [false, first.task.id]);
  assert.equal((await client.waitForTask(first.task, { timeoutMs: 60_000 })).status, "succeeded");
  assert.deepEqual(await client.getTask(original.id), original);
  const { replays, more } = await client.listTaskReplays(original);
  assert.deepEqual([replays.map((r) => [r.id, r.operationId]), more], [[[first.task.id, null]], false]);

  const open = await create("replays", "r-2", `Hold ${SLOW}`);
  await assert.rejects(client.replayTask(open.task), (e) => e instanceof AitasksError && e.status === 409 && e.code === "TASK_NOT_ENDED");
  await client.cancelTask(open.task);
});

test("a cancel by filter is followed to its end: every matched task canceled, exact counts, listed in order", async () => {
  const ids = [];
  for (let i = 0; i < 3; i += 1) ids.push((await create("bulk", `b-${i}`, `Hold ${SLOW}`)).task.id);
  const { operation, created } = await client.createOperation({ action: "cancel", filter: { scopeId: "bulk" } });
  assert.equal(created, true);
  const seen = [];
  const ended = await client.waitForOperation(operation, { timeoutMs: 60_000, intervalMs: 200, onProgress: (op) => seen.push(op.done) });
  assert.deepEqual([ended.state, ended.matched, ended.done, ended.skipped, ended.failed], ["done", 3, 3, 0, 0]);
  assert.ok(seen.every((done, i) => i === 0 || done >= seen[i - 1]), `counts only grow: ${seen}`);
  for (const id of ids) {
    const task = await client.waitForTask(id, { timeoutMs: 60_000 });
    assert.equal(task.status, "canceled");
  }
  const listed = [];
  for await (const op of client.operations({ limit: 1 })) listed.push(op.id);
  assert.deepEqual(listed, [operation.id]);
  assert.equal((await client.stopOperation(operation)).state, "done", "an ended operation is answered as it is");
});

test("a hold is placed once per target, listed while active, and released", async () => {
  const placed = await client.createHold({ scopeId: "held", reason: "maintenance" });
  assert.deepEqual([placed.created, placed.hold.kind, placed.hold.target], [true, "manual", { scopeId: "held" }]);
  assert.equal((await client.createHold({ scopeId: "held" })).hold.id, placed.hold.id);
  const { task } = await create("held", "h-1");
  const active = [];
  for await (const hold of client.holds({ state: "active" })) active.push(hold.id);
  assert.deepEqual(active, [placed.hold.id]);
  const released = await client.releaseHold(placed.hold);
  assert.deepEqual([released.releasedBy, typeof released.releasedAt], ["person", "string"]);
  assert.equal((await client.waitForTask(task, { timeoutMs: 60_000 })).status, "succeeded");
  assert.equal((await client.getHold(placed.hold.id)).releasedBy, "person");
  await assert.rejects(client.createHold({ profile: "no-such-profile" }), (e) => e instanceof AitasksError && e.status === 400 && e.code === "AI_MODEL_UNKNOWN");
});
