"""Writes the shared Wikipedia movie-plot CSV as corpus JSONL (one document per film), for
``kgteam corpus add movieplots /tmp/movieplots.jsonl``.

The CSV (``../shared/data/movieplots/wiki_movie_plots_1901_1935.csv``, 1,999 plots of American
films 1901–1935) is internal-use data: this script writes outside the repository, and nothing
it writes may be committed. Each document's text is a header line built from the row's fields,
then the plot (Wikipedia's ``[1]`` citation marks removed):

    {Title} ({Release Year} film). Directed by {Director}. Cast: {Cast}. Genre: {Genre}.

    {Plot}

Empty and "Unknown" fields are left out of the header; title = Title, url = Wiki Page.

    python benchmarks/movieplots_corpus.py --out /tmp/movieplots.jsonl
    kgteam corpus add movieplots /tmp/movieplots.jsonl
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CSV = ROOT.parent / "shared" / "data" / "movieplots" / "wiki_movie_plots_1901_1935.csv"
_CITATION = re.compile(r"\[(?:\d+|[a-z ]*needed)\]")
_UNKNOWN = {"", "unknown", "n/a", "na", "none", "-"}


def _known(value: str | None) -> str | None:
    value = " ".join((value or "").split())
    return None if value.lower() in _UNKNOWN else value


def document(row: dict[str, str]) -> dict[str, str] | None:
    """One corpus record (title, url, text) for a CSV row, or None when the row has no plot."""
    plot = _CITATION.sub("", row.get("Plot") or "").strip()
    title = _known(row.get("Title"))
    if not plot or not title:
        return None
    year, director = _known(row.get("Release Year")), _known(row.get("Director"))
    cast, genre = _known(row.get("Cast")), _known(row.get("Genre"))
    header = f"{title} ({year} film)." if year else f"{title}."
    if director:
        header += f" Directed by {director}."
    if cast:
        header += f" Cast: {cast}."
    if genre:
        header += f" Genre: {genre}."
    record = {"title": title, "text": f"{header}\n\n{plot}"}
    url = _known(row.get("Wiki Page"))
    if url:
        record["url"] = url
    return record


def documents(csv_path: Path) -> Iterator[dict[str, str]]:
    with csv_path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            record = document(row)
            if record is not None:
                yield record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV, help="the movie-plot CSV")
    parser.add_argument("--out", type=Path, default=Path("/tmp/movieplots.jsonl"), help="JSONL to write")
    args = parser.parse_args(argv)
    if not args.csv.is_file():
        print(f"error: {args.csv} not found (the shared data folder is ../shared/data)", file=sys.stderr)
        return 1
    if args.out.resolve().is_relative_to(ROOT):
        print(f"error: {args.out} is inside the repository; this data must not be committed", file=sys.stderr)
        return 2
    n = 0
    with args.out.open("w", encoding="utf-8") as out:
        for record in documents(args.csv):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    print(json.dumps({"documents": n, "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
