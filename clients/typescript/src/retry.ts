// When and how long to wait before sending a request again: 429 and 5xx answers (and requests
// that got no answer) are retried with "full jitter" exponential backoff, never sooner than the
// answer's Retry-After; a 4xx other than 429 never is.

export interface RetryOptions {
  /** Attempts in all, the first included (default 5; 1 turns retries off). */
  maxAttempts?: number;
  /** The first backoff's ceiling in milliseconds, doubled at each retry (default 500). */
  baseDelayMs?: number;
  /** The largest backoff ceiling (default 20,000 ms). */
  maxDelayMs?: number;
  /**
   * A `Retry-After` longer than this is not waited for: the call fails at once with the
   * AitasksError (its `retryAfterSeconds` says when to come back). Default 60,000 ms; the
   * tenant's daily quota answers with the next UTC midnight.
   */
  maxRetryAfterMs?: number;
  /** The random source for the jitter, in [0, 1) (tests pin it). */
  random?: () => number;
}

export type ResolvedRetry = Required<RetryOptions>;

export function resolveRetry(options: RetryOptions | undefined): ResolvedRetry {
  return {
    maxAttempts: Math.max(1, Math.floor(options?.maxAttempts ?? 5)),
    baseDelayMs: Math.max(0, options?.baseDelayMs ?? 500),
    maxDelayMs: Math.max(0, options?.maxDelayMs ?? 20_000),
    maxRetryAfterMs: Math.max(0, options?.maxRetryAfterMs ?? 60_000),
    random: options?.random ?? Math.random,
  };
}

/**
 * The wait before retry number `retry` (1 for the first retry): a random time between zero and
 * min(maxDelayMs, baseDelayMs * 2^(retry-1)), and never less than `retryAfterMs`.
 */
export function backoffDelay(retry: number, retryAfterMs: number | undefined, policy: ResolvedRetry): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(policy.random() * ceiling);
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}

/** `Retry-After` in milliseconds: whole seconds, or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Whether an answer with this status is worth another attempt: 429 and every 5xx. Every call is
 * safe to repeat (creates are idempotent on their effect key, a run create on the
 * Idempotency-Key the client sends with it, cancels and reads are too), so a 5xx or no answer at
 * all is retried whatever the call.
 */
export function retryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}
