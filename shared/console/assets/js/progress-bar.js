// Tasks counted by status as a bar: the done ones (succeeded, failed, canceled) from the left,
// then the running ones; the queued ones are the rest of the track. The numbers are written next
// to it as words ("1,240 of 3,000 done: 1,200 succeeded, ..."), each after a swatch of its
// segment, and segments differ by pattern as well as colour: colour never carries the meaning
// alone. For assistive technology it is a `progressbar` (done of total) whose value text is that
// sentence. Widths are set through the CSSOM (the page's CSP allows no style attribute).

import { h } from "./dom.js";
import { count } from "./format.js";

/** The bar's segments, left to right; `queued` is the track behind them. */
const SEGMENTS = ["succeeded", "failed", "canceled", "running"];
const STATUSES = ["queued", "running", "succeeded", "failed", "canceled"];

/** `{queued, running, succeeded, failed, canceled}` as numbers (a missing one is 0), with
 * `done` and `total`. */
export function tally(counts = {}) {
  const numbers = Object.fromEntries(STATUSES.map((s) => [s, Number.isFinite(counts[s]) ? counts[s] : 0]));
  const done = numbers.succeeded + numbers.failed + numbers.canceled;
  return { ...numbers, done, total: done + numbers.running + numbers.queued };
}

/** The bar's sentence: "1,240 of 3,000 done: 1,200 succeeded, 30 failed, 10 canceled; 60
 * running, 1,700 queued", then `bound` when the counts cover part of the tasks. */
export function progressText(counts, bound) {
  const t = tally(counts);
  if (t.total === 0) return bound ? `No tasks counted ${bound}` : "No tasks yet";
  const text = `${count(t.done)} of ${count(t.total)} done: ${count(t.succeeded)} succeeded, ${count(t.failed)} failed, ${count(t.canceled)} canceled; ${count(t.running)} running, ${count(t.queued)} queued`;
  return bound ? `${text} ${bound}` : text;
}

/**
 * The bar for `counts` (`{queued, running, succeeded, failed, canceled}`): `bound` (optional) says
 * which tasks were counted, as "(first 1,000 tasks counted: the run has more)"; `id` names the
 * whole (its bar is `<id>-bar`, its sentence `<id>-text`). Redraw it with `setProgress`.
 */
export function progressBar(counts, { id, bound, label = "Tasks done" } = {}) {
  const track = h("div", { class: "pbar-track", role: "progressbar", "aria-label": label, id: id ? `${id}-bar` : null });
  const text = h("span", { class: "pbar-text", id: id ? `${id}-text` : null });
  const whole = h("div", { class: "pbar", id }, track, text);
  setProgress(whole, counts, bound);
  return whole;
}

/** Draw `whole` (a `progressBar`) again for new counts. */
export function setProgress(whole, counts, bound) {
  const t = tally(counts);
  const [track, text] = whole.children;
  const sentence = progressText(counts, bound);
  // No task: no bar to draw, only the sentence.
  track.hidden = t.total === 0;
  track.setAttribute("aria-valuemin", "0");
  track.setAttribute("aria-valuemax", String(t.total));
  track.setAttribute("aria-valuenow", String(t.done));
  track.setAttribute("aria-valuetext", sentence);
  track.replaceChildren(
    ...SEGMENTS.filter((s) => t[s] > 0).map((s) => {
      const segment = h("span", { class: `pbar-seg pbar-${s}`, "data-status": s });
      segment.style.width = `${(100 * t[s]) / t.total}%`;
      return segment;
    }),
  );
  text.replaceChildren(...words(t, sentence, bound));
}

/** The sentence with a swatch before each status that has a segment. */
function words(t, sentence, bound) {
  if (t.total === 0) return [sentence];
  const part = (s) => [h("span", { class: `pbar-swatch pbar-${s}`, "aria-hidden": "true" }), `${count(t[s])} ${s}`];
  return [
    `${count(t.done)} of ${count(t.total)} done: `,
    ...part("succeeded"), ", ", ...part("failed"), ", ", ...part("canceled"), "; ",
    ...part("running"), ", ", ...part("queued"),
    bound ? ` ${bound}` : "",
  ];
}
