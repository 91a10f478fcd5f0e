// The token: in this tab's sessionStorage only (gone when the tab closes), never in a URL,
// never logged, sent only as the Authorization header of same-origin API calls.

const KEY = "aitasks-console-token";

export function token() {
  return sessionStorage.getItem(KEY);
}

export function setToken(value) {
  sessionStorage.setItem(KEY, value.trim());
}

export function clearToken() {
  sessionStorage.removeItem(KEY);
}

/** The tenant the token names (its `app_id` claim, read for display only; the API checks it). */
export function tenantOf(value) {
  try {
    const payload = value.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(payload.padEnd(payload.length + ((4 - (payload.length % 4)) % 4), "=")));
    return typeof claims.app_id === "string" ? claims.app_id : null;
  } catch {
    return null;
  }
}
