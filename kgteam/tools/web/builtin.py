"""Built-in corpora: document sets shipped in the package, built into the home on first use.

Like the demo KG, a built-in corpus needs no download and no ``kgteam corpus add``: the first
team (or ``--corpus``) that names it builds it from the package's files into
``<home>/corpora/<name>``; later runs open that copy. A corpus of the same name made with
``kgteam corpus add`` is the user's and is opened as it is.
"""

from __future__ import annotations

from pathlib import Path

from kgteam.tools.web.corpus_build import MANIFEST, build_corpus, corpora_dir, list_corpora

DATA = Path(__file__).resolve().parents[2] / "data" / "corpora"
# name -> what it holds (the files are DATA/<name>/*.md, one document each, the heading its title)
BUILTIN_CORPORA: dict[str, str] = {
    "movie-notes": "short notes (plot, cast, production) on 12 films of the demo MetaQA KG",
}


def builtin_files(name: str) -> list[Path]:
    return sorted((DATA / name).glob("*.md"))


def ensure_builtin_corpus(name: str, home: Path | str | None = None) -> bool:
    """Builds built-in corpus ``name`` into the home when it is not there; False for other names."""
    if name not in BUILTIN_CORPORA:
        return False
    if not (corpora_dir(home) / name / MANIFEST).is_file():
        build_corpus(name, builtin_files(name), home=home)
    return True


def known_corpora(home: Path | str | None = None) -> list[str]:
    """The corpus names a team may use here: the home's, then the built-in ones not built yet."""
    names = [m.name for m in list_corpora(home)]
    return names + [n for n in BUILTIN_CORPORA if n not in names]
