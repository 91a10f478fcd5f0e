// Waiting: long polls (?wait=S) until terminal, within a deadline, ended by an AbortSignal.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, AitasksWaitTimeoutError } from "../../dist/index.js";
import { startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

test("long polls until the task is terminal, asking the server to hold each poll", async () => {
  const s = await startStub((_r, n) => ({ status: 200, body: taskBody({ status: n < 3 ? "running" : "succeeded", output: n < 3 ? null : "a" }) }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const task = await client.waitForTask(taskBody().id);
  assert.equal(task.status, "succeeded");
  assert.equal(task.output, "a");
  assert.deepEqual(s.requests.map((r) => r.query.wait), ["20", "20", "20"]);
});

test("a deadline ends the wait with AitasksWaitTimeoutError holding the last state, and no poll holds past it", async () => {
  // The server holds each poll as long as it was asked (the dev server does, up to 20 s).
  const s = await startStub((req) => ({ status: 200, delayMs: Number(req.query.wait) * 1000, body: taskBody({ status: "running" }) }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const error = await client.waitForTask(taskBody().id, { timeoutMs: 2500 }).catch((e) => e);
  assert.ok(error instanceof AitasksWaitTimeoutError, String(error));
  assert.equal(error.task.status, "running");
  assert.ok(s.requests.every((r) => Number(r.query.wait) <= 2), `polls asked ${s.requests.map((r) => r.query.wait)}`);
});

test("an abort ends the wait during a held poll, with the signal's reason", async () => {
  const s = await startStub((req) => ({ status: 200, delayMs: 5000, body: taskBody({ status: "running" }) }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const controller = new AbortController();
  const waiting = client.waitForTask(taskBody().id, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("user went away")), 200);
  await assert.rejects(waiting, /user went away/);
  assert.equal(s.requests.length, 1);
});

test("waitForTasks waits for each, in the order given, at most `concurrency` polls at once", async () => {
  const ids = Array.from({ length: 6 }, (_, i) => `0190f3c2-0000-7000-8000-00000000000${i}`);
  const s = await startStub((req) => {
    const id = req.path.split("/").pop();
    return { status: 200, delayMs: 30, body: taskBody({ id, status: "succeeded", output: id.endsWith("3") ? "b" : "a" }) };
  });
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const tasks = await client.waitForTasks(ids, { concurrency: 2 });
  assert.deepEqual(tasks.map((t) => t.id), ids);
  assert.equal(tasks[3].output, "b");
  assert.ok(s.maxInFlight <= 2);
});

test("a poll never asks the server to hold longer than the client's own timeout per attempt", async () => {
  const s = await startStub((_r, n) => ({ status: 200, body: taskBody({ status: n < 2 ? "running" : "succeeded", output: n < 2 ? null : "a" }) }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t", timeoutMs: 5000 });
  assert.equal((await client.waitForTask(taskBody().id)).status, "succeeded");
  assert.deepEqual(s.requests.map((r) => r.query.wait), ["4", "4"]);
});

test("a deadline weeks away (beyond setTimeout's range) does not end a poll early", async () => {
  const s = await startStub((_r, n) => ({ status: 200, delayMs: 50, body: taskBody({ status: n < 3 ? "running" : "succeeded", output: n < 3 ? null : "b" }) }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const task = await client.waitForTask(taskBody().id, { deadline: new Date(Date.now() + 40 * 24 * 3600 * 1000) });
  assert.equal(task.output, "b");
  assert.equal(s.requests.length, 3);
});
