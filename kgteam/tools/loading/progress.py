"""Progress of a load: a small event type, and a rich progress bar that consumes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Phase = Literal["read", "index", "embed", "finish"]


@dataclass(frozen=True)
class LoadProgress:
    phase: Phase
    source: str | None
    triples: int  # triples streamed so far (before de-duplication)
    bytes_done: int  # bytes of the input files read so far (on disk, i.e. compressed)
    bytes_total: int
    docs: int = 0  # label documents indexed (phase "embed": texts embedded) so far
    docs_total: int = 0


ProgressCallback = Callable[[LoadProgress], None]


# the triple index build's steps (kgteam.tools.vectors.stream), as the bar names them
_STEP_TITLES = {"training": "training the triple index", "indexing": "indexing triple vectors",
                "names": "reading names for the vectors", "facts": "sorting the facts met"}
_STEP_UNITS = {"training": "steps", "indexing": "triples", "names": "steps", "facts": "steps"}


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


class RichProgress:
    """Shows one bar over the bytes of all inputs, then one over label indexing, on stderr."""

    def __init__(self, title: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self._title = title
        self._read_task = None
        self._index_task = None
        self._finish_task = None
        self._embed_tasks: dict[str, object] = {}

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def __call__(self, event: LoadProgress) -> None:
        if event.phase == "read":
            if self._read_task is None:
                self._read_task = self._progress.add_task(
                    f"loading {self._title}", total=max(event.bytes_total, 1), detail=""
                )
            self._progress.update(
                self._read_task,
                completed=event.bytes_done,
                detail=f"{_mb(event.bytes_done)}/{_mb(event.bytes_total)} MB, {event.triples:,} triples",
            )
        elif event.phase == "finish":
            if self._read_task is not None:
                self._progress.update(self._read_task, completed=max(event.bytes_total, 1))
            if self._finish_task is None:  # no total: rich shows a pulsing bar and the time
                self._finish_task = self._progress.add_task(event.source or "finishing", total=None, detail="")
            else:
                self._progress.update(self._finish_task, description=event.source or "finishing")
        elif event.phase == "index":
            if self._finish_task is not None:
                self._progress.update(self._finish_task, total=1, completed=1)
            if self._read_task is not None:
                self._progress.update(self._read_task, completed=max(event.bytes_total, 1))
            if self._index_task is None:
                self._index_task = self._progress.add_task(
                    "indexing labels", total=max(event.docs_total, 1), detail=""
                )
            self._progress.update(
                self._index_task, completed=event.docs, detail=f"{event.docs:,}/{event.docs_total:,} labels"
            )
        elif event.phase == "embed":
            if self._finish_task is not None:
                self._progress.update(self._finish_task, total=1, completed=1)
            what = event.source or "texts"
            task = self._embed_tasks.get(what)
            if task is None:
                title = _STEP_TITLES.get(what, f"embedding {what}")
                task = self._embed_tasks[what] = self._progress.add_task(
                    title, total=max(event.docs_total, 1), detail=""
                )
            self._progress.update(
                task, completed=event.docs, total=max(event.docs_total, 1),  # type: ignore[arg-type]
                detail=f"{event.docs:,}/{event.docs_total:,} {_STEP_UNITS.get(what, what)}",
            )
