// The peer benchmark: graphile-worker in its default configuration (concurrency 10) working
// off JOBS no-op jobs queued beforehand on the same Postgres. Prints one JSON line.
import { run, makeWorkerUtils } from "graphile-worker";

const connectionString = process.env.DATABASE_URL;
const total = Number(process.env.JOBS ?? 20000);
const concurrency = Number(process.env.CONCURRENCY ?? 10);

const utils = await makeWorkerUtils({ connectionString });
await utils.migrate();
for (let queued = 0; queued < total; queued += 1000) {
  const batch = Array.from({ length: Math.min(1000, total - queued) }, () => ({ identifier: "noop", payload: {} }));
  await utils.addJobs(batch);
}

let done = 0;
let finish;
const finished = new Promise((resolve) => (finish = resolve));
const started = performance.now();
const runner = await run({
  connectionString,
  concurrency,
  noHandleSignals: true,
  logger: undefined,
  taskList: {
    noop: async () => {
      done += 1;
      if (done === total) finish();
    },
  },
});
await finished;
const seconds = (performance.now() - started) / 1000;
await runner.stop();
await utils.release();
console.log(JSON.stringify({ version: process.env.GRAPHILE_VERSION, jobs: total, concurrency, seconds, jobsPerSecond: total / seconds }));
