"""make bench's peers section: absurd (PyPI absurd-sdk, its schema from absurdctl) as one adapter
of the cross-queue method (harness/bench/src/peers/). ROLE=work installs absurd's schema the way
absurdctl documents it: `absurdctl init` (the schema absurdctl 0.5.1 bundles, applied through
psql) on a database without the `absurd` schema, then `absurdctl create-queue bench`
(idempotent); then runs one AsyncAbsurd worker (start_worker) of WORKERS concurrent tasks,
polling every 50 ms with a 10 s claim timeout, as the public method's absurd adapter configures
it, and prints one JSON line per job run ({"id","at","start","done"}, epoch ms). The worker is
the SDK's alone: it holds one connection and does not reconnect, so a lost connection ends the
process. ROLE=produce spawns RATE jobs a second for SECONDS, paced on the wall clock, through
AsyncAbsurd.spawn (absurd has no bulk spawn; the public adapter calls the same absurd.spawn_task
through executemany), each batch (at most 128) in one transaction of its own connection, so one
commit a batch (a connection lost to a restarting Postgres is opened again, as the public
adapter's producer does), and prints {"produced"}."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import psycopg
from absurd_sdk import AsyncAbsurd
from pace import pace

URL = os.environ["DATABASE_URL"]
QUEUE = "bench"
TASK = "bench"
# The public adapter's: absurd-bench/main.py, POLL_INTERVAL_SECS and CLAIM_TIMEOUT_SECS.
POLL_INTERVAL = 0.05
CLAIM_TIMEOUT = 10


def say(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


def absurdctl(*args):
    # The venv's absurdctl; what it prints goes to the section's log, not to the records.
    command = [os.path.join(os.path.dirname(sys.executable), "absurdctl"), *args, "-d", URL]
    subprocess.run(command, check=True, stdout=sys.stderr)


def ensure_schema():
    # absurd.sql is applied once (its functions are created without OR REPLACE), by the first
    # worker; a worker started again after a kill finds it there.
    with psycopg.connect(URL) as conn:
        installed = conn.execute("SELECT to_regnamespace('absurd') IS NOT NULL").fetchone()[0]
    if not installed:
        absurdctl("init")
    absurdctl("create-queue", QUEUE)


async def work():
    ensure_schema()
    app = AsyncAbsurd(URL, queue_name=QUEUE)

    @app.register_task(TASK)
    async def bench(params, _ctx):
        start = now_ms()
        say({"id": params["seq"], "at": params["at"], "start": start, "done": now_ms()})

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, app.stop_worker)
    worker = asyncio.create_task(
        app.start_worker(
            concurrency=int(os.environ["WORKERS"]), poll_interval=POLL_INTERVAL, claim_timeout=CLAIM_TIMEOUT
        )
    )
    say({"ready": True})
    try:
        await worker
    finally:
        await app.close()


async def produce():
    client = None

    async def insert(jobs):
        nonlocal client
        if client is None:
            conn = await psycopg.AsyncConnection.connect(URL, autocommit=True)
            client = (conn, AsyncAbsurd(conn, queue_name=QUEUE))
        conn, app = client
        try:
            async with conn.transaction():
                for seq, at in jobs:
                    # The job's number as absurd's own idempotency key: a batch retried after a
                    # commit whose answer was lost (a restarting Postgres) spawns nothing twice.
                    await app.spawn(TASK, {"seq": seq, "at": at}, queue=QUEUE, idempotency_key=str(seq))
        except Exception:
            client = None
            await conn.close()
            raise

    produced = await pace(insert)
    if client is not None:
        await client[0].close()
    return produced


async def main():
    if os.environ["ROLE"] == "work":
        await work()
    else:
        say({"produced": await produce()})


asyncio.run(main())
