// A run create whose database connection drops at its commit: the run is stored, the API
// answers 503 (it cannot know the commit happened), and the client tries again. The client sends
// one Idempotency-Key per createRun call, the same on every attempt, so the retry answers the
// run the lost answer was about: one run, not two. The dev server reaches Postgres through a
// proxy (test/support/db-proxy.mjs) that drops the connection carrying the insert's answer.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { AitasksClient } from "../../dist/index.js";
import { startDbProxy } from "../support/db-proxy.mjs";
import { devToken, startStack, tenant } from "../support/stack.mjs";

let proxy;
let stack;
let client;
const retries = [];

before(async () => {
  proxy = await startDbProxy(process.env.DATABASE_URL);
  stack = await startStack({ databaseUrl: proxy.url });
  const app = tenant("runs");
  client = new AitasksClient({
    baseUrl: stack.baseUrl,
    token: () => devToken(app),
    retry: { baseDelayMs: 50, maxDelayMs: 200 },
    onRetry: (event) => retries.push(event.status),
  });
});
after(async () => {
  await stack?.stop();
  await proxy?.close();
});

test("a run create whose commit answer was lost is retried into the same run: one run", async () => {
  const scopeId = `dropped-${randomUUID()}`;
  proxy.cutReplyContaining(scopeId);
  const run = await client.createRun({ scopeId, actor: { userId: "u1" } });
  assert.equal(proxy.repliesCut, 1, "the first attempt's insert committed and its answer was lost");
  assert.deepEqual(retries, [503], "the lost answer was a 503, then the retry");
  const stored = (await client.listRuns({ scopeId })).runs;
  console.log(`runs stored for one createRun whose first answer was lost: ${stored.length}`);
  assert.equal(stored.length, 1, "the retry made a second run");
  assert.equal(stored[0].id, run.id);
});
