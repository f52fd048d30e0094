// The session list: one button per session (switch), a delete button beside it, newest first.

import { formatTime, h, replaceChildren, shorten, toDate } from "./dom.js";

export class SessionList {
  constructor(listEl, { onSelect, onDelete }) {
    this.listEl = listEl;
    this.onSelect = onSelect;
    this.onDelete = onDelete;
  }

  render(sessions, currentId) {
    const sorted = [...sessions].sort((a, b) =>
      (toDate(b.updated ?? b.created)?.getTime() ?? 0) - (toDate(a.updated ?? a.created)?.getTime() ?? 0));
    if (!sorted.length) {
      replaceChildren(this.listEl, h("li", { class: "muted" }, "No sessions yet: ask a question to start one."));
      return;
    }
    replaceChildren(this.listEl, sorted.map((session) => {
      const title = session.title || `session ${shorten(session.id, 12)}`;
      const turns = typeof session.turns === "number" ? session.turns : Array.isArray(session.turns) ? session.turns.length : null;
      const when = formatTime(session.updated ?? session.created);
      const current = session.id === currentId;
      return h("li", { class: ["session", current && "current"], "data-session": session.id },
        h("button", {
          type: "button", class: "session-open", title,
          "aria-current": current ? "true" : null,
          onclick: () => this.onSelect(session.id),
        },
        h("span", { class: "session-title" }, shorten(title, 60)),
        h("span", { class: "session-meta" }, [turns !== null ? `${turns} turn${turns === 1 ? "" : "s"}` : null, when].filter(Boolean).join(" · "))),
        h("button", {
          type: "button", class: "session-delete icon-button", title: "Delete this session",
          "aria-label": `Delete session ${shorten(title, 60)}`,
          onclick: () => this.onDelete(session.id),
        }, "×"));
    }));
  }
}
