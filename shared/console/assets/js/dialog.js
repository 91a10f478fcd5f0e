// A confirmation as a modal <dialog>: focus moves into it, Escape or "Keep" answers no.

import { h } from "./dom.js";

/** Ask; resolves true when the user confirms. */
export function confirmDialog({ title, message, confirm }) {
  return new Promise((resolve) => {
    const keep = h("button", { type: "button", class: "secondary", id: "dialog-keep" }, "Keep it");
    const yes = h("button", { type: "button", class: "danger", id: "dialog-confirm" }, confirm);
    const heading = h("h2", { id: "dialog-title" }, title);
    const dialog = h("dialog", { "aria-labelledby": "dialog-title", "aria-describedby": "dialog-message" }, heading, h("p", { id: "dialog-message" }, message), h("div", { class: "toolbar" }, keep, yes));
    const done = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    keep.addEventListener("click", () => done(false));
    yes.addEventListener("click", () => done(true));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    keep.focus();
  });
}
