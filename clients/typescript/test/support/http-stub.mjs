// A local HTTP server for the unit tests: each request is recorded and answered by the test's
// handler ({status, headers, body, delayMs} or {destroy: true} to drop the connection).
import { createServer } from "node:http";

export async function startStub(handler) {
  const requests = [];
  let inFlight = 0;
  const stub = { requests, maxInFlight: 0, url: "" };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url, "http://stub");
    const request = {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
      at: Date.now(),
    };
    requests.push(request);
    inFlight += 1;
    stub.maxInFlight = Math.max(stub.maxInFlight, inFlight);
    try {
      const answer = (await handler(request, requests.length)) ?? { status: 404, body: { error: { code: "NOT_FOUND", message: "no" } } };
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      if (answer.destroy) {
        req.socket.destroy();
        return;
      }
      const body = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body ?? {});
      res.writeHead(answer.status ?? 200, { "content-type": "application/json", ...(answer.headers ?? {}) });
      res.end(body);
    } finally {
      inFlight -= 1;
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  stub.url = `http://127.0.0.1:${server.address().port}`;
  stub.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return stub;
}

/** A task body as the API answers it. */
export function taskBody(overrides = {}) {
  const now = new Date().toISOString();
  return {
    id: "0190f3c2-0000-7000-8000-000000000001",
    appId: "app",
    runId: null,
    stepKey: "s",
    effectKey: "e",
    kind: "classify",
    request: { kind: "classify", prompt: "p", input: "x", choices: ["a", "b"] },
    inputHash: "h",
    modelId: "default",
    status: "queued",
    output: null,
    usage: null,
    attempts: 0,
    errorCode: null,
    errorMessage: null,
    cancelRequestedAt: null,
    createdAt: now,
    startedAt: null,
    completedAt: null,
    updatedAt: now,
    ...overrides,
  };
}

export const createBody = (effectKey = "e") => ({
  owner: { scopeId: "scope" },
  stepKey: "s",
  effectKey,
  modelId: "default",
  request: { kind: "classify", prompt: "p", input: "x", choices: ["a", "b"] },
});

/** Retries without real waiting: the backoff's random part is zero. */
export const fastRetry = { random: () => 0, baseDelayMs: 1, maxDelayMs: 5 };
