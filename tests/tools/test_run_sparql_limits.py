"""run_sparql's limits on the embedded store: the worker's memory cap and crash recovery,
cancellation, a free event loop, argument checks and the timeout a model may ask for."""

from __future__ import annotations

import asyncio
import time

import pytest

from kgteam.tools.backends.oxigraph_store import OxigraphStore
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.types import ToolError

E = "http://example.org/kg/e/"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def _doubling(steps: int) -> str:
    binds = " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(steps))
    return f'SELECT (STRLEN(?x{steps}) AS ?n) WHERE {{ BIND("ab" AS ?x0) {binds} }}'


@pytest.fixture
def small_tools(store_dir, label_index):
    store = OxigraphStore(store_dir, worker_memory_mb=200)
    tools = KGTools(store, label_index, default_timeout_s=2.0, max_rows=100)
    yield tools
    store.close()


async def test_a_memory_bomb_kills_only_the_worker_which_is_restarted(small_tools: KGTools, label_index) -> None:
    # a generous time limit: on loaded cores checking the query alone has taken over 2 s, and the
    # memory cap, not the clock, is what must stop it
    patient = KGTools(small_tools.store, label_index, default_timeout_s=20.0, max_rows=100)
    await patient.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
    first = next(iter(small_tools.store._sandbox._all))
    with pytest.raises(ToolError, match=r"crashed the query worker .*memory allocation.*restarted"):
        await patient.run_sparql(_doubling(32), timeout_s=20.0)  # ~8 GB by the end; the cap is 200 MB
    assert not first.alive()
    again = await small_tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
    assert again.boolean is True


async def test_cancelling_the_call_stops_the_worker(small_tools: KGTools, label_index) -> None:
    patient = KGTools(small_tools.store, label_index, default_timeout_s=30.0)
    await patient.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
    worker = next(iter(small_tools.store._sandbox._all))
    task = asyncio.create_task(patient.run_sparql(RUNAWAY))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 1.5
    while worker.alive() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not worker.alive()  # killed within ~_POLL_S of the cancellation, not at the 30 s timeout


async def test_the_event_loop_stays_free_while_a_query_runs(small_tools: KGTools) -> None:
    await small_tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    values = " ".join(str(i) for i in range(100))
    started = time.perf_counter()
    with pytest.raises(ToolError, match="timed out"):
        await small_tools.run_sparql(f"ASK {{ VALUES ?a {{ {values} }} VALUES ?b {{ {values} }} "
                                     f"VALUES ?c {{ {values} }} VALUES ?d {{ {values} }} FILTER(?a+?b+?c+?d < 0) }}",
                                     timeout_s=2.0)
    elapsed = time.perf_counter() - started
    done.set()
    await ticker
    # ticks kept coming while the 2 s query ran: a loop blocked by it would show one gap as long as the
    # whole query; a free loop's longest gap is the machine's scheduling noise (1.2 s seen under load 5)
    assert len(gaps) >= 10 and max(gaps) < 0.6 * elapsed


@pytest.mark.parametrize(
    "bad",
    [{"limit": float("inf")}, {"limit": float("nan")}, {"limit": "x"}, {"limit": 0}, {"limit": -1}, {"limit": True},
     {"timeout_s": "x"}, {"timeout_s": float("nan")}, {"timeout_s": float("inf")}, {"timeout_s": -1},
     {"timeout_s": 0}, {"query": 42}],
)
async def test_bad_arguments_are_clear_tool_errors(small_tools: KGTools, bad: dict) -> None:
    args = {"query": f"ASK {{ <{E}Alien> ?p ?o }}", **bad}
    with pytest.raises(ToolError) as err:
        await small_tools.run_sparql(**args)
    name = next(iter(bad))
    assert name in str(err.value)


async def test_a_model_cannot_ask_for_more_time_than_the_kg_allows(small_tools: KGTools) -> None:
    tool = small_tools.toolbox()["run_sparql"]
    props = tool.schema()["function"]["parameters"]["properties"]
    assert props["timeout_s"]["maximum"] == 2.0 and "at most 2" in props["timeout_s"]["description"]
    assert props["limit"]["maximum"] == 100
    await small_tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
    t0 = time.perf_counter()
    with pytest.raises(ToolError, match="timed out after 2s"):
        await tool(RUNAWAY, timeout_s=300)  # accepted, and cut to the KG's 2 s
    assert time.perf_counter() - t0 < 4


async def test_a_cheap_query_does_not_wait_behind_a_slow_one(store_dir, label_index) -> None:
    """Two workers: a query asked while another runs gets the second worker instead of queueing
    behind the runaway (which, with one worker, it would wait for until its 30 s timeout)."""
    store = OxigraphStore(store_dir, sandbox_workers=2)
    tools = KGTools(store, label_index, default_timeout_s=30.0, max_rows=100)
    try:
        await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
        slow = asyncio.create_task(tools.run_sparql(RUNAWAY))
        await asyncio.sleep(0.1)
        quick = await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
        assert quick.boolean is True
        assert not slow.done()  # the cheap answer came while the runaway still ran
        assert len(store._sandbox._all) == 2
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
    finally:
        store.close()


async def test_one_caller_at_a_time_reuses_one_worker(store_dir, label_index, monkeypatch) -> None:
    monkeypatch.setenv("KGTEAM_QUERY_WORKERS", "3")
    store = OxigraphStore(store_dir)
    tools = KGTools(store, label_index, default_timeout_s=10.0, max_rows=100)
    try:
        for _ in range(3):
            assert (await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")).boolean is True
        assert len(store._sandbox._all) == 1  # a second process starts only when queries overlap
    finally:
        store.close()


def test_a_bad_worker_count_is_a_clear_error(store_dir, monkeypatch) -> None:
    monkeypatch.setenv("KGTEAM_QUERY_WORKERS", "two")
    with pytest.raises(ToolError, match="KGTEAM_QUERY_WORKERS must be a whole number"):
        OxigraphStore(store_dir)


@pytest.mark.parametrize("sparql", ["SELECT * WHERE { ?s ?p ?o }", "CONSTRUCT WHERE { ?s ?p ?o }"])
def test_a_timed_out_query_keeps_no_result_object_alive(store_dir, sparql) -> None:
    """pyoxigraph's results may only be freed on the thread that made them. A timeout's traceback
    keeps the frame that read them, so the frame must let them go before the error leaves it;
    else the GC frees them later on some other thread (an 'unsendable' error)."""
    import pyoxigraph

    store = OxigraphStore(store_dir, read_only=True)
    try:
        with pytest.raises(ToolError, match="timed out") as info:
            store.query(sparql, timeout_s=0.0, max_rows=100)
        kept = []
        error: BaseException | None = info.value
        while error is not None:
            tb = error.__traceback__
            while tb is not None:
                kept += [v for v in tb.tb_frame.f_locals.values()
                         if isinstance(v, pyoxigraph.QuerySolutions | pyoxigraph.QuerySolution
                                       | pyoxigraph.QueryTriples | pyoxigraph.Triple)]
                tb = tb.tb_next
            error = error.__context__
        assert kept == []
    finally:
        store.close()
