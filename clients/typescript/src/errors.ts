// The errors this client throws. An answer the API refused becomes an AitasksError carrying
// what the API said (docs/api.md, "Errors"); a request that never got an answer becomes one
// with status 0 and code CONNECTION_ERROR.
import type { ErrorDetail } from "./types.js";

/** Response headers that carry a request id: API Gateway HTTP API's, then the usual others. */
export const REQUEST_ID_HEADERS = ["apigw-requestid", "x-amzn-requestid", "x-request-id"] as const;

export function requestIdOf(headers: Headers | undefined): string | undefined {
  if (!headers) return undefined;
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers.get(name);
    if (value) return value;
  }
  return undefined;
}

export interface AitasksErrorInit {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[];
  moreProblems?: number;
  requestId?: string;
  retryAfterSeconds?: number;
  method?: string;
  url?: string;
  cause?: unknown;
}

/**
 * The API refused a request (`status` is its HTTP status, `code` its stable error code, such as
 * `INVALID_REQUEST` or `WORKFLOW_AI_RATE_LIMIT`), or no answer came (`status` 0,
 * `code` `CONNECTION_ERROR`), or a redirect came (`status` the 3xx, or 0 in a browser;
 * `code` `UNEXPECTED_REDIRECT`: the API never redirects, so it was not followed). Thrown after
 * the retries the call allows are spent.
 */
export class AitasksError extends Error {
  override readonly name = "AitasksError";
  readonly status: number;
  readonly code: string;
  /** The problems of an invalid request, in the order found (at most 50). */
  readonly details: ErrorDetail[];
  /** Problems found and not listed in `details`. */
  readonly moreProblems: number;
  /** The request id of the answer (API Gateway's `apigw-requestid`), when it carried one. */
  readonly requestId: string | undefined;
  /** The answer's `Retry-After`, in seconds, when it had one. */
  readonly retryAfterSeconds: number | undefined;
  readonly method: string | undefined;
  readonly url: string | undefined;

  constructor(init: AitasksErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
    this.moreProblems = init.moreProblems ?? 0;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.method = init.method;
    this.url = init.url;
  }

  /** Whether sending the same request again later may succeed (429, 5xx, no answer). */
  get retryable(): boolean {
    if (this.code === "UNEXPECTED_REDIRECT") return false;
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** The body of an error answer, when it has the API's shape. */
export function errorBodyOf(value: unknown): { code: string; message: string; details?: ErrorDetail[]; moreProblems?: number } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const error = (value as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  const { code, message, details, moreProblems } = error as Record<string, unknown>;
  if (typeof code !== "string") return undefined;
  return {
    code,
    message: typeof message === "string" ? message : code,
    ...(Array.isArray(details) ? { details: details as ErrorDetail[] } : {}),
    ...(typeof moreProblems === "number" ? { moreProblems } : {}),
  };
}

/** A wait reached its deadline before the task ended; `task` is the last state read. */
export class AitasksWaitTimeoutError<T = unknown> extends Error {
  override readonly name = "AitasksWaitTimeoutError";
  readonly task: T | undefined;
  constructor(message: string, task: T | undefined) {
    super(message);
    this.task = task;
  }
}
