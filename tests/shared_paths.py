"""Where the tests find the shared data (MetaQA, WC2014, PathQuestion, QALD, the movie plots): one
place for every test. ``KGTEAM_DATA_DIR`` when set (what ``kgteam eval`` reads too), else the
``shared/data`` folder beside the checkout (``<repo>/../shared/data``), never inside it. Tests that
need a file there skip when it is absent. Imported by tests/conftest.py (fixture ``shared_data``)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (Path(os.environ["KGTEAM_DATA_DIR"]).expanduser() if os.environ.get("KGTEAM_DATA_DIR")
               else REPO.parent / "shared" / "data")
