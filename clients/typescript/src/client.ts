// AitasksClient: every route of docs/api.md as a typed call on openapi-fetch, with the waiting,
// paging and batching a caller would otherwise write.
import createClient, { type Client } from "openapi-fetch";

import { createInChunks, type BatchOptions } from "./batch.js";
import { AitasksError, AitasksWaitTimeoutError, errorBodyOf, requestIdOf } from "./errors.js";
import type { components, paths } from "./generated/openapi.js";
import { idlePauseMs, OutputPlace, type OutputPiece, type OutputQuery, type TaskOutput } from "./output.js";
import { backoffDelay, resolveRetry, type RetryOptions } from "./retry.js";
import { SignalFanout, anySignal, runWorkers, sleep, throwIfAborted } from "./signals.js";
import { transport, type RetryEvent, type TokenProvider, type TransportSettings } from "./transport.js";
import {
  TERMINAL_STATUSES,
  type BatchItemResult,
  type CreateHoldInput,
  type CreateHoldResult,
  type CreateOperationInput,
  type CreateOperationResult,
  type Hold,
  type HoldPage,
  type ListHoldsQuery,
  type ListOperationsQuery,
  type Operation,
  type OperationPage,
  type ReplayInput,
  type TaskReplays,
  type CreateResult,
  type CreateRunInput,
  type CreateTaskInput,
  type DeleteScopeResult,
  type ListRunsQuery,
  type ListTasksQuery,
  type Run,
  type RunPage,
  type Summary,
  type SummaryQuery,
  type Activity,
  type ActivityQuery,
  type RunProgress,
  type TaskAttempts,
  type TaskBatch,
  type TaskCallbacks,
  type TaskEvents,
  type SourcePage,
  type SourceRef,
  type Task,
  type TaskPage,
  type TaskRequest,
  type TaskStatus,
  type Typed,
} from "./types.js";

type Schemas = components["schemas"];

export interface ClientOptions {
  /** The API's base URL, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`. */
  baseUrl: string;
  /** A JWT, or a function called before every request that returns a fresh one (cache in it if minting is costly). */
  token: TokenProvider;
  /** The fetch to use (default: the runtime's global fetch). */
  fetch?: typeof globalThis.fetch;
  retry?: RetryOptions;
  /** Each attempt's limit in milliseconds (default 60,000; above the 20 s a long poll may hold). */
  timeoutMs?: number;
  /** Headers sent with every request (a user agent, a trace header). */
  headers?: Record<string, string>;
  /** Called before each retry (for logs or metrics). */
  onRetry?: (event: RetryEvent) => void;
}

export interface CallOptions {
  /** Aborts the call (and its retries); the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface CreateRunOptions extends CallOptions {
  /**
   * The Idempotency-Key to send (1 to 255 visible ASCII characters): one run per key, however
   * often it is sent, as long as the body is the same (another body with it is refused, 422
   * IDEMPOTENCY_KEY_REUSED). Default: a new random key for each call.
   */
  idempotencyKey?: string;
}

export interface CreateOperationOptions extends CallOptions {
  /**
   * The Idempotency-Key to send (1 to 255 visible ASCII characters): one operation per key while
   * the body is the same (another body with it is refused, 422 IDEMPOTENCY_KEY_REUSED).
   * Default: a new random key for each call, the same on every attempt.
   */
  idempotencyKey?: string;
}

export interface WaitOperationOptions extends CallOptions {
  /** Give up at this time (a Date or epoch milliseconds): AitasksWaitTimeoutError holding the operation as last read. */
  deadline?: Date | number;
  /** Give up after this many milliseconds (the earlier of this and `deadline` counts). */
  timeoutMs?: number;
  /** Milliseconds between two reads (default 1,000). */
  intervalMs?: number;
  /** Called with the operation after every read (a live progress line). */
  onProgress?: (operation: Operation) => void;
}

export interface WaitOptions extends CallOptions {
  /** Give up at this time (a Date or epoch milliseconds): AitasksWaitTimeoutError. */
  deadline?: Date | number;
  /** Give up after this many milliseconds (the earlier of this and `deadline` counts). */
  timeoutMs?: number;
  /** The longest single long poll, in seconds (the server clamps to 0..20; default 20). */
  pollSeconds?: number;
}

export interface FollowOutputOptions extends CallOptions {
  /** Resume: the segment of the text the reader has (the last piece's `segment`). */
  segment?: number;
  /** Resume: the characters of that segment the reader has (the last piece's `next`). */
  after?: number;
  /** Seconds each read may be held for something new (0..20; default 20). */
  wait?: number;
}

export interface WaitManyOptions extends WaitOptions {
  /** Long polls in flight at once (default 8). */
  concurrency?: number;
}

export interface DeleteScopeOptions extends CallOptions {
  /** Only this source's tasks. */
  sourceId?: string;
  /** Send the request again while the API says rows are left (default true). */
  untilDone?: boolean;
}

export interface UnreleasedSourcesQuery {
  /** Only sources with unreleased tasks of this step key. */
  task?: string;
  /** Start after this source (the previous page's `next`). */
  after?: SourceRef;
}

type Ref = string | { id: string };

const MAX_TIMER_MS = 2_147_483_647;

const idOf = (task: Ref): string => (typeof task === "string" ? task : task.id);

/** A random UUID (v4): the runtime's own where it has one, else from its random bytes. */
function newIdempotencyKey(): string {
  const crypto = (globalThis as { crypto?: Partial<Pick<Crypto, "randomUUID" | "getRandomValues">> }).crypto;
  if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  if (typeof crypto?.getRandomValues === "function") crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function deadlineOf(options: WaitOptions): number | undefined {
  const limits: number[] = [];
  if (options.deadline !== undefined) limits.push(typeof options.deadline === "number" ? options.deadline : options.deadline.getTime());
  if (options.timeoutMs !== undefined) limits.push(Date.now() + options.timeoutMs);
  return limits.length === 0 ? undefined : Math.min(...limits);
}

/** A typed client of the aitasks HTTP API. */
export class AitasksClient {
  private readonly api: Client<paths>;
  private readonly settings: TransportSettings;

  constructor(options: ClientOptions) {
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") {
      throw new TypeError("no fetch: pass options.fetch on a runtime without a global fetch");
    }
    const settings: TransportSettings = {
      token: options.token,
      fetch: fetchImpl,
      retry: resolveRetry(options.retry),
      timeoutMs: options.timeoutMs ?? 60_000,
      headers: options.headers ?? {},
      onRetry: options.onRetry,
    };
    this.settings = settings;
    // Every call is safe to repeat, so every call goes through the one retrying transport.
    this.api = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch: transport(settings) });
  }

  // ---- runs ----

  /**
   * `POST /v1/runs`: a run owns the tasks created with its `runId`. Sent with an
   * Idempotency-Key made for this call (or `options.idempotencyKey`), the same on every
   * attempt: a retry after an answer that was lost (a 503 from a connection dropped at the
   * commit, a timeout) answers the run the first attempt made, never a second one.
   */
  async createRun(input: CreateRunInput, options: CreateRunOptions = {}): Promise<Run> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    return expect(
      await this.api.POST("/v1/runs", {
        body: input,
        params: { header: { "Idempotency-Key": idempotencyKey } },
        ...signalOf(options),
      }),
      "POST /v1/runs",
    );
  }

  /** `GET /v1/runs/{runId}`. */
  async getRun(runId: string, options: CallOptions = {}): Promise<Run> {
    return expect(
      await this.api.GET("/v1/runs/{runId}", { params: { path: { runId } }, ...signalOf(options) }),
      "GET /v1/runs/{runId}",
    );
  }

  /** `POST /v1/runs/{runId}/cancel`: its queued tasks end `canceled`, running ones are aborted. */
  async cancelRun(runId: string, options: CallOptions = {}): Promise<Run> {
    return expect(
      await this.api.POST("/v1/runs/{runId}/cancel", { params: { path: { runId } }, ...signalOf(options) }),
      "POST /v1/runs/{runId}/cancel",
    );
  }

  // ---- tasks ----

  /**
   * `POST /v1/tasks`. Idempotent on the effect key: the same key answers the existing task
   * (`created: false`), so the call is retried safely.
   */
  async createTask<const R extends TaskRequest>(
    input: CreateTaskInput<R>,
    options: CallOptions = {},
  ): Promise<CreateResult<R>> {
    const answer = await this.api.POST("/v1/tasks", { body: asBody(input), ...signalOf(options) });
    const task = expect(answer, "POST /v1/tasks") as unknown as Task<R>;
    return { task, created: answer.response.status === 201 };
  }

  /**
   * `POST /v1/tasks/batch` for any number of creates: sent in chunks of at most 1,000 items
   * (and 6,000,000 bytes), `concurrency` chunks at a time; one result per item, in order.
   */
  async createTasks<const R extends TaskRequest>(
    inputs: readonly CreateTaskInput<R>[],
    options: BatchOptions = {},
  ): Promise<BatchItemResult<R>[]> {
    const send = (items: readonly CreateTaskInput<R>[]) =>
      createInChunks<R>(items, options, async (chunk, signal) => {
        const answer = await this.api.POST("/v1/tasks/batch", {
          body: { tasks: chunk as unknown[] },
          ...signalOf({ signal }),
        });
        return expect(answer, "POST /v1/tasks/batch").results;
      });
    const results = await send(inputs);
    if (options.retryRefusedItems === false) return results;
    // Items refused with a Retry-After (a scope's rate limit) are sent again once it has
    // passed, as a single create's 429 would be; each item is idempotent on its effect key.
    const policy = this.settings.retry;
    for (let attempt = 1; attempt < policy.maxAttempts; attempt += 1) {
      const waiting = results.flatMap((result, index) =>
        !result.ok && result.status === 429 && result.error.retryAfter !== undefined && result.error.retryAfter * 1000 <= policy.maxRetryAfterMs
          ? [{ index, retryAfterMs: result.error.retryAfter * 1000 }]
          : [],
      );
      if (waiting.length === 0) break;
      const delayMs = backoffDelay(attempt, Math.max(...waiting.map((w) => w.retryAfterMs)), policy);
      this.settings.onRetry?.({ retry: attempt, delayMs, method: "POST", url: "/v1/tasks/batch (refused items)", status: 429 });
      await sleep(delayMs, options.signal);
      const again = await send(waiting.map((w) => inputs[w.index] as CreateTaskInput<R>));
      waiting.forEach((w, i) => {
        results[w.index] = again[i] as BatchItemResult<R>;
      });
    }
    return results;
  }

  /** `GET /v1/tasks/{taskId}`. */
  async getTask<R extends TaskRequest = TaskRequest>(task: Ref, options: CallOptions = {}): Promise<Task<R>> {
    return (await this.readTask(idOf(task), undefined, options.signal)) as Task<R>;
  }

  /** `GET /v1/tasks?effectKey=K`: the task this effect key created. */
  async getTaskByEffectKey<R extends TaskRequest = TaskRequest>(effectKey: string, options: CallOptions = {}): Promise<Task<R>> {
    const answer = await this.api.GET("/v1/tasks", { params: { query: { effectKey } }, ...signalOf(options) });
    return expect(answer, "GET /v1/tasks?effectKey") as unknown as Task<R>;
  }

  /**
   * Wait until the task is terminal (`succeeded`, `failed` or `canceled`) with long polls
   * (`GET /v1/tasks/{id}?wait=S`), and return it. Rejects with the signal's reason when it
   * aborts, and with AitasksWaitTimeoutError (holding the last state read) at the deadline.
   */
  async waitForTask<R extends TaskRequest = TaskRequest>(
    task: string | ({ id: string } & Typed<R>),
    options: WaitOptions = {},
  ): Promise<Task<R>> {
    const id = idOf(task);
    const deadline = deadlineOf(options);
    // A poll must end before the attempt's own timeout does.
    const attemptSeconds = Math.max(0, Math.floor(this.settings.timeoutMs / 1000) - 1);
    const longest = Math.min(20, attemptSeconds, Math.max(0, Math.floor(options.pollSeconds ?? 20)));
    let last: Task<R> | undefined;
    for (;;) {
      throwIfAborted(options.signal);
      const remaining = deadline === undefined ? Infinity : deadline - Date.now();
      if (remaining <= 0) {
        throw new AitasksWaitTimeoutError(`task ${id} did not end by its deadline (last status: ${last?.status ?? "unknown"})`, last);
      }
      const wait = Math.min(longest, Math.floor(remaining / 1000));
      // The poll ends at the deadline too: a wait never outlasts it by a poll.
      // (setTimeout takes at most 2^31-1 ms; a deadline further off needs no timer for a 20 s poll.)
      const timer = remaining > MAX_TIMER_MS ? undefined : new AbortController();
      const timeout = timer && setTimeout(() => timer.abort(), remaining);
      const combined = anySignal([options.signal, timer?.signal]);
      try {
        last = (await this.readTask(id, wait, combined.signal)) as Task<R>;
      } catch (error) {
        throwIfAborted(options.signal);
        if (timer?.signal.aborted) continue;
        throw error;
      } finally {
        clearTimeout(timeout);
        combined.release();
      }
      if (isTerminal(last.status)) return last;
      // A poll that could not hold (under a second left, or pollSeconds 0) paces itself.
      if (wait === 0) await sleep(Math.min(250, Math.max(0, remaining)), options.signal);
    }
  }

  /** Wait for every task (at most `concurrency` long polls at once); the tasks in the order given. */
  async waitForTasks<R extends TaskRequest = TaskRequest>(
    tasks: readonly (string | ({ id: string } & Typed<R>))[],
    options: WaitManyOptions = {},
  ): Promise<Task<R>[]> {
    const results = new Array<Task<R>>(tasks.length);
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 8));
    const deadline = deadlineOf(options);
    // The first failure stops the others; the caller's signal stops them all.
    const fanout = new SignalFanout(options.signal);
    let next = 0;
    const worker = async () => {
      while (next < tasks.length && !fanout.aborted) {
        const index = next++;
        const child = fanout.child();
        try {
          results[index] = await this.waitForTask<R>(idOf(tasks[index] as Ref), {
            ...withoutTimeout(options),
            signal: child.signal,
            ...(deadline === undefined ? {} : { deadline }),
          });
        } finally {
          child.done();
        }
      }
    };
    await runWorkers(Math.min(concurrency, tasks.length), worker, fanout);
    throwIfAborted(options.signal);
    return results;
  }

  /** `POST /v1/tasks/{taskId}/cancel`: a terminal task is answered as it is, unchanged. */
  async cancelTask<R extends TaskRequest = TaskRequest>(task: Ref, options: CallOptions = {}): Promise<Task<R>> {
    const answer = await this.api.POST("/v1/tasks/{taskId}/cancel", {
      params: { path: { taskId: idOf(task) } },
      ...signalOf(options),
    });
    return expect(answer, "POST /v1/tasks/{taskId}/cancel") as unknown as Task<R>;
  }

  /** One page of a run's (`runId`) or a scope's (`scopeId`) tasks, in creation order. */
  async listTasks<R extends TaskRequest = TaskRequest>(query: ListTasksQuery, options: CallOptions = {}): Promise<TaskPage<R>> {
    const answer = await this.api.GET("/v1/tasks", { params: { query }, ...signalOf(options) });
    const page = expect(answer, "GET /v1/tasks") as unknown as Schemas["TaskPage"];
    return page as unknown as TaskPage<R>;
  }

  /** Every page of a listing, following `next` (keyset pages: each costs the same however deep). */
  async *pages<R extends TaskRequest = TaskRequest>(query: ListTasksQuery, options: CallOptions = {}): AsyncGenerator<TaskPage<R>> {
    let after = query.after;
    for (;;) {
      const page = await this.listTasks<R>({ ...query, ...(after === undefined ? {} : { after }) } as ListTasksQuery, options);
      yield page;
      if (page.next === undefined) return;
      after = page.next;
    }
  }

  /** Every task of a listing, page after page: `for await (const task of client.tasks({runId}))`. */
  async *tasks<R extends TaskRequest = TaskRequest>(query: ListTasksQuery, options: CallOptions = {}): AsyncGenerator<Task<R>> {
    for await (const page of this.pages<R>(query, options)) yield* page.tasks;
  }

  // ---- history (docs/api.md, "History") ----

  /** `GET /v1/runs`: one page of the tenant's runs in creation order, each with its tasks counted by status. */
  async listRuns(query: ListRunsQuery = {}, options: CallOptions = {}): Promise<RunPage> {
    const answer = await this.api.GET("/v1/runs", { params: { query }, ...signalOf(options) });
    return expect(answer, "GET /v1/runs");
  }

  /** `GET /v1/tasks/{taskId}/attempts`: each attempt (oldest first), with its error, tokens and cost; a running one last. */
  async getTaskAttempts(task: Ref, options: CallOptions = {}): Promise<TaskAttempts> {
    const answer = await this.api.GET("/v1/tasks/{taskId}/attempts", { params: { path: { taskId: idOf(task) } }, ...signalOf(options) });
    return expect(answer, "GET /v1/tasks/{taskId}/attempts");
  }

  /** `GET /v1/tasks/{taskId}/events`: the task's completion events, oldest first. */
  async getTaskEvents(task: Ref, options: CallOptions = {}): Promise<TaskEvents> {
    const answer = await this.api.GET("/v1/tasks/{taskId}/events", { params: { path: { taskId: idOf(task) } }, ...signalOf(options) });
    return expect(answer, "GET /v1/tasks/{taskId}/events");
  }

  /** `GET /v1/tasks/{taskId}/callbacks`: the task's callbacks (never a token), oldest first. */
  async getTaskCallbacks(task: Ref, options: CallOptions = {}): Promise<TaskCallbacks> {
    const answer = await this.api.GET("/v1/tasks/{taskId}/callbacks", { params: { path: { taskId: idOf(task) } }, ...signalOf(options) });
    return expect(answer, "GET /v1/tasks/{taskId}/callbacks");
  }

  /** `GET /v1/tasks/{taskId}/batch`: the provider batch a deferred task was sent in; null when it is in none (404 NOT_IN_BATCH). */
  async getTaskBatch(task: Ref, options: CallOptions = {}): Promise<TaskBatch | null> {
    const answer = await this.api.GET("/v1/tasks/{taskId}/batch", { params: { path: { taskId: idOf(task) } }, ...signalOf(options) });
    try {
      return expect(answer, "GET /v1/tasks/{taskId}/batch");
    } catch (error) {
      if (error instanceof AitasksError && error.code === "NOT_IN_BATCH") return null;
      throw error;
    }
  }

  /** `GET /v1/runs/{runId}/progress`: the run's tasks counted by status now, over its first 10,000 (`complete: false` past them). */
  async getRunProgress(runId: string, options: CallOptions = {}): Promise<RunProgress> {
    return expect(
      await this.api.GET("/v1/runs/{runId}/progress", { params: { path: { runId } }, ...signalOf(options) }),
      "GET /v1/runs/{runId}/progress",
    );
  }

  /**
   * `GET /v1/activity`: the tenant's activity in time buckets (created, ended by status, failures
   * by error code, p50/p95 queue wait and run time, tokens and cost by model), every bucket of
   * the window oldest first (default: the last 24 hours by the hour).
   */
  async getActivity(query: ActivityQuery = {}, options: CallOptions = {}): Promise<Activity> {
    const answer = await this.api.GET("/v1/activity", { params: { query }, ...signalOf(options) });
    return expect(answer, "GET /v1/activity");
  }

  /** `GET /v1/summary`: the tenant's tasks created in the window, by status, and their tokens and cost by UTC day and model. */
  async getSummary(query: SummaryQuery = {}, options: CallOptions = {}): Promise<Summary> {
    const answer = await this.api.GET("/v1/summary", { params: { query }, ...signalOf(options) });
    return expect(answer, "GET /v1/summary");
  }

  // ---- acting on many tasks (docs/api.md): replays, operations, holds ----

  /**
   * `POST /v1/tasks/{taskId}/replay`: a new task with the ended task's request, model, owner and
   * scope (`replayOf` names the original, which is never touched). Idempotent on its effect key
   * (`replay:{taskId}` unless `input.effectKey`): asked again, it answers the same task (`created: false`).
   */
  async replayTask<R extends TaskRequest = TaskRequest>(task: Ref, input: ReplayInput = {}, options: CallOptions = {}): Promise<CreateResult<R>> {
    const answer = await this.api.POST("/v1/tasks/{taskId}/replay", {
      params: { path: { taskId: idOf(task) } },
      body: input,
      ...signalOf(options),
    });
    const replay = expect(answer, "POST /v1/tasks/{taskId}/replay") as unknown as Task<R>;
    return { task: replay, created: answer.response.status === 201 };
  }

  /** `GET /v1/tasks/{taskId}/replays`: the task's replays, oldest first (at most 100). */
  async listTaskReplays(task: Ref, options: CallOptions = {}): Promise<TaskReplays> {
    const answer = await this.api.GET("/v1/tasks/{taskId}/replays", { params: { path: { taskId: idOf(task) } }, ...signalOf(options) });
    return expect(answer, "GET /v1/tasks/{taskId}/replays");
  }

  /**
   * `POST /v1/operations`: cancel or replay every task the filter matches, asynchronously.
   * Sent with an Idempotency-Key made for this call (or `options.idempotencyKey`), the same on
   * every attempt: a retry after a lost answer finds the operation the first made (`created: false`).
   */
  async createOperation(input: CreateOperationInput, options: CreateOperationOptions = {}): Promise<CreateOperationResult> {
    const answer = await this.api.POST("/v1/operations", {
      body: input,
      params: { header: { "Idempotency-Key": options.idempotencyKey ?? newIdempotencyKey() } },
      ...signalOf(options),
    });
    return { operation: expect(answer, "POST /v1/operations"), created: answer.response.status === 202 };
  }

  /** `GET /v1/operations`: one page of the tenant's operations, in creation order. */
  async listOperations(query: ListOperationsQuery = {}, options: CallOptions = {}): Promise<OperationPage> {
    const answer = await this.api.GET("/v1/operations", { params: { query }, ...signalOf(options) });
    return expect(answer, "GET /v1/operations");
  }

  /** Every operation of a listing, page after page. */
  async *operations(query: ListOperationsQuery = {}, options: CallOptions = {}): AsyncGenerator<Operation> {
    let after = query.after;
    for (;;) {
      const page = await this.listOperations({ ...query, ...(after === undefined ? {} : { after }) }, options);
      yield* page.operations;
      if (page.next === undefined) return;
      after = page.next;
    }
  }

  /** `GET /v1/operations/{operationId}`. */
  async getOperation(operation: Ref, options: CallOptions = {}): Promise<Operation> {
    const answer = await this.api.GET("/v1/operations/{operationId}", { params: { path: { operationId: idOf(operation) } }, ...signalOf(options) });
    return expect(answer, "GET /v1/operations/{operationId}");
  }

  /** `POST /v1/operations/{operationId}/stop`: the operation, `stopped` (an ended one as it is). */
  async stopOperation(operation: Ref, options: CallOptions = {}): Promise<Operation> {
    const answer = await this.api.POST("/v1/operations/{operationId}/stop", { params: { path: { operationId: idOf(operation) } }, ...signalOf(options) });
    return expect(answer, "POST /v1/operations/{operationId}/stop");
  }

  /**
   * Read the operation every `intervalMs` until it is no longer `running`, and return it.
   * Rejects with AitasksWaitTimeoutError (holding the operation as last read) at the deadline.
   */
  async waitForOperation(operation: Ref, options: WaitOperationOptions = {}): Promise<Operation> {
    const id = idOf(operation);
    const deadline = deadlineOf(options);
    const interval = Math.max(0, options.intervalMs ?? 1000);
    for (;;) {
      throwIfAborted(options.signal);
      const last = await this.getOperation(id, options);
      options.onProgress?.(last);
      if (last.state !== "running") return last;
      if (deadline !== undefined && Date.now() + interval > deadline) {
        throw new AitasksWaitTimeoutError(`operation ${id} is still running at its deadline (done ${last.done} of ${last.matched})`, last);
      }
      await sleep(interval, options.signal);
    }
  }

  /** `POST /v1/holds`: hold a profile or a scope (`created: false`: the tenant's active hold on the same target). */
  async createHold(input: CreateHoldInput, options: CallOptions = {}): Promise<CreateHoldResult> {
    const answer = await this.api.POST("/v1/holds", { body: input, ...signalOf(options) });
    return { hold: expect(answer, "POST /v1/holds"), created: answer.response.status === 201 };
  }

  /** `GET /v1/holds`: one page of the tenant's holds and the automatic ones, in creation order. */
  async listHolds(query: ListHoldsQuery = {}, options: CallOptions = {}): Promise<HoldPage> {
    const answer = await this.api.GET("/v1/holds", { params: { query }, ...signalOf(options) });
    return expect(answer, "GET /v1/holds");
  }

  /** Every hold of a listing, page after page. */
  async *holds(query: ListHoldsQuery = {}, options: CallOptions = {}): AsyncGenerator<Hold> {
    let after = query.after;
    for (;;) {
      const page = await this.listHolds({ ...query, ...(after === undefined ? {} : { after }) }, options);
      yield* page.holds;
      if (page.next === undefined) return;
      after = page.next;
    }
  }

  /** `GET /v1/holds/{holdId}`. */
  async getHold(hold: Ref, options: CallOptions = {}): Promise<Hold> {
    const answer = await this.api.GET("/v1/holds/{holdId}", { params: { path: { holdId: idOf(hold) } }, ...signalOf(options) });
    return expect(answer, "GET /v1/holds/{holdId}");
  }

  /** `POST /v1/holds/{holdId}/release`: the hold, released; its tasks are sent again in creation order. An automatic hold: 409 HOLD_IS_AUTOMATIC. */
  async releaseHold(hold: Ref, options: CallOptions = {}): Promise<Hold> {
    const answer = await this.api.POST("/v1/holds/{holdId}/release", { params: { path: { holdId: idOf(hold) } }, ...signalOf(options) });
    return expect(answer, "POST /v1/holds/{holdId}/release");
  }

  // ---- application-owned tasks ----

  /** `POST /v1/tasks/release`: the task is deleted 24 h after both release and completion. True when a task was released. */
  async releaseTask(input: { scopeId: string; effectKey: string }, options: CallOptions = {}): Promise<boolean> {
    const answer = await this.api.POST("/v1/tasks/release", { body: input, ...signalOf(options) });
    return expect(answer, "POST /v1/tasks/release").released;
  }

  /**
   * `DELETE /v1/scopes/{scopeId}/tasks` (a scope's or one source's application-owned tasks).
   * Each request deletes a bounded batch; with `untilDone` (the default) it is sent again while
   * rows are left.
   */
  async deleteScopeTasks(scopeId: string, options: DeleteScopeOptions = {}): Promise<DeleteScopeResult> {
    const untilDone = options.untilDone ?? true;
    const query = options.sourceId === undefined ? {} : { sourceId: options.sourceId };
    let deleted = 0;
    let requests = 0;
    for (;;) {
      throwIfAborted(options.signal);
      const answer = await this.api.DELETE("/v1/scopes/{scopeId}/tasks", {
        params: { path: { scopeId }, query },
        ...signalOf(options),
      });
      const page = expect(answer, "DELETE /v1/scopes/{scopeId}/tasks");
      deleted += page.deleted;
      requests += 1;
      if (!page.more || !untilDone) return { deleted, more: page.more, requests };
    }
  }

  /** One page (100) of the sources with unreleased application tasks, for reconciliation. */
  async listUnreleasedSources(query: UnreleasedSourcesQuery = {}, options: CallOptions = {}): Promise<SourcePage> {
    const params: { task?: string; afterScope?: string; afterSource?: string } = {};
    if (query.task !== undefined) params.task = query.task;
    if (query.after !== undefined) {
      params.afterScope = query.after.scopeId;
      params.afterSource = query.after.sourceId;
    }
    const answer = await this.api.GET("/v1/unreleased-sources", { params: { query: params }, ...signalOf(options) });
    return expect(answer, "GET /v1/unreleased-sources");
  }

  /** Every unreleased source, page after page. */
  async *unreleasedSources(query: UnreleasedSourcesQuery = {}, options: CallOptions = {}): AsyncGenerator<SourceRef> {
    let after = query.after;
    for (;;) {
      const page = await this.listUnreleasedSources({ ...query, ...(after === undefined ? {} : { after }) }, options);
      yield* page.sources;
      if (page.next === undefined) return;
      after = page.next;
    }
  }

  /**
   * `GET /v1/tasks/{taskId}/output`: the text of the task's answer after `after` (of `segment`),
   * as the model writes it, and where the stream and the task stand; `wait` (seconds, at most 20)
   * holds the read until there is something new. One read unit, however long it waits.
   */
  async getTaskOutput(task: Ref, query: OutputQuery = {}, options: CallOptions = {}): Promise<TaskOutput> {
    const answer = await this.api.GET("/v1/tasks/{taskId}/output", {
      params: { path: { taskId: idOf(task) }, query },
      ...signalOf(options),
    });
    return expect(answer, "GET /v1/tasks/{taskId}/output");
  }

  /**
   * The task's answer as the model writes it, piece by piece, by long polls of `wait` seconds
   * (default 20; one read unit each), each from the last answer's `next`; 429 and 5xx are retried
   * as every call is. A piece with `restarted` starts a new segment: drop the text you have. It
   * ends once the task has ended and its last segment is read to its end (or it has none: a
   * deferred task, a short answer; read the task, its output is the record). `segment` and
   * `after` resume from a piece's `segment` and `next` without a gap or a repeat. The signal
   * stops it (it rejects with the signal's reason).
   */
  async *followOutput(task: Ref, options: FollowOutputOptions = {}): AsyncGenerator<OutputPiece> {
    const id = idOf(task);
    const wait = Math.min(20, Math.max(0, options.wait ?? 20));
    const place = new OutputPlace(options);
    for (;;) {
      throwIfAborted(options.signal);
      const asked = Date.now();
      const step = place.take(await this.getTaskOutput(id, place.query(wait), options));
      if (step.piece !== undefined) yield step.piece;
      if (step.done) return;
      const pause = idlePauseMs(step.idle, Date.now() - asked);
      if (pause > 0) await sleep(pause, options.signal);
    }
  }

  private async readTask(taskId: string, wait: number | undefined, signal: AbortSignal | undefined): Promise<Schemas["Task"]> {
    const answer = await this.api.GET("/v1/tasks/{taskId}", {
      params: { path: { taskId }, ...(wait === undefined ? {} : { query: { wait } }) },
      ...signalOf({ signal }),
    });
    return expect(answer, "GET /v1/tasks/{taskId}");
  }
}

export function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

function withoutTimeout(options: WaitManyOptions): WaitOptions {
  const { timeoutMs: _timeout, concurrency: _concurrency, ...rest } = options;
  return rest;
}

function signalOf(options: { signal?: AbortSignal | undefined }): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal };
}

/**
 * The body as openapi-fetch types it. This client's input types are built from the same
 * generated schema (src/types.ts) and are narrower (literal choices, readonly arrays, the
 * runId/owner forms), which openapi-fetch's own rendering of the schema's oneOf cannot take.
 */
function asBody(input: CreateTaskInput<TaskRequest>): never {
  return input as never;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's data, or the AitasksError its refusal makes. */
function expect<T>(answer: Answer<T>, route: string): T {
  const { response } = answer;
  if (response.ok && answer.data !== undefined) return answer.data;
  const body = errorBodyOf(answer.error);
  const requestId = requestIdOf(response.headers);
  const retryAfter = response.headers.get("retry-after")?.trim();
  const fallback = response.ok ? "the answer had no body" : `HTTP ${response.status}`;
  throw new AitasksError({
    status: response.status,
    code: body?.code ?? (response.ok ? "EMPTY_ANSWER" : `HTTP_${response.status}`),
    message: `${route}: ${body?.message ?? fallback}`,
    ...(body?.details === undefined ? {} : { details: body.details }),
    ...(body?.moreProblems === undefined ? {} : { moreProblems: body.moreProblems }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(retryAfter !== undefined && /^\d+$/.test(retryAfter) ? { retryAfterSeconds: Number(retryAfter) } : {}),
    method: route.split(" ")[0] ?? "",
    url: response.url,
  });
}
