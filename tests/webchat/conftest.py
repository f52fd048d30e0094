"""A real `kgteam serve` (Triad on a small KG, a stand-in model) and headless Debian Chromium.

The server, the model stand-in and the browser are started once for the browser test module; each test
gets a fresh browser context (empty localStorage), so it starts from a new chat. The browser
is Debian's /usr/bin/chromium driven by Playwright; Playwright's own browser download is never
used (no `playwright install`). Without Chromium (or Playwright) the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stand_in_model import StandInModel  # noqa: E402
from webchat_support import API_KEY, CHROMIUM, CHROMIUM_ARGS, KG_TTL, REPO, TEAM_YAML  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (as root: apt-get install -y chromium; "
                    "scripts/system-deps.sh does it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install playwright; never 'playwright install')")
    return CHROMIUM


# Module scope, not session: while Playwright's sync API is open its event loop runs in this
# thread, and the async tests of other folders (run later in the same session) need it closed.
@pytest.fixture(scope="module")
def stand_in_model():
    with StandInModel(hold_s=60) as model:
        yield model


@pytest.fixture(scope="module")
def server(tmp_path_factory, stand_in_model, chromium_path):
    """`kgteam serve` in a subprocess on a free port, API keys on, rate limits off."""
    from kgteam.tools.loading import build_kg

    root = tmp_path_factory.mktemp("webchat-serve")
    (root / "orchard.ttl").write_text(KG_TTL, encoding="utf-8")
    build_kg([root / "orchard.ttl"], "orchard", home=root / "home", progress=False)
    (root / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "KGTEAM_HOME": str(root / "home"), "KGTEAM_TEST_MODEL_URL": stand_in_model.base_url,
           "KGTEAM_LLM_API_KEY": "unused", "KGTEAM_API_KEYS": API_KEY, "KGTEAM_RATE_LIMIT": "0",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    log = (root / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "kgteam.cli", "serve", "--team", str(root / "team.yaml"),
                             "--sessions", str(root / "sessions.sqlite"),
                             "--host", "127.0.0.1", "--port", str(port)],
                            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"kgteam serve exited with {proc.returncode}:\n{(root / 'serve.log').read_text()}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"kgteam serve did not answer /health in 60 s:\n{(root / 'serve.log').read_text()}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium_path), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(15_000)
    yield context
    context.close()


class PageErrors(list):
    """Uncaught exceptions in the page: a test fails if its page threw."""


@pytest.fixture
def page_errors() -> PageErrors:
    return PageErrors()


def _open(context, server, page_errors, key: str | None):
    if key is not None:
        context.add_init_script(f"try {{ localStorage.setItem('kgteam.apiKey', {json.dumps(key)}); }} catch (e) {{}}")
    page = context.new_page()
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready=true]")
    return page


@pytest.fixture
def open_chat(context, server, page_errors):
    """Opens the chat with the API key already in localStorage (as a returning user has it)."""
    pages = []

    def opener(key: str | None = API_KEY):
        page = _open(context, server, page_errors, key)
        pages.append(page)
        return page

    yield opener
    assert not page_errors, f"the page threw: {page_errors}"


@pytest.fixture
def screenshot_dirs(tmp_path) -> list[Path]:
    """Where the answered-state screenshot goes: the test's tmp dir, and $KGTEAM_SCREENSHOT_DIR if set."""
    dirs = [tmp_path]
    extra = os.environ.get("KGTEAM_SCREENSHOT_DIR")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        dirs.append(Path(extra))
    return dirs

