// A confirmation as a modal <dialog>: focus moves into it, Escape or "Keep" answers no.

import { h } from "./dom.js";

/**
 * Ask; resolves true when the user confirms. `message` is text or Nodes (each text a paragraph); `keep` names the
 * button that answers no; `danger: false` shows the confirm button as an ordinary one.
 */
export function confirmDialog({ title, message, confirm, keep = "Keep it", danger = true }) {
  return new Promise((resolve) => {
    const no = h("button", { type: "button", class: "secondary", id: "dialog-keep" }, keep);
    const yes = h("button", { type: "button", class: danger ? "danger" : null, id: "dialog-confirm" }, confirm);
    const heading = h("h2", { id: "dialog-title" }, title);
    const dialog = h("dialog", { "aria-labelledby": "dialog-title", "aria-describedby": "dialog-message" }, heading, h("div", { id: "dialog-message" }, [message].flat().map((m) => (typeof m === "string" ? h("p", {}, m) : m))), h("div", { class: "toolbar" }, no, yes));
    const done = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    no.addEventListener("click", () => done(false));
    yes.addEventListener("click", () => done(true));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}
