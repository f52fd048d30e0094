"""A KG served by a real ``oxigraph serve-read-only``, registered with ``kgteam kg connect``: the
atelier KG is exported with ``kgteam kg export``, loaded into the server's store with ``oxigraph
load``, connected, and then answers through ``--kg NAME`` and ``Team.default(kg=NAME)`` exactly as
the embedded KG does. Bad endpoints fail in one line and leave no folder behind."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.tools.kg import open_kg
from kgteam.tools.loading.manifest import KGManifest

pytestmark = pytest.mark.integration
runner = CliRunner()
QUESTION, ANSWER = "In which city does Stonecrop Books have its main office?", "Velmora"


@pytest.fixture(scope="module")
def exported(atelier_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "atelier.nt"
    result = runner.invoke(app, ["kg", "export", "atelier", "--out", str(out), "--home", str(atelier_home)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def server(exported: Path, tmp_path_factory: pytest.TempPathFactory):
    from servers import oxigraph_cli, oxigraph_load, start_oxigraph

    if oxigraph_cli() is None:
        pytest.skip("the oxigraph CLI is not installed (pip install oxigraph)")
    location = tmp_path_factory.mktemp("atelier-server") / "store"
    oxigraph_load(location, [exported])
    srv = start_oxigraph(location, query_timeout_s=10)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def home(server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kgteam home where the served atelier KG is registered as ``served``."""
    home = tmp_path_factory.mktemp("endpoint_home")
    result = runner.invoke(app, ["kg", "connect", "served", server.url, "--home", str(home), "--page-size", "16"])
    assert result.exit_code == 0, result.output
    return home


def test_export_writes_every_triple_of_the_default_graph(exported: Path, atelier_home: Path):
    import pyoxigraph as ox

    manifest = KGManifest.read(atelier_home / "kgs" / "atelier")
    triples = list(ox.parse(path=str(exported), format=ox.RdfFormat.N_TRIPLES))
    assert len(triples) == len(set(triples)) == manifest.counts.triples
    assert not list(exported.parent.glob(".*.tmp"))  # written aside, then renamed into place


def test_connect_registers_labels_only_streamed_in_pages(home: Path, server, atelier_home: Path):
    folder = home / "kgs" / "served"
    manifest = KGManifest.read(folder)
    assert manifest.endpoint is not None and manifest.endpoint.url == server.url
    assert sorted(p.name for p in folder.iterdir()) == ["labels", "manifest.json"]  # no copy of the store
    embedded = KGManifest.read(atelier_home / "kgs" / "atelier")
    assert manifest.counts.triples == embedded.counts.triples
    assert (manifest.counts.entities, manifest.counts.relations) == (embedded.counts.entities,
                                                                   embedded.counts.relations)
    with open_kg("served", home=home) as kg:  # page size 16 < the label count: several pages were read
        assert manifest.counts.label_triples > 16
        assert kg.labels.search("Stonecrop Books", k=1)[0].iri == "http://example.org/atelier/Stonecrop"
        assert kg.labels.search("trained under", k=1, kind="relation")[0].iri.endswith("/apprenticeOf")
        assert kg.store.name == "sparql-endpoint"


def test_ask_with_kg_name_answers_from_the_server_as_embedded_does(home: Path, atelier_home: Path, tmp_path):
    answers = {}
    for name, where in (("served", home), ("atelier", atelier_home)):
        result = runner.invoke(app, ["ask", QUESTION, "--kg", name, "--model", "none", "--json", "--home", str(where),
                                     "--db", str(tmp_path / f"{name}.sqlite")])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        answers[name] = ([v["iri"] for v in data["values"]], data["grounded"])
    assert answers["served"] == answers["atelier"] == (["http://example.org/atelier/Velmora"], True)


def test_kgteam_sparql_runs_on_the_server_with_names_from_the_label_index(home: Path):
    query = "SELECT ?city WHERE { <http://example.org/atelier/Stonecrop> <http://example.org/atelier/headquarteredIn> ?city }"
    result = runner.invoke(app, ["sparql", "served", query, "--json", "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert "http://example.org/atelier/Velmora" in result.stdout and ANSWER in result.stdout


def test_python_api_team_default_opens_the_connected_kg(home: Path):
    from kgteam.api import Team

    with Team.default(kg="served", model="none", home=home) as team:
        answer = team.ask(QUESTION)
    assert [v.label for v in answer.values] == [ANSWER] and answer.grounded


def test_embed_builds_vectors_for_an_endpoint_kg_from_its_triples(server, tmp_path):
    home = tmp_path / "home"
    assert runner.invoke(app, ["kg", "connect", "vec", server.url, "--home", str(home), "-q"]).exit_code == 0
    result = runner.invoke(app, ["embed", "vec", "--home", str(home), "--relations-only", "-q"])
    assert result.exit_code == 0, result.output
    manifest = KGManifest.read(home / "kgs" / "vec")
    assert manifest.vectors is not None and manifest.vectors.relations > 0 and manifest.endpoint is not None
    assert sorted(p.name for p in (home / "kgs").iterdir() if not p.name.startswith(".lock")) == ["vec"]
    with open_kg("vec", home=home) as kg:
        assert kg.vectors is not None


def test_a_team_file_endpoint_kg_takes_the_connected_kgs_vectors(server, tmp_path):
    import contextlib

    from kgteam.config.schema import KGSpec
    from kgteam.team_builder import TeamBuildError, open_kg_tools

    home = tmp_path / "home"
    assert runner.invoke(app, ["kg", "connect", "v", server.url, "--home", str(home), "-q"]).exit_code == 0
    folder = home / "kgs" / "v"
    spec = {"backend": "sparql", "endpoint": server.url, "labels": {"path": str(folder / "labels")}}
    with contextlib.ExitStack() as stack, pytest.raises(TeamBuildError, match="no vector index"):
        open_kg_tools(KGSpec(**spec, vectors=str(folder)), stack)
    assert runner.invoke(app, ["embed", "v", "--home", str(home), "--relations-only", "-q"]).exit_code == 0
    with contextlib.ExitStack() as stack:
        tools = open_kg_tools(KGSpec(**spec, vectors=str(folder / "vectors")), stack)
        assert tools.vectors is not None and tools.vectors.info.relations > 0


def test_eval_with_kg_name_grades_against_the_server(home: Path, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": QUESTION, "answers": [ANSWER]}) + "\n")
    out = tmp_path / "run.jsonl"
    result = runner.invoke(app, ["eval", str(questions), "--kg", "served", "--model", "none", "--out", str(out),
                                 "--home", str(home)])
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in out.read_text().splitlines() if '"q1"' in line]
    assert record["grading"]["grade"] == "accurate" and record["grading"]["hits1"], record
    assert record["groundedness"]["existing"] == 1  # the cited triple was looked up on the server


def test_kg_add_and_export_refuse_an_endpoint_kg(home: Path, tmp_path):
    reviewed = tmp_path / "r.jsonl"
    reviewed.write_text("{}\n")
    for args in (["kg", "add", "served", str(reviewed)], ["kg", "export", "served", "--out", str(tmp_path / "x.nt")]):
        result = runner.invoke(app, [*args, "--home", str(home)])
        assert result.exit_code == 1 and "is a SPARQL endpoint" in result.output, result.output
    assert not (home / "kgs" / "served" / "store").exists() and not (tmp_path / "x.nt").exists()


def test_connect_never_replaces_a_loaded_kg_unless_asked(server, atelier_home: Path):
    before = sorted(p.name for p in (atelier_home / "kgs").iterdir())
    result = runner.invoke(app, ["kg", "connect", "atelier", server.url, "--home", str(atelier_home), "-q"])
    assert result.exit_code == 1 and "pass --replace" in result.output, result.output
    assert sorted(p.name for p in (atelier_home / "kgs").iterdir()) == before
    assert KGManifest.read(atelier_home / "kgs" / "atelier").endpoint is None


def test_connect_again_refreshes_an_endpoint_kg(server, tmp_path):
    home = tmp_path / "home"
    for _ in range(2):
        assert runner.invoke(app, ["kg", "connect", "again", server.url, "--home", str(home), "-q"]).exit_code == 0
    assert [p.name for p in (home / "kgs").iterdir() if not p.name.startswith(".lock")] == ["again"]


def _refused(home: Path, url: str, *extra: str) -> str:
    result = runner.invoke(app, ["kg", "connect", "bad", url, "--home", str(home), "-q", *extra])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and result.output.startswith("error: "), result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert [p.name for p in (home / "kgs").iterdir() if not p.name.startswith(".lock")] == []  # nothing left
    return result.output


def test_unreachable_endpoint_is_one_line_and_leaves_nothing(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert "unreachable" in _refused(tmp_path, f"http://127.0.0.1:{port}/query")


def test_a_url_that_is_not_sparql_is_refused(server, tmp_path):
    out = _refused(tmp_path, f"http://127.0.0.1:{server.http_port}/no-such-path")
    assert "not usable as a SPARQL endpoint" in out


def test_a_server_that_never_answers_times_out(tmp_path):
    with socket.socket() as s:  # accepts connections (the kernel's backlog) but never replies
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        out = _refused(tmp_path, f"http://127.0.0.1:{s.getsockname()[1]}/query", "--timeout", "1")
    assert "timed out" in out
