// Classify 1,000 product reviews with aitasks: create a run, send every item in one batch call
// (the client chunks it into requests of at most 1,000 items), wait for all of them, then print
// the results and what they cost.
//
//   AITASKS_URL    the API (default http://127.0.0.1:9000, `make serve`)
//   AITASKS_TOKEN  a JWT for your tenant; without it a dev token is signed with
//                  AITASK_DEV_JWT_SECRET (default `dev-secret`), as the dev server checks them
//   ITEMS          how many reviews (default 1000)
//   MODEL_ID       the model profile (default `default`)
import { createHmac } from "node:crypto";

import { AitasksClient, AitasksError, type CreateTaskInput } from "@aitasks/client";

const baseUrl = process.env.AITASKS_URL ?? "http://127.0.0.1:9000";
const items = Number(process.env.ITEMS ?? 1000);
const modelId = process.env.MODEL_ID ?? "default";

/** A dev server token (HS256, `app_id` is the tenant), signed fresh for an hour. */
function devToken(appId: string): string {
  const secret = process.env.AITASK_DEV_JWT_SECRET ?? "dev-secret";
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part({ app_id: appId, sub: "example", exp: Math.floor(Date.now() / 1000) + 3600 })}`;
  return `${unsigned}.${createHmac("sha256", secret).update(unsigned).digest("base64url")}`;
}

// A token provider: called before every request, so a token that expires is replaced.
const token = () => process.env.AITASKS_TOKEN ?? devToken("example-app");
const client = new AitasksClient({ baseUrl, token });

const adjectives = ["great", "broken", "fine", "awful", "lovely", "late", "cheap", "sturdy"];
const things = ["battery", "screen", "strap", "box", "manual", "charger", "case", "button"];
const reviews = Array.from({ length: items }, (_, i) => `The ${things[i % 8]} is ${adjectives[(i * 7) % 8]} (order ${i}).`);

// `as const`: the task outputs are typed as one of these three.
const choices = ["positive", "negative", "neutral"] as const;

async function main(): Promise<void> {
  const run = await client.createRun({ scopeId: "example-reviews" });
  console.log(`run ${run.id}`);

  const creates = reviews.map(
    (text, i) =>
      ({
        runId: run.id,
        stepKey: "sentiment",
        // The effect key makes the create idempotent: running this again for the same run
        // answers the tasks it made.
        effectKey: `${run.id}/review-${i}`,
        modelId,
        request: { kind: "classify", prompt: "What is the sentiment of this product review?", input: { text }, choices },
      }) satisfies CreateTaskInput,
  );
  const results = await client.createTasks(creates, { concurrency: 2 });
  const accepted = results.flatMap((result) => (result.ok ? [result.task] : []));
  const refused = results.filter((result) => !result.ok);
  console.log(`created ${accepted.length} tasks (${results.filter((r) => r.ok && r.created).length} new), ${refused.length} refused`);
  for (const result of refused.slice(0, 5)) if (!result.ok) console.log(`  refused: ${result.status} ${result.error.code}`);

  const tasks = await client.waitForTasks(accepted, { concurrency: 32, timeoutMs: 15 * 60_000 });
  const byStatus = new Map<string, number>();
  const byLabel = new Map<string, number>();
  let inputTokens = 0;
  let outputTokens = 0;
  let cost = 0;
  let priced = 0;
  for (const task of tasks) {
    byStatus.set(task.status, (byStatus.get(task.status) ?? 0) + 1);
    // task.output is "positive" | "negative" | "neutral" | null
    if (task.output !== null) byLabel.set(task.output, (byLabel.get(task.output) ?? 0) + 1);
    inputTokens += task.usage?.inputTokens ?? 0;
    outputTokens += task.usage?.outputTokens ?? 0;
    if (task.usage?.estimatedCostUsd !== undefined) {
      cost += task.usage.estimatedCostUsd;
      priced += 1;
    }
  }
  console.log(`finished: ${[...byStatus].map(([status, n]) => `${n} ${status}`).join(", ")}`);
  for (const label of choices) console.log(`  ${label.padEnd(8)} ${byLabel.get(label) ?? 0}`);
  console.log("first results:");
  tasks.slice(0, 5).forEach((task, i) => {
    const price = task.usage?.estimatedCostUsd;
    console.log(`  ${reviews[i]} -> ${task.output ?? task.errorCode} (${price === undefined ? "no price" : `$${price.toFixed(6)}`})`);
  });
  console.log(`tokens: ${inputTokens} in, ${outputTokens} out`);
  console.log(
    priced > 0
      ? `estimated cost: $${cost.toFixed(6)} for ${priced} priced tasks`
      : "estimated cost: unknown (the model profile has no `prices` in AITASK_MODELS)",
  );
}

main().catch((error: unknown) => {
  if (error instanceof AitasksError) {
    console.error(`aitasks refused: ${error.status} ${error.code}: ${error.message}`, error.details);
  } else {
    console.error(error);
  }
  process.exit(1);
});
