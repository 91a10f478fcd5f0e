// JSON shown as text, never as HTML: every key and value goes into a text node. Big values fold
// into <details>: strings over LONG_STRING characters, arrays and objects over BIG_ENTRIES
// entries, and anything nested deeper than OPEN_DEPTH starts closed.

import { h } from "./dom.js";

const LONG_STRING = 240;
const BIG_ENTRIES = 12;
const OPEN_DEPTH = 3;

/** A block showing `value`. */
export function jsonView(value, label) {
  return h("div", { class: "json", role: "group", "aria-label": label }, node(value, 0));
}

function node(value, depth) {
  if (value === null) return h("span", { class: "lit" }, "null");
  if (typeof value === "string") return stringNode(value);
  if (typeof value === "number" || typeof value === "boolean") return h("span", { class: "num" }, String(value));
  if (Array.isArray(value)) return containerNode(value.map((v, i) => [i, v]), depth, "[", "]", false);
  if (typeof value === "object") return containerNode(Object.entries(value), depth, "{", "}", true);
  return h("span", {}, String(value));
}

function stringNode(text) {
  const quoted = JSON.stringify(text);
  if (text.length <= LONG_STRING) return h("span", { class: "str" }, quoted);
  return h(
    "details",
    {},
    h("summary", {}, `${JSON.stringify(text.slice(0, 80))}… (${text.length.toLocaleString("en-US")} characters)`),
    h("span", { class: "str" }, quoted),
  );
}

function containerNode(entries, depth, open, close, keyed) {
  if (entries.length === 0) return h("span", {}, `${open}${close}`);
  const body = h(
    "span",
    { class: "nest" },
    entries.map(([key, value], i) =>
      h("span", { class: "entry" }, keyed ? [h("span", { class: "key" }, JSON.stringify(String(key))), ": "] : null, node(value, depth + 1), i < entries.length - 1 ? "," : "", "\n"),
    ),
  );
  const folded = entries.length > BIG_ENTRIES || depth >= OPEN_DEPTH;
  const size = `${entries.length} ${keyed ? (entries.length === 1 ? "field" : "fields") : entries.length === 1 ? "item" : "items"}`;
  if (!folded) return h("span", {}, open, body, close);
  return h("details", {}, h("summary", {}, `${open} ${size} ${close}`), h("span", {}, open, body, close));
}
