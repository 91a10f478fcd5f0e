// Type tests, checked by `tsc -p tsconfig.typetest.json` (strict): each `@ts-expect-error` line
// must fail to compile (tsc reports an unused one as an error), and every other line must
// compile. Nothing here runs.
import { AitasksClient, type ClassifyRequest, type Task, type components } from "../../src/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_value?: T): void {}

declare const client: AitasksClient;
const owner = { scopeId: "inbox" };

export async function wrongBodies(): Promise<void> {
  await client.createTask({
    owner,
    stepKey: "s",
    effectKey: "e1",
    modelId: "default",
    // @ts-expect-error: "summarize" is not a request kind
    request: { kind: "summarize", prompt: "p", input: "x" },
  });

  await client.createTask({
    owner,
    stepKey: "s",
    effectKey: "e2",
    modelId: "default",
    // @ts-expect-error: a classify request needs its choices
    request: { kind: "classify", prompt: "p", input: "x" },
  });

  await client.createTask({
    owner,
    stepKey: "s",
    effectKey: "e3",
    modelId: "default",
    // @ts-expect-error: extract_data needs fields, not choices
    request: { kind: "extract_data", prompt: "p", input: "x", choices: ["a", "b"] },
  });

  await client.createTask({
    owner,
    stepKey: "s",
    effectKey: "e4",
    modelId: "default",
    // @ts-expect-error: an unknown field is refused (the API answers 400 for it)
    request: { kind: "generate_text", prompt: "p", temperature: 2 },
  });

  // @ts-expect-error: neither runId nor owner
  await client.createTask({ stepKey: "s", effectKey: "e5", modelId: "default", request: { kind: "generate_text", prompt: "p" } });

  // @ts-expect-error: both runId and owner
  await client.createTask({ runId: "r", owner, stepKey: "s", effectKey: "e6", modelId: "default", request: { kind: "generate_text", prompt: "p" } });

  // @ts-expect-error: a callback is one of two shapes
  await client.createTask({ owner, stepKey: "s", effectKey: "e7", modelId: "default", request: { kind: "generate_text", prompt: "p" }, callback: { webhook: "https://x" } });

  // @ts-expect-error: delivery is "now" or {deferred: {within}}
  await client.createTask({ owner, stepKey: "s", effectKey: "e8", modelId: "default", request: { kind: "generate_text", prompt: "p" }, delivery: "later" });

  // @ts-expect-error: a batch item is checked like a single create
  await client.createTasks([{ owner, stepKey: "s", effectKey: "e9", modelId: "default", request: { kind: "classify", prompt: "p", input: 1 } }]);
}

export async function typedOutputs(): Promise<void> {
  const classified = await client.createTask({
    owner,
    stepKey: "spam",
    effectKey: "mail-1",
    modelId: "default",
    request: { kind: "classify", prompt: "Spam?", input: "WIN", choices: ["spam", "ham"] },
    delivery: { deferred: { within: "PT24H" } },
    callback: { stepFunctions: { taskToken: "AQB8" } },
  });
  const done = await client.waitForTask(classified.task, { timeoutMs: 1000 });
  assertType<Equal<typeof done.output, "spam" | "ham" | null>>();
  // @ts-expect-error: "maybe" is not one of the choices
  const wrong: typeof done.output = "maybe";

  const many = await client.createTask({
    runId: "r",
    stepKey: "tags",
    effectKey: "doc-1",
    modelId: "default",
    request: { kind: "classify_many", prompt: "Tags?", input: {}, choices: ["a", "b", "c"], maxChoices: 2 },
  });
  assertType<Equal<typeof many.task.output, ("a" | "b" | "c")[] | null>>();

  const text = await client.createTask({
    owner: { scopeId: "s", usageSubject: { type: "user", id: "u1" } },
    stepKey: "sum",
    effectKey: "doc-2",
    modelId: "default",
    request: { kind: "generate_text", prompt: "Summarize", input: "…", maxOutputChars: 200 },
  });
  assertType<Equal<typeof text.task.output, string | null>>();

  const extracted = await client.createTask({
    owner,
    stepKey: "invoice",
    effectKey: "inv-1",
    modelId: "default",
    request: {
      kind: "extract_data",
      prompt: "Read the invoice",
      input: "…",
      fields: [
        { name: "total", type: "number", description: "Total", required: true },
        { name: "paid", type: "boolean", description: "Paid?", required: false },
        { name: "currency", type: "choice", description: "Currency", required: true, choices: ["EUR", "USD"] },
        { name: "note", type: "text", description: "Note", required: false, maxLength: 200 },
      ],
    },
  });
  const data = extracted.task.output;
  if (data !== null) {
    assertType<Equal<typeof data.total, number>>();
    assertType<Equal<typeof data.currency, "EUR" | "USD">>();
    assertType<Equal<typeof data.paid, boolean | undefined>>();
    assertType<Equal<typeof data.note, string | undefined>>();
    // @ts-expect-error: no such field was declared
    data.vendor;
  }

  // A batch keeps the request type: waiting on an item's summary gives a typed task.
  const choices = ["spam", "ham"] as const;
  const results = await client.createTasks(
    ["a", "b"].map((text, i) => ({
      owner,
      stepKey: "spam",
      effectKey: `m-${i}`,
      modelId: "default",
      request: { kind: "classify" as const, prompt: "Spam?", input: text, choices },
    })),
  );
  const first = results[0];
  if (first?.ok) {
    const task = await client.waitForTask(first.task);
    assertType<Equal<typeof task.output, "spam" | "ham" | null>>();
  } else if (first) {
    assertType<Equal<typeof first.error.code, string>>();
  }
  assertType<Equal<NonNullable<Extract<(typeof results)[number], { ok: true }>["task"]["output"]>, "spam" | "ham">>();
}

// The client's request types stay within the contract's: a request written with this client's
// types (arrays made mutable) is a request openapi.yaml describes.
type Mutable<T> = T extends readonly (infer U)[] ? Mutable<U>[] : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;
type Contract = components["schemas"]["AiRequest"];
assertType<Mutable<ClassifyRequest<"a" | "b">> extends Contract ? true : false>();
assertType<Task["status"] extends components["schemas"]["TaskStatus"] ? true : false>();

export async function wrongActs(): Promise<void> {
  // @ts-expect-error: a hold names a profile or a scope, not both
  await client.createHold({ profile: "fast", scopeId: "inbox" });
  // @ts-expect-error: "archive" is not an operation's action
  await client.createOperation({ action: "archive", filter: {} });
  // @ts-expect-error: an operation's filter takes statuses, a list
  await client.createOperation({ action: "cancel", filter: { status: "queued" } });
  const { operation } = await client.createOperation({ action: "replay", filter: { scopeId: "inbox", kind: "classify" }, recompute: true });
  assertType<Equal<typeof operation.state, "running" | "stopped" | "done">>();
  const replay = await client.replayTask(operation.id, { recompute: true });
  assertType<Equal<typeof replay.task.replayOf, string | undefined>>();
}
