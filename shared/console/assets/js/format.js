// Dates, durations, numbers and money as people read them.

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, " UTC");
}

export function duration(fromIso, toIso) {
  if (!fromIso || !toIso) return "";
  const ms = new Date(toIso) - new Date(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function count(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : "";
}

/** US dollars, with enough digits for the fractions of a cent one task costs. */
export function usd(amount) {
  if (typeof amount !== "number") return "";
  if (amount === 0) return "$0";
  const digits = amount >= 1 ? 2 : Math.min(8, Math.max(4, 2 - Math.floor(Math.log10(amount)) + 2));
  return `$${amount.toFixed(digits)}`;
}

/** A value of a `datetime-local` input as RFC 3339 UTC (what the API takes), or "". */
export function localInputToIso(value) {
  if (!value) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

/** RFC 3339 as a `datetime-local` input's value (local time), or "". */
export function isoToLocalInput(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function shortId(id) {
  return typeof id === "string" ? id.slice(0, 8) : "";
}
