// SVG elements, as dom.js's `h` makes HTML ones: attributes set one by one, children Nodes or
// strings turned into text nodes. No markup is ever parsed, so text from the API stays text.

const NS = "http://www.w3.org/2000/svg";

/** An SVG element: `s("rect", {x: 1, y: 2, class: "bar"}, child...)`. */
export function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}
