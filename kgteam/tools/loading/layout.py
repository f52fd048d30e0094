"""Where KGs live on disk: ``<home>/kgs/<name>/{store,labels,manifest.json}``."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from kgteam.tools.loading.errors import LoadError

try:  # POSIX advisory locks serialise two loads of the same KG name
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

MANIFEST = "manifest.json"
STORE_DIR = "store"
LABELS_DIR = "labels"
VECTORS_DIR = "vectors"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
# '+' never occurs in a KG name, so these prefixes cannot collide with another KG's work dirs.
TMP_PREFIX = ".tmp+"
OLD_PREFIX = ".old+"
LOCK_PREFIX = ".lock+"


def kg_home() -> Path:
    """``$KGTEAM_HOME`` or ``~/.kgteam``: the folder holding ``kgs/``."""
    env = os.environ.get("KGTEAM_HOME")
    return Path(env).expanduser() if env else Path.home() / ".kgteam"


def kgs_dir(home: Path | None = None) -> Path:
    return Path(home if home is not None else kg_home()).expanduser() / "kgs"


def check_kg_name(name: str) -> str:
    """KG names become folder names: letters, digits, ``_ . -``, starting with a letter or digit."""
    if not _NAME_RE.match(name) or ".." in name:
        raise LoadError(
            f"invalid KG name {name!r}: use letters, digits, '_', '.', '-' (start with a letter or digit)"
        )
    return name


@contextlib.contextmanager
def name_lock(kgs: Path, name: str) -> Iterator[None]:
    """Holds an exclusive lock on KG ``name`` (a load, or a recovery) for the block."""
    kgs.mkdir(parents=True, exist_ok=True)
    with open(kgs / f"{LOCK_PREFIX}{name}", "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def work_dirs(kgs: Path, prefix: str, name: str) -> list[Path]:
    if not kgs.is_dir():
        return []
    return sorted(p for p in kgs.iterdir() if p.name.startswith(f"{prefix}{name}+"))


def recover(kgs: Path, name: str) -> None:
    """Cleans up after a load killed outright (SIGKILL, power loss); call while holding the lock.

    Leftover build folders are removed. If the process died between moving the old KG aside and
    moving the new one in, the old KG is moved back.
    """
    for tmp in work_dirs(kgs, TMP_PREFIX, name):
        shutil.rmtree(tmp, ignore_errors=True)
    final = kgs / name
    olds = work_dirs(kgs, OLD_PREFIX, name)
    if not final.exists() and olds:
        newest = max(olds, key=lambda p: p.stat().st_mtime)
        os.rename(newest, final)
        olds.remove(newest)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def swap_into_place(parent: Path, name: str, tmp: Path) -> Path:
    """Move the built folder ``tmp`` to ``parent/name`` (a KG or a corpus); the old one is kept
    aside until the new one is in, and put back if the move fails. Call while holding the lock."""
    final = parent / name
    if final.exists():
        old = parent / f"{OLD_PREFIX}{name}+{uuid.uuid4().hex[:12]}"
        os.rename(final, old)
        try:
            os.rename(tmp, final)
        except BaseException:
            os.rename(old, final)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, final)
    return final
