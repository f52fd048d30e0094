"""``kgteam tune``'s second reading process: it reads a share of the examples on a second core while
the first reads the rest (:class:`SecondReader`); run as ``python -m kgteam.eval.tune_worker``."""


from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from kgteam.eval.datasets import DatasetItem
from kgteam.eval.tune_cache import KGReadCache, TuneMemo
from kgteam.eval.tuning import Evidence, lexicon_evidence
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.tools.lexicon import Lexicon

# ------------------------------------------------------------------------ a second reading process

SPLIT_AT = 64  # examples from which a second process reads half of them (on a second core)


def shares(items: Sequence[DatasetItem]) -> tuple[list[int], list[int]]:
    """The examples in two shares of about one size, those likely about the same entity in one share.

    Each process pays for the first question about an entity (its schema, paths, answers), so
    examples about one entity belong together: split by turns, each process asked about nearly
    every entity, and GeoQuery's lexicon pass took 17 s in two processes instead of 14 s. The
    entity is guessed without the KG, as the question's rarest word that another question also
    uses ("nebraska", not "biggest"); questions with none are shared out like the rest. Which
    process reads an example never changes what is learned."""
    words = [set(re.findall(r"\w+", item.question.lower())) for item in items]
    used = Counter(w for ws in words for w in ws)
    groups: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        shared_words = [w for w in ws if used[w] > 1]
        groups.setdefault(min(shared_words, key=lambda w: (used[w], w)) if shared_words else f"#{i}", []).append(i)
    mine: list[int] = []
    theirs: list[int] = []
    for _, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        (mine if len(mine) <= len(theirs) else theirs).extend(members)
    return sorted(mine), sorted(theirs)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class SecondReader:
    """A second process that reads a share of the examples (:func:`shares`) while this one reads the rest.

    Reading examples is Python: one process keeps one core busy, whatever it awaits. On GeoQuery's
    526 examples, on a shared two-core machine, both passes took about 34 s in one process and
    25-29 s in two (each pays its own cache misses, see :func:`shares`). The second process opens
    the same KG read-only, keeps its own caches and reads the same examples in both passes, so its
    bank pass reuses its first pass's readings. What each reads is plain data (:class:`Evidence`,
    ``Example``) put back in the examples' order, so the result is what one process would have
    learned. A second process that cannot start, fails or dies leaves its share to this one: the
    same result, slower. A plain subprocess (``python -m kgteam.eval.tune_worker``) talking over two pipes, as the
    query workers do: multiprocessing's spawn would re-import the parent's ``__main__``.
    """

    def __init__(self, kg_name: str, home: Path | None, items: Sequence[DatasetItem], lexicon: Lexicon) -> None:
        self.mine, self.theirs = shares(items)
        self._count = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process, closed in close()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kgteam.eval.tune_worker", str(to_child_r), str(from_child_w),
                 str(self._count.fileno())],
                pass_fds=(to_child_r, from_child_w, self._count.fileno()), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            for fd in (to_child_w, from_child_r):
                os.close(fd)
            self._count.close()
            raise
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._tx = Connection(to_child_w, readable=False)
        self._rx = Connection(from_child_r, writable=False)
        self.failed = False
        self._send(("open", kg_name, str(home) if home is not None else None, [items[i] for i in self.theirs],
                    lexicon))

    @classmethod
    def start(cls, kg_name: str, home: Path | None, items: Sequence[DatasetItem],
              lexicon: Lexicon) -> SecondReader | None:
        """A second reader when there are enough examples and a second core, else None."""
        if len(items) < SPLIT_AT or _cores() < 2:
            return None
        try:
            return cls(kg_name, home, items, lexicon)
        except OSError:
            return None

    def read(self, request: tuple[Any, ...], items: Sequence[DatasetItem],
             here: Callable[[list[DatasetItem]], list[Any]]) -> list[Any]:
        """``request`` answered for the second process's share while ``here`` reads this one's (and the
        other share too, should the second process fail), in the items' order."""
        self._send(request)
        mine = here([items[i] for i in self.mine])
        theirs = self._receive()
        if theirs is None or len(theirs) != len(self.theirs):
            theirs = here([items[i] for i in self.theirs])
        out: list[Any] = [None] * len(items)
        for i, got in [*zip(self.mine, mine, strict=True), *zip(self.theirs, theirs, strict=True)]:
            out[i] = got
        return out

    def done(self) -> int:
        """How many examples of the current request the second process has read."""
        try:
            return int.from_bytes(os.pread(self._count.fileno(), 8, 0) or b"\0", "little")
        except OSError:  # pragma: no cover
            return 0

    def _send(self, message: tuple[Any, ...]) -> None:
        if self.failed:
            return
        try:
            self._tx.send(message)
        except (OSError, ValueError):
            self.failed = True

    def _receive(self) -> Any:
        if self.failed:
            return None
        try:
            kind, payload = self._rx.recv()
        except (EOFError, OSError):
            kind, payload = "error", "the second reader died"
        if kind != "ok":
            self.failed = True
            return None
        return payload

    def close(self) -> None:
        """Stop the process (it ends when its pipe closes; killed, by the PID started here, if not)."""
        for conn in (self._tx, self._rx):
            with contextlib.suppress(Exception):
                conn.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self._count.close()


class _Half:
    """The second process's side: the KG, caches and examples it reads (see :class:`SecondReader`)."""

    def __init__(self, kg_name: str, home: str | None, items: list[DatasetItem], lexicon: Lexicon,
                 count_fd: int) -> None:
        from kgteam.tools.kg import open_kg
        from kgteam.tools.kg_tools import KGTools

        self.kg = open_kg(kg_name, home=Path(home) if home is not None else None)
        self.tools = KGTools.from_kg(self.kg, lexicon=lexicon, reader=None)  # what the first pass reads with
        self.items, self.lexicon, self.count_fd = items, lexicon, count_fd
        self.memo, self.cache = TuneMemo(), KGReadCache()

    def _progress(self, done: int, _total: int) -> None:
        os.pwrite(self.count_fd, done.to_bytes(8, "little"), 0)

    def lexicon_evidence(self, options: dict[str, Any]) -> list[Evidence]:
        from kgteam.roles.semantic.similarity import embedder_similarity

        self._progress(0, 0)
        layer = SemanticLayer(self.cache.toolbox(self.tools.toolbox()), embedder_similarity(self.tools.embedder))
        return asyncio.run(lexicon_evidence(layer, self.items, progress=self._progress, memo=self.memo, **options))

    def record(self, lexicon: Lexicon, options: dict[str, Any]) -> list[Any]:
        from kgteam.eval.teaching import record_examples
        from kgteam.roles.semantic.similarity import embedder_similarity
        from kgteam.tools.kg_tools import KGTools

        self._progress(0, 0)
        self.memo.lexicon_changed(self.lexicon, lexicon)
        tools = KGTools.from_kg(self.kg, lexicon=lexicon, reader=None, embedder=self.tools.embedder)
        layer = SemanticLayer(self.cache.toolbox(tools.toolbox()), embedder_similarity(self.tools.embedder),
                              reader=None)
        return asyncio.run(record_examples(layer, self.items, progress=self._progress, memo=self.memo, **options))


def _serve(rx: Connection, tx: Connection, count_fd: int) -> None:
    """The second reader's loop: open, then answer each request, until the pipe closes."""
    half: _Half | None = None
    try:
        while True:
            try:
                message = rx.recv()
            except (EOFError, OSError):
                return
            try:
                if message[0] == "open":
                    half = _Half(*message[1:], count_fd=count_fd)
                elif half is None:
                    raise RuntimeError("not opened")
                elif message[0] == "lexicon":
                    tx.send(("ok", half.lexicon_evidence(message[1])))
                elif message[0] == "bank":
                    tx.send(("ok", half.record(message[1], message[2])))
            except Exception as exc:  # noqa: BLE001 - the first process reads this share itself
                with contextlib.suppress(Exception):
                    tx.send(("error", f"{type(exc).__name__}: {exc}"))
                return
    finally:
        if half is not None:
            half.tools.close()


if __name__ == "__main__":  # the second reader (see SecondReader), started as `python -m kgteam.eval.tune_worker`
    _serve(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False), int(sys.argv[3]))
