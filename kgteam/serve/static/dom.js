// Building DOM nodes from data without ever parsing data as HTML.
// Every string child becomes a text node; attributes are set one by one. No markup is parsed,
// so a KG label such as `<img src=x onerror=...>` is shown as the characters it is.

const SVG_NS = "http://www.w3.org/2000/svg";

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setProps(node, props) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  return node;
}

/** An HTML element: h("td", {class: "x"}, "text", childNode). */
export function h(tag, props, ...children) {
  return append(setProps(document.createElement(tag), props), children);
}

/** An SVG element (same calling convention as h). */
export function s(tag, props, ...children) {
  return append(setProps(document.createElementNS(SVG_NS, tag), props), children);
}

/** Remove every child of node, then append the given children. */
export function replaceChildren(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A short form of a long string for tight places; the full text goes in a title/tooltip. */
export function shorten(text, max = 60) {
  const str = String(text ?? "");
  return str.length <= max ? str : str.slice(0, max - 1) + "…";
}

/** Seconds since the epoch, milliseconds, or an ISO string -> a Date (or null). */
export function toDate(value) {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value === "number") return new Date(value < 1e12 ? value * 1000 : value);
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function formatTime(value) {
  const date = toDate(value);
  if (!date) return "";
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { month: "short", day: "numeric" });
}
