// Live output end to end: a generate_text task streamed by the stub provider (OpenAI's
// server-sent events) and followed through the dev server with followOutput: the text read is
// what the stub streamed, a reconnect from any offset reads exactly the rest, and an attempt cut
// off mid-stream shows its retry as a new segment.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AitasksClient } from "../../dist/index.js";
import { STREAM, STREAM_CUT, STREAM_TEXT } from "../support/stub-provider.mjs";
import { devToken, startStack, tenant } from "../support/stack.mjs";

let stack;
let client;
let app;

before(async () => {
  stack = await startStack();
  app = tenant("output");
  client = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(app) });
});
after(async () => {
  await stack?.stop();
});

const generate = (effectKey, marker) => ({
  owner: { scopeId: "stream" }, stepKey: "write", effectKey, modelId: "default",
  request: { kind: "generate_text", prompt: "Write a paragraph.", input: `${marker} ${effectKey}` },
});

async function follow(task, options = {}) {
  const pieces = [];
  for await (const piece of client.followOutput(task, options)) pieces.push(piece);
  return pieces;
}

/** The text a reader holds after these pieces: a restart drops what came before. */
function held(pieces) {
  let text = "";
  for (const piece of pieces) text = (piece.restarted ? "" : text) + piece.text;
  return text;
}

test("a followed generate_text task reads what the stub streamed, in pieces, and reconnects resume exactly", async () => {
  const { task } = await client.createTask(generate("streamed-1", STREAM));
  const pieces = await follow(task);
  const done = await client.getTask(task);
  assert.equal(done.status, "succeeded");
  const text = held(pieces);
  assert.equal(text, JSON.stringify({ text: STREAM_TEXT }), "the answer as the stub streamed it");
  assert.ok(stack.provider.state.streamed.includes(text));
  assert.equal(JSON.parse(text).text, done.output, "it parses to the task's output");
  assert.ok(pieces.length >= 2, `read as it was written, not at the end (${pieces.length} piece)`);
  assert.ok(pieces.every((p) => !p.restarted && p.segment === pieces[0].segment && p.attempt === 1));
  const last = pieces[pieces.length - 1];
  const chars = [...text];
  assert.equal(last.next, chars.length, "offsets count code points");

  // A reader that reconnects at any offset of the ended stream gets exactly the rest.
  for (const offset of [0, 1, 7, Math.floor(chars.length / 2), chars.length - 1, chars.length]) {
    const rest = await follow(task, { segment: last.segment, after: offset });
    assert.equal(rest.map((p) => p.text).join(""), chars.slice(offset).join(""), `from ${offset}`);
    assert.ok(rest.every((p) => !p.restarted));
  }
  // One read: where it stands.
  const read = await client.getTaskOutput(task, { segment: last.segment, after: 5 });
  assert.deepEqual([read.ended, read.final, read.from, read.next, read.text], [true, true, 5, chars.length, chars.slice(5).join("")]);
});

test("an attempt cut off mid-stream is retried as a new segment the reader is told to start over from", async () => {
  const { task } = await client.createTask(generate("streamed-cut", STREAM_CUT));
  const pieces = await follow(task);
  const done = await client.getTask(task);
  assert.equal(done.status, "succeeded");
  assert.equal(done.attempts, 2);
  const restart = pieces.findIndex((p) => p.restarted);
  assert.ok(restart > 0, `a restart after text of the first attempt: ${JSON.stringify(pieces.map((p) => [p.segment, p.attempt, p.restarted]))}`);
  assert.ok(pieces.slice(0, restart).every((p) => p.attempt === 1));
  assert.ok(pieces.slice(restart).every((p) => p.attempt === 2 && p.segment === pieces[restart].segment));
  assert.ok(pieces[restart].segment > pieces[0].segment);
  assert.equal(held(pieces), JSON.stringify({ text: STREAM_TEXT }), "only the second attempt's text is held");
  assert.equal(JSON.parse(held(pieces)).text, done.output);
});

test("another tenant's task is a 404", async () => {
  const { task } = await client.createTask(generate("streamed-other", STREAM));
  const stranger = new AitasksClient({ baseUrl: stack.baseUrl, token: () => devToken(tenant("stranger")) });
  await assert.rejects(stranger.getTaskOutput(task), (e) => e.status === 404 && e.code === "NOT_FOUND");
  await client.waitForTask(task, { timeoutMs: 60_000 });
});
