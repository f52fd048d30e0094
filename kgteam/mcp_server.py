"""kgteam over the Model Context Protocol: the KG tools and the team's ``ask``, for agents and IDEs.

Built with the official ``mcp`` SDK (the ``mcp`` extra). Every KG tool calls the served team's own
:class:`~kgteam.tools.kg_tools.KGTools`, so an MCP client meets exactly what the roles meet: the
SPARQL guard (read-only, LIMIT added or lowered), the KG's timeout and its row and byte caps.
A refusal or bad input comes back as an MCP tool error whose text says what was wrong; nothing
a client sends can raise past a tool, so the server keeps serving.

What the SDK alone does not give, added here (see :func:`build_server`):

- **Strict arguments.** The SDK validates in pydantic's lax mode (``true`` is taken as ``1``) and
  ignores unknown arguments; each call is first checked in strict mode with unknown names refused.
- **Bounded calls.** A KG tool's whole call, the reply included, runs under the KG's time limit, and
  the reply is built on a worker thread (the event loop only moves messages), so no call holds
  up another.
- **Bounded replies.** The reply is cut to the KG's byte cap as it is sent (JSON), not as values
  count; an error never echoes more than a short prefix of what the client sent.
- **KG text shown as data.** Labels, literals and answers come from someone else's KG: every reply
  passes them through :mod:`kgteam.protocols.display` (line breaks folded, control and bidi
  characters escaped, lengths capped), so a label cannot forge a line of the reply
  ("SYSTEM: ...") or steer the client's terminal. The byte cap is measured on what is sent.
- **stdio answers every request.** A frame the SDK cannot read gets a JSON-RPC error (-32700 or
  -32600), as over HTTP, instead of silence.

Annotations here are real objects, not strings: the SDK reads them to publish each tool's
input and output schema.
"""

import asyncio
import contextlib
import functools
import json
import logging
import sys
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

import pydantic_core
from pydantic import BaseModel, Field, ValidationError

from kgteam.protocols.display import LABEL_CHARS, display_answer, display_data, display_text
from kgteam.protocols.display import TEXT_CHARS as LONG_CHARS
from kgteam.protocols.errors import KgteamError
from kgteam.protocols.evidence import Evidence
from kgteam.protocols.payloads import Answer, AnswerValue
from kgteam.tools.kg_tools import MAX_QUERY_CHARS
from kgteam.tools.types import EntitySchema, LabelHit, NeighborTriple, SimilarTriple, SparqlResult

log = logging.getLogger(__name__)

INSTALL_HINT = "the MCP server needs the `mcp` package: pip install 'kgteam[mcp]'"

ERROR_CHARS = 1000  # the longest error text a client gets
ECHO_CHARS = 60  # the most of a client's own input (a tool or argument name) an error repeats
TEXT_CHARS = 8000  # the text summary for the model; the structured content carries the rest
CELL_CHARS = 200  # one value in the text summary of a SPARQL result
ENVELOPE_BYTES = 1024  # JSON-RPC envelope around content and structured content, with room to spare
THREADS = 32  # worker threads for the server's loop: KG queries, guard parses, replies

Iri = Annotated[str, Field(min_length=1, max_length=2000,
                           description="absolute IRI of an entity, e.g. one search_entities returned")]
K = Annotated[int, Field(ge=1, le=1000, description="how many matches to return (1-1000)")]


class EntityHits(BaseModel):
    """What ``search_entities`` found, best first."""

    query: str
    hits: list[LabelHit]
    truncated: bool = Field(False, description="hits were left out to fit the reply's byte cap")


class Neighborhood(BaseModel):
    """The triples around one entity, each readable (labels) and checkable (IRIs)."""

    iri: str
    triples: list[NeighborTriple]
    truncated: bool = Field(False, description="triples were left out to fit the reply's byte cap")


class SimilarFacts(BaseModel):
    """KG triples closest in meaning to a text, best first."""

    text: str
    triples: list[SimilarTriple]
    truncated: bool = Field(False, description="triples were left out to fit the reply's byte cap")


class AskCost(BaseModel):
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    seconds: float


class AskResult(BaseModel):
    """The team's answer as an MCP client gets it."""

    answer: str = Field(description="the answer text (\"I don't know\" when the team abstains)")
    status: str = Field(description="answered, unknown or error")
    values: list[AnswerValue] = Field(description="the answer's entities or literals")
    confidence: float | None = Field(description="0..1, from the deterministic scorer or the model")
    grounded: bool = Field(description="whether KG evidence supports the answer")
    stopped_by: str = Field(description="why the run stopped: done, a budget, cancelled ...")
    evidence: Evidence
    cost: AskCost
    model: str | None = Field(description="the team's model; 'none' when the scorers decided alone")
    session: str = Field(description="pass it back as `session` to ask a follow-up")
    error: str | None = None
    truncated: bool = Field(False, description="evidence triples were left out to fit the reply's byte cap")


def _shown(text: object, limit: int = LABEL_CHARS) -> str:
    """KG text for a text summary: one line, controls escaped, capped (:func:`display_text`)."""
    return display_text(text, limit)


def _text_of_hits(found: EntityHits) -> str:
    if not found.hits:
        return f"no entity matches {_shown(found.query, 1000)!r}"
    return "\n".join(f"{_shown(h.label)} <{_shown(h.iri)}>"
                     + (f" (matched {_shown(h.matched)!r})" if h.matched != h.label else "") for h in found.hits)


def _text_of_triples(triples: list[Any]) -> str:
    return "\n".join(_shown(t.readable(), LONG_CHARS) for t in triples)


def _text_of_schema(schema: EntitySchema) -> str:
    lines = [f"{_shown(schema.label or schema.iri)} <{_shown(schema.iri)}>"]
    lines += [f"  -> {_shown(p.label)} ({p.count})" for p in schema.outgoing]
    lines += [f"  <- {_shown(p.label)} ({p.count})" for p in schema.incoming]
    return "\n".join(lines)


def _text_of_sparql(res: SparqlResult) -> str:
    if res.boolean is not None:
        return "true" if res.boolean else "false"
    cut = f", cut at the {res.truncated_by} cap" if res.truncated else ""
    rows = ["\t".join(_shown(row[v].value, CELL_CHARS) if v in row else "" for v in res.variables)
            for row in res.rows[:20]]
    more = [f"... {len(res.rows) - 20} more row(s) in the structured result"] if len(res.rows) > 20 else []
    return "\n".join([f"{len(res.rows)} row(s){cut}", "\t".join(res.variables), *rows, *more])


def _text_of_answer(res: AskResult) -> str:
    conf = "" if res.confidence is None else f", confidence {res.confidence:.2f}"
    ground = "grounded" if res.grounded else "not grounded"
    return (f"{_shown(res.answer, LONG_CHARS)}\n[{res.status}, {ground}{conf}; stopped by {res.stopped_by}; "
            f"{res.cost.llm_calls} LLM call(s), {res.cost.total_tokens} tokens, {res.cost.seconds:.2f}s]")


def ask_result(answer: Answer, session: str) -> AskResult:
    """What ``ask`` replies; ``answer`` as shown (its KG text through :func:`display_answer`)."""
    answer = display_answer(answer)
    cost = answer.cost
    return AskResult(
        answer=answer.text, status=answer.status, values=answer.values, confidence=answer.confidence,
        grounded=answer.grounded, stopped_by=answer.stopped_by, evidence=answer.evidence,
        cost=AskCost(llm_calls=cost.llm_calls, prompt_tokens=cost.prompt_tokens,
                     completion_tokens=cost.completion_tokens, total_tokens=cost.total_tokens,
                     seconds=round(cost.seconds, 3)),
        model=answer.model, session=session, error=answer.error,
    )


# ---------------------------------------------------------------------------------------- bounds


def clip(text: str, limit: int = ERROR_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was: a reply never echoes unbounded input."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


class ReplyTooLarge(KgteamError):
    """Not even the first item of a list fits in the reply's byte cap."""


def _json_size(value: Any) -> int:
    return len(pydantic_core.to_json(value))


def _cut(model: BaseModel, path: list[str], keep: int) -> BaseModel:
    """``model`` with the list at ``path`` (a field, or a field of a field) cut to ``keep`` items."""
    value = getattr(model, path[0])
    return model.model_copy(update={path[0]: value[:keep] if len(path) == 1 else _cut(value, path[1:], keep)})


_NOUNS = {"rows": "row", "hits": "hit", "triples": "triple", "outgoing": "outgoing predicate"}


def shown_model(data: BaseModel, *, keep: tuple[str, ...] = ("query",), limit: int = LABEL_CHARS) -> BaseModel:
    """``data`` as a client may be shown it: every string through :func:`display_data` (labels, IRIs and
    values at most ``limit`` characters), except the fields in ``keep`` (the client's own text, echoed)."""
    payload = data.model_dump(mode="json")
    shown = display_data({k: v for k, v in payload.items() if k not in keep}, limit=limit)
    return type(data).model_validate({**payload, **shown})


def fit_reply(data: BaseModel, text_of: Callable[[Any], str], items: str, max_bytes: int) -> tuple[dict[str, Any], str]:
    """The structured content and text of a reply whose JSON fits in ``max_bytes``.

    The KG's byte cap counts the values a query returns; the same values as JSON (keys, term types,
    quotes, one object per row) can be three times larger, and that is what a client receives. So
    the reply is measured as it is sent and, when over, the list ``items`` (``"rows"``, or
    ``"evidence.triples"`` for a nested one) is cut to the longest prefix that fits, with
    ``truncated`` set and the text saying so. Blocking: runs on a worker thread."""
    payload = data.model_dump(mode="json")
    text = clip(text_of(data), TEXT_CHARS)
    if _json_size(payload) + _json_size(text) + ENVELOPE_BYTES <= max_bytes:
        return payload, text
    path = items.split(".")
    listed = payload
    for key in path:
        listed = listed[key]
    sizes = [_json_size(item) + 1 for item in listed]  # and a comma
    room = max_bytes - ENVELOPE_BYTES - _json_size(text) - _json_size(_cut(data, path, 0).model_dump(mode="json"))
    keep = used = 0
    while keep < len(sizes) and used + sizes[keep] <= room - 200:  # 200: the note below, and `truncated`
        used += sizes[keep]
        keep += 1
    while True:
        if keep == 0:
            what = f"its first {_NOUNS.get(path[-1], path[-1])}" if sizes and room > 0 else f"none of its {path[-1]}"
            hint = ": select shorter values (e.g. SUBSTR) or fewer columns" if isinstance(data, SparqlResult) else ""
            raise ReplyTooLarge(f"the reply is over the KG's {max_bytes}-byte cap with {what}{hint}")
        marks = {"truncated": True, "truncated_by": "bytes"}
        cut = _cut(data, path, keep)
        cut = cut.model_copy(update={k: v for k, v in marks.items() if k in type(cut).model_fields})
        payload = cut.model_dump(mode="json")
        text = (clip(text_of(cut), TEXT_CHARS) + f"\n[cut to {keep} of {len(sizes)} {path[-1]}: "
                f"a reply holds at most {max_bytes} bytes]")
        if _json_size(payload) + _json_size(text) + ENVELOPE_BYTES <= max_bytes:
            return payload, text
        keep = keep * 9 // 10  # the estimate was short (a longer text): a little less


def shown_reply(data: BaseModel, text_of: Callable[[Any], str], items: str, max_bytes: int, *,
                shown_chars: int | None = LABEL_CHARS) -> tuple[dict[str, Any], str]:
    """:func:`fit_reply` of ``data`` as shown (:func:`shown_model`, values at most ``shown_chars``
    characters; ``None``: ``data`` is shown as it is, e.g. already through :func:`display_answer`).
    Blocking: runs on a worker thread, so the sanitising counts in the call's time limit too."""
    if shown_chars is not None:
        data = shown_model(data, keep=("query", "iri", "text"), limit=shown_chars)
    return fit_reply(data, text_of, items, max_bytes)


def _reply_share(seconds: float) -> float:
    """The part of a call's time limit kept for building its reply (the query gets the rest)."""
    return min(1.0, seconds / 4)


_WIDENED: "weakref.WeakSet[asyncio.AbstractEventLoop]" = weakref.WeakSet()


def _widen_thread_pool() -> None:
    """The KG tools run queries with ``asyncio.to_thread``, on the loop's default pool: CPUs + 4 threads
    (6 on two cores), so six slow queries would make every other call wait its turn. The server's
    loop gets ``THREADS`` instead (each query stays bounded by the KG's timeout)."""
    loop = asyncio.get_running_loop()
    if loop not in _WIDENED:
        _WIDENED.add(loop)
        loop.set_default_executor(ThreadPoolExecutor(THREADS, thread_name_prefix="kgteam-mcp"))


def _json_kind(value: Any) -> str:
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                       (list, "an array"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def _argument_errors(exc: ValidationError) -> str:
    """One line per bad argument: its name, what was wrong and what JSON type came (never the value)."""
    lines = []
    for err in exc.errors()[:5]:
        where = ".".join(clip(str(part), ECHO_CHARS) for part in err["loc"]) or "arguments"
        got = f" (got {_json_kind(err.get('input'))})" if err["type"].endswith("_type") else ""
        lines.append(f"{where}: {err['msg']}{got}")
    return "; ".join(lines)


class ToolsOnly:
    """Stands in for a team when its model cannot be had (the local model is not installed): the KG
    tools need no model, so ``kgteam mcp`` serves them, and ``ask`` says why it cannot answer."""

    def __init__(self, spec: Any, tools: Any, why: str) -> None:
        self.spec = spec
        self.kg = tools
        self.why = why


# ---------------------------------------------------------------------------------------- stdio


def read_frame(line: str) -> tuple[bool, Any]:
    """Whether the SDK can read a stdio frame and, when not, the JSON-RPC error that answers it.

    The SDK's stdio transport drops a frame it cannot read, so the client waits forever for the
    answer; over HTTP the same frame gets -32700 or -32600. Here: not JSON is -32700 with id null;
    JSON that is not a request the SDK reads is -32600 with the request's id (id null when there is
    none to read, as JSON-RPC says); a bad notification or response has nobody waiting, so it is
    only logged (``None``)."""
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter

    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        return True, None
    except ValidationError:
        pass
    try:
        frame = json.loads(line)
    except (ValueError, RecursionError):
        return False, JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    frame_id = frame.get("id") if isinstance(frame, dict) else None
    readable = isinstance(frame_id, str | int) and not isinstance(frame_id, bool)
    if isinstance(frame, dict):
        response = "method" not in frame and (readable or "result" in frame or "error" in frame)
        notification = "method" in frame and "id" not in frame
    if isinstance(frame, dict) and (response or notification):  # nobody waits for an answer
        log.warning("mcp stdio: dropped a %s that is not valid JSON-RPC 2.0: %s",
                    "notification" if "method" in frame else "response", clip(line.strip(), 200))
        return False, None
    message = ("Invalid Request: not a JSON-RPC 2.0 request this server can read (jsonrpc must be \"2.0\", "
               "method a string, params an object)")
    return False, JSONRPCError(jsonrpc="2.0", id=frame_id if readable else None,
                               error=ErrorData(code=INVALID_REQUEST, message=message))


async def _checked_lines(stdin: Any, answer: Callable[[Any], Any]) -> AsyncIterator[str]:
    """The lines of ``stdin`` the SDK can read; the others answered (``await answer(error)``) before
    the next line is read, so answers keep the order of the frames, or logged."""
    async for raw in stdin:
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        readable, error = read_frame(line)
        if readable:
            yield line
        elif error is not None:
            await answer(error)


@functools.cache
def _server_class() -> type:
    """:class:`mcp.server.MCPServer` with kgteam's checks around each call and its own stdio loop."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    class KgteamMCPServer(MCPServer):  # type: ignore[misc]
        """Two overrides, since the SDK has no hook for either: ``call_tool`` (checks before the SDK's own
        lax validation, errors cut short) and ``run_stdio_async`` (unreadable frames answered)."""

        def __init__(self, *args: Any, tools: list[Any], **kwargs: Any) -> None:
            super().__init__(*args, tools=tools, **kwargs)
            self.tools_by_name = {tool.name: tool for tool in tools}

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """The SDK's call, after a strict check of the arguments, with every error bounded."""
            _widen_thread_pool()
            tool = self.tools_by_name.get(name)
            if tool is None:
                raise ToolError(f"unknown tool {clip(name, ECHO_CHARS)!r}: the tools are "
                                f"{', '.join(self.tools_by_name)}")
            known = tool.parameters.get("properties", {})
            unknown = [key for key in arguments if key not in known]
            if unknown:
                listed = ", ".join(repr(clip(key, ECHO_CHARS)) for key in unknown[:5])
                more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
                raise ToolError(f"{name}: unknown argument(s) {listed}{more}; it takes {', '.join(known)}")
            meta = tool.fn_metadata
            try:  # strict: JSON true is not the integer 1, "5" not 5 (the schema says integer)
                meta.arg_model.model_validate(meta.pre_parse_json(arguments), strict=True)
            except ValidationError as exc:
                raise ToolError(f"{name}: invalid arguments: {_argument_errors(exc)}") from None
            try:
                return await super().call_tool(name, arguments, context)
            except MCPError:
                raise
            except UnexpectedToolError as exc:  # a bug: said in one line, logged without a traceback
                cause = exc.__cause__
                log.warning("mcp tool %s failed: %s: %s", name, type(cause).__name__, clip(str(cause), 300))
                raise ToolError(_shown(f"{name} failed: {type(cause).__name__}: {cause}", ERROR_CHARS)) from None
            except ToolError as exc:  # may quote the KG (an endpoint's reply, an IRI): shown as data
                raise ToolError(_shown(str(exc), ERROR_CHARS)) from None

        async def run_stdio_async(self) -> None:
            """The SDK's stdio transport, fed only frames it can read (:func:`read_frame` answers the rest
            on the same write stream as the SDK's own answers).

            stdin is passed in, so the SDK leaves fd 0 as it is (it still moves fd 1 off the wire);
            nothing kgteam starts reads its standard input."""
            from mcp.shared.message import SessionMessage

            ready, wire = anyio.Event(), []

            async def answer(error: Any) -> None:
                await ready.wait()
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await wire[0].send(SessionMessage(error))

            lines = _checked_lines(anyio.wrap_file(sys.stdin.buffer), answer)
            async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
                wire.append(write)
                ready.set()
                low = self._lowlevel_server
                await low.run(read, write, low.create_initialization_options())

    return KgteamMCPServer


# ---------------------------------------------------------------------------------------- server


def build_server(team: Any, *, name: str = "kgteam") -> Any:
    """An MCP server (``mcp.server.MCPServer``) over a built :class:`kgteam.api.Team` (or a
    :class:`ToolsOnly`: the KG tools, and an ``ask`` that says why it cannot answer).

    Raises ImportError naming the extra when the SDK is not installed."""
    import uuid

    try:
        import anyio
        from mcp.server.mcpserver.exceptions import ToolError as McpToolError
        from mcp.server.mcpserver.tools import Tool
        from mcp.types import CallToolResult, TextContent, ToolAnnotations
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc

    no_ask = team.why if isinstance(team, ToolsOnly) else None
    tools = team.kg if isinstance(team, ToolsOnly) else team.runner.kg
    if tools is None:
        raise ValueError("this team has no KG tools to serve")
    kg_name = team.spec.kg_title
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)
    served: list[Any] = []

    def tool(**options: Any) -> Callable[[Any], Any]:
        """Registers a tool. Its output is built (and checked) here from our own models, so the SDK's
        second validation of each reply, on the event loop, is switched off; the schema is still published."""
        def register(fn: Any) -> Any:
            made = Tool.from_function(fn, **options)
            made.fn_metadata.output_model = None
            served.append(made)
            return fn
        return register

    async def call(tool: str, coro: Any) -> Any:
        """The KG tool's answer, or an MCP tool error that says why (never a traceback)."""
        try:
            return await coro
        except KgteamError as exc:
            raise McpToolError(_shown(str(exc), ERROR_CHARS)) from None  # may quote the KG: shown as data
        except Exception as exc:  # a backend fault: said in one line, logged, and the server goes on
            log.warning("mcp tool %s failed: %s: %s", tool, type(exc).__name__, clip(str(exc), 300))
            raise McpToolError(_shown(f"{tool} failed: {type(exc).__name__}: {exc}", ERROR_CHARS)) from None

    @contextlib.contextmanager
    def bounded(tool: str, seconds: float) -> Iterator[None]:
        """The whole call, reply included, within ``seconds``; past it, a tool error that says so."""
        try:
            with anyio.fail_after(seconds):
                yield
        except TimeoutError:
            raise McpToolError(f"{tool} took longer than {seconds:g}s, the KG's time limit for a call (the reply "
                               "included): narrow it (fewer rows, hops or predicates)") from None

    async def reply(data: BaseModel, text_of: Callable[[Any], str], items: str, *,
                    is_error: bool = False, shown_chars: int | None = LABEL_CHARS) -> CallToolResult:
        """The tool's reply, its KG text shown as data, built and cut to the byte cap on a worker thread
        (the loop serves other calls)."""
        build = functools.partial(shown_reply, shown_chars=shown_chars)
        try:
            payload, text = await anyio.to_thread.run_sync(build, data, text_of, items, tools.max_result_bytes,
                                                           abandon_on_cancel=True)
        except ReplyTooLarge as exc:
            raise McpToolError(str(exc)) from None
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload,
                              is_error=is_error)

    async def known(iri: str) -> None:
        if not await call("entity check", tools.has_entity(iri)):
            raise McpToolError(f"no entity <{clip(iri, 200)}> in KG {kg_name!r}: find one with search_entities")

    limit_s = tools.default_timeout_s

    @tool(annotations=read_only, description=(
        "Find knowledge-graph entities by name or alias (typo tolerant, exact matches first). "
        "Returns their IRIs for the other tools."))
    async def search_entities(
        text: Annotated[str, Field(min_length=1, max_length=1000, description="a name or alias to look up")],
        k: K = 10,
    ) -> Annotated[CallToolResult, EntityHits]:
        with bounded("search_entities", limit_s):
            found = EntityHits(query=text, hits=await call("search_entities", tools.search_entities(text, k)))
            return await reply(found, _text_of_hits, "hits")

    @tool(annotations=read_only, description=(
        "Triples around an entity, with labels, up to `hops` away; naming triples are left out. Ordered by hop, "
        "direction, predicate and far end, and cut at `limit`."))
    async def neighbors(
        iri: Iri,
        predicates: Annotated[list[str] | None, Field(description="predicate IRIs to follow (all when empty)")] = None,
        direction: Annotated[Literal["out", "in", "both"], Field(description="which way to follow edges")] = "both",
        hops: Annotated[int, Field(ge=1, le=3, description="how far to go (1-3)")] = 1,
        limit: Annotated[int, Field(ge=1, le=tools.max_rows, description=f"at most this many triples "
                                    f"(1-{tools.max_rows})")] = 200,
    ) -> Annotated[CallToolResult, Neighborhood]:
        with bounded("neighbors", limit_s):
            await known(iri)
            triples = await call("neighbors", tools.neighbors(iri, predicates=predicates, direction=direction,
                                                              hops=hops, limit=limit))
            return await reply(Neighborhood(iri=iri, triples=triples), lambda found: _text_of_triples(
                found.triples) or f"no triples around <{iri}> with these filters", "triples")

    @tool(annotations=read_only, description=(
        "The predicates going out of and into an entity, with counts and the types of their values."))
    async def entity_schema(iri: Iri) -> Annotated[CallToolResult, EntitySchema]:
        with bounded("entity_schema", limit_s):
            await known(iri)
            schema = await call("entity_schema", tools.entity_schema(iri))
            return await reply(schema, _text_of_schema, "outgoing")

    @tool(annotations=read_only, description=(
        f"Run a read-only SPARQL query (SELECT/ASK/CONSTRUCT/DESCRIBE) on KG {kg_name!r}. Updates, LOAD and "
        f"SERVICE are refused; LIMIT is added or lowered; at most {tools.max_rows} rows, "
        f"{tools.max_result_bytes} bytes of reply and {limit_s:g}s per call."))
    async def run_sparql(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the SPARQL query")],
        limit: Annotated[int | None, Field(ge=1, le=tools.max_rows, description=(
            f"row cap, at most {tools.max_rows} (the KG's cap)"))] = None,
        timeout_s: Annotated[float | None, Field(gt=0, le=limit_s, allow_inf_nan=False, description=(
            f"seconds for the whole call, at most {limit_s:g} (the KG's per-query timeout)"))] = None,
    ) -> Annotated[CallToolResult, SparqlResult]:
        seconds = min(timeout_s or limit_s, limit_s)
        with bounded("run_sparql", seconds):
            res = await call("run_sparql", tools.run_sparql(query, limit=limit,
                                                            timeout_s=seconds - _reply_share(seconds)))
            # a value may be a long text (a description): kept longer than a label, the byte cap still holds
            return await reply(res, _text_of_sparql, "rows", shown_chars=LONG_CHARS)

    @tool(annotations=read_only, description=(
        "KG triples whose wording is closest in meaning to a statement or question (dense search over all "
        "facts; needs the KG's triple vectors)."))
    async def similar_triples(
        text: Annotated[str, Field(min_length=1, max_length=1000, description="a statement or question")],
        k: K = 10,
    ) -> Annotated[CallToolResult, SimilarFacts]:
        with bounded("similar_triples", limit_s):
            found = SimilarFacts(text=text, triples=await call("similar_triples", tools.similar_triples(text, k)))
            return await reply(found, lambda f: "\n".join(f"{t.score:.3f} {_shown(t.readable(), LONG_CHARS)}"
                                                           for t in f.triples)
                               or "no triples", "triples")

    team_name = team.spec.name
    ask_description = (
        f"Ask the kgteam team {team_name!r} a question in natural language; it answers from KG {kg_name!r} "
        f"with evidence (triples, queries), a confidence, why it stopped and what it cost.")
    if no_ask is not None:
        ask_description = f"Not available on this server: {no_ask}"

    @tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False), description=ask_description)
    async def ask(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="the question")],
        session: Annotated[str | None, Field(min_length=1, max_length=64, pattern=r"^[\w-]+$", description=(
            "a session id from an earlier answer, to ask a follow-up (a new session when empty)"))] = None,
    ) -> Annotated[CallToolResult, AskResult]:
        if no_ask is not None:
            raise McpToolError(no_ask)
        sid = session or uuid.uuid4().hex[:12]
        answer = await call("ask", team.aask(question, session=sid))
        # a run that failed (model unreachable ...) reaches the client as an error that still has the answer's fields
        # shown as data (display_answer) on a worker thread: a long answer does not hold up the loop
        result = await anyio.to_thread.run_sync(ask_result, answer, sid, abandon_on_cancel=True)
        return await reply(result, _text_of_answer, "evidence.triples", is_error=answer.status == "error",
                           shown_chars=None)

    return _server_class()(name, log_level="WARNING", tools=served, instructions=(
        f"Tools over the knowledge graph {kg_name!r}: find entities with search_entities, look around them "
        f"with neighbors and entity_schema, query with run_sparql (read-only), or let the team answer with ask."))
