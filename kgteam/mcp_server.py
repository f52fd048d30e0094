"""kgteam over the Model Context Protocol: the KG tools and the team's ``ask``, for agents and IDEs.

Built with the official ``mcp`` SDK (the ``mcp`` extra). Every KG tool calls the served team's own
:class:`~kgteam.tools.kg_tools.KGTools`, so an MCP client meets exactly what the roles meet: the
SPARQL guard (read-only, LIMIT added or lowered), the KG's timeout and its row and byte caps.
A refusal or bad input comes back as an MCP tool error whose text says what was wrong; nothing
a client sends can raise past a tool, so the server keeps serving.

Annotations here are real objects, not strings: the SDK reads them to publish each tool's
input and output schema.
"""

import logging
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from kgteam.protocols.errors import KgteamError
from kgteam.protocols.evidence import Evidence
from kgteam.protocols.payloads import Answer, AnswerValue
from kgteam.tools.kg_tools import MAX_QUERY_CHARS
from kgteam.tools.types import EntitySchema, LabelHit, NeighborTriple, SimilarTriple, SparqlResult

log = logging.getLogger(__name__)

INSTALL_HINT = "the MCP server needs the `mcp` package: pip install 'kgteam[mcp]'"

Iri = Annotated[str, Field(min_length=1, max_length=2000,
                           description="absolute IRI of an entity, e.g. one search_entities returned")]
K = Annotated[int, Field(ge=1, le=1000, description="how many matches to return (1-1000)")]


class EntityHits(BaseModel):
    """What ``search_entities`` found, best first."""

    query: str
    hits: list[LabelHit]


class Neighborhood(BaseModel):
    """The triples around one entity, each readable (labels) and checkable (IRIs)."""

    iri: str
    triples: list[NeighborTriple]


class SimilarFacts(BaseModel):
    """KG triples closest in meaning to a text, best first."""

    text: str
    triples: list[SimilarTriple]


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


def _text_of_hits(found: EntityHits) -> str:
    if not found.hits:
        return f"no entity matches {found.query!r}"
    return "\n".join(f"{h.label} <{h.iri}>" + (f" (matched {h.matched!r})" if h.matched != h.label else "")
                     for h in found.hits)


def _text_of_triples(triples: list[Any]) -> str:
    return "\n".join(t.readable() for t in triples)


def _text_of_schema(schema: EntitySchema) -> str:
    lines = [f"{schema.label or schema.iri} <{schema.iri}>"]
    lines += [f"  -> {p.label} ({p.count})" for p in schema.outgoing]
    lines += [f"  <- {p.label} ({p.count})" for p in schema.incoming]
    return "\n".join(lines)


def _text_of_sparql(res: SparqlResult) -> str:
    if res.boolean is not None:
        return "true" if res.boolean else "false"
    cut = f", cut at the {res.truncated_by} cap" if res.truncated else ""
    rows = ["\t".join(row[v].value if v in row else "" for v in res.variables) for row in res.rows[:20]]
    more = [f"... {len(res.rows) - 20} more row(s) in the structured result"] if len(res.rows) > 20 else []
    return "\n".join([f"{len(res.rows)} row(s){cut}", "\t".join(res.variables), *rows, *more])


def _text_of_answer(res: AskResult) -> str:
    conf = "" if res.confidence is None else f", confidence {res.confidence:.2f}"
    ground = "grounded" if res.grounded else "not grounded"
    return (f"{res.answer}\n[{res.status}, {ground}{conf}; stopped by {res.stopped_by}; "
            f"{res.cost.llm_calls} LLM call(s), {res.cost.total_tokens} tokens, {res.cost.seconds:.2f}s]")


def ask_result(answer: Answer, session: str) -> AskResult:
    cost = answer.cost
    return AskResult(
        answer=answer.text, status=answer.status, values=answer.values, confidence=answer.confidence,
        grounded=answer.grounded, stopped_by=answer.stopped_by, evidence=answer.evidence,
        cost=AskCost(llm_calls=cost.llm_calls, prompt_tokens=cost.prompt_tokens,
                     completion_tokens=cost.completion_tokens, total_tokens=cost.total_tokens,
                     seconds=round(cost.seconds, 3)),
        model=answer.model, session=session, error=answer.error,
    )


def build_server(team: Any, *, name: str = "kgteam") -> Any:
    """An MCP server (``mcp.server.MCPServer``) over a built :class:`kgteam.api.Team`.

    Raises ImportError naming the extra when the SDK is not installed."""
    import uuid

    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError as McpToolError
        from mcp.types import CallToolResult, TextContent, ToolAnnotations
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc

    tools = team.runner.kg
    if tools is None:
        raise ValueError("this team has no KG tools to serve")
    kg_name = team.spec.kg_title
    server = MCPServer(name, log_level="WARNING", instructions=(
        f"Tools over the knowledge graph {kg_name!r}: find entities with search_entities, look around them "
        f"with neighbors and entity_schema, query with run_sparql (read-only), or let the team answer with ask."))
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)

    def result(data: BaseModel, text: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=data.model_dump(mode="json"))

    async def call(tool: str, coro: Any) -> Any:
        """The KG tool's answer, or an MCP tool error that says why (never a traceback)."""
        try:
            return await coro
        except KgteamError as exc:
            raise McpToolError(str(exc)) from None
        except Exception as exc:  # a backend fault: said in one line, logged, and the server goes on
            log.warning("mcp tool %s failed: %s: %s", tool, type(exc).__name__, exc)
            raise McpToolError(f"{tool} failed: {type(exc).__name__}: {exc}") from None

    async def known(iri: str) -> None:
        if not await call("entity check", tools.has_entity(iri)):
            raise McpToolError(f"no entity <{iri}> in KG {kg_name!r}: find one with search_entities")

    @server.tool(annotations=read_only, description=(
        "Find knowledge-graph entities by name or alias (typo tolerant, exact matches first). "
        "Returns their IRIs for the other tools."))
    async def search_entities(
        text: Annotated[str, Field(min_length=1, max_length=1000, description="a name or alias to look up")],
        k: K = 10,
    ) -> Annotated[CallToolResult, EntityHits]:
        found = EntityHits(query=text, hits=await call("search_entities", tools.search_entities(text, k)))
        return result(found, _text_of_hits(found))

    @server.tool(annotations=read_only, description=(
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
        await known(iri)
        triples = await call("neighbors", tools.neighbors(iri, predicates=predicates, direction=direction,
                                                          hops=hops, limit=limit))
        found = Neighborhood(iri=iri, triples=triples)
        return result(found, _text_of_triples(triples) or f"no triples around <{iri}> with these filters")

    @server.tool(annotations=read_only, description=(
        "The predicates going out of and into an entity, with counts and the types of their values."))
    async def entity_schema(iri: Iri) -> Annotated[CallToolResult, EntitySchema]:
        await known(iri)
        schema = await call("entity_schema", tools.entity_schema(iri))
        return result(schema, _text_of_schema(schema))

    @server.tool(annotations=read_only, description=(
        f"Run a read-only SPARQL query (SELECT/ASK/CONSTRUCT/DESCRIBE) on KG {kg_name!r}. Updates, LOAD and "
        f"SERVICE are refused; LIMIT is added or lowered; at most {tools.max_rows} rows, "
        f"{tools.max_result_bytes} bytes and {tools.default_timeout_s:g}s per query."))
    async def run_sparql(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the SPARQL query")],
        limit: Annotated[int | None, Field(ge=1, le=tools.max_rows, description=(
            f"row cap, at most {tools.max_rows} (the KG's cap)"))] = None,
        timeout_s: Annotated[float | None, Field(gt=0, le=tools.default_timeout_s, allow_inf_nan=False, description=(
            f"seconds, at most {tools.default_timeout_s:g} (the KG's per-query timeout)"))] = None,
    ) -> Annotated[CallToolResult, SparqlResult]:
        res = await call("run_sparql", tools.run_sparql(query, limit=limit, timeout_s=timeout_s))
        return result(res, _text_of_sparql(res))

    @server.tool(annotations=read_only, description=(
        "KG triples whose wording is closest in meaning to a statement or question (dense search over all "
        "facts; needs the KG's triple vectors)."))
    async def similar_triples(
        text: Annotated[str, Field(min_length=1, max_length=1000, description="a statement or question")],
        k: K = 10,
    ) -> Annotated[CallToolResult, SimilarFacts]:
        found = SimilarFacts(text=text, triples=await call("similar_triples", tools.similar_triples(text, k)))
        return result(found, "\n".join(f"{t.score:.3f} {t.readable()}" for t in found.triples) or "no triples")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False), description=(
        f"Ask the kgteam team {team.spec.name!r} a question in natural language; it answers from KG {kg_name!r} "
        f"with evidence (triples, queries), a confidence, why it stopped and what it cost."))
    async def ask(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="the question")],
        session: Annotated[str | None, Field(min_length=1, max_length=64, pattern=r"^[\w-]+$", description=(
            "a session id from an earlier answer, to ask a follow-up (a new session when empty)"))] = None,
    ) -> Annotated[CallToolResult, AskResult]:
        sid = session or uuid.uuid4().hex[:12]
        answer = await call("ask", team.aask(question, session=sid))
        res = ask_result(answer, sid)
        out = result(res, _text_of_answer(res))
        if answer.status == "error":  # the run failed (model unreachable ...): the client sees it as an error
            return CallToolResult(content=out.content, structured_content=out.structured_content, is_error=True)
        return out

    return server
