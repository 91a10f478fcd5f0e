// The producer of make bench's peers section, shared by the npm peers (scripts/peer.sh copies it
// beside each peer's own scripts): RATE jobs a second for
// SECONDS, credited on the wall clock (not on loop iterations), in batches of at most 128 every
// 10 ms. Job i is {seq: SEQ_BASE + i, at: epoch ms just before its insert}. A failed insert (a
// restarting Postgres) is retried until it succeeds, with its first `at`. Answers how many.
export async function pace(insert) {
  const rate = Number(process.env.RATE);
  const seconds = Number(process.env.SECONDS);
  const base = Number(process.env.SEQ_BASE ?? 0);
  const total = Math.floor(rate * seconds);
  const started = Date.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
    while (sent < due) {
      const at = Date.now();
      const n = Math.min(128, due - sent);
      const jobs = Array.from({ length: n }, (_, i) => ({ seq: base + sent + i, at }));
      for (;;) {
        try {
          await insert(jobs);
          break;
        } catch (error) {
          process.stderr.write(`insert failed, retrying: ${error}\n`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      sent += n;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return sent;
}
