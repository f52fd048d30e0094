// An answer as the page shows it: text, values, status, stop reason, cost, and beside it the
// evidence (triples as a table and as a graph, queries, documents, axioms). Tolerant of both the
// HTTP contract's short field names (s/p/o, stop_reason) and kgteam's own (subject, stopped_by).

import { drawTriples } from "./graph.js";
import { h, shorten } from "./dom.js";

const list = (value) => (Array.isArray(value) ? value : []);

export function normaliseTriple(t) {
  return {
    s: t.s ?? t.subject ?? "",
    p: t.p ?? t.predicate ?? "",
    o: t.o ?? t.object ?? "",
    sLabel: t.s_label ?? t.subject_label ?? null,
    pLabel: t.p_label ?? t.predicate_label ?? null,
    oLabel: t.o_label ?? t.object_label ?? null,
    literal: Boolean(t.o_is_literal ?? t.object_is_literal ?? t.literal ?? false),
    kg: t.kg ?? null, // which KG states it (several-KG teams only)
  };
}

function normaliseQuery(q) {
  if (typeof q === "string") return { text: q, rows: null, error: null };
  return { text: q.sparql ?? q.query ?? q.text ?? "", rows: q.row_count ?? q.rows ?? null, error: q.error ?? null };
}

function normaliseDocument(d) {
  if (typeof d === "string") return { title: null, url: null, snippet: d, source: null };
  return { title: d.title ?? d.id ?? null, url: d.url ?? null, snippet: d.snippet ?? d.text ?? "", source: d.source ?? null };
}

function normaliseAxiom(a) {
  if (typeof a === "string") return { text: a, premises: [] };
  return { text: a.text ?? "", premises: list(a.premises) };
}

function formatCost(cost) {
  if (!cost) return null;
  const parts = [];
  if (cost.llm_calls !== undefined) parts.push(`${cost.llm_calls} LLM call${cost.llm_calls === 1 ? "" : "s"}`);
  let tokens = cost.tokens;
  if (tokens && typeof tokens === "object") tokens = tokens.total ?? (tokens.prompt ?? 0) + (tokens.completion ?? 0);
  if (tokens === undefined && (cost.prompt_tokens !== undefined || cost.completion_tokens !== undefined)) {
    tokens = (cost.prompt_tokens ?? 0) + (cost.completion_tokens ?? 0);
  }
  if (tokens !== undefined && tokens !== null) parts.push(`${tokens} tokens`);
  if (typeof cost.seconds === "number") parts.push(`${cost.seconds.toFixed(2)} s`);
  return parts.join(" · ");
}

/** A link only for http(s) addresses; anything else (javascript:, data:) stays plain text. */
function safeLink(url, text) {
  try {
    const parsed = new URL(String(url), window.location.href);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") {
      return h("a", { href: parsed.href, target: "_blank", rel: "noopener noreferrer" }, text);
    }
  } catch {
    // not a URL
  }
  return h("span", {}, text);
}

function triplesTable(triples) {
  const cell = (label, iri) => h("td", { title: iri || null }, label || iri || "");
  const several = triples.some((t) => t.kg); // a team reading several KGs says which KG states each triple
  const heads = ["subject", "predicate", "object", ...(several ? ["kg"] : [])];
  return h("div", { class: "table-wrap" },
    h("table", { class: "triples" },
      h("caption", { class: "visually-hidden" }, "Evidence triples"),
      h("thead", {}, h("tr", {}, ...heads.map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, triples.map((t) => h("tr", {}, cell(t.sLabel, t.s), cell(t.pLabel, t.p), cell(t.oLabel, t.literal ? null : t.o),
        ...(several ? [h("td", { class: "triple-kg" }, t.kg || "?")] : [])))),
    ));
}

function section(name, count, body, open = false) {
  return h("details", { class: `evidence-part evidence-${name.toLowerCase()}`, open },
    h("summary", {}, `${name} (${count})`), body);
}

/** PG&AKV: the believed triples (each with the fixer's verdict; unverified ones marked) beside the fixed graph. */
function pseudoBeside(pseudo, triples) {
  const row = (t) => h("tr", { class: `pseudo-${t.status}`, "data-status": t.status },
    h("td", {}, t.sLabel || t.s), h("td", {}, t.pLabel || t.p), h("td", {}, t.oLabel || t.o),
    h("td", { class: "pseudo-status" }, t.status === "unverified" ? "unverified (not stated)" : t.status));
  const believed = h("div", { class: "pseudo-side" }, h("p", { class: "muted" }, "Believed (pseudo-graph)"),
    h("div", { class: "table-wrap" }, h("table", { class: "triples pseudo-graph" },
      h("thead", {}, h("tr", {}, ["subject", "predicate", "object", "check"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, pseudo.map(row)))));
  const fixed = h("div", { class: "pseudo-side" }, h("p", { class: "muted" }, "Fixed graph (facts)"),
    triples.length ? h("div", { class: "graph-wrap" }, drawTriples(triples)) : h("p", { class: "muted" }, "no fact"));
  return h("div", { class: "pseudo-beside" }, believed, fixed);
}

/** `"made" ~ ->crafted by`: which words of the question named which relation (as `kgteam ask` says it). */
function explainMatch(m) {
  const said = m.words ? `"${m.words}"` : "(unnamed)";
  return `${said} ~ ${m.direction === "in" ? "<-" : "->"}${m.label || m.predicate || "?"}`;
}

/** The reading line, and when the KG's trained reader chose it, which bank examples taught it. */
function readingLines(matches) {
  if (!matches.length) return [];
  const lines = [h("p", { class: "evidence-reading muted" }, `reading: ${matches.map(explainMatch).join("; ")}`)];
  const taught = matches.find((m) => Array.isArray(m.learned_from));
  if (taught) {
    const ids = taught.learned_from.map(String);
    lines.push(h("p", { class: "evidence-reader", "data-examples": ids.join(" ") },
      "read by the KG's trained reader" + (ids.length ? ` (taught by examples: ${ids.join(", ")})` : "")));
  }
  return lines;
}

/** The evidence block of an answer (an <section>); empty parts are left out. */
export function renderEvidence(evidence) {
  const ev = evidence || {};
  const triples = list(ev.triples).map(normaliseTriple);
  const queries = list(ev.queries).map(normaliseQuery);
  const documents = list(ev.documents).map(normaliseDocument);
  const axioms = list(ev.axioms).map(normaliseAxiom);
  const pseudo = list(ev.pseudo_graph).map((t) => ({ ...normaliseTriple(t), status: String(t.status ?? "unverified") }));
  const parts = readingLines(list(ev.matches).filter((m) => m && typeof m === "object"));
  if (pseudo.length) parts.push(section("Pseudo-graph", pseudo.length, pseudoBeside(pseudo, triples), true));
  if (triples.length) {
    parts.push(section("Triples", triples.length, triplesTable(triples), true));
    parts.push(section("Graph", triples.length, h("div", { class: "graph-wrap" }, drawTriples(triples)), true));
  }
  if (queries.length) {
    parts.push(section("Queries", queries.length, h("ol", { class: "queries" }, queries.map((q) => h("li", {},
      h("pre", {}, h("code", {}, q.text)),
      q.error ? h("p", { class: "query-error" }, `error: ${q.error}`) : null,
      q.rows !== null ? h("p", { class: "muted" }, `${q.rows} row${q.rows === 1 ? "" : "s"}`) : null)))));
  }
  if (documents.length) {
    parts.push(section("Documents", documents.length, h("ol", { class: "documents" }, documents.map((d) => h("li", {},
      h("p", { class: "doc-title" }, d.url ? safeLink(d.url, d.title || d.url) : d.title || "document",
        d.source ? h("span", { class: "muted" }, ` · ${d.source}`) : null),
      d.snippet ? h("p", { class: "doc-snippet" }, shorten(d.snippet, 600)) : null)))));
  }
  if (axioms.length) {
    parts.push(section("Axioms", axioms.length, h("ol", { class: "axioms" }, axioms.map((a) => h("li", {},
      a.text, a.premises.length ? h("span", { class: "muted" }, ` (from ${a.premises.join(", ")})`) : null)))));
  }
  return h("section", { class: "evidence", "aria-label": "Evidence" },
    parts.length ? parts : h("p", { class: "muted" }, "No evidence came with this answer."));
}

/** The whole answer card. */
export function renderAnswer(answer) {
  let values = list(answer.values).filter((v) => v && (v.label || v.iri));
  if (values.length === 1 && values[0].label === answer.text) values = []; // the text says it already
  const stop = answer.stop_reason ?? answer.stopped_by ?? null;
  const cost = formatCost(answer.cost);
  const meta = [];
  const pair = (term, value, cls) => meta.push(h("dt", {}, term), h("dd", { class: cls || null }, value));
  if (answer.status) pair("status", answer.status, `status-${answer.status}`);
  if (stop) pair("stopped by", stop, "stop-reason");
  if (typeof answer.grounded === "boolean") {
    pair("grounded", answer.grounded ? "grounded in the KG" : "not grounded", answer.grounded ? "grounded-yes" : "grounded-no");
  }
  const signals = answer.signals;
  if (answer.grounded && signals && (signals.unnamed > 0 || signals.inferred)) {
    // the triples are the KG's; which relation the question meant was inferred
    pair("relation", "inferred, not named by the question", "inferred");
  }
  if (signals && Array.isArray(signals.unread) && signals.unread.length) pair("words not read", signals.unread.join(", "), "unread");
  if (typeof answer.confidence === "number") pair("confidence", answer.confidence.toFixed(2));
  if (answer.calibration) {
    // which map made the confidence (the KG's own examples, or the playbook's shipped map) and the score it read
    const score = typeof answer.raw_confidence === "number" ? `; score ${answer.raw_confidence.toFixed(2)}` : "";
    pair("calibrated by", `${answer.calibration}${score}`, "calibration");
  }
  if (cost) pair("cost", cost, "cost");
  if (answer.model) pair("model", answer.model);
  const fallbacks = list(answer.fallbacks);
  if (fallbacks.length) {
    // "decision_maker.query": allow a line break after each dot rather than inside a word.
    const names = fallbacks.map((f) => (typeof f === "string" ? f : f.decision ?? JSON.stringify(f)));
    pair("fallbacks", names.flatMap((name, i) => [i ? ", " : null, ...name.split(/(?<=\.)/).flatMap((part, j) => [j ? h("wbr") : null, part])]));
  }
  const guess = list(answer.guess).filter((v) => v && v.label);
  if (guess.length) pair("best guess", guess.map((v) => v.label).join(", "));
  const error = answer.error ? (typeof answer.error === "string" ? answer.error : JSON.stringify(answer.error)) : null;
  if (error && !String(answer.text ?? "").includes(error)) pair("error", error, "error-text"); // said once
  return h("article", { class: "answer", "data-status": answer.status || "" },
    h("div", { class: "answer-main" },
      h("p", { class: "answer-text" }, answer.text ?? ""),
      values.length ? h("ul", { class: "values", "aria-label": "Answer values" },
        values.map((v) => h("li", { title: v.iri || null }, v.label || v.iri))) : null,
      h("dl", { class: "answer-meta" }, meta)),
    renderEvidence(answer.evidence));
}
