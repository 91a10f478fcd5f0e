// A starting example of each request kind for "Try a task" (docs/api.md, "Request kinds").

export const EXAMPLES = {
  generate_text: {
    prompt: "Summarize the text in one sentence.",
    input: { text: "The meeting moved to Thursday at 10:00; bring the quarterly figures." },
  },
  classify: {
    prompt: "What is the sentiment of the review?",
    input: { review: "Arrived quickly and works as described." },
    choices: ["positive", "neutral", "negative"],
  },
  classify_many: {
    prompt: "Which topics does the message touch?",
    input: { message: "My invoice is wrong and the app crashes when I open it." },
    choices: ["billing", "bug", "shipping", "account"],
  },
  extract_data: {
    prompt: "Extract the invoice's details.",
    input: { text: "Invoice 2026-114 from Acme Ltd, total 1,250.00 EUR, due 2026-12-31." },
    fields: [
      { name: "number", type: "text", description: "The invoice number", required: true },
      { name: "supplier", type: "text", description: "Who sent the invoice", required: true },
      { name: "total", type: "number", description: "The total amount", required: true },
      { name: "currency", type: "choice", description: "The currency", required: false, choices: ["EUR", "USD", "GBP"] },
    ],
  },
};
