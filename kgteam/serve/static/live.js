// The live side panel: the roles' messages and tool calls as they stream, and the budgets
// (what the running question has used of each limit, from `budget` events).

import { h, replaceChildren, shorten } from "./dom.js";

const BUDGET_NAMES = {
  llm_calls: "LLM calls",
  tokens: "tokens",
  seconds: "seconds",
  depth: "depth",
  retries: "retries",
  turns: "messages",
  messages: "messages",
  breadth: "breadth",
};
// The team's configured limits (GET /v1/teams) under the names budget events use.
const LIMIT_OF = {
  max_llm_calls: "llm_calls",
  max_tokens: "tokens",
  timeout_s: "seconds",
  max_depth: "depth",
  max_retries: "retries",
  max_turns: "messages",
  max_breadth: "breadth",
};

const fmt = (value) => (typeof value === "number" && !Number.isInteger(value) ? value.toFixed(1) : String(value));

export class LivePanel {
  constructor(messagesEl, budgetsEl, countEl) {
    this.messagesEl = messagesEl;
    this.budgetsEl = budgetsEl;
    this.countEl = countEl;
    this.counts = { message: 0, tool: 0 };
    this.limits = {};
  }

  /** Limits from the served team's budgets ({max_llm_calls: 20, ...}); shown before any run. */
  setLimits(budgets) {
    this.limits = {};
    for (const [key, value] of Object.entries(budgets || {})) {
      if (LIMIT_OF[key] && typeof value === "number") this.limits[LIMIT_OF[key]] = value;
    }
    this.showLimits();
  }

  showLimits() {
    this.setBudget(Object.fromEntries(Object.entries(this.limits).map(([k, max]) => [k, { used: 0, max }])));
  }

  reset(note) {
    this.counts = { message: 0, tool: 0 };
    this.countEl.textContent = "";
    replaceChildren(this.messagesEl, note ? h("li", { class: "muted live-note" }, note) : null);
    this.showLimits();
  }

  push(item, counted) {
    // Follow the newest message only when the reader is at the bottom of the panel already.
    const box = this.messagesEl.closest(".live-section");
    const atBottom = !box || box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    this.messagesEl.querySelector(".live-note")?.remove();
    this.messagesEl.append(item);
    if (counted) {
      this.counts[counted] += 1;
      const { message, tool } = this.counts;
      this.countEl.textContent = `(${message}${tool ? ` · ${tool} tool call${tool === 1 ? "" : "s"}` : ""})`;
    }
    if (box && atBottom && box.scrollHeight > box.clientHeight) box.scrollTop = box.scrollHeight;
  }

  addMessage(m) {
    const route = m.recipient ? `${m.sender} → ${m.recipient}` : String(m.sender ?? "");
    const payload = m.payload && Object.keys(m.payload).length ? JSON.stringify(m.payload, null, 2) : null;
    const head = [h("span", { class: "seq" }, m.seq ?? ""), " ", h("span", { class: "route" }, route), " ",
      h("span", { class: "kind" }, m.kind ?? "")];
    const summary = m.summary ? h("div", { class: "summary" }, shorten(m.summary, 300)) : null;
    this.push(h("li", { class: "live-message", "data-kind": m.kind ?? "" },
      payload
        ? h("details", {}, h("summary", {}, head, summary), h("pre", { class: "payload" }, shorten(payload, 8000)))
        : h("div", {}, head, summary)), "message");
  }

  addToolCall(t) {
    const args = t.args && Object.keys(t.args).length ? shorten(JSON.stringify(t.args), 140) : "";
    const rows = t.rows !== undefined && t.rows !== null ? ` → ${t.rows} row${t.rows === 1 ? "" : "s"}` : "";
    const secs = typeof t.seconds === "number" ? ` · ${t.seconds.toFixed(2)} s` : "";
    this.push(h("li", { class: "live-tool" },
      h("span", { class: "route" }, String(t.role ?? "")), " ", h("span", { class: "kind" }, `tool ${t.tool ?? ""}`),
      h("div", { class: "summary" }, `${args}${rows}${secs}`)), "tool");
  }

  addNote(text, cls = "live-note-event") {
    this.push(h("li", { class: cls }, text));
  }

  setBudget(data) {
    const rows = [];
    for (const [key, value] of Object.entries(data || {})) {
      const name = BUDGET_NAMES[key] || key.replaceAll("_", " ");
      let used = value;
      let max = this.limits[key];
      if (value && typeof value === "object") {
        used = value.used ?? value.total ?? null;
        max = value.max ?? max;
        if (used === null) {
          rows.push(h("div", { class: "budget" }, h("span", { class: "budget-name" }, name),
            h("span", { class: "budget-value" }, Object.entries(value).map(([k, v]) => `${k} ${fmt(v)}`).join(" · "))));
          continue;
        }
      }
      if (typeof used !== "number") continue;
      const hasMax = typeof max === "number" && max > 0;
      rows.push(h("div", { class: "budget", "data-budget": key },
        h("span", { class: "budget-name" }, name),
        h("span", { class: "budget-value" }, hasMax ? `${fmt(used)} / ${fmt(max)}` : fmt(used)),
        hasMax ? h("meter", { min: 0, max, value: Math.min(used, max), low: max * 0.7, high: max * 0.9, optimum: 0, "aria-label": `${name} used` }) : null));
    }
    replaceChildren(this.budgetsEl, rows.length ? rows : h("p", { class: "muted" }, "No budgets reported yet."));
  }
}
