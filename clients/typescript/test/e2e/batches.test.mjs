// End to end against the dev server: listing as an async iterator over keyset pages, release,
// unreleased sources, deleting a scope's data, and the example program (the 2,500-item batch is
// in big-batch.test.mjs).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";

import { AitasksClient } from "../../dist/index.js";
import { devToken, startStack, tenant } from "../support/stack.mjs";

let stack;
let client;
let app;

before(async () => {
  stack = await startStack();
  app = tenant("batches");
  client = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(app) });
});
after(async () => {
  await stack?.stop();
});

const classify = (input) => ({ kind: "classify", prompt: "Spam?", input, choices: ["spam", "ham"] });
const ROOMY = { burst: 1e6, tasksPerMinute: 1e6, maxStepsPerSource: 1e6, sourcesPer24Hours: 1e6, scopeConcurrent: 1e6, globalConcurrent: 1e6 };

test("listing a scope's tasks by status, page by page, with a small limit", async () => {
  const owner = { scopeId: "paged" };
  const created = await client.createTasks(Array.from({ length: 23 }, (_, i) => ({ owner, stepKey: "s", effectKey: `paged/${i}`, modelId: "default", request: classify(`p${i}`) })));
  const done = await client.waitForTasks(created.map((r) => r.task), { timeoutMs: 60_000 });
  assert.deepEqual(new Set(done.map((t) => t.status)), new Set(["succeeded"]));
  const sizes = [];
  for await (const page of client.pages({ scopeId: "paged", status: "succeeded", limit: 5 })) sizes.push(page.tasks.length);
  assert.deepEqual(sizes, [5, 5, 5, 5, 3]);
  const ids = [];
  for await (const task of client.tasks({ scopeId: "paged", limit: 10 })) ids.push(task.id);
  assert.deepEqual(ids, created.map((r) => r.task.id));
  assert.equal((await client.listTasks({ scopeId: "paged", status: "queued" })).tasks.length, 0);
});

test("release, unreleased sources (more than a page), and deleting a scope's data", async () => {
  const scopeId = "docs";
  const sources = Array.from({ length: 105 }, (_, i) => `doc-${String(i).padStart(3, "0")}`);
  const created = await client.createTasks(
    sources.map((sourceId) => ({
      owner: { scopeId },
      stepKey: "summary",
      effectKey: `${scopeId}/${sourceId}/summary`,
      modelId: "default",
      request: { kind: "generate_text", prompt: "Summarize", input: sourceId },
      scope: { sourceId, sourceRevision: "r1", budget: ROOMY },
    })),
  );
  assert.ok(created.every((r) => r.status === 201), JSON.stringify(created.find((r) => r.status !== 201)));
  await client.waitForTasks(created.map((r) => r.task), { timeoutMs: 120_000 });

  const listed = [];
  for await (const source of client.unreleasedSources({ task: "summary" })) listed.push(`${source.scopeId}/${source.sourceId}`);
  assert.deepEqual(listed, sources.map((s) => `${scopeId}/${s}`));
  const firstPage = await client.listUnreleasedSources({ task: "summary" });
  assert.equal(firstPage.sources.length, 100);
  assert.deepEqual(firstPage.next, { scopeId, sourceId: "doc-099" });

  assert.equal(await client.releaseTask({ scopeId, effectKey: `${scopeId}/doc-000/summary` }), true);
  assert.equal(await client.releaseTask({ scopeId, effectKey: `${scopeId}/no-such-task` }), false);
  const afterRelease = [];
  for await (const source of client.unreleasedSources()) afterRelease.push(source.sourceId);
  assert.equal(afterRelease.length, 104);
  assert.ok(!afterRelease.includes("doc-000"));

  const one = await client.deleteScopeTasks(scopeId, { sourceId: "doc-001" });
  assert.deepEqual(one, { deleted: 1, more: false, requests: 1 });
  const notFound = await client.getTask(created[1].task.id).catch((e) => e);
  assert.equal(notFound.code, "NOT_FOUND");
  const rest = await client.deleteScopeTasks(scopeId);
  assert.equal(rest.deleted, 104);
  assert.equal(rest.more, false);
  assert.equal((await client.listUnreleasedSources()).sources.length, 0);
});

// Run a program to its end without blocking this process (the stub provider answers from here).
function run(file, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

test("the example classifies 1,000 reviews in one batch call, waits for all and prints results and cost", async (t) => {
  const example = new URL("../../../../examples/typescript/dist/classify.js", import.meta.url).pathname;
  const result = await run(example, { AITASKS_URL: stack.baseUrl, AITASKS_TOKEN: devToken(tenant("example")), ITEMS: "1000" });
  assert.equal(result.status, 0, result.stderr);
  // No listener warning (a listener per long poll on one signal would be one).
  assert.doesNotMatch(result.stderr, /MaxListenersExceeded/);
  const out = result.stdout;
  for (const line of out.trimEnd().split("\n")) t.diagnostic(`example: ${line}`);
  assert.match(out, /^run [0-9a-f-]{36}$/m);
  assert.match(out, /^created 1000 tasks \(1000 new\), 0 refused$/m);
  assert.match(out, /^finished: 1000 succeeded$/m);
  const counts = ["positive", "negative", "neutral"].map((label) => Number(out.match(new RegExp(`^  ${label}\\s+(\\d+)$`, "m"))?.[1]));
  assert.equal(counts.reduce((a, b) => a + b, 0), 1000);
  assert.match(out, /^tokens: 120000 in, 8000 out$/m);
  // 1,000 × (120 × 0.15 + 8 × 0.6) / 1e6 = $0.0228
  assert.match(out, /^estimated cost: \$0\.022800 for 1000 priced tasks$/m);
});
