// Holds (GET /v1/holds): a held model profile or scope keeps its tasks queued, spending no
// attempt, until released. Active holds with their target, kind, reason and age; Release for a
// manual one (an automatic one is released by its probe, when the provider answers again); a
// form to hold a profile or a scope; released holds as history, a page at a time.

import { api, apiAnswer } from "../api.js";
import { announce, errorBox, h, replace, table } from "../dom.js";
import { confirmDialog } from "../dialog.js";
import { pager } from "../filters.js";
import { duration, when } from "../format.js";

const PAGE = 100;

export async function renderHolds({ main, query, signal }) {
  const outcome = h("div", { id: "hold-outcome" });
  const active = h("div", { id: "holds-active" }, h("p", { class: "muted" }, "Loading…"));
  const released = h("div", { id: "holds-released" }, h("p", { class: "muted" }, "Loading…"));
  const refresh = () => Promise.all([drawActive(), drawReleased()]);
  replace(
    main,
    h("h1", { tabindex: "-1" }, "Holds"),
    h("p", { class: "muted" }, "A held profile's or scope's tasks stay queued: they spend no attempt and do not expire. Releasing sends them again, oldest first. The system holds a profile by itself while its provider fails (5xx, timeouts) and releases it when a probe call succeeds."),
    holdForm(outcome, signal, refresh),
    outcome,
    h("section", { "aria-labelledby": "h-active" }, h("h2", { id: "h-active" }, "Active holds"), h("div", { class: "toolbar" }, h("button", { type: "button", class: "secondary", id: "refresh-holds", onclick: () => refresh() }, "Refresh")), active),
    h("section", { "aria-labelledby": "h-released" }, h("h2", { id: "h-released" }, "Released holds"), released),
  );

  async function drawActive() {
    const page = await read(active, { state: "active", limit: PAGE });
    if (!page) return;
    const now = new Date().toISOString();
    const rows = page.holds.map((hold) => [
      h("span", { class: "hold-target" }, target(hold)),
      hold.kind,
      hold.reason ?? "",
      h("span", { title: when(hold.createdAt) }, new Date(now) - new Date(hold.createdAt) < 1000 ? "just now" : duration(hold.createdAt, now)),
      hold.kind === "manual" ? releaseButton(hold) : h("span", { class: "muted" }, "released by its probe when the provider answers"),
    ]);
    replace(
      active,
      rows.length ? table("Active holds", ["Target", "Kind", "Reason", "Held for", "Release"], rows) : h("p", { class: "notice" }, "Nothing is held."),
      page.next ? h("p", { class: "muted" }, `Only the first ${PAGE} are shown.`) : null,
    );
  }

  async function drawReleased() {
    const page = await read(released, { state: "released", after: query.after, limit: PAGE });
    if (!page) return;
    const rows = page.holds.map((hold) => [target(hold), hold.kind, hold.reason ?? "", when(hold.createdAt), when(hold.releasedAt), hold.releasedBy ?? "", duration(hold.createdAt, hold.releasedAt)]);
    replace(
      released,
      rows.length ? table("Released holds", ["Target", "Kind", "Reason", "Held from", "Released", "By", "Held for"], rows) : h("p", { class: "muted" }, "None yet."),
      page.next || query.after ? pager({ query, next: page.next, segments: ["holds"] }) : null,
    );
  }

  async function read(into, params) {
    try {
      return await api("GET", "/v1/holds", { signal, query: params });
    } catch (error) {
      if (error.name === "AbortError") throw error;
      replace(into, errorBox(error));
      return null;
    }
  }

  function releaseButton(hold) {
    const button = h("button", { type: "button", class: "secondary release-hold", "data-hold": hold.id, "aria-label": `Release the hold on ${target(hold)}` }, "Release");
    button.addEventListener("click", async () => {
      const yes = await confirmDialog({
        title: `Release ${target(hold)}?`,
        message: "Its held tasks are sent again, oldest first, and run as usual.",
        confirm: "Release",
        keep: "Keep it held",
        danger: false,
      });
      if (!yes) return;
      button.disabled = true;
      try {
        await api("POST", `/v1/holds/${encodeURIComponent(hold.id)}/release`, { signal });
        announce(`Released ${target(hold)}.`);
        replace(outcome, h("p", { class: "notice", role: "status" }, `Released ${target(hold)}: its tasks are sent again.`));
        await refresh();
      } catch (error) {
        if (error.name === "AbortError") return;
        replace(outcome, errorBox(error));
        button.disabled = false;
      }
    });
    return button;
  }

  await refresh();
}

/** What a hold holds, as a person reads it: "profile default", "scope reviews". */
function target(hold) {
  if (hold.target?.profile !== undefined) return `profile ${hold.target.profile}`;
  if (hold.target?.scopeId !== undefined) return `scope ${hold.target.scopeId}`;
  return JSON.stringify(hold.target);
}

function holdForm(outcome, signal, refresh) {
  const what = h("select", { id: "hold-what", name: "what" }, h("option", { value: "profile" }, "a model profile"), h("option", { value: "scopeId" }, "a scope"));
  const name = h("input", { id: "hold-name", name: "name", type: "text", required: true, autocomplete: "off", size: "24" });
  const reason = h("input", { id: "hold-reason", name: "reason", type: "text", autocomplete: "off", size: "40", maxlength: "500" });
  const form = h(
    "form",
    { class: "filters", id: "hold-form", "aria-label": "Hold a profile or a scope" },
    h("label", { for: "hold-what" }, "Hold", what),
    h("label", { for: "hold-name" }, "Profile id or scope id", name),
    h("label", { for: "hold-reason" }, "Reason (optional)", reason),
    h("button", { type: "submit", id: "hold-submit" }, "Hold"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { [what.value]: name.value.trim() };
    if (reason.value.trim()) body.reason = reason.value.trim();
    try {
      const { status, json: hold } = await apiAnswer("POST", "/v1/holds", { body, signal });
      const text = status === 201 ? `Held ${target(hold)}.` : `${target(hold)} was held already: that hold stays.`;
      replace(outcome, h("p", { class: "notice", role: "status" }, text));
      announce(text);
      name.value = "";
      reason.value = "";
      await refresh();
    } catch (error) {
      if (error.name === "AbortError") return;
      replace(outcome, errorBox(error));
    }
  });
  return form;
}
