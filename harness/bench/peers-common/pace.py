# The producer of make bench's peers section, shared by the PyPI peers (scripts/peer.sh copies it
# beside each peer's own scripts): RATE jobs a second for SECONDS, credited on the wall clock (not
# on loop iterations), in batches of at most 128 every 10 ms. Job i is (SEQ_BASE + i, epoch ms just
# before its insert). A failed insert (a restarting Postgres) is retried until it succeeds, with
# its first `at`. Answers how many.
import asyncio
import os
import sys
import time


async def pace(insert):
    rate, seconds = float(os.environ["RATE"]), float(os.environ["SECONDS"])
    base = int(os.environ.get("SEQ_BASE", "0"))
    total = int(rate * seconds)
    started, sent = time.monotonic(), 0
    while sent < total:
        due = min(total, int((time.monotonic() - started) * rate))
        while sent < due:
            at, n = int(time.time() * 1000), min(128, due - sent)
            jobs = [(base + sent + i, at) for i in range(n)]
            while True:
                try:
                    await insert(jobs)
                    break
                except Exception as error:  # a restarting Postgres: retried until it succeeds
                    print(f"insert failed, retrying: {error}", file=sys.stderr)
                    await asyncio.sleep(0.1)
            sent += n
        await asyncio.sleep(0.01)
    return sent
