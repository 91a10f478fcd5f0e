// make bench's peers section: graphile-worker as one adapter of the cross-queue method
// (harness/bench/src/peers/). ROLE=work runs WORKERS concurrent workers and prints one JSON line per
// job run ({"id","at","start","done"}, epoch ms); ROLE=produce inserts RATE jobs a second for
// SECONDS, paced on the wall clock, in bulk (addJobs), and prints {"produced"}.
import { run, makeWorkerUtils, Logger } from "graphile-worker";
import { pace } from "./pace.mjs";

const connectionString = process.env.DATABASE_URL;
// Silent: graphile-worker logs each job to stdout, which is this protocol's channel.
const logger = new Logger(() => () => {});
const say = (record) => process.stdout.write(`${JSON.stringify(record)}\n`);

if (process.env.ROLE === "work") {
  const utils = await makeWorkerUtils({ connectionString, logger });
  await utils.migrate();
  await utils.release();
  const runner = await run({
    connectionString,
    concurrency: Number(process.env.WORKERS),
    noHandleSignals: false,
    logger,
    taskList: {
      bench: async (payload) => {
        const start = Date.now();
        say({ id: payload.seq, at: payload.at, start, done: Date.now() });
      },
    },
  });
  say({ ready: true });
  await runner.promise;
} else {
  const utils = await makeWorkerUtils({ connectionString, logger });
  await utils.migrate();
  const produced = await pace((jobs) => utils.addJobs(jobs.map((payload) => ({ identifier: "bench", payload }))));
  await utils.release();
  say({ produced });
}
