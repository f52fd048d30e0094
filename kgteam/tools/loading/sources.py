"""Opening input files: transparent decompression, byte progress, checksums."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.formats import compression_of

_CHUNK = 1 << 20


class OpenedSource:
    """A decompressed binary stream plus the raw file underneath, whose position drives progress."""

    def __init__(self, path: Path, raw: BinaryIO, stream: BinaryIO) -> None:
        self.path = path
        self.raw = raw
        self.stream = stream

    def bytes_read(self) -> int:
        """Position in the file on disk (compressed bytes for compressed files)."""
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return 0


@contextmanager
def open_source(path: Path) -> Iterator[OpenedSource]:
    """Opens ``path`` for binary reading; ``.gz``, ``.xz`` and ``.bz2`` are decompressed on the fly."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise LoadError(f"cannot open: {exc.strerror or exc}", file=path) from exc
    try:
        kind = compression_of(path)
        if kind == "gzip":
            stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb")
        elif kind == "xz":
            stream = lzma.LZMAFile(raw, mode="rb")  # noqa: SIM115 - closed with raw
        elif kind == "bzip2":
            stream = bz2.BZ2File(raw, mode="rb")
        else:
            stream = io.BufferedReader(raw, buffer_size=_CHUNK)  # type: ignore[arg-type]
        yield OpenedSource(path, raw, stream)
    finally:
        raw.close()


def first_line(path: Path, limit: int = 64 * 1024) -> str | None:
    """The first non-empty line (decoded leniently), used to sniff ``.txt`` formats."""
    with open_source(path) as src:
        try:
            head = src.stream.read(limit)
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
            raise LoadError(f"cannot decompress: {exc}", file=path) from exc
    for line in head.decode("utf-8", errors="replace").splitlines():
        if line.strip():
            return line.lstrip("\ufeff")
    return None


def sha256_file(path: Path) -> str:
    """Checksum of the file as stored (compressed bytes for compressed files)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_line_blocks(src: OpenedSource) -> Iterator[tuple[int, list[str]]]:
    """Yields ``(number of the first line, lines)`` per ~1 MiB block, line endings removed.

    Reading big blocks and splitting them in C is several times faster than ``readline`` on a
    decompressing stream; readers loop over a block's lines themselves. Bad UTF-8 is a
    LoadError naming its line.
    """
    first = 1
    rest = b""
    stream = src.stream
    try:
        while True:
            block = stream.read(_CHUNK)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n")
            if cut < 0:
                rest = block
                continue
            rest = block[cut + 1 :]
            lines = _decode_lines(src, block[:cut], first)
            yield first, lines
            first += len(lines)
        if rest:
            yield first, _decode_lines(src, rest, first)
    except (EOFError, lzma.LZMAError, zlib.error, OSError) as exc:
        raise LoadError(f"cannot read/decompress: {exc}", file=src.path, line=first) from exc


def read_lines(src: OpenedSource) -> Iterator[tuple[int, str]]:
    """Yields ``(line_number, text)`` with line endings removed."""
    for first, lines in read_line_blocks(src):
        yield from enumerate(lines, first)


def _decode_lines(src: OpenedSource, block: bytes, first: int) -> list[str]:
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first + block.count(b"\n", 0, exc.start)
        raise LoadError(f"not valid UTF-8 ({exc.reason})", file=src.path, line=line) from exc
    if first == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text.split("\n")
