"""The web chat in a real browser against a real `kgteam serve` (see conftest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from webchat_support import API_KEY, XSS_LABEL, copy_screenshot

# without the dev extra this module skips (it stopped the whole run with a collection error)
expect = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                             "(pip install playwright; never 'playwright install')").expect

ANSWER_TIMEOUT = 20_000


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")  # Enter sends (Shift+Enter would add a line)


def last_turn(page):
    return page.locator("#turns > li.turn").last


def test_ask_streams_role_messages_and_shows_answer_with_evidence(open_chat, screenshot_dirs):
    page = open_chat()
    expect(page.locator("#server-info")).to_contain_text("team webchat-test · playbook triad · KG orchard")
    ask(page, "who is the gardener of the parent tree of Young Oak")
    turn = last_turn(page)
    expect(turn.locator(".answer-text")).to_have_text("Ada Quill", timeout=ANSWER_TIMEOUT)
    expect(turn).to_have_attribute("data-status", "done")

    # The live panel shows the roles' messages as they came, from the question to the answer.
    live = page.locator("#live-messages > li.live-message")
    assert live.count() >= 3
    kinds = live.evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds[0] == "question" and kinds[-1] == "answer"
    expect(live.first.locator(".route")).to_contain_text("user")
    # Tool calls (label search, SPARQL) stream too.
    expect(page.locator("#live-messages > li.live-tool").first).to_be_visible()
    expect(page.locator("#live-count")).to_have_text(re.compile(r"^\(\d+ · \d+ tool calls\)$"))

    # Budgets panel: live use of the LLM call budget (the stand-in model answered some calls).
    llm = page.locator('.budget[data-budget="llm_calls"] .budget-value')
    expect(llm).to_have_text(re.compile(r"^[1-9]\d* / 25$"))  # the team file sets 25

    # Evidence beside the answer: the two-hop path as table rows and as a drawing.
    rows = turn.locator("table.triples tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td")).to_have_text(["Young Oak", "seedling of", "Tall Ash"])
    expect(rows.nth(1).locator("td")).to_have_text(["Tall Ash", "tended by", "Ada Quill"])
    graph = turn.locator("svg.triple-graph")
    expect(graph).to_have_attribute("aria-label", "Graph of 2 evidence triples between 3 nodes")
    expect(graph.locator("text.node-label")).to_have_text(["Young Oak", "Tall Ash", "Ada Quill"])
    expect(graph.locator("text.edge-label")).to_have_text(["seedling of", "tended by"])
    expect(graph.locator("line.edge-line")).to_have_count(2)
    expect(turn.locator(".evidence-queries pre").first).to_contain_text("SELECT")
    # Cost and stop reason.
    expect(turn.locator(".answer-meta .stop-reason")).to_have_text("done")
    grounded = turn.locator(".answer-meta dt", has_text="grounded")
    expect(grounded).to_have_count(1)  # the card says it, not only the role-message line
    expect(turn.locator(".answer-meta .grounded-yes")).to_have_text("grounded in the KG")
    expect(turn.locator(".answer-meta .cost")).to_contain_text(re.compile(r"\d+ LLM calls? · \d+ tokens · [\d.]+ s"))
    expect(page.locator("#status-line")).to_contain_text("Answered")

    page.locator("#question").blur()
    shot = screenshot_dirs[0] / "webchat.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    copy_screenshot(shot, screenshot_dirs)


def test_stop_cancels_a_running_question(open_chat, stand_in_model):
    page = open_chat()
    before = stand_in_model.slow_calls
    ask(page, "who is the gardener of Old Elm, slowly")  # the stand-in model holds this call
    turn = last_turn(page)
    expect(turn).to_have_attribute("data-status", "running")
    expect(page.locator("#live-messages > li.live-message").first).to_have_attribute("data-kind", "question")
    stop = page.locator("#stop")
    expect(stop).to_be_enabled()
    expect(page.locator("#ask")).to_be_disabled()
    wait_for_slow_call(page, stand_in_model, before)  # the run is inside the held model call
    stop.click()
    expect(turn).to_have_attribute("data-status", "cancelled", timeout=10_000)
    expect(turn.locator(".turn-status")).to_contain_text("Stopped")
    expect(stop).to_be_disabled()
    expect(page.locator("#ask")).to_be_enabled()
    expect(page.locator("#status-line")).to_have_text("Stopped.")
    assert stand_in_model.slow_calls > before  # the run was inside a model call when stopped

    # The server agrees: the turn is stored as cancelled, and the session takes the next question.
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(last_turn(page)).to_have_attribute("data-status", "cancelled")
    ask(page, "who is the gardener of Old Elm")
    expect(last_turn(page).locator(".answer-text")).to_have_text("Ada Quill", timeout=ANSWER_TIMEOUT)


def wait_for_slow_call(page, model, before: int) -> None:
    for _ in range(200):
        if model.slow_calls > before:
            return
        page.wait_for_timeout(50)
    raise AssertionError("the run never reached the stand-in model's slow call")


def test_reload_mid_run_shows_it_running_and_stop_still_works(open_chat, stand_in_model):
    """The run belongs to the server, not to the page: after a reload it is still there to stop."""
    page = open_chat()
    before = stand_in_model.slow_calls
    ask(page, "which field is Tall Ash grown in, slowly")
    wait_for_slow_call(page, stand_in_model, before)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    turn = last_turn(page)
    expect(turn).to_have_attribute("data-status", "running")
    expect(turn.locator(".question-text")).to_have_text("which field is Tall Ash grown in, slowly")
    expect(page.locator("#ask")).to_be_disabled()
    page.keyboard.press("Escape")  # Esc stops, like the button
    expect(last_turn(page)).to_have_attribute("data-status", "cancelled", timeout=10_000)
    expect(page.locator("#status-line")).to_have_text("Stopped.")
    expect(page.locator("#ask")).to_be_enabled()
    expect(page.locator("#stop")).to_be_disabled()


def test_reload_restores_the_session_and_its_turns(open_chat):
    page = open_chat()
    ask(page, "who is the gardener of Tall Ash")
    expect(last_turn(page).locator(".answer-text")).to_have_text("Ada Quill", timeout=ANSWER_TIMEOUT)
    ask(page, "which field is Young Oak grown in")
    expect(last_turn(page).locator(".answer-text")).to_have_text("South Field", timeout=ANSWER_TIMEOUT)
    session_id = page.locator("#session-list li.current").get_attribute("data-session")
    assert session_id

    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    current = page.locator("#session-list li.current")
    expect(current).to_have_attribute("data-session", session_id)
    expect(current.locator(".session-meta")).to_contain_text("2 turns")
    expect(page.locator("#turns .question-text")).to_have_text(
        ["who is the gardener of Tall Ash", "which field is Young Oak grown in"])
    expect(page.locator("#turns .answer-text")).to_have_text(["Ada Quill", "South Field"])
    expect(page.locator("#turns table.triples tbody tr").first.locator("td")).to_have_text(
        ["Tall Ash", "tended by", "Ada Quill"])

    # The session's trace downloads as JSON lines: both turns, then their messages.
    with page.expect_download() as download_info:
        page.click("#download-trace")
    download = download_info.value
    assert download.suggested_filename == f"kgteam-trace-{session_id}.jsonl"
    lines = [json.loads(line) for line in Path(download.path()).read_text().splitlines() if line.strip()]
    assert [x.get("question") for x in lines if x.get("type") == "turn"] == [
        "who is the gardener of Tall Ash", "which field is Young Oak grown in"]
    assert sum(x.get("type") == "message" for x in lines) >= 6


def test_sessions_can_be_switched_created_and_deleted(open_chat):
    page = open_chat()
    ask(page, "who is the gardener of Old Elm")
    expect(last_turn(page).locator(".answer-text")).to_have_text("Ada Quill", timeout=ANSWER_TIMEOUT)
    first = page.locator("#session-list li.current").get_attribute("data-session")

    page.click("#new-session")
    expect(page.locator("#turns > li")).to_have_count(0)
    expect(page.locator("#question")).to_be_focused()
    ask(page, "which field is Tall Ash grown in")
    expect(last_turn(page).locator(".answer-text")).to_have_text("South Field", timeout=ANSWER_TIMEOUT)
    second = page.locator("#session-list li.current").get_attribute("data-session")
    assert second and second != first

    page.locator(f'#session-list li[data-session="{first}"] .session-open').click()
    expect(page.locator("#session-list li.current")).to_have_attribute("data-session", first)
    expect(page.locator("#turns .answer-text")).to_have_text(["Ada Quill"])

    page.locator(f'#session-list li[data-session="{second}"] .session-delete').click()
    expect(page.locator(f'#session-list li[data-session="{second}"]')).to_have_count(0)
    expect(page.locator("#turns .answer-text")).to_have_text(["Ada Quill"])  # the open session stays
    page.locator(f'#session-list li[data-session="{first}"] .session-delete').click()
    expect(page.locator(f'#session-list li[data-session="{first}"]')).to_have_count(0)
    expect(page.locator("#turns > li")).to_have_count(0)


def test_kg_labels_are_shown_as_text_never_as_html(open_chat):
    page = open_chat()
    ask(page, "who is the gardener of Lone Pine")
    turn = last_turn(page)
    expect(turn.locator(".answer-text")).to_have_text(XSS_LABEL, timeout=ANSWER_TIMEOUT)
    expect(turn.locator("table.triples td").nth(2)).to_have_text(XSS_LABEL)
    expect(turn.locator("svg.triple-graph title").first).to_have_text(
        re.compile(re.escape("Lone Pine — tended by → " + XSS_LABEL)))
    # The markup stayed characters: no element was made from it and nothing ran.
    assert page.locator("#turns img, #turns script, #live-messages img, #live-messages script").count() == 0
    assert page.evaluate("window.__xss") is None
    # The streamed message payloads carry the label too, as text.
    page.locator("#live-messages li[data-kind=answer] summary").click()
    expect(page.locator("#live-messages li[data-kind=answer] pre.payload")).to_contain_text("<img src=x")


def test_api_key_box_unlocks_the_sessions(open_chat):
    page = open_chat(key=None)
    expect(page.locator("#key-box")).to_have_attribute("open", "")
    expect(page.locator("#status-line")).to_contain_text("API key")
    page.fill("#api-key", API_KEY)
    page.press("#api-key", "Enter")  # change event
    page.locator("#api-key").blur()
    expect(page.locator("#status-line")).not_to_contain_text("API key")
    ask(page, "who is the gardener of Young Oak")
    expect(last_turn(page).locator(".answer-text")).to_have_text("Bo Lark", timeout=ANSWER_TIMEOUT)
    assert page.evaluate("localStorage.getItem('kgteam.apiKey')") == API_KEY


def test_question_asked_while_the_key_refresh_lists_sessions_keeps_its_session(open_chat):
    """Entering a key lists the sessions; a question asked before that list returns creates a
    session the list lacks. That session must not be taken for a deleted one."""
    page = open_chat(key=None)
    page.evaluate("""() => {
      const plain = window.fetch.bind(window);
      const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      // The listing is read before the session exists and arrives after it is created.
      window.fetch = async (url, options = {}) => {
        const sessions = String(url).endsWith("/v1/sessions");
        const listing = sessions && (options.method || "GET") === "GET";
        if (sessions && !listing) await pause(300);
        const response = await plain(url, options);
        if (listing) await pause(1500);
        return response;
      };
    }""")
    page.fill("#api-key", API_KEY)
    page.press("#api-key", "Enter")  # change event: the slowed listing starts
    ask(page, "who is the gardener of Young Oak")
    expect(last_turn(page).locator(".answer-text")).to_have_text("Bo Lark", timeout=ANSWER_TIMEOUT)
    expect(page.locator("#session-list li.current")).to_have_count(1)


def test_narrow_window_has_no_sideways_scrolling(open_chat, context):
    page = open_chat()
    page.set_viewport_size({"width": 380, "height": 800})
    ask(page, "who is the gardener of Young Oak")
    expect(last_turn(page).locator(".answer-text")).to_have_text("Bo Lark", timeout=ANSWER_TIMEOUT)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    # Keyboard: Tab from the question box reaches Ask, then Stop is skipped while disabled. The
    # answer text can show before the turn ends; Ask is enabled (Tab-reachable) only once it has.
    expect(page.locator("#ask")).to_be_enabled(timeout=ANSWER_TIMEOUT)
    page.focus("#question")
    page.keyboard.press("Tab")
    expect(page.locator("#ask")).to_be_focused()


SSE_CHUNKS_JS = """
async (chunks) => {
  const { readEvents } = await import('/sse.js');
  const enc = new TextEncoder();
  const body = new ReadableStream({ start(c) { for (const s of chunks) c.enqueue(enc.encode(s)); c.close(); } });
  const out = [];
  for await (const e of readEvents(body)) out.push(e);
  return out;
}
"""


def test_sse_reader_handles_split_chunks_and_line_endings(open_chat):
    """The stream parser copes with events cut anywhere, CRLF split across reads, comments, multi-line data."""
    page = open_chat()
    chunks = ["id: 1\r", "\nevent: turn\r\ndata: {\"turn\"", ": 0}\r\n\r\n",
              ": keep-alive\n\n",
              "event: message\ndata: line one\ndata: line two\n\n",
              "id: 3\nevent: done\ndata: {\"status\":\"done\"}"]  # the last one lacks its blank line
    events = page.evaluate(SSE_CHUNKS_JS, chunks)
    assert events == [
        {"event": "turn", "data": '{"turn": 0}', "id": "1"},
        {"event": "message", "data": "line one\nline two", "id": "1"},
        {"event": "done", "data": '{"status":"done"}', "id": "3"},
    ]


FAILED_CARD_JS = """
async (answer) => {
  const { TurnView } = await import('/conversation.js');
  const view = new TurnView('q', 0);
  view.setStatus('running', 'model not reachable, retry 2/4');
  const progress = view.el.querySelector('.turn-status').textContent;
  view.showAnswer(answer);
  return { progress, card: view.el.querySelector('.answer').textContent,
           grounded: view.el.querySelector('.grounded-no')?.textContent ?? null };
}
"""


def test_a_failed_answer_card_says_its_error_once_and_that_it_is_not_grounded(open_chat):
    page = open_chat()
    error = "model call failed after 5 attempt(s): cannot connect to the model server"
    shown = page.evaluate(FAILED_CARD_JS, {"text": f"Sorry, the run failed: {error}", "status": "error",
                                           "grounded": False, "stop_reason": "error", "error": error})
    assert shown["progress"].endswith("model not reachable, retry 2/4")
    assert shown["card"].count(error) == 1 and shown["grounded"] == "not grounded"


CALIBRATION_JS = """
async (answer) => {
  const { renderAnswer } = await import('/evidence.js');
  const card = renderAnswer(answer);
  return card.querySelector('.answer-meta .calibration')?.textContent ?? null;
}
"""


def test_the_card_says_which_map_made_the_confidence_and_the_score_it_read(open_chat):
    page = open_chat()
    base = {"text": "Maren Holt", "status": "answered", "confidence": 0.89}
    said = page.evaluate(CALIBRATION_JS, {**base, "calibration": "examples of KG 'atelier'", "raw_confidence": 0.974})
    assert said == "examples of KG 'atelier'; score 0.97"
    assert page.evaluate(CALIBRATION_JS, base) is None  # no map: nothing claimed


PSEUDO_CARD_JS = """
async (answer) => {
  const { renderAnswer } = await import('/evidence.js');
  const card = renderAnswer(answer);
  document.body.append(card);
  const rows = [...card.querySelectorAll('table.pseudo-graph tbody tr')];
  const side = card.querySelector('.pseudo-beside');
  return { rows: rows.map((r) => [r.dataset.status, r.lastChild.textContent,
                                  getComputedStyle(r.firstChild).textDecorationLine]),
           fixedGraph: Boolean(side && side.querySelector('.graph-wrap svg')),
           sides: side ? side.children.length : 0 };
}
"""


def test_pgakv_pseudo_graph_is_shown_beside_the_fixed_graph_with_unverified_triples_marked(open_chat):
    page = open_chat()
    fact = {"s": "ex:Tracker", "p": "ex:directedBy", "o": "ex:IanSharp", "s_label": "Tracker",
            "p_label": "directed by", "o_label": "Ian Sharp"}
    answer = {"text": "Ian Sharp", "status": "answered", "grounded": True,
              "evidence": {"triples": [fact],
                           "pseudo_graph": [{**fact, "status": "verified"},
                                            {"s": "Tracker", "p": "won", "o": "Golden Bear", "status": "unverified"}]}}
    shown = page.evaluate(PSEUDO_CARD_JS, answer)
    assert shown["sides"] == 2 and shown["fixedGraph"]
    assert shown["rows"][0][:2] == ["verified", "verified"] and shown["rows"][0][2] == "none"
    assert shown["rows"][1][:2] == ["unverified", "unverified (not stated)"] and shown["rows"][1][2] == "line-through"


READER_CARD_JS = """
async (answer) => {
  const { renderAnswer } = await import('/evidence.js');
  const card = renderAnswer(answer);
  document.body.append(card);
  const reader = card.querySelector('.evidence-reader');
  return { reading: card.querySelector('.evidence-reading')?.textContent ?? null,
           reader: reader ? [reader.textContent, reader.dataset.examples] : null };
}
"""


def test_the_evidence_says_when_the_trained_reader_chose_the_reading_and_from_which_examples(open_chat):
    page = open_chat()
    match = {"predicate": "ex:craftedBy", "label": "crafted by", "direction": "out", "words": "made"}
    answer = {"text": "Odile Strand", "status": "answered", "grounded": True,
              "evidence": {"matches": [{**match, "learned_from": ["made-1", "made-2"]}]}}
    shown = page.evaluate(READER_CARD_JS, answer)
    assert shown["reading"] == 'reading: "made" ~ ->crafted by'
    assert shown["reader"] == ["read by the KG's trained reader (taught by examples: made-1, made-2)", "made-1 made-2"]
    hand = page.evaluate(READER_CARD_JS, {**answer, "evidence": {"matches": [{**match, "learned_from": None}]}})
    assert hand["reading"] == 'reading: "made" ~ ->crafted by' and hand["reader"] is None  # the hand scorer read it
