"""make bench's peers section: awa (PyPI awa-pg, Python bindings over awa's Rust core) as one
adapter of the cross-queue method (harness/bench/src/peers/). ROLE=work migrates awa's schema with
the package's own migration (AsyncClient.migrate) and installs its queue-storage backend
(install_queue_storage), then runs one worker runtime of WORKERS concurrent jobs on one queue,
polling every 50 ms as a queue-storage target (as the public method's awa adapter configures
it), and prints one JSON line per job run ({"id","at","start","done"}, epoch ms); ROLE=produce
enqueues RATE jobs a second for SECONDS, paced on the wall clock, in bulk (enqueue_many_copy,
COPY into queue storage, at most 128 a batch, as the public adapter's producer), and prints
{"produced"}."""

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass

import awa
from pace import pace

URL = os.environ["DATABASE_URL"]
QUEUE = "bench"


@dataclass
class Bench:
    seq: int
    at: int


def say(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


async def work(client):
    # The package's own migration, then its queue-storage backend installed and made active
    # (the public adapter's prepare_queue_storage: migrations::run + QueueStorage::install);
    # both idempotent, so a worker started again after a kill does them again harmlessly.
    # A worker started right after a killed one can meet the dead session's locks (a deadlock
    # until Postgres ends it): tried again, at most five times.
    for attempt in range(5):
        try:
            await client.migrate()
            await client.install_queue_storage()
            break
        except Exception as error:
            if attempt == 4:
                raise
            print(f"schema setup failed, retrying: {error}", file=sys.stderr)
            await asyncio.sleep(1)

    @client.task(Bench, kind="bench", queue=QUEUE)
    async def bench(job):
        start = now_ms()
        say({"id": job.args.seq, "at": job.args.at, "start": start, "done": now_ms()})

    await client.start(
        [(QUEUE, int(os.environ["WORKERS"]))],
        poll_interval_ms=50,
        storage_transition_role="queue_storage_target",
    )
    say({"ready": True})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await client.shutdown()


async def produce(client):
    return await pace(
        lambda jobs: client.enqueue_many_copy([Bench(seq=seq, at=at) for seq, at in jobs], kind="bench", queue=QUEUE)
    )


async def main():
    client = awa.AsyncClient(URL, max_connections=int(os.environ.get("WORKERS", "4")) + 8)
    if os.environ["ROLE"] == "work":
        await work(client)
    else:
        say({"produced": await produce(client)})
    await client.close()


asyncio.run(main())
