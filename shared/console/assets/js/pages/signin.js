// Sign-in: the token goes to sessionStorage (this tab only), never into the URL.

import { h, replace } from "../dom.js";
import { setToken } from "../session.js";

export function renderSignIn({ main, reason, onSignedIn }) {
  const input = h("textarea", { id: "token", name: "token", required: true, autocomplete: "off", spellcheck: "false", rows: "4" });
  const form = h(
    "form",
    { class: "signin", id: "signin-form" },
    h("label", { for: "token" }, "API token (the JWT your API accepts: its tenant is what you will see)"),
    input,
    h("p", { class: "muted" }, "The token stays in this browser tab's session storage and goes only to this site's API, in the Authorization header. Locally: make token."),
    h("button", { type: "submit", id: "signin" }, "Sign in"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.value.trim();
    if (!value) return;
    setToken(value);
    onSignedIn();
  });
  replace(main, h("h1", { tabindex: "-1" }, "Sign in"), reason ? h("p", { class: "notice", role: "alert" }, reason) : null, form);
  input.focus();
}
