// The HTTP API as the page uses it: JSON calls with the optional API key, errors turned into
// ApiError (the server's {"error": {"code", "message"}}), and a question as a stream of events.

import { readEvents } from "./sse.js";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function errorFrom(response) {
  let code = `http_${response.status}`;
  let message = `${response.status} ${response.statusText}`.trim();
  try {
    const body = await response.json();
    if (body?.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    } else if (typeof body?.detail === "string") {
      message = body.detail;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, code, message);
}

export class Api {
  /** keyFn returns the current API key ("" for none): the key box may change between calls. */
  constructor(keyFn) {
    this.keyFn = keyFn;
  }

  headers(extra = {}) {
    const key = (this.keyFn() || "").trim();
    return key ? { ...extra, Authorization: `Bearer ${key}` } : { ...extra };
  }

  /** JSON in, JSON out (text when asText, or when the answer is not JSON). */
  async request(method, path, body, { asText = false } = {}) {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: this.headers(body === undefined ? {} : { "Content-Type": "application/json" }),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, "network", `cannot reach the server (${err.message})`);
    }
    if (!response.ok) throw await errorFrom(response);
    if (response.status === 204) return null;
    const type = (response.headers.get("content-type") || "").split(";")[0].trim();
    return !asText && type === "application/json" ? response.json() : response.text();
  }

  health() { return this.request("GET", "/health"); }
  teams() { return this.request("GET", "/v1/teams"); }
  listSessions() { return this.request("GET", "/v1/sessions"); }
  createSession(title) { return this.request("POST", "/v1/sessions", title ? { title } : {}); }
  getSession(id) { return this.request("GET", `/v1/sessions/${encodeURIComponent(id)}`); }
  deleteSession(id) { return this.request("DELETE", `/v1/sessions/${encodeURIComponent(id)}`); }
  cancel(id) { return this.request("POST", `/v1/sessions/${encodeURIComponent(id)}/cancel`, {}); }
  trace(id) { return this.request("GET", `/v1/sessions/${encodeURIComponent(id)}/trace`, undefined, { asText: true }); }

  /**
   * Asks a question; yields {type, data, id} per server-sent event (data parsed as JSON).
   * Throws ApiError when the server refuses the question (409 busy, 404, 401 ...).
   */
  async *ask(sessionId, question, signal) {
    let response;
    try {
      response = await fetch(`/v1/sessions/${encodeURIComponent(sessionId)}/questions`, {
        method: "POST",
        headers: this.headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify({ question }),
        signal,
      });
    } catch (err) {
      throw new ApiError(0, "network", `cannot reach the server (${err.message})`);
    }
    if (!response.ok) throw await errorFrom(response);
    for await (const raw of readEvents(response.body)) {
      let data;
      try {
        data = JSON.parse(raw.data);
      } catch {
        data = { text: raw.data };
      }
      yield { type: raw.event, data, id: raw.id };
    }
  }
}
