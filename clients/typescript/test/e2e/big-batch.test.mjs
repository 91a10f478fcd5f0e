// End to end against the dev server: a 2,500-item batch through one createTasks call (three
// requests of at most 1,000, two at a time), one result per item in order, sent again
// idempotently, then the run's listing through 25 keyset pages. A file of its own: the 2,499
// messages it leaves in its queue (the run is canceled, not waited for) delay no other test.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AitasksClient } from "../../dist/index.js";
import { devToken, startStack, tenant } from "../support/stack.mjs";

let stack;
let client;

before(async () => {
  stack = await startStack();
  const app = tenant("big-batch");
  client = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(app) });
});
after(async () => {
  await stack?.stop();
});

const classify = (input) => ({ kind: "classify", prompt: "Spam?", input, choices: ["spam", "ham"] });

test("2,500 creates in one call: three requests, one result per item in order, a bad item refused alone; again: the same tasks", async () => {
  const run = await client.createRun({ scopeId: "bulk" });
  const BAD = 1234;
  const items = Array.from({ length: 2500 }, (_, i) => ({
    runId: run.id,
    stepKey: "label",
    effectKey: `${run.id}/item-${i}`,
    modelId: "default",
    request: i === BAD ? { kind: "classify", prompt: "Spam?", input: i, choices: ["only-one"] } : classify(`message ${i}`),
  }));
  const results = await client.createTasks(items, { concurrency: 2 });
  assert.equal(results.length, 2500);
  results.forEach((result, i) => {
    if (i === BAD) {
      assert.equal(result.ok, false);
      assert.equal(result.status, 400);
      assert.equal(result.error.code, "INVALID_REQUEST");
    } else {
      assert.equal(result.ok, true, `item ${i}: ${JSON.stringify(result)}`);
      assert.equal(result.status, 201);
      assert.equal(result.task.effectKey, `${run.id}/item-${i}`);
      assert.equal(result.task.runId, run.id);
    }
  });
  assert.equal(new Set(results.filter((r) => r.ok).map((r) => r.task.id)).size, 2499);

  const again = await client.createTasks(items, { concurrency: 3, chunkSize: 700 });
  again.forEach((result, i) => {
    if (i === BAD) return assert.equal(result.status, 400);
    assert.equal(result.status, 200);
    assert.equal(result.created, false);
    assert.equal(result.task.id, results[i].task.id);
  });

  // The run's listing, page after page (keyset pages of 100): every task once, in creation
  // order, which is the order of the ids (UUIDv7). The chunks went two at a time, so a later
  // chunk's tasks may have been created before an earlier one's.
  const listed = [];
  let pages = 0;
  for await (const page of client.pages({ runId: run.id })) {
    pages += 1;
    assert.ok(page.tasks.length <= 100);
    listed.push(...page.tasks.map((t) => t.id));
  }
  assert.equal(pages, 25);
  assert.deepEqual(listed, results.filter((r) => r.ok).map((r) => r.task.id).sort());

  // Stop the run rather than wait for 2,499 tasks; none is left running.
  assert.equal((await client.cancelRun(run.id)).state, "canceled");
  let open = 1;
  for (let round = 0; open > 0 && round < 600; round += 1) {
    open = 0;
    for (const status of ["queued", "running"]) for await (const _ of client.tasks({ runId: run.id, status })) open += 1;
    if (open > 0) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(open, 0);
});
