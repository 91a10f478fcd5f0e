// The end-to-end stack: the stub provider (this process) and the dev server (a child process on
// a free port) over the database scripts/client-ts.sh made for this run (its URLs come in the
// environment) and queues of its own. Each test file starts its own and stops it at the end: a
// file's tasks never wait behind another's messages.
import { spawn, spawnSync } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { startStubProvider } from "./stub-provider.mjs";

const NEEDED = ["AITASKS_DEV_SERVER_BIN", "DATABASE_URL", "AITASK_MIGRATE_DATABASE_URL", "AWS_ENDPOINT_URL_SQS"];
const QUEUES_SCRIPT = new URL("../../../../scripts/sqs_queues.py", import.meta.url).pathname;

/** The task queue (with its DLQ) and the events queue, as `make up` makes them (scripts/sqs_queues.py). */
function createQueues(endpoint, prefix) {
  const run = spawnSync("python3", [QUEUES_SCRIPT, endpoint, prefix], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`creating the queues failed: ${run.stderr}`);
  return Object.fromEntries(run.stdout.trim().split("\n").map((line) => line.split("=", 2)));
}

async function deleteQueues(endpoint, urls) {
  for (const url of urls) {
    await fetch(endpoint, {
      method: "POST",
      headers: { "x-amz-target": "AmazonSQS.DeleteQueue", "content-type": "application/x-amz-json-1.0" },
      body: JSON.stringify({ QueueUrl: url }),
    }).catch(() => undefined);
  }
}
export const JWT_SECRET = "client-ts-e2e-secret";
/** The default profile's prices (US dollars a million tokens): tasks carry usage.estimatedCostUsd. */
export const PRICES = { inputPerMillion: 0.15, outputPerMillion: 0.6 };

function b64url(value) {
  return Buffer.from(value).toString("base64url");
}

/** An HS256 token for the dev server: the tenant is `app_id`. */
export function devToken(appId, secret = JWT_SECRET, lifetimeSeconds = 3600) {
  const head = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const body = b64url(JSON.stringify({ app_id: appId, sub: "client-ts-e2e", exp: Math.floor(Date.now() / 1000) + lifetimeSeconds }));
  const signature = createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${signature}`;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `options.databaseUrl`: where the functions reach Postgres (default DATABASE_URL; migrations go straight there). */
export async function startStack(options = {}) {
  const missing = NEEDED.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(`the end-to-end tests need ${missing.join(", ")}: run them with \`make client-ts\` (scripts/client-ts.sh)`);
  }
  const endpoint = process.env.AWS_ENDPOINT_URL_SQS;
  const queues = createQueues(endpoint, `client-ts-${randomUUID().slice(0, 8)}`);
  const provider = await startStubProvider();
  const address = `127.0.0.1:${await freePort()}`;
  const log = join(tmpdir(), `aitasks-client-ts-dev-server-${randomUUID()}.log`);
  const out = openSync(log, "a");
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: options.databaseUrl ?? process.env.DATABASE_URL,
    AITASK_MIGRATE_DATABASE_URL: process.env.AITASK_MIGRATE_DATABASE_URL,
    AITASK_TASK_QUEUE_URL: queues.AITASK_TASK_QUEUE_URL,
    AITASK_EVENTS_QUEUE_URL: queues.AITASK_EVENTS_QUEUE_URL,
    AWS_ENDPOINT_URL_SQS: endpoint,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? "test",
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? "test",
    OPENAI_BASE_URL: provider.baseUrl,
    OPENAI_API_KEY: "sk-stub-client-ts",
    AITASK_MODELS: JSON.stringify({ default: { model: "stub-model", prices: PRICES } }),
    AITASK_DEV_JWT_SECRET: JWT_SECRET,
    AITASK_LOCAL_ADDR: address,
    AITASK_LOCAL_POLLERS: "4",
    AITASK_LOCAL_POLL_WAIT_S: "1",
    AITASK_CANCEL_POLL_MS: "100",
    AITASK_HEARTBEAT_MS: "300",
    AITASK_SWEEP_INTERVAL_MS: "1000",
    AITASK_DB_POOL_SIZE: "8",
    RUST_LOG: "warn",
    ...(process.env.AITASK_DB_CA_FILE ? { AITASK_DB_CA_FILE: process.env.AITASK_DB_CA_FILE } : {}),
  };
  const child = spawn(process.env.AITASKS_DEV_SERVER_BIN, [], { env, stdio: ["ignore", out, out] });
  closeSync(out);
  let exited = null;
  child.on("exit", (code, signal) => (exited = signal ?? code));
  const baseUrl = `http://${address}`;
  const logTail = () => readFileSync(log, "utf8").split("\n").slice(-30).join("\n");
  for (let i = 0; ; i += 1) {
    if (exited !== null) throw new Error(`the dev server exited (${exited}):\n${logTail()}`);
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {}
    if (i > 600) throw new Error(`the dev server did not come up in 60 s:\n${logTail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl,
    provider,
    log,
    logTail,
    async stop() {
      if (exited === null) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await gone;
        clearTimeout(timer);
      }
      await provider.close();
      await deleteQueues(endpoint, Object.values(queues));
    },
  };
}

/** A tenant of its own for each test file: no test sees another's tasks. */
export function tenant(label) {
  return `client-ts-${label}-${randomUUID().slice(0, 8)}`;
}
