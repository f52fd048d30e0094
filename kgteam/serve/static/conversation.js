// The conversation pane: each turn is the question, then its answer card (or what became of
// the question: running, cancelled, interrupted, failed).

import { renderAnswer } from "./evidence.js";
import { h, replaceChildren } from "./dom.js";

const STATUS_TEXT = {
  running: "The team is working on it…",
  cancelled: "Stopped: the question was cancelled.",
  interrupted: "Interrupted: the server stopped while answering. Ask again to retry.",
  error: "The question failed.",
};

export class TurnView {
  constructor(question, turnNumber) {
    this.replyEl = h("div", { class: "reply" });
    this.statusEl = h("p", { class: "turn-status", role: "status" });
    this.el = h("li", { class: "turn", "data-status": "running" },
      h("div", { class: "question" }, h("span", { class: "who" }, "You"), h("p", { class: "question-text" }, question)),
      this.replyEl);
    if (turnNumber !== undefined && turnNumber !== null) this.setTurn(turnNumber);
    this.answered = false;
  }

  setTurn(n) {
    this.el.dataset.turn = String(n);
  }

  setStatus(status, detail) {
    this.el.dataset.status = status;
    if (this.answered && status === "done") {
      this.statusEl.remove();
      return;
    }
    const text = detail ? `${STATUS_TEXT[status] || status} ${detail}` : STATUS_TEXT[status] || "";
    this.statusEl.textContent = text;
    this.statusEl.className = `turn-status turn-${status}`;
    if (text && !this.statusEl.isConnected) this.replyEl.prepend(this.statusEl);
    if (!text) this.statusEl.remove();
  }

  showAnswer(answer) {
    this.answered = true;
    replaceChildren(this.replyEl, renderAnswer(answer));
  }

  /** Bring the turn into view inside the conversation's own scroll box, not the whole page. */
  reveal(where = "start") {
    const box = this.el.closest(".chat-scroll");
    if (!box || box.scrollHeight <= box.clientHeight) return;
    box.scrollTop = where === "end" ? box.scrollHeight : this.el.offsetTop; // box is the offsetParent
  }

  showError(message) {
    this.replyEl.append(h("p", { class: "error-text", role: "alert" }, message));
  }
}

export class Conversation {
  constructor(listEl, emptyEl) {
    this.listEl = listEl;
    this.emptyEl = emptyEl;
  }

  clear() {
    this.listEl.replaceChildren();
    this.emptyEl.hidden = false;
  }

  /** A new turn for a question being asked now (status running). */
  addTurn(question, turnNumber) {
    const view = new TurnView(question, turnNumber);
    this.emptyEl.hidden = true;
    this.listEl.append(view.el);
    view.setStatus("running");
    view.reveal("end");
    return view;
  }

  /** Turns from GET /v1/sessions/{id}. */
  showTurns(turns) {
    this.clear();
    for (const turn of turns || []) {
      const view = new TurnView(turn.question ?? "", turn.turn);
      this.emptyEl.hidden = true;
      this.listEl.append(view.el);
      if (turn.answer) view.showAnswer(turn.answer);
      view.setStatus(turn.status || (turn.answer ? "done" : "interrupted"));
    }
    const box = this.listEl.closest(".chat-scroll");
    if (box) box.scrollTop = box.scrollHeight;
  }
}
