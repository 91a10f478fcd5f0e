// A task's answer as the model writes it (docs/api.md, "Live output"): a long poll of
// GET /v1/tasks/{id}/output from the offset the page holds. Text only ever becomes text nodes
// (a model's output is hostile input). More of the same segment is appended; a new segment (a
// retry, a repair turn, another profile) starts the text over, with a note of its attempt. The
// follow ends when the task does, or when the page is left (its signal aborts).

import { api, sleep } from "./api.js";
import { announce, h, replace } from "./dom.js";
import { count } from "./format.js";

const WAIT_SECONDS = 20;
/** A pause after an answer that brought nothing (a finished stream answers at once). */
const IDLE_MS = 1000;

/** `{panel, follow(signal, onStatus)}`: the panel to place on the page, and its long poll, which
 * tells `onStatus` the task's status at each read and resolves `true` once the task has ended,
 * `false` when `signal` aborts. */
export function liveOutput(taskId) {
  const path = `/v1/tasks/${encodeURIComponent(taskId)}/output`;
  const note = h("p", { class: "live", id: "task-stream-note" }, "Live: the answer shows here as the model writes it (nothing written yet).");
  const text = h("pre", { class: "stream", id: "task-stream-text", tabindex: "0", "aria-label": "The answer so far", hidden: true });
  const panel = h("div", { id: "task-stream" }, note, text);

  let segment = null;
  let next = 0;
  let startedOver = false;

  const describe = (answer) => {
    const attempt = h("span", { id: "task-stream-attempt" }, `Attempt ${answer.attempt}`);
    const state = answer.final
      ? `: the whole answer of this call (${count(next)} characters); the task's output follows once it is checked.`
      : `: ${count(next)} characters so far, as the model writes them.`;
    replace(note, attempt, state, startedOver ? " It started over: an earlier call's text was dropped." : "");
  };

  // Whether the answer brought anything: text, a new segment, the end.
  const take = (answer) => {
    if (answer.segment === null) return false;
    const fresh = answer.segment !== segment;
    if (answer.from !== (fresh ? 0 : next)) {
      // Not the offset this page holds (never so by the contract): read the segment again.
      segment = answer.segment;
      next = 0;
      text.replaceChildren();
      return true;
    }
    if (fresh) {
      if (segment !== null) {
        startedOver = true;
        announce(`The answer started over (attempt ${answer.attempt}).`);
      }
      segment = answer.segment;
      text.replaceChildren();
    }
    const atEnd = text.scrollTop + text.clientHeight >= text.scrollHeight - 4;
    if (answer.text) text.append(document.createTextNode(answer.text));
    next = answer.next;
    text.hidden = text.childNodes.length === 0;
    if (atEnd) text.scrollTop = text.scrollHeight;
    describe(answer);
    return fresh || answer.text.length > 0;
  };

  const follow = async (signal, onStatus = () => {}) => {
    while (!signal.aborted) {
      let answer;
      try {
        const query = segment === null ? { wait: WAIT_SECONDS } : { segment, after: next, wait: WAIT_SECONDS };
        answer = await api("GET", path, { signal, query });
      } catch (error) {
        if (error.name === "AbortError") return false;
        replace(note, `Live text paused (${error.code}); trying again.`);
        await sleep(error.retryAfter ? error.retryAfter * 1000 : 5000, signal);
        continue;
      }
      const moved = take(answer);
      if (answer.ended) return true;
      onStatus(answer.status);
      if (!moved) await sleep(IDLE_MS, signal);
    }
    return false;
  };

  return { panel, follow };
}
