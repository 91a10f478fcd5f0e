// "Try a task": a form that creates one task of any kind (POST /v1/tasks), then opens it.

import { api } from "../api.js";
import { errorBox, h, replace, route } from "../dom.js";
import { EXAMPLES } from "./examples.js";

const KINDS = ["generate_text", "classify", "classify_many", "extract_data"];

function field(id, label, control, wide) {
  control.id = id;
  control.name = id;
  return h("label", { for: id, class: wide ? "wide" : null }, label, control);
}

export async function renderTry({ main, query, signal }) {
  const kind = h("select", {}, KINDS.map((k) => h("option", { value: k, selected: k === (query.kind ?? "generate_text") }, k)));
  const runId = h("input", { type: "text", autocomplete: "off", size: "38", placeholder: "empty: owned by the scope" });
  const scopeId = h("input", { type: "text", autocomplete: "off", value: "console" });
  const stepKey = h("input", { type: "text", autocomplete: "off", value: "try" });
  const effectKey = h("input", { type: "text", autocomplete: "off", size: "38" });
  const modelId = h("input", { type: "text", autocomplete: "off", value: "default" });
  const prompt = h("textarea", { rows: "2", required: true });
  const input = h("textarea", { rows: "4", spellcheck: "false" });
  const choices = h("textarea", { rows: "4" });
  const minChoices = h("input", { type: "number", min: "0", size: "6" });
  const maxChoices = h("input", { type: "number", min: "0", size: "6" });
  const maxOutputChars = h("input", { type: "number", min: "1", max: "100000", size: "8", placeholder: "4000" });
  const fields = h("textarea", { rows: "8", spellcheck: "false" });

  const choicesSet = h("fieldset", {}, h("legend", {}, "Choices"), h("div", { class: "form-row" }, field("try-choices", "Choices, one a line", choices, true)));
  const manySet = h("fieldset", {}, h("legend", {}, "How many choices"), h("div", { class: "form-row" }, field("try-min-choices", "At least (default 0)", minChoices), field("try-max-choices", "At most (default all)", maxChoices)));
  const textSet = h("fieldset", {}, h("legend", {}, "Output length"), h("div", { class: "form-row" }, field("try-max-output", "Most characters (1..100000)", maxOutputChars)));
  const fieldsSet = h("fieldset", {}, h("legend", {}, "Fields"), h("div", { class: "form-row" }, field("try-fields", "Fields, as JSON: [{name, type, description, required, maxLength?, choices?}]", fields, true)));
  const outcome = h("div", { id: "try-outcome" });

  const newKey = () => {
    effectKey.value = `console/${Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("")}`;
  };
  const fill = () => {
    const example = EXAMPLES[kind.value];
    prompt.value = example.prompt;
    input.value = JSON.stringify(example.input, null, 2);
    choices.value = (example.choices ?? []).join("\n");
    fields.value = example.fields ? JSON.stringify(example.fields, null, 2) : "";
    choicesSet.hidden = !(kind.value === "classify" || kind.value === "classify_many");
    manySet.hidden = kind.value !== "classify_many";
    textSet.hidden = kind.value !== "generate_text";
    fieldsSet.hidden = kind.value !== "extract_data";
  };
  kind.addEventListener("change", fill);
  newKey();
  fill();

  const form = h(
    "form",
    { id: "try-form", "aria-label": "Create a task", novalidate: true },
    h("fieldset", {}, h("legend", {}, "Task"), h("div", { class: "form-row" },
      field("try-kind", "Kind", kind),
      field("try-model", "Model id", modelId),
      field("try-step", "Step key", stepKey),
      field("try-effect", "Effect key (idempotency)", effectKey),
    )),
    h("fieldset", {}, h("legend", {}, "Owner: a run, or else a scope"), h("div", { class: "form-row" },
      field("try-run", "Run id", runId),
      field("try-scope", "Scope id (when no run)", scopeId),
    )),
    h("fieldset", {}, h("legend", {}, "Request"), h("div", { class: "form-row" },
      field("try-prompt", "Prompt (the model's instructions; no end-user text here)", prompt, true),
      field("try-input", "Input, as JSON (end-user text goes here)", input, true),
    )),
    choicesSet,
    manySet,
    textSet,
    fieldsSet,
    h("div", { class: "toolbar" }, h("button", { type: "submit", id: "try-submit" }, "Create task"), h("button", { type: "button", class: "secondary", id: "try-reset", onclick: () => { newKey(); fill(); } }, "Reset to the example")),
    outcome,
  );

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    replace(outcome);
    let body;
    try {
      body = buildBody();
    } catch (problem) {
      replace(outcome, errorBox({ code: "INVALID_INPUT", message: problem.message }));
      return;
    }
    try {
      const task = await api("POST", "/v1/tasks", { body, signal });
      window.location.hash = route("tasks", task.id);
    } catch (error) {
      if (error.name === "AbortError") return;
      replace(outcome, errorBox(error));
    }
  });

  function buildBody() {
    const request = { kind: kind.value, prompt: prompt.value };
    if (input.value.trim()) request.input = parseJson(input.value, "Input");
    if (kind.value === "classify" || kind.value === "classify_many") {
      request.choices = choices.value.split("\n").map((c) => c.trim()).filter(Boolean);
    }
    if (kind.value === "classify_many") {
      if (minChoices.value !== "") request.minChoices = Number(minChoices.value);
      if (maxChoices.value !== "") request.maxChoices = Number(maxChoices.value);
    }
    if (kind.value === "generate_text" && maxOutputChars.value !== "") request.maxOutputChars = Number(maxOutputChars.value);
    if (kind.value === "extract_data") request.fields = parseJson(fields.value, "Fields");
    const body = { stepKey: stepKey.value, effectKey: effectKey.value, modelId: modelId.value, request };
    if (runId.value.trim()) body.runId = runId.value.trim();
    else body.owner = { scopeId: scopeId.value.trim() };
    return body;
  }

  replace(main, h("h1", { tabindex: "-1" }, "Try a task"), h("p", { class: "muted" }, "Creates one task with POST /v1/tasks as your token's tenant, then opens it. Sending the same effect key again answers the task it made."), form);
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not JSON: ${error.message}`);
  }
}
