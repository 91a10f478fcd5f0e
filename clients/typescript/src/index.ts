export { AitasksClient, isTerminal } from "./client.js";
export type {
  CallOptions,
  ClientOptions,
  CreateOperationOptions,
  CreateRunOptions,
  DeleteScopeOptions,
  FollowOutputOptions,
  UnreleasedSourcesQuery,
  WaitManyOptions,
  WaitOperationOptions,
  WaitOptions,
} from "./client.js";
export { AitasksError, AitasksWaitTimeoutError } from "./errors.js";
export { OUTPUT_IDLE_PAUSE_MS } from "./output.js";
export type { OutputPiece, OutputQuery, TaskOutput } from "./output.js";
export type { AitasksErrorInit } from "./errors.js";
export { MAX_BATCH_BYTES, MAX_BATCH_ITEMS, chunkItems } from "./batch.js";
export type { BatchOptions } from "./batch.js";
export { backoffDelay, parseRetryAfter } from "./retry.js";
export type { RetryOptions } from "./retry.js";
export type { RetryEvent, TokenProvider } from "./transport.js";
export { TERMINAL_STATUSES } from "./types.js";
export type * from "./types.js";
export type { components, paths } from "./generated/openapi.js";
