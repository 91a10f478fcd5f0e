// The API never redirects: a 3xx is an error (status the 3xx, code UNEXPECTED_REDIRECT), never
// followed and never retried, so nothing (the token, the custom headers, the body) is sent to
// the address a redirect names.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { AitasksClient, AitasksError } from "../../dist/index.js";
import { createBody, fastRetry, startStub, taskBody } from "../support/http-stub.mjs";

const stubs = [];
after(() => Promise.all(stubs.map((s) => s.close())));

async function stub(handler) {
  const s = await startStub(handler);
  stubs.push(s);
  return s;
}

test("a redirect is an error and nothing goes where it points", async () => {
  const elsewhere = await stub(() => ({ status: 201, body: taskBody() }));
  for (const status of [301, 302, 303, 307, 308]) {
    const location = `${elsewhere.url}/v1/tasks`;
    const api = await stub(() => ({ status, headers: { location }, body: {} }));
    const client = new AitasksClient({
      baseUrl: api.url,
      token: "secret-token",
      headers: { "x-tenant-secret": "also-secret" },
      retry: fastRetry,
    });
    const calls = [
      () => client.createTask(createBody()),
      () => client.getTask("0190f3c2-0000-7000-8000-000000000001"),
      () => client.createRun({ scopeId: "s" }),
    ];
    for (const call of calls) {
      const failure = await call().catch((e) => e);
      assert.ok(failure instanceof AitasksError, `${status}: no error; the redirect was followed and answered ${JSON.stringify(failure)?.slice(0, 80)}`);
      assert.equal(failure.status, status);
      assert.equal(failure.code, "UNEXPECTED_REDIRECT");
      assert.equal(failure.retryable, false);
      assert.match(failure.message, new RegExp(location.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    }
    assert.equal(api.requests.length, calls.length, `${status}: one attempt each, no retry`);
  }
  assert.deepEqual(
    elsewhere.requests.map((r) => [r.method, r.path, r.headers.authorization, r.headers["x-tenant-secret"]]),
    [],
    "the redirect was followed",
  );
});
