// The request and answer types callers use. Everything here is built from the types generated
// from openapi.yaml (src/generated/openapi.ts), narrowed where TypeScript can say more than
// JSON Schema: a classify task's output is one of its own choices, an extract_data task's output
// has exactly its declared fields.
import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

/** Every request kind, as openapi.yaml describes it. */
export type AiRequest = Schemas["AiRequest"];
export type RequestKind = AiRequest["kind"];
export type TaskStatus = Schemas["TaskStatus"];
export type TerminalStatus = Extract<TaskStatus, "succeeded" | "failed" | "canceled">;
export const TERMINAL_STATUSES: readonly TerminalStatus[] = ["succeeded", "failed", "canceled"];

/**
 * A type-only marker carrying the request type of a task reference (never present at run time),
 * so that waiting on a batch item's summary gives a task whose output is typed.
 */
declare const requestType: unique symbol;
export interface Typed<R> {
  readonly [requestType]?: R;
}

type Generated<K extends RequestKind> = Extract<AiRequest, { kind: K }>;

/** `generate_text`: `prompt` (1..20000 characters), optional `input`, `maxOutputChars` (1..100000, default 4000). */
export type GenerateTextRequest = Generated<"generate_text">;

/** `classify`: one of 2..200 distinct `choices`. `C` is the choices' type (a literal union when the choices are literals). */
export type ClassifyRequest<C extends string = string> = Omit<Generated<"classify">, "choices"> & {
  choices: readonly C[];
};

/** `classify_many`: distinct choices, in declared order, between `minChoices` and `maxChoices` of them. */
export type ClassifyManyRequest<C extends string = string> = Omit<Generated<"classify_many">, "choices"> & {
  choices: readonly C[];
};

type GeneratedField = Schemas["FieldSpec"];
export type FieldType = GeneratedField["type"];

/** One field of an `extract_data` request. A `choice` field's `choices` type its value. */
export type FieldSpec<N extends string = string, C extends string = string> =
  | (Omit<Extract<GeneratedField, { type: "text" }>, "name"> & { name: N })
  | (Omit<Extract<GeneratedField, { type: "number" | "boolean" | "date_time" }>, "name"> & { name: N })
  | (Omit<Extract<GeneratedField, { type: "choice" }>, "name" | "choices"> & { name: N; choices: readonly C[] });

/** `extract_data`: 1..100 `fields` with distinct names. */
export type ExtractDataRequest<F extends readonly FieldSpec[] = readonly FieldSpec[]> = Omit<
  Generated<"extract_data">,
  "fields"
> & { fields: F };

/** A request of any kind, in the form this client takes (arrays may be `readonly`). */
export type TaskRequest = GenerateTextRequest | ClassifyRequest | ClassifyManyRequest | ExtractDataRequest;

/**
 * `R` with every property its kind does not have typed `never`: the API refuses unknown fields,
 * and a generic call would otherwise let them through.
 */
export type Exact<R extends TaskRequest> = R & {
  [P in Exclude<keyof R, keyof Extract<TaskRequest, { kind: R["kind"] }>>]: never;
};

type FieldValue<F> = F extends { type: "text" | "date_time" }
  ? string
  : F extends { type: "number" }
    ? number
    : F extends { type: "boolean" }
      ? boolean
      : F extends { type: "choice"; choices: readonly (infer C)[] }
        ? C
        : unknown;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** An `extract_data` output: required fields present, optional ones possibly absent. */
export type ExtractedData<F extends readonly FieldSpec[]> = Simplify<
  { [E in F[number] as E extends { required: true } ? E["name"] : never]: FieldValue<E> } & {
    [E in F[number] as E extends { required: true } ? never : E["name"]]?: FieldValue<E>;
  }
>;

/** What a succeeded task of this request holds in `output`. */
export type OutputOf<R> = R extends { kind: "generate_text" }
  ? string
  : R extends { kind: "classify"; choices: readonly (infer C)[] }
    ? C
    : R extends { kind: "classify_many"; choices: readonly (infer C)[] }
      ? C[]
      : R extends { kind: "extract_data"; fields: infer F extends readonly FieldSpec[] }
        ? ExtractedData<F>
        : unknown;

/** The application's own task (not a run's): its scope and, optionally, who it is for. */
export type Owner = NonNullable<Schemas["CreateTask"]["owner"]>;
export type UsageSubject = NonNullable<Owner["usageSubject"]>;
/** A workflow waiting for the task: a Step Functions task token or a Lambda durable callback id. */
export type Callback = NonNullable<Schemas["CreateTask"]["callback"]>;
/** `"now"` (the default) or `{deferred: {within: "PT2H".."PT24H"}}` (a provider batch, about half the price). */
export type Delivery = NonNullable<Schemas["CreateTask"]["delivery"]>;
/** Scoped admission: the source, its revision and the budget (docs/scoped-inference.md). */
export type Scope = NonNullable<Schemas["CreateTask"]["scope"]>;

interface CreateTaskFields<R extends TaskRequest> {
  stepKey: string;
  /** Creates are idempotent on (tenant, effectKey): the same key answers the existing task. */
  effectKey: string;
  modelId: string;
  request: Exact<R>;
  callback?: Callback | null;
  delivery?: Delivery | null;
  scope?: Scope | null;
}

/** A run's task: `runId` names the run. */
export type RunTaskInput<R extends TaskRequest = TaskRequest> = CreateTaskFields<R> & {
  runId: string;
  owner?: null;
};

/** An application-owned task: `owner` names its scope. */
export type OwnedTaskInput<R extends TaskRequest = TaskRequest> = CreateTaskFields<R> & {
  owner: Owner;
  runId?: null;
};

/** The body of `POST /v1/tasks`: exactly one of `runId` and `owner`. */
export type CreateTaskInput<R extends TaskRequest = TaskRequest> = RunTaskInput<R> | OwnedTaskInput<R>;

type GeneratedTask = Schemas["Task"];
export type Usage = NonNullable<GeneratedTask["usage"]>;

/** A task. `output` is typed by its request: `null` until it has succeeded. */
export type Task<R extends TaskRequest = TaskRequest> = Omit<GeneratedTask, "kind" | "request" | "output"> & {
  kind: R["kind"];
  request: R;
  output: OutputOf<R> | null;
} & Typed<R>;

export type Run = Schemas["Run"];
export type CreateRunInput = Schemas["CreateRun"];
export type ErrorBody = Schemas["ErrorBody"];
export type ErrorDetail = NonNullable<ErrorBody["details"]>[number];
export type SourceRef = Schemas["SourceRef"];

/** A task as a batch answers it (GET the task by id for the rest). */
export type TaskSummary<R extends TaskRequest = TaskRequest> = Omit<Schemas["TaskSummary"], "output"> & {
  output?: OutputOf<R>;
} & Typed<R>;

/** One batch item's answer, in the order the items were given. */
export type BatchItemResult<R extends TaskRequest = TaskRequest> =
  | { ok: true; status: 200 | 201; created: boolean; task: TaskSummary<R> }
  | { ok: false; status: 400 | 404 | 409 | 413 | 429; error: ErrorBody };

/** A create's answer: the task, and whether this call created it (201) or found it by its effect key (200). */
export interface CreateResult<R extends TaskRequest = TaskRequest> {
  task: Task<R>;
  created: boolean;
}

/** A page of a run's or a scope's tasks; `next` is present only when another page may follow. */
export interface TaskPage<R extends TaskRequest = TaskRequest> {
  tasks: Task<R>[];
  next?: string;
}

/** Which tasks to list: a run's or a scope's, optionally of one status. */
export type ListTasksQuery = ({ runId: string; scopeId?: never } | { scopeId: string; runId?: never }) & {
  status?: TaskStatus;
  /** Only tasks of this kind. With `modelId`, `createdAfter` or `createdBefore`, one page looks at most at 1,000 tasks: a short (even empty) page may carry `next`. */
  kind?: RequestKind;
  /** Only tasks of this model id. */
  modelId?: string;
  /** Tasks created at or after this instant (RFC 3339 with its offset). */
  createdAfter?: string;
  /** Tasks created before this instant (RFC 3339 with its offset). */
  createdBefore?: string;
  /** Tasks per page, 1..100 (default 100). */
  limit?: number;
  /** Start after this task id (the previous page's `next`). */
  after?: string;
};

/** `GET /v1/runs`'s query: every parameter optional. */
export interface ListRunsQuery {
  status?: "running" | "canceled";
  scopeId?: string;
  /** Runs created at or after this instant (RFC 3339 with its offset). */
  createdAfter?: string;
  /** Runs created before this instant (RFC 3339 with its offset). */
  createdBefore?: string;
  /** Start after this run id (the previous page's `next`). */
  after?: string;
  /** Runs per page, 1..100 (default 100). */
  limit?: number;
}

/** `GET /v1/summary`'s window (default: the 7 days before now; at most 31 days). */
export interface SummaryQuery {
  createdAfter?: string;
  createdBefore?: string;
}

/** `GET /v1/activity`'s window: `bucket` in seconds (60, 300, 900, 3600 by default, 86400). */
export interface ActivityQuery {
  bucket?: 60 | 300 | 900 | 3600 | 86400;
  from?: string;
  to?: string;
}

export type RunPage = Schemas["RunPage"];
export type RunProgress = Schemas["RunProgress"];
export type Activity = Schemas["Activity"];
export type ActivityBucket = Schemas["ActivityBucket"];
export type TaskAttempts = Schemas["TaskAttempts"];
export type TaskAttempt = TaskAttempts["attempts"][number];
export type TaskEvents = Schemas["TaskEvents"];
export type TaskCallbacks = Schemas["TaskCallbacks"];
export type TaskBatch = Schemas["TaskBatch"];
export type Summary = Schemas["Summary"];

export interface SourcePage {
  sources: SourceRef[];
  next?: SourceRef;
}

export interface DeleteScopeResult {
  /** Tasks deleted by the requests this call sent. */
  deleted: number;
  /** True when rows are left (only when `untilDone` was false, or the signal stopped it). */
  more: boolean;
  /** Requests sent (each deletes a bounded batch for at most 5 s). */
  requests: number;
}

// ---- acting on many tasks (docs/api.md): replays, operations, holds ----

/** What a replay asks: the new task's effect key (default `replay:{taskId}`), and whether to skip the result cache. */
export type ReplayInput = Schemas["ReplayTask"];
/** A task's replays, oldest first (at most 100; `more` when it has more). */
export type TaskReplays = Schemas["TaskReplays"];
/** One replay of a task. `operationId` names the operation that made it (null: asked on its own). */
export type TaskReplay = TaskReplays["replays"][number];

/**
 * Which of the tenant's tasks an operation acts on. At most one of `runId` and `scopeId`
 * (neither: every task of the tenant); `status` defaults to the action's (cancel: queued,
 * running; replay: failed, canceled).
 */
export type OperationFilter = Schemas["OperationFilter"];
/** The body of `POST /v1/operations`; `recompute` only with `replay`. */
export type CreateOperationInput = Schemas["CreateOperation"];
/** An operation and its progress; `skippedBecause`/`failedBecause` count tasks by code. */
export type Operation = Schemas["Operation"];
export type OperationAction = Operation["action"];
/** `running` until every matched task is gone through (`done`) or it is stopped (`stopped`). */
export type OperationState = Operation["state"];
export type OperationPage = Schemas["OperationPage"];

/** `GET /v1/operations`'s query. */
export interface ListOperationsQuery {
  state?: OperationState;
  /** Start after this operation id (the previous page's `next`). */
  after?: string;
  /** Operations per page, 1..100 (default 100). */
  limit?: number;
}

/** An operation's create: the operation, and whether this call made it (202) or its Idempotency-Key found it (200). */
export interface CreateOperationResult {
  operation: Operation;
  created: boolean;
}

/** A hold; `released*` are null while it holds. */
export type Hold = Schemas["Hold"];
/** What a hold holds: a model profile, or a scope. */
export type HoldTarget = Hold["target"];
export type HoldPage = Schemas["HoldPage"];

/**
 * The body of `POST /v1/holds` (`PlaceHold`): exactly one of `profile` and `scopeId` (the schema
 * says so in a `oneOf` TypeScript cannot read, so it is said here), and a reason (1..500 characters).
 */
export type CreateHoldInput = Schemas["PlaceHold"] &
  ({ profile: string; scopeId?: never } | { scopeId: string; profile?: never });

/** `GET /v1/holds`'s query. */
export interface ListHoldsQuery {
  state?: "active" | "released";
  after?: string;
  limit?: number;
}

/** A hold's create: the hold, and whether this call made it (201) or found the active hold on the same target (200). */
export interface CreateHoldResult {
  hold: Hold;
  created: boolean;
}
