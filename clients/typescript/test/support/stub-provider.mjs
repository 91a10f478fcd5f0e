// A stub LLM provider for the end-to-end tests: a real HTTP server speaking OpenAI's
// chat-completions wire format, as the dev server's provider client calls it. It answers every
// request with a valid answer for the request's JSON schema (tests/support of the Rust suite
// does the same in shared/testkit/src/stub_provider.rs). A choice is picked from a hash of the
// messages, so different inputs get different labels and the same input the same one.
//
// A request whose messages contain "[stub:slow]" is held until its client hangs up (what a
// cancel does to a running task) or 120 s pass: the tests cancel and abort such tasks.
//
// A streamed request (`stream: true`) whose messages contain "[stub:stream]" is answered as
// OpenAI streams (server-sent events of chat.completion.chunk, then usage, then [DONE]) in
// small chunks 50 ms apart, a generate_text's text being STREAM_TEXT; with "[stub:stream-cut]"
// the first such call for the same messages is cut off halfway (the connection dropped) and
// the next streams it whole. `state.streamed` holds each whole answer streamed, in order.
import { createHash } from "node:crypto";
import { createServer } from "node:http";

export const SLOW = "[stub:slow]";
export const STREAM = "[stub:stream]";
export const STREAM_CUT = "[stub:stream-cut]";
/** The text a streamed generate_text answer carries: long enough to stream for a few seconds. */
export const STREAM_TEXT = Array.from({ length: 40 }, (_, i) => `word ${i} is here, é ü ✓;`).join(" ");
const CHUNK_CHARS = 24;
const CHUNK_GAP_MS = 50;

/** Answer as OpenAI streams: the content in chunks (cut halfway when `cut`), usage, [DONE]. */
async function streamAnswer(res, model, content, cut) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chars = [...content];
  const chunk = (delta, finish) => ({
    id: "chatcmpl-stub", object: "chat.completion.chunk", model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const send = (value) => res.write(`data: ${JSON.stringify(value)}\n\n`);
  send(chunk({ role: "assistant", content: "" }, null));
  for (let at = 0; at < chars.length; at += CHUNK_CHARS) {
    if (cut && at >= chars.length / 2) {
      res.socket?.destroy();
      return;
    }
    send(chunk({ content: chars.slice(at, at + CHUNK_CHARS).join("") }, null));
    await new Promise((r) => setTimeout(r, CHUNK_GAP_MS));
  }
  send(chunk({}, "stop"));
  send({ id: "chatcmpl-stub", object: "chat.completion.chunk", model, choices: [],
         usage: { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 } });
  res.end("data: [DONE]\n\n");
}

function pick(options, seed) {
  return options[seed % options.length];
}

export function answerForSchema(schema, seed) {
  const answer = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const kind = Array.isArray(property.type) ? property.type[0] : property.type ?? "string";
    if (Array.isArray(property.enum)) answer[name] = pick(property.enum, seed);
    else if (kind === "array") answer[name] = Array.isArray(property.items?.enum) ? [pick(property.items.enum, seed)] : [];
    else if (property.format === "date-time") answer[name] = "2026-11-29T12:00:00Z";
    else if (kind === "number" || kind === "integer") answer[name] = 42;
    else if (kind === "boolean") answer[name] = true;
    else answer[name] = "stub text";
  }
  return answer;
}

export async function startStubProvider() {
  const state = { calls: 0, aborted: 0, held: 0, streamed: [] };
  const cutOnce = new Set();
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8");
    let body = {};
    try {
      body = JSON.parse(text);
    } catch {}
    state.calls += 1;
    if (text.includes(SLOW)) {
      state.held += 1;
      const hungUp = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 120_000);
        res.on("close", () => {
          clearTimeout(timer);
          resolve(!res.writableFinished);
        });
      });
      state.held -= 1;
      if (hungUp) {
        state.aborted += 1;
        return;
      }
    }
    const seed = createHash("sha256").update(JSON.stringify(body.messages ?? [])).digest().readUInt32BE(0);
    const schema = body.response_format?.json_schema?.schema;
    if (body.stream === true && (text.includes(STREAM) || text.includes(STREAM_CUT))) {
      const answer = answerForSchema(schema, seed);
      if ("text" in answer) answer.text = STREAM_TEXT;
      const content = JSON.stringify(answer);
      const key = createHash("sha256").update(JSON.stringify(body.messages ?? [])).digest("hex");
      const cut = text.includes(STREAM_CUT) && !cutOnce.has(key);
      if (cut) cutOnce.add(key);
      else state.streamed.push(content);
      await streamAnswer(res, body.model ?? "stub-model", content, cut);
      return;
    }
    const content = JSON.stringify(answerForSchema(schema, seed));
    const completion = {
      id: "chatcmpl-stub",
      object: "chat.completion",
      model: body.model ?? "stub-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 },
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(completion));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    state,
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
