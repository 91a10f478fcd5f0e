// The console's entry: sign-in, the navigation, and one page at a time by the URL's hash.
// Leaving a page aborts its requests and its live updates.

import { h, replace } from "./dom.js";
import { currentRoute } from "./router.js";
import { clearToken, tenantOf, token } from "./session.js";
import { renderSignIn } from "./pages/signin.js";
import { renderRuns } from "./pages/runs.js";
import { renderTasks } from "./pages/tasks.js";
import { renderTask } from "./pages/task.js";
import { renderTry } from "./pages/try.js";
import { renderSummary } from "./pages/summary.js";
import { renderOperations } from "./pages/operations.js";
import { renderOperation } from "./pages/operation.js";
import { renderHolds } from "./pages/holds.js";

const main = document.getElementById("main");
let current = null;

const pages = {
  runs: (ctx) => renderRuns(ctx),
  run: (ctx) => renderTasks({ ...ctx, owner: "run" }),
  scope: (ctx) => renderTasks({ ...ctx, owner: "scope" }),
  task: (ctx) => renderTask(ctx),
  try: (ctx) => renderTry(ctx),
  summary: (ctx) => renderSummary(ctx),
  operations: (ctx) => renderOperations(ctx),
  operation: (ctx) => renderOperation(ctx),
  holds: (ctx) => renderHolds(ctx),
  missing: (ctx) => replace(ctx.main, h("h1", { tabindex: "-1" }, "No such page"), h("p", {}, h("a", { href: "#/" }, "Back to the runs"))),
};

function showChrome(signedIn) {
  document.getElementById("nav").hidden = !signedIn;
  document.getElementById("sign-out").hidden = !signedIn;
  const tenant = signedIn ? tenantOf(token()) : null;
  document.getElementById("who").textContent = tenant ? `Tenant: ${tenant}` : "";
}

async function show(reason) {
  current?.abort();
  current = new AbortController();
  const signal = current.signal;
  if (!token()) {
    showChrome(false);
    renderSignIn({ main, reason, onSignedIn: () => show() });
    return;
  }
  showChrome(true);
  const route = currentRoute();
  for (const link of document.querySelectorAll("#nav a")) {
    const active = link.dataset.nav === route.page || (link.dataset.nav === "runs" && ["run", "scope", "task"].includes(route.page)) || (link.dataset.nav === "operations" && route.page === "operation");
    if (active) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  try {
    await pages[route.page]({ main, id: route.id, query: route.query, signal });
  } catch (error) {
    if (error.name !== "AbortError") replace(main, h("h1", { tabindex: "-1" }, "Something went wrong"), h("p", { class: "error", role: "alert" }, String(error.message ?? error)));
  }
  if (!signal.aborted && reason !== "refresh") main.querySelector("h1")?.focus();
}

window.addEventListener("hashchange", () => show());
window.addEventListener("aitasks:unauthorized", () => {
  clearToken();
  show("Your token was refused (401 UNAUTHORIZED): it may have expired. Enter a new one.");
});
document.getElementById("sign-out").addEventListener("click", () => {
  clearToken();
  show("Signed out.");
});
show();
