// Hash routes: `#/`, `#/runs/<id>`, `#/scopes/<id>`, `#/tasks/<id>`, `#/operations`,
// `#/operations/<id>`, `#/holds`, `#/try`, `#/summary`, each with an optional `?query` (filters,
// the page's `after`). The token is never part of one.

/** The current route: `{page, id, query}`. */
export function currentRoute() {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const [path, search = ""] = hash.split("?", 2);
  const segments = path.split("/").filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const query = Object.fromEntries(new URLSearchParams(search));
  const [first, id] = segments;
  const pages = { runs: "run", scopes: "scope", tasks: "task", try: "try", summary: "summary", holds: "holds" };
  if (!first) return { page: "runs", id: null, query };
  if (first === "operations") return { page: id ? "operation" : "operations", id: id ?? null, query };
  const page = pages[first];
  if (!page) return { page: "missing", id: null, query };
  if ((page === "run" || page === "scope" || page === "task") && !id) return { page: "missing", id: null, query };
  return { page, id: id ?? null, query };
}
