// Listing: keyset pages followed through `next` as an async iterator; the unreleased sources too.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient } from "../../dist/index.js";
import { startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

const id = (n) => `0190f3c2-0000-7000-8000-${String(n).padStart(12, "0")}`;

test("tasks() yields every task of every page in order, passing each page's next as after", async () => {
  const all = Array.from({ length: 7 }, (_, i) => taskBody({ id: id(i + 1), runId: id(999) }));
  const s = await startStub((req) => {
    const start = req.query.after ? all.findIndex((t) => t.id === req.query.after) + 1 : 0;
    const limit = Number(req.query.limit ?? 100);
    const tasks = all.slice(start, start + limit);
    const more = start + limit < all.length;
    return { status: 200, body: more ? { tasks, next: tasks[tasks.length - 1].id } : { tasks } };
  });
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const seen = [];
  for await (const task of client.tasks({ runId: id(999), status: "queued", limit: 3 })) seen.push(task.id);
  assert.deepEqual(seen, all.map((t) => t.id));
  assert.deepEqual(
    s.requests.map((r) => r.query),
    [
      { runId: id(999), status: "queued", limit: "3" },
      { runId: id(999), status: "queued", limit: "3", after: id(3) },
      { runId: id(999), status: "queued", limit: "3", after: id(6) },
    ],
  );

  const pages = [];
  for await (const page of client.pages({ scopeId: "inbox", limit: 3 })) pages.push(page.tasks.length);
  assert.deepEqual(pages, [3, 3, 1]);
});

test("breaking out of the iterator sends no more requests", async () => {
  const s = await startStub(() => ({ status: 200, body: { tasks: [taskBody({ id: id(1) }), taskBody({ id: id(2) })], next: id(2) } }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  let count = 0;
  for await (const _task of client.tasks({ scopeId: "s" })) {
    if (++count === 3) break;
  }
  assert.equal(count, 3);
  assert.equal(s.requests.length, 2);
});

test("unreleasedSources() follows next.scopeId/next.sourceId as afterScope/afterSource", async () => {
  const s = await startStub((req) => {
    if (!req.query.afterScope) return { status: 200, body: { sources: [{ scopeId: "a", sourceId: "1" }, { scopeId: "a", sourceId: "2" }], next: { scopeId: "a", sourceId: "2" } } };
    return { status: 200, body: { sources: [{ scopeId: "b", sourceId: "1" }] } };
  });
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const sources = [];
  for await (const source of client.unreleasedSources({ task: "summarize" })) sources.push(`${source.scopeId}/${source.sourceId}`);
  assert.deepEqual(sources, ["a/1", "a/2", "b/1"]);
  assert.deepEqual(s.requests.map((r) => r.query), [{ task: "summarize" }, { task: "summarize", afterScope: "a", afterSource: "2" }]);
});

test("deleteScopeTasks sends the request again while rows are left, and adds up what was deleted", async () => {
  const s = await startStub((req, n) =>
    req.path.startsWith("/v1/scopes/other/") ? { status: 200, body: { deleted: 500, more: true } } : { status: 200, body: n < 3 ? { deleted: 500, more: true } : { deleted: 12, more: false } },
  );
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  assert.deepEqual(await client.deleteScopeTasks("inbox", { sourceId: "doc 9" }), { deleted: 1012, more: false, requests: 3 });
  assert.deepEqual(s.requests.map((r) => [r.method, r.path, r.query.sourceId]), Array(3).fill(["DELETE", "/v1/scopes/inbox/tasks", "doc 9"]));
  const once = await client.deleteScopeTasks("other", { untilDone: false });
  assert.deepEqual(once, { deleted: 500, more: true, requests: 1 });
});
