"""Seeded fuzz of the team-file loader: whatever the bytes, a valid team or ``file:line`` issues, fast.

1,500 mutated files (``yaml_mutations.py``; ``benchmarks/yaml_fuzz.py`` runs 5,000+ and reports
the figures). CPU time, not wall time, bounds each load, so a busy machine does not fail the test.
"""

from __future__ import annotations

import collections

from yaml_mutations import cases, judge

SEED = 13
CASES = 1500
MAX_CPU_S = 2.0


def test_fuzzed_team_files_load_or_fail_cleanly_and_fast(tmp_path):
    counts: collections.Counter[str] = collections.Counter()
    bad, slow = [], []
    for i, (mutation, data) in enumerate(cases(SEED, CASES)):
        path = tmp_path / f"case{i}.yaml"
        path.write_bytes(data)
        outcome = judge(path)
        path.unlink()
        counts[outcome.status] += 1
        if outcome.status not in ("accepted", "refused"):
            bad.append((i, mutation, outcome.status, outcome.detail))
        elif outcome.status == "refused" and not outcome.detail.startswith(str(path)):
            bad.append((i, mutation, "issue names another file", outcome.detail))
        if outcome.cpu_s > MAX_CPU_S:
            slow.append((i, mutation, round(outcome.cpu_s, 2)))
    assert not bad, bad[:5]
    assert not slow, slow[:5]
    # the mutations reach past the YAML layer: some files still validate, most are refused
    assert counts["accepted"] >= CASES // 50 and counts["refused"] >= CASES // 2, counts
