// Building the page. Data from the API (requests, outputs, errors, ids) only ever becomes text:
// children are Nodes or strings turned into text nodes; no HTML is parsed from data anywhere.

/** An element: `h("a", {href: "#/x", class: "c"}, "text", otherNode)`. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      element.className = value;
    } else if (value === true) {
      element.setAttribute(name, "");
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

/** Append children: Nodes as they are, anything else as a text node. */
export function append(parent, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace an element's children. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** A link inside the console: `#/` plus path segments, each encoded. */
export function link(text, ...segments) {
  return h("a", { href: route(...segments) }, text);
}

/** A console route: `#/runs/<id>`; the last argument may be a query object. */
export function route(...segments) {
  let query = "";
  if (segments.length && typeof segments[segments.length - 1] === "object") {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(segments.pop())) {
      if (value !== undefined && value !== null && value !== "") params.set(key, value);
    }
    query = params.toString() ? `?${params}` : "";
  }
  return `#/${segments.map((s) => encodeURIComponent(s)).join("/")}${query}`;
}

/** A status badge: the word itself, coloured (the colour is never the only signal). */
export function badge(status) {
  return h("span", { class: `status status-${String(status).replace(/[^a-z]/g, "")}` }, String(status));
}

/** A definition list of [label, value] pairs (values: strings or Nodes); empty values skipped. */
export function facts(pairs) {
  const list = h("dl", { class: "facts" });
  for (const [label, value] of pairs) {
    if (value === undefined || value === null || value === "") continue;
    list.append(h("dt", {}, label), h("dd", {}, value));
  }
  return list;
}

/** A table: `columns` are header labels (a `{label, num}` marks numbers), rows arrays of cells. */
export function table(caption, columns, rows) {
  const head = h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : null }, c.label ?? c)));
  const body = h("tbody", {}, rows.map((cells) => rowOf(columns, cells)));
  return h("div", { class: "table-wrap" }, h("table", {}, h("caption", { class: "visually-hidden" }, caption), h("thead", {}, head), body));
}

export function rowOf(columns, cells) {
  return h("tr", {}, cells.map((cell, i) => h("td", { class: columns[i]?.num ? "num" : null }, cell)));
}

/** An error box for a failed API call. */
export function errorBox(error) {
  const box = h("div", { class: "error", role: "alert" });
  append(box, [h("strong", {}, error.code ?? "ERROR"), ": ", error.message ?? String(error)]);
  if (error.status === 429 && error.retryAfter !== undefined) {
    box.append(h("p", { class: "retry-after" }, `Too many requests for now: try again in ${waitText(error.retryAfter)}.`));
  }
  if (Array.isArray(error.details) && error.details.length) {
    box.append(h("ul", {}, error.details.map((d) => h("li", {}, h("code", {}, d.path ?? ""), " ", d.message ?? ""))));
  }
  return box;
}

/** A wait of whole seconds as a person reads it: "12 s", "17 min", "2 h". */
function waitText(seconds) {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.ceil(seconds / 3600)} h`;
}

/** Say something to screen readers (the page's polite live region). */
export function announce(text) {
  const region = document.getElementById("status");
  if (region) region.textContent = text;
}
