"""Fetching a catalogue dataset into the kgteam home, each file checked against its sha256 pin.

A file is streamed into a temporary file beside its destination and renamed into place only once its
hash matches, so an interrupted or wrong download never leaves a half-written file under the real
name. A file already in place (an earlier ``get``, or one the user put there by hand because the
machine is offline) is verified and kept instead of downloaded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import httpx

from kgteam.eval.catalogue import CatalogueEntry, DatasetFile
from kgteam.eval.items import DatasetError
from kgteam.tools.loading.sources import sha256_file

CHUNK = 1 << 16
Outcome = Literal["downloaded", "verified"]
# (file, bytes so far, total or None): called as bytes arrive, for a progress bar
OnBytes = Callable[[DatasetFile, int, int | None], None]


class Unreachable(DatasetError):
    """A file's source did not answer (offline, refused, an HTTP error): the others may not either."""


def _by_hand(name: str, f: DatasetFile, dest: Path) -> str:
    return (f"to install it by hand, download {f.url} and put it at {dest} (sha256 {f.sha256}); "
            f"`kgteam datasets get {name}` then verifies and uses it")


def fetch_file(name: str, f: DatasetFile, root: Path, *, force: bool = False, client: httpx.Client,
               on_bytes: OnBytes | None = None) -> Outcome:
    """One file of dataset ``name`` into ``root``: verified in place, or downloaded and verified."""
    dest = root / f.path
    if dest.exists() and not force:
        actual = sha256_file(dest)
        if actual != f.sha256:
            raise DatasetError(f"{dest} is there but its sha256 is {actual}, not the pinned {f.sha256}: it is "
                               f"another version or a damaged copy. Remove it, or run `kgteam datasets get {name} "
                               f"--force` to download it again")
        return "verified"
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            try:
                with client.stream("GET", f.url) as response:
                    if response.status_code != 200:
                        raise Unreachable(f"cannot download {f.url}: HTTP {response.status_code}; "
                                           + _by_hand(name, f, dest))
                    total = int(response.headers["content-length"]) if "content-length" in response.headers else f.size
                    done = 0
                    for block in response.iter_bytes(CHUNK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if on_bytes:
                            on_bytes(f, done, total)
            except httpx.HTTPError as exc:  # offline, refused, DNS, timeout, connection cut
                raise Unreachable(f"cannot download {f.url} ({type(exc).__name__}: {exc or 'no detail'}); "
                                   + _by_hand(name, f, dest)) from None
        if digest.hexdigest() != f.sha256:
            raise DatasetError(f"the download of {f.url} has sha256 {digest.hexdigest()}, not the pinned "
                               f"{f.sha256}: the source changed or the transfer was damaged; nothing was written "
                               f"to {dest}")
        os.replace(tmp, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()  # gone already after the rename; otherwise a partial or wrong download
    return "downloaded"


def get_dataset(name: str, entry: CatalogueEntry, root: Path, *, force: bool = False,
                client: httpx.Client | None = None, on_bytes: OnBytes | None = None) -> list[tuple[DatasetFile, Outcome]]:
    """Every file of ``entry`` under ``root``; stops at the first failure (files before it are complete
    and verified, so a second ``get`` goes on where this one stopped). When a source cannot be
    reached, the error names every file that is not in place, so all of them can be fetched by hand
    (offline, the first failure used to name only the first of them)."""
    own = client is None
    client = client or httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0, connect=10.0))
    try:
        out = []
        for f in entry.files:
            try:
                out.append((f, fetch_file(name, f, root, force=force, client=client, on_bytes=on_bytes)))
            except Unreachable as exc:
                missing = [g for g in entry.files if g is f or not (root / g.path).is_file()]
                if len(missing) == 1:
                    raise
                listed = "; ".join(f"{g.url} -> {g.path}" for g in missing)
                raise Unreachable(f"{exc}. {len(missing)} of {len(entry.files)} files are not in place; to install "
                                  f"them by hand, download each into {root} (`kgteam datasets get {name}` then "
                                  f"verifies them against their sha256 pins): {listed}") from None
        return out
    finally:
        if own:
            client.close()


def local_state(entry: CatalogueEntry, root: Path) -> tuple[int, int]:
    """(files present, bytes present) under ``root``; present means the file exists (``get`` verifies)."""
    present = [root / f.path for f in entry.files if (root / f.path).is_file()]
    return len(present), sum(p.stat().st_size for p in present)
