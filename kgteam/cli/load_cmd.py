"""``kgteam load`` (files -> a named KG, or the bundled demo) and ``kgteam kgs`` (list KGs)."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kgteam.cli.errors import fail
from kgteam.tools.embedding.base import EmbeddingError
from kgteam.tools.loading import FORMATS, LoadError, build_kg
from kgteam.tools.loading.manifest import KGManifest
from kgteam.tools.vectors.policy import VECTORS_MODES
from kgteam.tools.vectors.stream import DEFAULT_MEMORY_MB


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM behaves like Ctrl-C during a load, so the half-built KG is removed on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)



def _summary(m: KGManifest, seconds: float) -> str:
    c = m.counts
    rate = c.facts / seconds if seconds > 0 else 0.0
    return (
        f"KG '{m.name}' ready at {m.path}: {c.facts:,} triples (+{c.label_triples:,} label triples), "
        f"{c.entities:,} entities, {c.relations:,} relations, {m.disk_bytes / 1e6:,.1f} MB "
        f"in {seconds:,.1f}s ({rate:,.0f} triples/s)"
    )


def load(
    sources: Annotated[list[Path] | None, typer.Argument(help="input files (.nt .ttl .nq .trig .rdf, MetaQA kb.txt, .tsv; "
                                                             ".gz/.xz/.bz2 ok)", show_default=False)] = None,
    name: Annotated[str | None, typer.Option("--name", "-n", help="KG name (folder under <home>/kgs); required "
                                                                  "with input files")] = None,
    format: Annotated[str | None, typer.Option("--format", "-f", help=f"force the input format: {', '.join(FORMATS)}")]
    = None,
    base_iri: Annotated[str | None, typer.Option("--base-iri", help="prefix of IRIs minted for MetaQA/TSV names "
                                                                     "(default: http://example.org/<name>/; "
                                                                     "MetaQA: http://example.org/metaqa/)")] = None,
    labels: Annotated[Path | None, typer.Option("--labels", help="id<TAB>label file naming the entity ids of "
                                                                 "TSV input (e.g. FB15k-237 entity2text.txt)")] = None,
    relation_labels: Annotated[Path | None, typer.Option("--relation-labels", help="id<TAB>label file naming "
                                                                                   "relation ids")] = None,
    label_predicates: Annotated[list[str] | None, typer.Option(
        "--label-predicate", help="IRI of a predicate whose literals name things (beyond rdfs:label, "
                                  "skos:prefLabel, schema:name, foaf:name, dcterms:title; preferred over them); "
                                  "repeatable, remembered in the KG's manifest")] = None,
    lang: Annotated[str | None, typer.Option("--lang", help="label language shown first, e.g. de (default: "
                                                            "untagged and English names, then any); remembered")]
    = None,
    demo: Annotated[bool, typer.Option("--demo", help="install the bundled MetaQA movie KB as KG 'metaqa'")] = False,
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="skip the vector index (relation and triple "
                                                              "embeddings), same as --vectors none; add it later "
                                                              "with `kgteam embed NAME`")]
    = False,
    vectors: Annotated[str, typer.Option("--vectors", help="which vectors to build: auto (relation vectors; the "
                                                           "triple index only up to 250,000 facts), triples "
                                                           "(both), relations, none. `kgteam index NAME` adds "
                                                           "the triple index later")] = "auto",
    memory_mb: Annotated[int, typer.Option("--memory-mb", min=256, help="memory budget of the triple index "
                                                                         "build (chunk sizes)")] = DEFAULT_MEMORY_MB,
) -> None:
    """Build (or rebuild) a named KG: Oxigraph store + label index + vector index. The previous KG stays until it succeeds."""
    if demo:
        if sources:
            raise fail("--demo takes no input files")
        from kgteam.tools.kg import DEMO_KG_NAME, demo_kb_path

        sources, name, format = [demo_kb_path()], name or DEMO_KG_NAME, "metaqa"
    if not sources:
        raise fail("give input files (or --demo); see `kgteam load --help`", 2)
    if not name:
        raise fail("--name is required (the KG is stored as <home>/kgs/<name>)", 2)
    if vectors not in VECTORS_MODES:
        raise fail(f"--vectors must be one of {', '.join(VECTORS_MODES)}, not {vectors!r}", 2)
    if no_embed and vectors not in ("auto", "none"):
        raise fail(f"--no-embed builds no vectors; it cannot be combined with --vectors {vectors}", 2)
    mode = "none" if no_embed else vectors
    started = time.perf_counter()
    try:
        with _terminate_as_interrupt():
            manifest = build_kg(
                sources,
                name,
                home=home,
                format=format,
                base_iri=base_iri,
                progress=not quiet,
                entity_labels=labels,
                relation_labels=relation_labels,
                embed=mode != "none",
                label_predicates=label_predicates or (),
                lang=lang,
                vectors=mode,  # type: ignore[arg-type]
                memory_mb=memory_mb,
            )
    except (LoadError, EmbeddingError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted; KG '{name}' was left as it was", 130) from None
    except OSError as exc:
        raise fail(f"load failed: {exc}") from None
    typer.echo(_summary(manifest, time.perf_counter() - started))
    if manifest.vectors is None and mode != "none":
        typer.echo("no vector index: the embedded embedder (wordllama) is not installed; "
                   "similar_triples is off and relation search is lexical only")
    elif manifest.vectors is not None and not manifest.vectors.triples and mode == "auto":
        typer.echo(f"relation vectors only: no triple index for {manifest.counts.facts:,} facts (similar_triples "
                   f"is off; PG&AKV and R3 use it). Add it with `kgteam index {manifest.name}`")


def embed(
    name: Annotated[str, typer.Argument(help="the KG to embed (a name from `kgteam kgs`)")],
    provider: Annotated[str, typer.Option("--provider", help="wordllama (embedded, default) or openai (any "
                                                             "OpenAI-compatible /v1/embeddings server)")]
    = "wordllama",
    base_url: Annotated[str | None, typer.Option("--base-url", help="openai: e.g. http://127.0.0.1:8080/v1")] = None,
    model: Annotated[str | None, typer.Option("--model", help="openai: the embedding model name")] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", help="openai: env variable holding the key")]
    = None,
    relations_only: Annotated[bool, typer.Option("--relations-only", help="embed relation labels only, not the "
                                                                          "triples")] = False,
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    memory_mb: Annotated[int, typer.Option("--memory-mb", min=256, help="memory budget of the triple index "
                                                                         "build (chunk sizes)")] = DEFAULT_MEMORY_MB,
) -> None:
    """Add (or rebuild) a KG's vector index: relation labels and triples as text, for similar_triples
    and dense relation search. Teams must use the same embedder (kg.embedder)."""
    from kgteam.config.schema import EmbedderSpec
    from kgteam.tools.embedding import build_embedder
    from kgteam.tools.vectors.attach import add_vectors

    started = time.perf_counter()
    try:
        spec = EmbedderSpec(provider=provider, base_url=base_url, model=model,  # type: ignore[arg-type]
                            api_key_env=api_key_env)
    except ValueError as exc:
        raise fail(f"embedder: {exc}", 2) from None
    try:
        embedder = build_embedder(spec)
        if embedder is None:
            raise fail("--provider none builds no vectors", 2)
        with _terminate_as_interrupt():
            manifest = add_vectors(name, embedder, home=home, triples=not relations_only, progress=not quiet,
                                   memory_mb=memory_mb)
    except (LoadError, EmbeddingError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted; the vectors of KG '{name}' were left as they were", 130) from None
    v = manifest.vectors
    assert v is not None
    typer.echo(f"KG '{name}': {v.relations:,} relations ({v.relation_rows:,} texts) and {v.triples:,} triples "
               f"embedded with {v.embedder} ({v.dim} dims, {v.triples_kind} search) "
               f"in {time.perf_counter() - started:,.1f}s")


def index(
    name: Annotated[str, typer.Argument(help="the KG to index (a name from `kgteam kgs`)")],
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    memory_mb: Annotated[int, typer.Option("--memory-mb", min=256, help="memory budget of the build (chunk "
                                                                         "sizes)")] = DEFAULT_MEMORY_MB,
) -> None:
    """Add (or rebuild) a KG's triple vector index (with its relation vectors) with the embedded embedder,
    for teams that call similar_triples (PG&AKV, R3). Streams in bounded memory; `kgteam embed` picks
    another embedder."""
    embed(name, home=home, quiet=quiet, memory_mb=memory_mb)


def _vectors_cell(m: KGManifest) -> str:
    v = m.vectors
    if v is None:
        return "none"
    return f"relations + {v.triples:,} triples ({v.triples_kind})" if v.triples else "relations"


def kgs(
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the manifests as JSON")] = False,
) -> None:
    """List the KGs that are loaded, with their counts and sources."""
    from kgteam.tools.kg import list_kgs
    from kgteam.tools.loading import kgs_dir

    found = list_kgs(home)
    if as_json:
        typer.echo(json.dumps([m.model_dump(mode="json") | {"path": str(m.path)} for m in found], indent=2))
        return
    if not found:
        typer.echo(f"no KGs in {kgs_dir(home)}; create one with `kgteam load FILE... --name NAME` "
                   "or `kgteam load --demo`")
        return
    table = Table(title=f"KGs in {kgs_dir(home)}")
    for column in ("name", "triples", "entities", "relations", "vectors", "format", "size", "created", "sources"):
        table.add_column(column, justify="right" if column in {"triples", "entities", "relations", "size"} else "left")
    for m in found:
        c = m.counts
        table.add_row(m.name, f"{c.facts:,}", f"{c.entities:,}", f"{c.relations:,}", _vectors_cell(m), m.format,
                      f"{m.disk_bytes / 1e6:,.1f} MB", m.created_at,
                      m.endpoint.url if m.endpoint else ", ".join(Path(s.path).name for s in m.sources))
    Console(highlight=False, width=200).print(table)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to the ``kgteam`` app."""
    app.command("load")(load)
    app.command("kgs")(kgs)
    app.command("embed")(embed)
    app.command("index")(index)
