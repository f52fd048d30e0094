"""What the web chat's browser tests share: the browser's path and flags, the served KG and team,
the API key, and the screenshot copy. (A module of its own: `conftest` is a name several test
folders use, so tests never import from it.)"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

CHROMIUM = Path(os.environ.get("KGTEAM_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
API_KEY = "webchat-test-key"
REPO = Path(__file__).resolve().parents[2]

# A KG label that would run script if the page ever parsed data as HTML.
XSS_LABEL = '<img src=x onerror="window.__xss=1">Mallory<script>window.__xss=2</script>'
KG_TTL = (REPO / "tests" / "data" / "orchard.ttl").read_text(encoding="utf-8") + f"""
ex:Pine  rdfs:label "Lone Pine" ; ex:tendedBy ex:Mal ; ex:grownIn ex:North .
ex:Mal   rdfs:label {json.dumps(XSS_LABEL)} .
"""

TEAM_YAML = """\
name: webchat-test
model:
  provider: openai
  base_url: ${KGTEAM_TEST_MODEL_URL}
  model: stand-in
  max_retries: 0
  timeout_s: 90
kg: {backend: oxigraph, name: orchard}
playbook: triad
budgets: {timeout_s: 90, max_llm_calls: 25}
"""



def copy_screenshot(src: Path, dirs: list[Path]) -> None:
    for d in dirs[1:]:
        shutil.copyfile(src, d / src.name)
