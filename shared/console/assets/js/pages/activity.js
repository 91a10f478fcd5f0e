// The summary page's activity charts (GET /v1/activity) for a window the user picks: the last
// hour by minute, the last 24 hours by hour, the last 7 days by hour, the last 30 days by day.
// The last hour is live: read again every 10 seconds and redrawn in place, the keyboard focus
// kept on the same bucket (or the same control), until another window is picked or the page is
// left (its `signal` aborts).

import { api, sleep } from "../api.js";
import { errorBox, h, replace, route } from "../dom.js";
import { when } from "../format.js";
import { chartFigure } from "../charts/figure.js";
import { activityCharts } from "./activity-charts.js";

export const WINDOWS = [
  { key: "hour", label: "Last hour", bucketSeconds: 60, buckets: 60, text: "last hour, by minute", live: true },
  { key: "day", label: "Last 24 hours", bucketSeconds: 3600, buckets: 24, text: "last 24 hours, by hour" },
  { key: "week", label: "Last 7 days", bucketSeconds: 3600, buckets: 168, text: "last 7 days, by hour" },
  { key: "month", label: "Last 30 days", bucketSeconds: 86400, buckets: 30, text: "last 30 days, by day (UTC)" },
];
const DEFAULT_WINDOW = "day";
/** How often the last hour is read again. */
export const LIVE_MS = 10000;

/** The window's query: whole buckets, the current one last. */
export function windowQuery(choice, now = Date.now()) {
  const size = choice.bucketSeconds * 1000;
  const from = Math.floor(now / size) * size - (choice.buckets - 1) * size;
  return { bucket: choice.bucketSeconds, from: new Date(from).toISOString() };
}

/** `{section, start()}`: the section to place on the page; `start` draws it and, for the last
 * hour, keeps it live while `signal` lasts. */
export function activitySection({ query, signal }) {
  let choice = WINDOWS.find((w) => w.key === query.window) ?? WINDOWS.find((w) => w.key === DEFAULT_WINDOW);
  let drawing = null;
  signal.addEventListener("abort", () => drawing?.abort(), { once: true });
  const state = h("p", { class: "live", id: "activity-state" });
  const problem = h("div", { id: "activity-problem" });
  const charts = h("div", { class: "charts", id: "activity-charts" }, h("p", { class: "muted" }, "Loading…"));
  const radios = WINDOWS.map((w) => {
    const input = h("input", { type: "radio", name: "activity-window", id: `activity-window-${w.key}`, value: w.key, checked: w === choice });
    input.addEventListener("change", () => {
      if (!input.checked) return;
      choice = w;
      const { window: _, ...rest } = query;
      history.replaceState(null, "", route("summary", w.key === DEFAULT_WINDOW ? rest : { ...rest, window: w.key }));
      start();
    });
    return h("label", { class: "check", for: `activity-window-${w.key}` }, input, w.label);
  });
  const section = h("section", { "aria-labelledby": "h-activity", id: "activity" },
    h("h2", { id: "h-activity" }, "Activity"),
    h("div", { class: "activity-bar" }, h("fieldset", { class: "window-choice" }, h("legend", {}, "Window"), radios), state),
    problem, charts);

  // One window's drawing at a time: a new choice (or leaving the page) ends the one before.
  const start = () => {
    drawing?.abort();
    if (signal.aborted) return Promise.resolve();
    drawing = new AbortController();
    return keepDrawn(choice, drawing.signal);
  };

  const keepDrawn = async (shown, own) => {
    replace(state, shown.live ? "Live: read again every 10 seconds." : "");
    for (;;) {
      let wait = LIVE_MS;
      try {
        const activity = await api("GET", "/v1/activity", { signal: own, query: windowQuery(shown) });
        if (own.aborted) return;
        draw(charts, activity, shown);
        replace(problem);
        replace(state, `${shown.live ? "Live: read again every 10 seconds; last read" : "Read"} at ${when(new Date().toISOString())}. From ${when(activity.from)} to ${when(activity.to)}.`);
        if (activity.complete === false) problem.append(h("p", { class: "notice", role: "note" }, "Partial: this window holds more rows of activity than one read takes, so its later buckets are short. A shorter window reads them all."));
      } catch (error) {
        if (error.name === "AbortError" || own.aborted) return;
        replace(problem, errorBox(error));
        if (!charts.querySelector("figure")) replace(charts);
        if (error.retryAfter) wait = Math.max(wait, error.retryAfter * 1000);
      }
      if (!shown.live) return;
      await sleep(wait, own);
      if (own.aborted) return;
    }
  };

  return { section, start };
}

/** Draw the charts in place of the ones shown, keeping the focus where it was: on the same
 * bucket of the same chart (or the nearest one left), or on the same "Show the numbers". */
function draw(container, activity, shown) {
  const active = document.activeElement;
  const figure = active?.closest?.("figure.chart");
  const kept = figure && container.contains(figure)
    ? { chart: figure.id, start: active.dataset?.start ?? null, index: Number(active.dataset?.index ?? -1), summary: active.tagName === "SUMMARY" }
    : null;
  const open = new Set([...container.querySelectorAll("details[open]")].map((d) => d.id));
  const figures = activityCharts(activity, shown.text).map(chartFigure);
  for (const f of figures) {
    const numbers = f.querySelector("details");
    if (numbers && open.has(numbers.id)) numbers.open = true;
  }
  replace(container, figures);
  if (!kept) return;
  const chart = document.getElementById(kept.chart);
  if (!chart) return;
  let target = null;
  if (kept.summary) target = chart.querySelector("summary");
  else if (kept.start !== null) {
    const columns = [...chart.querySelectorAll(".chart-col")];
    target = columns.find((c) => c.dataset.start === kept.start) ?? columns[Math.min(Math.max(kept.index - 1, 0), columns.length - 1)];
  }
  target?.focus({ preventScroll: true });
}
