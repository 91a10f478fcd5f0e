// The fetch every call goes through: the bearer token, a timeout per attempt, and the retries
// (retry.ts). It hands back the last answer; the client turns a refusal into an AitasksError. A
// redirect is never followed: it is an AitasksError (code UNEXPECTED_REDIRECT) at once.
import { AitasksError } from "./errors.js";
import { backoffDelay, parseRetryAfter, retryableStatus, type ResolvedRetry } from "./retry.js";
import { abortReason, anySignal, sleep } from "./signals.js";

/** A static token, or a function called before every request that returns a fresh one. */
export type TokenProvider = string | (() => string | Promise<string>);

export interface RetryEvent {
  /** The retry about to be made (1 for the first). */
  retry: number;
  delayMs: number;
  method: string;
  url: string;
  /** The answer's status, or 0 when none came. */
  status: number;
  error?: unknown;
}

export interface TransportSettings {
  token: TokenProvider;
  fetch: typeof globalThis.fetch;
  retry: ResolvedRetry;
  /** Each attempt's own limit, in milliseconds. */
  timeoutMs: number;
  headers: Record<string, string>;
  onRetry: ((event: RetryEvent) => void) | undefined;
}

async function bearer(token: TokenProvider): Promise<string> {
  const value = typeof token === "function" ? await token() : token;
  if (typeof value !== "string" || value.length === 0) {
    throw new TypeError("the token provider gave no token");
  }
  return value;
}

/** A fetch for openapi-fetch that authenticates and retries. */
export function transport(settings: TransportSettings): (request: Request) => Promise<Response> {
  return async (request: Request) => {
    const policy = settings.retry;
    for (let attempt = 1; ; attempt += 1) {
      if (request.signal.aborted) throw abortReason(request.signal);
      const outgoing = request.clone();
      outgoing.headers.set("authorization", `Bearer ${await bearer(settings.token)}`);
      for (const [name, value] of Object.entries(settings.headers)) outgoing.headers.set(name, value);
      const timeout = new AbortController();
      const timer = setTimeout(
        () => timeout.abort(new DOMException(`no answer within ${settings.timeoutMs} ms`, "TimeoutError")),
        settings.timeoutMs,
      );
      const combined = anySignal([request.signal, timeout.signal]);
      let response: Response | undefined;
      let failure: unknown;
      try {
        // The API never redirects: a redirect is not followed (nothing, the token and the
        // custom headers included, goes to the address it names) and becomes an error below.
        response = await settings.fetch(outgoing, { signal: combined.signal, redirect: "manual" });
      } catch (error) {
        // The caller's own abort ends the call; anything else is an answer that never came.
        if (request.signal.aborted) throw abortReason(request.signal);
        failure = error;
      } finally {
        clearTimeout(timer);
        combined.release();
      }
      const last = attempt >= policy.maxAttempts;
      if (response !== undefined && isRedirect(response)) {
        await response.body?.cancel().catch(() => undefined);
        throw redirectError(request, response);
      }
      if (response !== undefined) {
        if (!retryableStatus(response.status) || last) return response;
        const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
        if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) return response;
        const delayMs = backoffDelay(attempt, retryAfterMs, policy);
        // The body is not needed: free the connection.
        await response.body?.cancel().catch(() => undefined);
        settings.onRetry?.({ retry: attempt, delayMs, method: request.method, url: request.url, status: response.status });
        await sleep(delayMs, request.signal);
        continue;
      }
      if (last) {
        throw new AitasksError({
          status: 0,
          code: "CONNECTION_ERROR",
          message: `${request.method} ${request.url}: no answer (${describe(failure)})`,
          method: request.method,
          url: request.url,
          cause: failure,
        });
      }
      const delayMs = backoffDelay(attempt, undefined, policy);
      settings.onRetry?.({ retry: attempt, delayMs, method: request.method, url: request.url, status: 0, error: failure });
      await sleep(delayMs, request.signal);
    }
  };
}

/** A 3xx, or what a browser's fetch makes of one with `redirect: "manual"` (status 0). */
function isRedirect(response: Response): boolean {
  return response.type === "opaqueredirect" || (response.status >= 300 && response.status <= 399);
}

function redirectError(request: Request, response: Response): AitasksError {
  const location = response.headers.get("location");
  return new AitasksError({
    status: response.status,
    code: "UNEXPECTED_REDIRECT",
    message:
      `${request.method} ${request.url}: HTTP ${response.status}, a redirect${location ? ` to ${location}` : ""}; ` +
      "the API never redirects, so it was not followed (check baseUrl)",
    method: request.method,
    url: request.url,
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
