// A run's progress at the top of its page (GET /v1/runs/{runId}/progress): its tasks counted by
// status as a bar, read again every REFRESH_MS while a task of the run is queued or running,
// until the page is left (its signal aborts). The read counts the run's first 10,000
// tasks; `complete: false` (it has more) is said in the bar's text.

import { api, sleep } from "./api.js";
import { announce, errorBox, h, replace } from "./dom.js";
import { count } from "./format.js";
import { progressBar, progressText, setProgress, tally } from "./progress-bar.js";

const REFRESH_MS = 3000;
/** How many tasks the read counts at most (docs/api.md). */
const COUNTED = 10000;

/** `{panel, follow(), wake()}`: the panel to place on the page, its reads (resolving once the
 * run has nothing open, or the page is left), and a read at once (after an action). */
export function runProgress(runId, signal) {
  const path = `/v1/runs/${encodeURIComponent(runId)}/progress`;
  const bar = progressBar({}, { id: "run-progress", label: "The run's tasks done" });
  bar.hidden = true;
  const live = h("p", { class: "live", id: "run-progress-live" }, "Loading…");
  const panel = h("section", { "aria-labelledby": "h-run-progress" }, h("h2", { id: "h-run-progress" }, "Progress"), bar, live);
  const state = { previous: null, following: false, kicked: false, early: null, incomplete: false };

  const readOnce = async () => {
    const progress = await api("GET", path, { signal });
    const bound = progress.complete === false ? `(first ${count(COUNTED)} tasks counted: the run has more)` : null;
    setProgress(bar, progress, bound);
    bar.hidden = false;
    const now = progressText(progress, bound);
    if (state.previous !== null && now !== state.previous) announce(`Run progress: ${now}`);
    state.previous = now;
    const t = tally(progress);
    // Past the first 10,000 the counts say nothing of the later tasks: keep reading.
    state.incomplete = progress.complete === false;
    return state.incomplete || t.queued + t.running > 0;
  };

  const loop = async () => {
    while (!signal.aborted) {
      state.kicked = false;
      let open;
      try {
        open = await readOnce();
      } catch (error) {
        if (error.name === "AbortError") return;
        if (error.status === 429 && error.retryAfter !== undefined && error.retryAfter <= 60) {
          replace(live, errorBox(error));
          await sleep(error.retryAfter * 1000, signal);
          continue;
        }
        replace(live, errorBox(error));
        return;
      }
      if (!open && !state.kicked) {
        replace(live, "No task of the run is queued or running.");
        return;
      }
      replace(live, state.incomplete
        ? `Live: read again every ${REFRESH_MS / 1000} s (the run has more tasks than the ${count(COUNTED)} counted).`
        : `Live: read again every ${REFRESH_MS / 1000} s while a task of the run is queued or running.`);
      if (state.kicked) continue;
      state.early = new AbortController();
      const stop = () => state.early.abort();
      signal.addEventListener("abort", stop, { once: true });
      await sleep(REFRESH_MS, state.early.signal);
      signal.removeEventListener("abort", stop);
    }
  };

  const follow = async () => {
    state.following = true;
    try {
      await loop();
    } finally {
      state.following = false;
    }
  };

  return {
    panel,
    follow,
    wake() {
      if (!state.following) {
        follow();
        return;
      }
      state.kicked = true;
      state.early?.abort();
    },
  };
}
