// Refusals become typed AitasksErrors carrying what the API said.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, AitasksError } from "../../dist/index.js";
import { createBody, fastRetry, startStub } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

test("a 400 carries its code, message, details, moreProblems and the request id", async () => {
  const s = await startStub(() => ({
    status: 400,
    headers: { "apigw-requestid": "Abc123=" },
    body: {
      error: {
        code: "INVALID_REQUEST",
        message: "the request is invalid",
        details: [
          { path: "request.choices", message: "must have at least 2 items" },
          { path: "stepKey", message: "is required" },
        ],
        moreProblems: 3,
      },
    },
  }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: fastRetry });
  const error = await client.createTask(createBody()).catch((e) => e);
  assert.ok(error instanceof AitasksError);
  assert.ok(error instanceof Error);
  assert.equal(error.name, "AitasksError");
  assert.equal(error.status, 400);
  assert.equal(error.code, "INVALID_REQUEST");
  assert.match(error.message, /POST \/v1\/tasks: the request is invalid/);
  assert.deepEqual(error.details, [
    { path: "request.choices", message: "must have at least 2 items" },
    { path: "stepKey", message: "is required" },
  ]);
  assert.equal(error.moreProblems, 3);
  assert.equal(error.requestId, "Abc123=");
  assert.equal(error.method, "POST");
});

test("an answer that is not the API's error shape still gives a typed error with its status", async () => {
  const s = await startStub(() => ({ status: 502, headers: { "x-amzn-requestid": "r-9" }, body: "<html>bad gateway</html>" }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t", retry: { ...fastRetry, maxAttempts: 1 } });
  const error = await client.getRun("0190f3c2-0000-7000-8000-0000000000aa").catch((e) => e);
  assert.ok(error instanceof AitasksError);
  assert.equal(error.status, 502);
  assert.equal(error.code, "HTTP_502");
  assert.deepEqual(error.details, []);
  assert.equal(error.requestId, "r-9");
});

test("a 404 for another tenant's task reads as NOT_FOUND with no request id when none was sent", async () => {
  const s = await startStub(() => ({ status: 404, body: { error: { code: "NOT_FOUND", message: "not found" } } }));
  stubs.push(s);
  const client = new AitasksClient({ baseUrl: s.url, token: "t" });
  const error = await client.cancelTask("0190f3c2-0000-7000-8000-000000000001").catch((e) => e);
  assert.equal(error.code, "NOT_FOUND");
  assert.equal(error.status, 404);
  assert.equal(error.requestId, undefined);
});
