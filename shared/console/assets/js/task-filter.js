// A task list's filter as an operation's (POST /v1/operations), and any operation's filter as a
// person reads it.

import { link } from "./dom.js";
import { shortId, when } from "./format.js";

/** The statuses an operation acts on when its filter names none (docs/api.md, Operations). */
export const DEFAULT_STATUSES = { cancel: ["queued", "running"], replay: ["failed", "canceled"] };

/** The operation's filter for a list's: its owner, status, kind, model and created window. */
export function operationFilter(list) {
  const { query } = list;
  const filter = { [list.ownerKey]: list.ownerId };
  if (query.status) filter.status = [query.status];
  for (const name of ["kind", "modelId", "createdAfter", "createdBefore"]) {
    if (query[name]) filter[name] = query[name];
  }
  return filter;
}

/** A filter as a person reads it. */
export function describeFilter(filter, action) {
  const parts = [];
  if (filter.runId) parts.push(["run ", link(shortId(filter.runId), "runs", filter.runId)]);
  if (filter.scopeId) parts.push(["scope ", link(filter.scopeId, "scopes", filter.scopeId)]);
  if (!filter.runId && !filter.scopeId) parts.push("every task of the tenant");
  const statuses = filter.status ?? (action ? DEFAULT_STATUSES[action] : null);
  if (statuses) parts.push(`status ${statuses.join(" or ")}${filter.status ? "" : " (the default)"}`);
  if (filter.kind) parts.push(`kind ${filter.kind}`);
  if (filter.modelId) parts.push(`model ${filter.modelId}`);
  if (filter.errorCode) parts.push(`error ${filter.errorCode}`);
  if (filter.createdAfter) parts.push(`created from ${when(filter.createdAfter)}`);
  if (filter.createdBefore) parts.push(`created before ${when(filter.createdBefore)}`);
  return parts.flatMap((part, i) => (i ? [", ", part] : [part]));
}
