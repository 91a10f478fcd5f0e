// A batch of any size: POST /v1/tasks/batch takes 1..1000 items and at most 6,000,000 bytes,
// so the items go in chunks within both limits, a bounded number of chunks at a time, and the
// answers are put back in the items' order.
import { SignalFanout, runWorkers, throwIfAborted } from "./signals.js";
import type { BatchItemResult, CreateTaskInput, ErrorBody, TaskRequest, TaskSummary } from "./types.js";

/** The API's limits on one batch request (docs/api.md, "Batches"). */
export const MAX_BATCH_ITEMS = 1000;
export const MAX_BATCH_BYTES = 6_000_000;

export interface BatchOptions {
  /** Items per request, 1..1000 (default 1000). */
  chunkSize?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Aborts the chunks not yet answered; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Send the items refused with a `retryAfter` (429 `WORKFLOW_AI_RATE_LIMIT`) again once it has
   * passed, within the client's retry policy (default true). Other refusals are answered as they are.
   */
  retryRefusedItems?: boolean;
}

type RawResult = { status: 200 | 201; task: unknown } | { status: 400 | 404 | 409 | 413 | 429; error: ErrorBody };

const encoder = new TextEncoder();
// `{"tasks":[` ... `]}`
const ENVELOPE_BYTES = 12;

/** Split into chunks of at most `size` items and MAX_BATCH_BYTES of JSON; each chunk's first index. */
export function chunkItems<T>(items: readonly T[], size: number): { start: number; items: T[] }[] {
  const chunks: { start: number; items: T[] }[] = [];
  let current: T[] = [];
  let start = 0;
  let bytes = ENVELOPE_BYTES;
  items.forEach((item, index) => {
    // An item that cannot be serialized counts as small: the API answers it on its own.
    const itemBytes = encoder.encode(JSON.stringify(item) ?? "null").length + 1;
    if (current.length > 0 && (current.length >= size || bytes + itemBytes > MAX_BATCH_BYTES)) {
      chunks.push({ start, items: current });
      current = [];
      start = index;
      bytes = ENVELOPE_BYTES;
    }
    current.push(item);
    bytes += itemBytes;
  });
  if (current.length > 0) chunks.push({ start, items: current });
  return chunks;
}

export async function createInChunks<R extends TaskRequest>(
  inputs: readonly CreateTaskInput<R>[],
  options: BatchOptions,
  send: (chunk: readonly CreateTaskInput<R>[], signal: AbortSignal) => Promise<RawResult[]>,
): Promise<BatchItemResult<R>[]> {
  const size = Math.min(MAX_BATCH_ITEMS, Math.max(1, Math.floor(options.chunkSize ?? MAX_BATCH_ITEMS)));
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  throwIfAborted(options.signal);
  const chunks = chunkItems(inputs, size);
  const results = new Array<BatchItemResult<R>>(inputs.length);
  // The first failure stops the chunks not yet sent and aborts those in flight.
  const fanout = new SignalFanout(options.signal);
  let next = 0;
  const worker = async () => {
    while (next < chunks.length && !fanout.aborted) {
      const chunk = chunks[next++] as { start: number; items: CreateTaskInput<R>[] };
      const child = fanout.child();
      let answers: RawResult[];
      try {
        answers = await send(chunk.items, child.signal);
      } finally {
        child.done();
      }
      if (answers.length !== chunk.items.length) {
        throw new Error(`the batch answered ${answers.length} results for ${chunk.items.length} items`);
      }
      answers.forEach((answer, offset) => {
        results[chunk.start + offset] =
          "task" in answer
            ? { ok: true, status: answer.status, created: answer.status === 201, task: answer.task as TaskSummary<R> }
            : { ok: false, status: answer.status, error: answer.error };
      });
    }
  };
  await runWorkers(Math.min(concurrency, chunks.length), worker, fanout);
  throwIfAborted(options.signal);
  return results;
}
