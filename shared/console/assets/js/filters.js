// A filter form whose values live in the URL's hash query (so Back and a bookmark keep them).
// Times are entered in local time and sent as RFC 3339 UTC.

import { h, route } from "./dom.js";
import { isoToLocalInput, localInputToIso } from "./format.js";

/**
 * `fields`: [{name, label, type: "select" | "text" | "time", options?: [[value, label]]}].
 * `segments`: the route to go to (the query replaces the current one; paging starts again).
 */
export function filterForm({ id, fields, query, segments, label }) {
  const controls = fields.map((field) => {
    const controlId = `${id}-${field.name}`;
    let control;
    if (field.type === "select") {
      control = h("select", { id: controlId, name: field.name }, field.options.map(([value, text]) => h("option", { value, selected: (query[field.name] ?? "") === value }, text)));
    } else if (field.type === "time") {
      control = h("input", { id: controlId, name: field.name, type: "datetime-local", value: isoToLocalInput(query[field.name]) });
    } else {
      control = h("input", { id: controlId, name: field.name, type: "text", value: query[field.name] ?? "", autocomplete: "off", size: "18" });
    }
    return { field, control, element: h("label", { for: controlId }, field.label, control) };
  });
  const form = h(
    "form",
    { class: "filters", id, "aria-label": label },
    controls.map((c) => c.element),
    h("button", { type: "submit" }, "Apply filters"),
    h("a", { href: route(...segments) }, "Clear"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = {};
    for (const { field, control } of controls) {
      const value = field.type === "time" ? localInputToIso(control.value) : control.value.trim();
      if (value) next[field.name] = value;
    }
    window.location.hash = route(...segments, next);
  });
  return form;
}

/** "Next page" (and "First page" once paged): keyset paging on the API's `next`. */
export function pager({ query, next, segments }) {
  const bar = h("nav", { class: "toolbar", "aria-label": "Pages" });
  if (query.after) {
    const { after, ...rest } = query;
    bar.append(h("a", { href: route(...segments, rest), id: "first-page" }, "First page"));
  }
  if (next) bar.append(h("a", { href: route(...segments, { ...query, after: next }), id: "next-page", class: "button" }, "Next page"));
  else bar.append(h("span", { class: "muted" }, "No more pages."));
  return bar;
}
