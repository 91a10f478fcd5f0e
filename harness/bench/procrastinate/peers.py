"""make bench's peers section: procrastinate as one adapter of the cross-queue method
(harness/bench/src/peers/). ROLE=work runs one worker of WORKERS concurrent jobs (LISTEN/NOTIFY,
polling every 50 ms, as the public method's adapter configures it) and prints one JSON line per
job run ({"id","at","start","done"}, epoch ms); ROLE=produce defers RATE jobs a second for
SECONDS, paced on the wall clock, in bulk (batch_defer_async), and prints {"produced"}."""

import asyncio
import json
import os
import sys
import time

import procrastinate
import psycopg
from pace import pace

URL = os.environ["DATABASE_URL"]
app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=URL))


def say(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


@app.task(name="bench", queue="bench")
async def bench(seq, at):
    start = now_ms()
    say({"id": seq, "at": at, "start": start, "done": now_ms()})


async def ensure_schema():
    # apply_schema_async is not idempotent: applied once, by the first worker.
    async with await psycopg.AsyncConnection.connect(URL) as conn:
        row = await (await conn.execute("SELECT to_regclass('public.procrastinate_jobs')")).fetchone()
    if row[0] is None:
        await app.schema_manager.apply_schema_async()


async def produce():
    return await pace(lambda jobs: bench.batch_defer_async(*({"seq": seq, "at": at} for seq, at in jobs)))


async def main():
    async with app.open_async():
        if os.environ["ROLE"] == "work":
            await ensure_schema()
            say({"ready": True})
            await app.run_worker_async(
                queues=["bench"],
                concurrency=int(os.environ["WORKERS"]),
                wait=True,
                fetch_job_polling_interval=0.05,
                listen_notify=True,
                delete_jobs="never",
                install_signal_handlers=True,
            )
        else:
            say({"produced": await produce()})


asyncio.run(main())
