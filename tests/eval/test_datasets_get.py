"""``kgteam datasets get`` against a real HTTP server on 127.0.0.1 (never the internet): pinned files
are downloaded and verified, a wrong pin leaves nothing behind, and an unreachable source names the URL
and the place to put the file by hand, which a second ``get`` then verifies and uses."""

from __future__ import annotations

import functools
import hashlib
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.catalogue import BUILTIN_CATALOGUE, load_catalogue

FILES = {"toy/questions.txt": "who directed [Kismet]\tWilliam Dieterle\n" * 200, "toy/kb.txt": "Kismet|directed_by|William Dieterle\n"}


@pytest.fixture
def server(tmp_path) -> Iterator[str]:
    served = tmp_path / "served"
    for rel, text in FILES.items():
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        (served / rel).write_text(text, encoding="utf-8")
    handler = functools.partial(_QuietHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _catalogue(tmp_path: Path, monkeypatch, base: str, *, pins: dict[str, str] | None = None) -> None:
    pins = pins or {}
    entry = {"title": "a toy set", "provides": ["toy.jsonl"], "licence": "CC0-1.0",
             "licence_url": "https://creativecommons.org/publicdomain/zero/1.0/", "licence_note": "made for the test",
             "files": [{"path": f"toy/{Path(rel).name}", "url": f"{base}/{rel}", "sha256": pins.get(rel, _sha(text)),
                        "size": len(text)} for rel, text in FILES.items()]}
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump({"datasets": {"toy": entry}}), encoding="utf-8")
    monkeypatch.setenv("KGTEAM_DATASETS_CATALOGUE", str(path))


def _get(home: Path, *extra: str):
    return CliRunner().invoke(app, ["datasets", "get", "toy", "--home", str(home), *extra], env={"COLUMNS": "400"})


def _outcomes(result) -> list[str]:
    return [line.split()[0] for line in result.output.splitlines() if line.startswith(("verified ", "downloaded "))]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_get_downloads_and_verifies_then_keeps_the_verified_copy(server, tmp_path, monkeypatch):
    _catalogue(tmp_path, monkeypatch, server)
    home = tmp_path / "home"
    result = _get(home)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert said.index("licence: CC0-1.0") < said.index("downloaded")  # the licence comes before the download
    for rel, text in FILES.items():
        assert (home / "datasets" / "toy" / Path(rel).name).read_text(encoding="utf-8") == text
    assert _leftovers(home / "datasets") == ["kb.txt", "questions.txt"]  # no temporary file left

    again = _get(home)
    assert again.exit_code == 0 and _outcomes(again) == ["verified", "verified"] and "downloaded" not in again.output
    listed = CliRunner().invoke(app, ["datasets", "list", "--home", str(home)], env={"COLUMNS": "400"})
    assert listed.exit_code == 0 and any([c.strip() for c in line.split("│")[1:4]] == ["toy", "CC0-1.0", "yes"]
                                         for line in listed.output.splitlines())


def test_a_sha_mismatch_is_an_error_and_leaves_nothing(server, tmp_path, monkeypatch):
    _catalogue(tmp_path, monkeypatch, server, pins={"toy/kb.txt": "0" * 64})
    home = tmp_path / "home"
    result = _get(home)
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert f"the download of {server}/toy/kb.txt has sha256 {_sha(FILES['toy/kb.txt'])}, not the pinned {'0' * 64}" in said
    assert "Traceback" not in result.output
    assert _leftovers(home / "datasets") == ["questions.txt"]  # the file before it is complete; kb.txt is not there


def test_unreachable_source_names_the_url_and_the_path_then_a_file_put_there_by_hand_is_used(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    _catalogue(tmp_path, monkeypatch, base)
    home = tmp_path / "home"
    result = _get(home)
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    dest = home / "datasets" / "toy" / "questions.txt"
    assert f"cannot download {base}/toy/questions.txt" in said and f"put it at {dest}" in said
    assert "Traceback" not in result.output and _leftovers(home / "datasets") == []

    for rel, text in FILES.items():  # the user copies the files from another machine
        (home / "datasets" / rel).write_text(text, encoding="utf-8")
    placed = _get(home)
    assert placed.exit_code == 0, placed.output
    assert _outcomes(placed) == ["verified", "verified"]


def test_an_unknown_name_lists_the_catalogue(tmp_path):
    result = CliRunner().invoke(app, ["datasets", "get", "nosuchset", "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown dataset 'nosuchset'" in result.output and "metaqa" in result.output


def test_the_shipped_catalogue_pins_every_named_set():
    catalogue = load_catalogue(BUILTIN_CATALOGUE)
    assert set(catalogue) == {"metaqa", "pathquestion", "wc2014", "qald9", "qald10", "lcquad1"}
    for entry in catalogue.values():
        assert entry.licence and entry.licence_url.startswith("https://")
        assert all(f.url.startswith("https://") and f.size for f in entry.files)


def test_the_pins_match_the_shared_copies_of_the_public_files():
    """The shared data holds byte-identical copies of the public files: each pin must be their hash."""
    from shared_paths import SHARED_DATA

    from kgteam.tools.loading.sources import sha256_file as sha256_of

    shared = SHARED_DATA
    checked = [(f.path, sha256_of(shared / f.path) == f.sha256)
               for entry in load_catalogue(BUILTIN_CATALOGUE).values() for f in entry.files if (shared / f.path).is_file()]
    if not checked:
        pytest.skip(f"no shared data at {shared}")
    assert [path for path, same in checked if not same] == []


def test_offline_names_every_missing_file_not_only_the_first(tmp_path, monkeypatch):
    """`kgteam datasets get metaqa` offline named 1 of its 12 missing files: every one is named, a
    file already in place is not."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    _catalogue(tmp_path, monkeypatch, base)
    home = tmp_path / "home"
    result = _get(home)
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "2 of 2 files are not in place" in said, said
    assert all(f"{base}/{rel} -> {rel}" in said for rel in FILES), said
    (home / "datasets" / "toy").mkdir(parents=True, exist_ok=True)
    (home / "datasets" / "toy" / "kb.txt").write_text(FILES["toy/kb.txt"], encoding="utf-8")  # one put there by hand
    again = " ".join(_get(home).output.split())
    assert f"{base}/toy/questions.txt" in again and f"{base}/toy/kb.txt" not in again, again
