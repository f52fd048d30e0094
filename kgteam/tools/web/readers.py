"""Files → ``SourceDoc`` s (title, url, text) for a corpus: plain text, Markdown, HTML, JSONL, CSV.

HTML keeps only the text a reader sees (scripts, styles and other non-text elements dropped;
block elements become paragraph breaks). Every problem names the file and, for JSONL and CSV, the
line, so a bad input is fixed at its source; the corpus build stops before anything is written.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from kgteam.tools.web.errors import CorpusError

FORMATS = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html",
           ".htm": "html", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


@dataclass(frozen=True)
class SourceDoc:
    doc_id: str  # unique within the corpus (made unique by the builder)
    title: str | None
    url: str | None
    text: str


@dataclass(frozen=True)
class CsvColumns:
    """Which CSV columns hold the text, title, url and id (default: ``text``, ``title``, ``url``, ``id``)."""

    text: str = "text"
    title: str | None = None
    url: str | None = None
    id: str | None = None


def detect_format(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise CorpusError(f"{path}: unknown file type {path.suffix or '(no suffix)'!r}; corpus files end in {known}")
    return fmt


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a folder; give the files inside it") from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read it: {exc.strerror or exc}") from None


# ---------------------------------------------------------------- Markdown

_MD_FENCE = re.compile(r"^\s*(```|~~~).*$", re.M)
_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", re.M)  # one line: the blank line after stays
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")
_MD_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+", re.M)
_MD_NUMBERED = re.compile(r"^[ \t]*\d+[.)][ \t]")
_MD_QUOTE = re.compile(r"^\s*>\s?", re.M)


def _heading_sentence(m: re.Match[str]) -> str:
    """A heading as a sentence of its own: without a full stop, a chunk or a sentence reader would
    run it into the text below it ("Lyon Lyon was founded ...")."""
    words = m.group(1).strip()
    if not words or words[-1] in ".!?:;":
        return words
    return f"{words}."


def markdown_text(source: str) -> tuple[str | None, str]:
    """(the first heading, the text without Markdown syntax); each heading ends as a sentence."""
    heading = _MD_HEADING.search(source)
    text = _MD_FENCE.sub("", source)
    text = _MD_HEADING.sub(_heading_sentence, text)
    text = _MD_IMAGE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_EMPHASIS.sub(r"\2", text)
    text = _MD_LIST.sub("", _unwrap_numbers(text))
    text = _MD_QUOTE.sub("", text)
    return (heading.group(1).strip() if heading else None), text


def _unwrap_numbers(text: str) -> str:
    """A line that starts with a number and a full stop inside a paragraph ("... first lit in\n1856.
    Its keeper ...") continues that paragraph: a numbered list starts after a blank line or a list
    item, so the number is joined to the line before instead of being read as a list marker."""
    out: list[str] = []
    for line in text.split("\n"):
        if out and _MD_NUMBERED.match(line) and out[-1].strip() and not _MD_LIST.match(out[-1]):
            out[-1] = f"{out[-1].rstrip()} {line.lstrip()}"
        else:
            out.append(line)
    return "\n".join(out)


# ---------------------------------------------------------------- HTML

_SKIP = {"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head", "button",
         "select", "textarea"}
_BLOCK = {"p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "li", "ul", "ol", "dl",
          "dt", "dd", "table", "tr", "td", "th", "blockquote", "pre", "figure", "figcaption", "br", "hr",
          "h1", "h2", "h3", "h4", "h5", "h6", "form", "details", "summary", "address"}
_VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: str | None = None
        self.h1: str | None = None
        self.canonical: str | None = None
        self._skip: list[str] = []
        self._in_title = False
        self._in_h1 = False
        self._title_parts: list[str] = []
        self._h1_parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "link":
            a = dict(attrs)
            if (a.get("rel") or "").lower() == "canonical" and a.get("href"):
                self.canonical = a["href"]
        if tag == "title":
            self._in_title = True
        if tag in _SKIP and tag not in _VOID:
            self._skip.append(tag)
        if tag == "h1":
            self._in_h1 = True
        if tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag == "h1":
            self._in_h1 = False
        if self._skip and tag == self._skip[-1]:
            self._skip.pop()
        elif tag in self._skip:  # badly nested: close up to it
            while self._skip and self._skip.pop() != tag:
                pass
        if tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title_parts.append(data)
            return
        if self._skip:
            return
        if self._in_h1:
            self._h1_parts.append(data)
        self.parts.append(data)

    def close(self) -> None:
        super().close()
        self.title = " ".join("".join(self._title_parts).split()) or None
        self.h1 = " ".join("".join(self._h1_parts).split()) or None


def html_text(source: str) -> tuple[str | None, str | None, str]:
    """(title: <title> or the first <h1>, canonical URL, the visible text with paragraph breaks)."""
    parser = _TextExtractor()
    parser.feed(source)
    parser.close()
    paragraphs = (" ".join(p.split()) for p in re.split(r"\n\s*\n", "".join(parser.parts)))
    return parser.title or parser.h1, parser.canonical, "\n\n".join(p for p in paragraphs if p)


# ---------------------------------------------------------------- JSONL and CSV


def _field(obj: dict, key: str, where: str, *, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise CorpusError(f"{where}: '{key}' is missing or empty")
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and key == "id":
        return str(value)
    if not isinstance(value, str):
        raise CorpusError(f"{where}: '{key}' must be a string, not {type(value).__name__}")
    return value.strip()


def _jsonl_docs(path: Path) -> Iterator[SourceDoc]:
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise CorpusError(f"{where}: each line must be a JSON object with 'text' (and 'title', 'url', 'id')")
        text = _field(obj, "text", where, required=True)
        assert text is not None
        title, url = _field(obj, "title", where), _field(obj, "url", where)
        yield SourceDoc(_field(obj, "id", where) or url or f"{path.name}:{n}", title, url, text)


def _csv_docs(path: Path, columns: CsvColumns) -> Iterator[SourceDoc]:
    text = _read_text(path)
    reader = csv.DictReader(text.splitlines(keepends=True))
    header = reader.fieldnames or []
    by_lower = {h.strip().lower(): h for h in header}

    def column(name: str | None, default: str, option: str, required: bool = False) -> str | None:
        wanted = name or default
        found = by_lower.get(wanted.strip().lower())
        if found is None and (name or required):
            raise CorpusError(f"{path}: no column {wanted!r} ({option}); the columns are {', '.join(header) or '(none)'}")
        return found

    text_col = column(columns.text if columns.text != "text" else None, "text", "--text-column", required=True)
    title_col = column(columns.title, "title", "--title-column")
    url_col = column(columns.url, "url", "--url-column")
    id_col = column(columns.id, "id", "--id-column")
    assert text_col is not None
    try:
        for row in reader:
            line = reader.line_num
            body = (row.get(text_col) or "").strip()
            if not body:
                continue  # a row without text has nothing to index
            title = (row.get(title_col) or "").strip() or None if title_col else None
            url = (row.get(url_col) or "").strip() or None if url_col else None
            ident = (row.get(id_col) or "").strip() or None if id_col else None
            yield SourceDoc(ident or url or f"{path.name}:{line}", title, url, body)
    except csv.Error as exc:
        raise CorpusError(f"{path}:{reader.line_num}: bad CSV: {exc}") from None


def read_documents(path: Path, *, csv_columns: CsvColumns | None = None) -> Iterator[SourceDoc]:
    """The documents in one file (JSONL/CSV: one per line/row; other formats: the whole file)."""
    fmt = detect_format(path)
    if fmt == "jsonl":
        yield from _jsonl_docs(path)
        return
    if fmt == "csv":
        yield from _csv_docs(path, csv_columns or CsvColumns())
        return
    source = _read_text(path)
    url = None
    if fmt == "markdown":
        title, text = markdown_text(source)
    elif fmt == "html":
        title, url, text = html_text(source)
    else:
        title, text = None, source
    if text.strip():
        yield SourceDoc(path.name, title or path.stem, url, text)
