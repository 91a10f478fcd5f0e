// The public HTTP API on this origin, with the session's token. Errors carry the API's code.

import { token } from "./session.js";

export class ApiError extends Error {
  constructor(status, code, message, details, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    // A 429's Retry-After, in whole seconds (the tenant's read rate, a rate limit, a quota).
    this.retryAfter = retryAfter;
  }
}

/** `api("GET", "/v1/runs", {query, body, headers, signal})`: the answer's JSON, or an ApiError. */
export async function api(method, path, options = {}) {
  return (await apiAnswer(method, path, options)).json;
}

/** As `api`, with the answer's status too: `{status, json}` (a 201 created, a 200 found). */
export async function apiAnswer(method, path, { query = {}, body, headers: extra = {}, signal } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  const headers = { ...extra, authorization: `Bearer ${token() ?? ""}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: "omit",
      cache: "no-store",
      referrerPolicy: "no-referrer",
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "UNREACHABLE", "The API could not be reached.");
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const error = json?.error ?? {};
    if (response.status === 401) window.dispatchEvent(new CustomEvent("aitasks:unauthorized"));
    const retryAfter = /^\d+$/.test(response.headers.get("retry-after") ?? "") ? Number(response.headers.get("retry-after")) : undefined;
    throw new ApiError(response.status, error.code ?? `HTTP_${response.status}`, error.message ?? `HTTP ${response.status}`, error.details, retryAfter);
  }
  return { status: response.status, json };
}

/** A fresh key for one create (an operation's `Idempotency-Key`), sent again on a retry of it. */
export function idempotencyKey() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether a task status is final. */
export function isTerminal(status) {
  return status === "succeeded" || status === "failed" || status === "canceled";
}

/** Wait `ms`, or less if `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
