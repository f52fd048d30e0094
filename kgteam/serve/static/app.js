// The web chat: wires the session list, the conversation, the live panel and the question box
// to the HTTP API. One question runs at a time in a page; its stream keeps going if the user
// looks at another session, and its turn is shown again when they come back.

import { Api, ApiError } from "./api.js";
import { Conversation } from "./conversation.js";
import { shorten } from "./dom.js";
import { LivePanel } from "./live.js";
import { SessionList } from "./sessions.js";

const KEY_STORE = "kgteam.apiKey";
const SESSION_STORE = "kgteam.session";
const POLL_MS = 1500;

const $ = (id) => document.getElementById(id);
const els = {
  serverInfo: $("server-info"), keyBox: $("key-box"), apiKey: $("api-key"),
  newSession: $("new-session"), sessionList: $("session-list"),
  turns: $("turns"), emptyChat: $("empty-chat"), downloadTrace: $("download-trace"),
  form: $("ask-form"), question: $("question"), ask: $("ask"), stop: $("stop"), statusLine: $("status-line"),
  budgets: $("budgets"), liveMessages: $("live-messages"), liveCount: $("live-count"),
};

const storage = {
  get(key) { try { return localStorage.getItem(key) || ""; } catch { return ""; } },
  set(key, value) { try { if (value) localStorage.setItem(key, value); else localStorage.removeItem(key); } catch { /* private mode */ } },
};

const api = new Api(() => els.apiKey.value);
const conversation = new Conversation(els.turns, els.emptyChat);
const live = new LivePanel(els.liveMessages, els.budgets, els.liveCount);
// run: the question this page is streaming; watching: a session whose question runs on the
// server without this page streaming it (started before a reload, or in another tab).
const state = { sessionId: null, sessions: [], run: null, watching: null };
const sessionList = new SessionList(els.sessionList, { onSelect: openSession, onDelete: deleteSession });

function say(text, kind = "") {
  els.statusLine.textContent = text;
  els.statusLine.dataset.kind = kind;
}

function reportError(err, what) {
  const message = err instanceof ApiError ? err.message : String(err?.message || err);
  if (err instanceof ApiError && err.status === 401) {
    els.keyBox.open = true;
    say(`${what}: ${message} — enter an API key above.`, "error");
    els.apiKey.focus();
  } else {
    say(`${what}: ${message}`, "error");
  }
}

function setCurrent(id) {
  if (state.watching && state.watching.id !== id) state.watching = null;
  state.sessionId = id;
  storage.set(SESSION_STORE, id);
  els.downloadTrace.hidden = !id;
  sessionList.render(state.sessions, id);
  updateButtons();
}

function updateButtons() {
  const running = Boolean(state.run);
  const runHere = running && state.run.sessionId === state.sessionId;
  const watchedHere = !runHere && state.watching?.id === state.sessionId;
  els.ask.disabled = running || watchedHere;
  const stopping = (runHere && state.run.stopping) || (watchedHere && state.watching.stopping);
  els.stop.disabled = !(runHere || watchedHere) || stopping;
  els.stop.textContent = stopping ? "Stopping…" : "Stop";
  document.body.classList.toggle("is-running", running || watchedHere);
}

async function refreshSessions() {
  try {
    const body = await api.listSessions();
    state.sessions = body.sessions || [];
  } catch (err) {
    state.sessions = [];
    reportError(err, "Could not list sessions");
  }
  sessionList.render(state.sessions, state.sessionId);
  return state.sessions;
}

async function openSession(id) {
  if (id === state.sessionId && els.turns.childElementCount) return;
  let session;
  try {
    session = await api.getSession(id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      storage.set(SESSION_STORE, "");
      await refreshSessions();
    }
    reportError(err, "Could not open the session");
    return;
  }
  setCurrent(id);
  conversation.showTurns(session.turns || []);
  const run = state.run;
  if (run && run.sessionId === id) {
    // The running question's own view carries the streamed state: it replaces the stored copy.
    const stored = [...els.turns.children].find((el) => el.dataset.turn === run.view.el.dataset.turn);
    if (stored) stored.replaceWith(run.view.el);
    else els.turns.append(run.view.el);
    els.emptyChat.hidden = true;
  } else {
    live.reset("Messages of the next question appear here as the roles send them.");
    if (session.running) watchRunningSession(id);
  }
  say("");
}

/** A question started elsewhere (another tab, before a reload) is still running: look again
 *  until it ends; meanwhile Stop cancels it and Ask waits. */
function watchRunningSession(id) {
  if (state.watching?.id !== id) state.watching = { id, stopping: false };
  updateButtons();
  setTimeout(async () => {
    const stillHere = () => state.sessionId === id && state.watching?.id === id && !state.run;
    if (!stillHere()) return;
    try {
      const session = await api.getSession(id);
      if (!stillHere()) return;
      if (session.running) {
        watchRunningSession(id);
        return;
      }
      const stopped = state.watching.stopping;
      state.watching = null;
      conversation.showTurns(session.turns || []);
      updateButtons();
      say(stopped ? "Stopped." : "The question that was running has finished.");
      await refreshSessions();
    } catch {
      watchRunningSession(id); // a passing network error: keep looking
    }
  }, POLL_MS);
}

function newChat() {
  setCurrent(null);
  conversation.clear();
  if (!state.run) live.reset("Messages of the next question appear here as the roles send them.");
  els.question.focus();
}

async function deleteSession(id) {
  if (state.run && state.run.sessionId === id) {
    say("Stop the running question before deleting its session.", "error");
    return;
  }
  try {
    await api.deleteSession(id);
  } catch (err) {
    reportError(err, "Could not delete the session");
    return;
  }
  if (id === state.sessionId) newChat();
  await refreshSessions();
  say("Session deleted.");
}

function handleEvent(run, event) {
  const { type, data } = event;
  const visible = state.sessionId === run.sessionId;
  switch (type) {
    case "turn":
      run.view.setTurn(data.turn);
      break;
    case "message":
      if (visible) live.addMessage(data);
      break;
    case "tool_call":
      if (visible) live.addToolCall(data);
      break;
    case "budget":
      if (visible) live.setBudget(data);
      break;
    case "progress": // e.g. "model not reachable, retry 2/4", while the run waits for it
      if (!run.answered) run.view.setStatus("running", data.message || "");
      if (visible) live.addNote(`${data.role ? `${data.role}: ` : ""}${data.message || data.kind}`, "live-progress");
      break;
    case "answer":
      run.view.showAnswer(data);
      run.answered = true;
      run.answerError = data.error || null;
      if (visible) run.view.reveal("start");
      break;
    case "error": {
      // one message per failure: a failed run's answer card says it already
      const said = run.answered && run.answerError && run.answerError === data.message;
      if (!said) run.view.showError(data.message || data.code || "error");
      if (visible) live.addNote(said ? `error: ${data.code} (the answer says why)` : `error: ${data.message || data.code}`, "live-error");
      break;
    }
    case "done":
      run.status = data.status || "done";
      run.view.setStatus(run.status);
      if (visible) live.addNote(`done: ${run.status}`);
      break;
    default:
      break; // an event type this page does not know yet: ignored
  }
}

async function ask(question) {
  if (state.run || (state.watching && state.watching.id === state.sessionId)) return;
  const text = question.trim();
  if (!text) return;
  let sessionId = state.sessionId;
  if (!sessionId) {
    try {
      const created = await api.createSession(shorten(text, 80));
      sessionId = created.id;
      setCurrent(sessionId);
      await refreshSessions();
    } catch (err) {
      reportError(err, "Could not start a session");
      return;
    }
  }
  if (state.run) return; // a second Ask while the session was being created
  if (state.sessionId !== sessionId) setCurrent(sessionId);
  const run = { sessionId, view: conversation.addTurn(text), status: null, answered: false, stopping: false };
  run.controller = new AbortController();
  state.run = run;
  els.question.value = "";
  live.reset();
  updateButtons();
  say("The team is working…");
  const started = performance.now();
  try {
    for await (const event of api.ask(run.sessionId, text, run.controller.signal)) handleEvent(run, event);
    if (!run.status) {
      run.status = "interrupted";
      run.view.setStatus("interrupted", "(the stream ended without a result)");
    }
  } catch (err) {
    if (run.controller.signal.aborted) {
      run.status = "cancelled";
      run.view.setStatus("cancelled");
    } else {
      run.status = "error";
      run.view.setStatus("error");
      run.view.showError(err instanceof ApiError ? err.message : String(err?.message || err));
      if (err instanceof ApiError && err.status === 401) reportError(err, "Could not ask");
    }
  } finally {
    state.run = null;
    updateButtons();
    const secs = ((performance.now() - started) / 1000).toFixed(1);
    const outcome = { done: run.answered ? `Answered in ${secs} s.` : `Finished in ${secs} s without an answer.`,
      cancelled: "Stopped.", interrupted: "Interrupted.", error: "The question failed." }[run.status] || run.status;
    if (state.sessionId === run.sessionId && els.statusLine.dataset.kind !== "error") say(outcome);
    await refreshSessions();
    if (state.sessionId === run.sessionId) els.question.focus();
  }
}

async function stopWatched() {
  const watched = state.watching;
  if (!watched || watched.stopping || watched.id !== state.sessionId) return;
  watched.stopping = true;
  updateButtons();
  say("Stopping…");
  try {
    await api.cancel(watched.id); // the watch sees the turn end
  } catch (err) {
    watched.stopping = false;
    updateButtons();
    reportError(err, "Could not cancel on the server");
  }
}

async function stop() {
  const run = state.run;
  if (!run) {
    await stopWatched();
    return;
  }
  if (run.stopping) return;
  run.stopping = true;
  updateButtons();
  say("Stopping…");
  try {
    const result = await api.cancel(run.sessionId);
    if (result && result.cancelled === false && state.run === run) run.controller.abort();
  } catch (err) {
    run.controller.abort(); // the server did not take the cancel: at least stop listening
    reportError(err, "Could not cancel on the server");
  }
}

async function downloadTrace() {
  if (!state.sessionId) return;
  try {
    const text = await api.trace(state.sessionId);
    const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = `kgteam-trace-${state.sessionId}.jsonl`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (err) {
    reportError(err, "Could not fetch the trace");
  }
}

async function showServer() {
  try {
    const health = await api.health();
    const parts = [health.team && `team ${health.team}`, health.playbook && `playbook ${health.playbook}`,
      health.kg && `KG ${health.kg}`, health.version && `v${health.version}`].filter(Boolean);
    els.serverInfo.textContent = parts.join(" · ") || "connected";
    els.serverInfo.classList.remove("error-text");
  } catch (err) {
    els.serverInfo.textContent = `server unreachable: ${err.message}`;
    els.serverInfo.classList.add("error-text");
  }
  try {
    const body = await api.teams();
    const served = (body.teams || [])[0];
    if (served?.budgets) live.setLimits(served.budgets);
  } catch {
    // budgets still arrive with the first question's events
  }
}

function wire() {
  els.form.addEventListener("submit", (e) => {
    e.preventDefault();
    ask(els.question.value);
  });
  els.question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      els.form.requestSubmit();
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && (state.run || state.watching)) stop();
  });
  els.stop.addEventListener("click", stop);
  els.newSession.addEventListener("click", newChat);
  els.downloadTrace.addEventListener("click", downloadTrace);
  els.apiKey.value = storage.get(KEY_STORE);
  els.apiKey.addEventListener("change", async () => {
    storage.set(KEY_STORE, els.apiKey.value.trim());
    say("");
    // A question asked meanwhile may create a session after this list was fetched: only a
    // session that was open before the refresh, and still is, can be found gone.
    const before = state.sessionId;
    await showServer();
    await refreshSessions();
    const gone = before && state.sessionId === before && !state.run
      && !state.sessions.some((x) => x.id === before);
    if (gone) newChat();
  });
}

async function start() {
  wire();
  live.reset("Messages of the next question appear here as the roles send them.");
  await showServer();
  const sessions = await refreshSessions();
  const last = storage.get(SESSION_STORE);
  if (last && sessions.some((x) => x.id === last)) await openSession(last);
  else {
    storage.set(SESSION_STORE, "");
    newChat();
  }
  document.body.dataset.ready = "true"; // tests wait for this
}

start();
