// make bench's peers section: pg-boss as one adapter of the cross-queue method
// (harness/bench/src/peers/). ROLE=work runs WORKERS workers (pg-boss 10: one `work` loop each,
// polling every 0.5 s, its smallest; a fetch of up to BATCH jobs, as the public method's adapter
// sizes it) and prints one JSON line per job run ({"id","at","start","done"}, epoch ms);
// ROLE=produce inserts RATE jobs a second for SECONDS in bulk (`insert`) and prints {"produced"}.
import PgBoss from "pg-boss";
import { pace } from "./pace.mjs";

const QUEUE = "bench";
const say = (record) => process.stdout.write(`${JSON.stringify(record)}\n`);
const boss = new PgBoss({ connectionString: process.env.DATABASE_URL, supervise: process.env.ROLE === "work", schedule: false });
boss.on("error", (error) => process.stderr.write(`pg-boss: ${error}\n`));
await boss.start();
if (!(await boss.getQueue(QUEUE))) await boss.createQueue(QUEUE);

if (process.env.ROLE === "work") {
  const workers = Number(process.env.WORKERS);
  const rate = Number(process.env.RATE ?? 100);
  const batchSize = Math.max(1, Math.min(64, Math.ceil((rate * 1.25) / (workers * 2))));
  for (let i = 0; i < workers; i += 1) {
    await boss.work(QUEUE, { batchSize, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      const start = Date.now();
      for (const job of jobs) say({ id: job.data.seq, at: job.data.at, start, done: Date.now() });
    });
  }
  say({ ready: true });
  process.on("SIGTERM", async () => { await boss.stop({ graceful: false }); process.exit(0); });
} else {
  const produced = await pace((jobs) => boss.insert(jobs.map((data) => ({ name: QUEUE, data }))));
  await boss.stop({ graceful: false, wait: false });
  say({ produced });
  process.exit(0);
}
