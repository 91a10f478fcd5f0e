// Live output: one read's query, and followOutput's long polls from each answer's `next`, a new
// segment told as `restarted`, 429 and 503 retried, its end, a resume, and an abort.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient } from "../../dist/index.js";
import { startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

const ID = taskBody().id;
const fastRetry = { baseDelayMs: 10, maxDelayMs: 50 };

function output(status, segment, from, text, final) {
  const ended = ["succeeded", "failed", "canceled"].includes(status);
  const attempt = segment === null ? null : Math.min(segment, 2);
  return { taskId: ID, status, ended, segment, attempt, from, text, next: from + [...text].length, final };
}

async function stubOf(answers) {
  const s = await startStub((_r, n) => answers[Math.min(n, answers.length) - 1]);
  stubs.push(s);
  return s;
}

async function collect(iterable) {
  const pieces = [];
  for await (const piece of iterable) pieces.push(piece);
  return pieces;
}

test("getTaskOutput sends the reader's place and wait and returns the answer", async () => {
  const s = await stubOf([{ status: 200, body: output("running", 2, 7, "é!", false) }]);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const answer = await client.getTaskOutput(ID, { segment: 2, after: 7, wait: 1.5 });
  assert.deepEqual([answer.segment, answer.from, answer.text, answer.next], [2, 7, "é!", 9]);
  assert.equal(s.requests[0].path, `/v1/tasks/${ID}/output`);
  assert.deepEqual(s.requests[0].query, { segment: "2", after: "7", wait: "1.5" });
});

test("followOutput reads from each answer's next, retries 503 and 429, and tells a new segment", async () => {
  const s = await stubOf([
    { status: 200, body: output("running", 1, 0, '{"text": "hé', false) },
    { status: 503, body: { error: { code: "UNAVAILABLE", message: "down" } } },
    { status: 200, body: output("running", 1, 12, "llo", false) },
    { status: 429, headers: { "retry-after": "1" }, body: { error: { code: "WORKFLOW_AI_READ_RATE", message: "slow" } } },
    // The attempt was lost: its retry writes segment 2 afresh.
    { status: 200, body: output("running", 2, 0, '{"text": "hi"}', true) },
    { status: 200, body: output("succeeded", 2, 14, "", true) },
  ]);
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  const pieces = await collect(client.followOutput(ID));
  assert.deepEqual(
    pieces.map((p) => [p.text, p.segment, p.attempt, p.restarted]),
    [['{"text": "hé', 1, 1, false], ["llo", 1, 1, false], ['{"text": "hi"}', 2, 2, true]],
  );
  assert.deepEqual(
    s.requests.map((r) => r.query),
    [
      { after: "0", wait: "20" },
      { segment: "1", after: "12", wait: "20" },
      { segment: "1", after: "12", wait: "20" },
      { segment: "1", after: "15", wait: "20" },
      { segment: "1", after: "15", wait: "20" },
      { segment: "2", after: "14", wait: "20" },
    ],
  );
  assert.ok(s.requests[4].at - s.requests[3].at >= 1000, "waited for Retry-After");
});

test("a task without a stream ends at once; a reconnect resumes from its place and reads a cut answer on", async () => {
  const none = await stubOf([{ status: 200, body: output("succeeded", null, 0, "", false) }]);
  const client = new AitasksClient({ baseUrl: none.url, token: "t" });
  assert.deepEqual(await collect(client.followOutput(ID)), []);
  assert.equal(none.requests.length, 1);

  const cut = await stubOf([
    { status: 200, body: output("succeeded", 3, 40, "abc", false) },
    { status: 200, body: output("succeeded", 3, 43, "d", true) },
  ]);
  const resumed = new AitasksClient({ baseUrl: cut.url, token: "t" });
  const pieces = await collect(resumed.followOutput(ID, { segment: 3, after: 40, wait: 2 }));
  assert.deepEqual(pieces, [
    { text: "abc", segment: 3, attempt: 2, restarted: false, next: 43 },
    { text: "d", segment: 3, attempt: 2, restarted: false, next: 44 },
  ]);
  assert.deepEqual(cut.requests[0].query, { segment: "3", after: "40", wait: "2" });
});

test("a resumed reader whose segment is gone is told to drop its text; a 404 rejects", async () => {
  const s = await stubOf([
    { status: 200, body: output("running", 2, 0, "new", false) },
    { status: 404, body: { error: { code: "NOT_FOUND", message: "no task" } } },
  ]);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const follower = client.followOutput(ID, { segment: 1, after: 5 });
  const first = await follower.next();
  assert.equal(first.value.restarted, true);
  await assert.rejects(follower.next(), (e) => e.status === 404 && e.code === "NOT_FOUND");
});

test("an abort ends followOutput during a held read, with the signal's reason", async () => {
  const s = await startStub(() => ({ status: 200, delayMs: 5000, body: output("running", null, 0, "", false) }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error("reader went away")), 200);
  await assert.rejects(collect(client.followOutput(ID, { signal: controller.signal })), /reader went away/);
  assert.equal(s.requests.length, 1);
});

// A follower whose reads do not wait (`wait: 0`) used to read again at once after each idle
// answer: a loop of requests with no bound while the task ran.
test("an idle answer pauses the next read whatever the wait", async () => {
  const { idlePauseMs, OUTPUT_IDLE_PAUSE_MS } = await import("../../dist/output.js");
  assert.equal(idlePauseMs(true, 0), OUTPUT_IDLE_PAUSE_MS, "a read that did not wait");
  assert.equal(idlePauseMs(true, 400), OUTPUT_IDLE_PAUSE_MS - 400);
  assert.equal(idlePauseMs(true, 20_000), 0, "a read that held its wait");
  assert.equal(idlePauseMs(false, 0), 0, "news: read on at once");
});
