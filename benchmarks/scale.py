"""Scale benchmark (issue 27): MetaQA and synthetic copies of it, loaded and asked the same questions.

Copy 0 is MetaQA itself; copies 1..k-1 rename every entity ``Name [cK]`` and every relation
``rel_cK``, so the 100 two-hop dev questions (asked about copy-0 names) keep exactly one answer
set while the KG, its label index and every posting list grow k times.

    python benchmarks/scale.py                      # x1 and x8, embedded store and Oxigraph server (`kg connect`)
    python benchmarks/scale.py --with-x32           # and x32 (4.1M facts; minutes, ~2 GB RSS)
    python benchmarks/scale.py --sizes 1 --limit 20 --no-endpoint

Each load and each question run is its own process, so its peak RSS (``getrusage`` of the
children: Rust/RocksDB/tantivy included) is measured alone. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))  # the test server launchers (servers.py)
DATA = Path(os.environ.get("KGTEAM_DATA_DIR") or ROOT.parent / "shared" / "data")
METAQA = DATA / "metaqa"
BASE_IRI = "http://example.org/metaqa/"


def write_copies(kb: Path, out: Path, copies: int) -> int:
    """Write ``copies`` renamed copies of a MetaQA ``subject|relation|object`` KB to ``out``; returns lines."""
    lines = [line.rstrip("\n") for line in kb.open(encoding="utf-8") if line.strip()]
    n = 0
    with out.open("w", encoding="utf-8") as f:
        for k in range(copies):
            for line in lines:
                s, r, o = line.split("|", 2) if line.count("|") == 2 else _split(line)
                if k:
                    s, r, o = f"{s} [c{k}]", f"{r}_c{k}", f"{o} [c{k}]"
                f.write(f"{s}|{r}|{o}\n")
                n += 1
    return n


def _split(line: str) -> tuple[str, str, str]:
    raise ValueError(f"not a three-field MetaQA line: {line[:80]!r}")


# ----------------------------------------------------------------------------- asking (one process)

def ask_and_profile(argv: list[str], out: Path) -> None:
    """Run ``kgteam eval ARGV`` in this process, timing every tool call a role makes and each
    question's CPU time, and write the per-question profile next to the run file as JSON."""
    import kgteam.agents.team as team_mod
    import kgteam.eval.runner as runner_mod
    from kgteam.cli.app import app

    calls: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))  # session -> tool -> secs
    cpu: dict[str, float] = {}
    workers: dict[str, float] = {}  # query worker pid -> its peak RSS, MB
    traced = team_mod.tool_trace_hook

    def counting_hook(state, trace, role):
        inner = traced(state, trace, role)

        def hook(call):
            calls[state.session_id][call.tool].append(call.seconds)
            inner(call)

        return hook

    evaluate = runner_mod.evaluate_item

    async def timed_item(item, team, **kwargs):
        t0 = _tree_cpu_s()
        record = await evaluate(item, team, **kwargs)
        cpu[record.id] = _tree_cpu_s() - t0
        for pid in _children():
            rss = _peak_rss_mb(pid)
            if rss is not None:
                workers[pid] = max(workers.get(pid, 0.0), rss)
        return record

    team_mod.tool_trace_hook = counting_hook
    runner_mod.evaluate_item = timed_item
    try:
        app(argv, standalone_mode=False)
    finally:
        profile = {"cpu_s": cpu, "tool_calls": {sid: dict(t) for sid, t in calls.items()},
                   "worker_peak_rss_mb": workers}
        out.write_text(json.dumps(profile), encoding="utf-8")



def _tree_cpu_s() -> float:
    """CPU seconds of this process and its live children (the run_sparql query worker): a question's
    own work, which other jobs on shared cores do not inflate the way they inflate wall time."""
    own = os.times()
    total = own.user + own.system
    tick = os.sysconf("SC_CLK_TCK")
    for pid in _children():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def _children() -> list[str]:
    """PIDs of this process's live children (the run_sparql query workers)."""
    return [pid for children in Path("/proc/self/task").glob("*/children") for pid in children.read_text().split()]


# ----------------------------------------------------------------------------- phases (one process each)

def _kgteam() -> list[str]:
    return [sys.executable, "-m", "kgteam.cli"]


def run_phase(cmd: list[str], *, env: dict[str, str] | None = None) -> dict:
    """Run ``cmd`` as a child of a fresh interpreter that reports the child's wall time and peak RSS
    (``getrusage(RUSAGE_CHILDREN)``: that child and what it waited for, Rust memory included)."""
    probe = ("import json, resource, subprocess, sys, time\n"
             "t = time.perf_counter(); r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.PIPE, text=True)\n"
             "print(json.dumps({'rc': r.returncode, 'seconds': time.perf_counter() - t, 'err': r.stderr[-3000:], "
             "'peak_rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if res["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}... failed ({res['rc']}): {res['err']}")
    return res


def _disk_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6, 1)


def load(k: int, work: Path, home: Path) -> dict:
    """Generate the x``k`` KB and ``kgteam load --no-embed`` it (its own process); load figures."""
    kb = work / f"kb_x{k}.txt"
    facts = write_copies(METAQA / "kb.txt", kb, k)
    name = f"scale-x{k}"
    shutil.rmtree(home / "kgs" / name, ignore_errors=True)
    res = run_phase([*_kgteam(), "load", str(kb), "--name", name, "--format", "metaqa", "--base-iri", BASE_IRI,
                     "--no-embed", "--quiet", "--home", str(home)])
    kb.unlink()  # the KG keeps what it needs
    return {"kg": name, "facts": facts, "load_s": round(res["seconds"], 1),
            "facts_per_s": round(facts / res["seconds"]), "disk_mb": _disk_mb(home / "kgs" / name),
            "load_peak_rss_mb": round(res["peak_rss_mb"])}


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))] if s else 0.0


def ask(kg_args: list[str], home: Path, work: Path, tag: str, limit: int) -> dict:
    """The same two-hop dev questions, model-free, one at a time; latency, Hits@1 and tool calls."""
    run = work / f"run-{tag}.jsonl"
    prof = work / f"profile-{tag}.json"
    run.unlink(missing_ok=True)
    res = run_phase([sys.executable, str(Path(__file__).resolve()), "_ask", str(prof), "eval", "metaqa:2-hop",
                     "--model", "none", *kg_args, "--home", str(home), "--limit", str(limit), "--seed", "0",
                     "--concurrency", "1", "--out", str(run)], env={"KGTEAM_DATA_DIR": str(DATA)})
    records = [json.loads(line) for line in run.open(encoding="utf-8")]
    records = [r for r in records if "id" in r and "grading" in r]
    secs = [r["seconds"] for r in records]
    profile = json.loads(prof.read_text(encoding="utf-8"))
    per_tool: dict[str, list[float]] = defaultdict(list)
    for calls in profile["tool_calls"].values():
        for tool, seconds in calls.items():
            per_tool[tool] += seconds
    n = max(1, len(records))
    cpu = list(profile["cpu_s"].values())
    return {
        "questions": len(records), "errors": sum(r["status"] == "error" for r in records),
        "p50_s": round(_pct(secs, 0.5), 3), "p95_s": round(_pct(secs, 0.95), 3),
        "cpu_p50_s": round(_pct(cpu, 0.5), 3), "cpu_p95_s": round(_pct(cpu, 0.95), 3),
        "hits1": round(statistics.fmean((r["grading"] or {}).get("hits1", 0.0) for r in records), 3),
        "tool_calls_per_question": round(sum(len(v) for v in per_tool.values()) / n, 1),
        # ms_per_call includes waiting for the store: calls a role makes at once queue for its query worker
        "tools": {t: {"calls_per_question": round(len(v) / n, 1), "ms_per_call": round(1000 * statistics.fmean(v), 2),
                      "ms_per_question": round(1000 * sum(v) / n, 1)} for t, v in sorted(per_tool.items())},
        "ask_peak_rss_mb": round(res["peak_rss_mb"]),
        # ask_peak_rss_mb is the largest single process; the query workers' peaks, one each:
        "query_workers_peak_rss_mb": sorted(round(v) for v in profile.get("worker_peak_rss_mb", {}).values()),
        "answers": {r["id"]: sorted(v.get("label", "") for v in r.get("answer_values", [])) for r in records},
    }


def connect(home: Path, name: str, url: str) -> dict:
    """``kgteam kg connect NAME-endpoint URL``: register the server as a KG (labels streamed from it)."""
    kg = f"{name}-endpoint"
    res = run_phase([*_kgteam(), "kg", "connect", kg, url, "--home", str(home), "--replace", "--quiet"])
    return {"kg": kg, "connect_s": round(res["seconds"], 1), "connect_peak_rss_mb": round(res["peak_rss_mb"]),
            "labels_disk_mb": _disk_mb(home / "kgs" / kg)}


def ask_endpoint(home: Path, name: str, work: Path, limit: int) -> dict:
    """Serve the loaded store with ``oxigraph serve-read-only``, register it with ``kgteam kg connect``
    (no team file) and ask the same questions through it."""
    from servers import start_oxigraph

    server = start_oxigraph(home / "kgs" / name / "store")
    try:
        connected = connect(home, name, server.url)
        out = {**connected, **ask(["--kg", connected["kg"]], home, work, f"{name}-endpoint", limit)}
        out["server_peak_rss_mb"] = _peak_rss_mb(server.pid)
    finally:
        server.stop()
        shutil.rmtree(home / "kgs" / f"{name}-endpoint", ignore_errors=True)
    return out


def _peak_rss_mb(pid: int | str | None) -> float | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (OSError, TypeError):
        return None
    line = next((ln for ln in text.splitlines() if ln.startswith("VmHWM:")), None)
    return round(int(line.split()[1]) / 1024) if line else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,8", help="copies of MetaQA, comma-separated (default 1,8)")
    ap.add_argument("--with-x32", action="store_true", help="add x32 (4.1M facts)")
    ap.add_argument("--limit", type=int, default=100, help="two-hop dev questions asked (default 100)")
    ap.add_argument("--no-endpoint", action="store_true", help="embedded store only")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgteam-scale"), help="scratch folder (KG home inside)")
    ap.add_argument("--keep", action="store_true", help="keep the loaded KGs")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()] + ([32] if args.with_x32 else [])
    work = args.work
    home = work / "home"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for k in sizes:
        row = {"copies": k, **load(k, work, home)}
        print(json.dumps({"loaded": row}), file=sys.stderr, flush=True)
        row["embedded"] = ask(["--kg", row["kg"]], home, work, row["kg"], args.limit)
        if not args.no_endpoint:
            row["endpoint"] = ask_endpoint(home, row["kg"], work, args.limit)
        rows.append(row)
        if not args.keep:
            shutil.rmtree(home / "kgs" / row["kg"], ignore_errors=True)
    base = rows[0]["embedded"]["answers"] if rows else {}
    for row in rows:  # the same answers at every size, and through the server
        for where in ("embedded", "endpoint"):
            if where in row:
                answers = row[where].pop("answers")
                row[where]["answers_as_x1"] = sum(answers.get(i) == a for i, a in base.items()) / max(1, len(base))
    doc = {"benchmark": "scale", "argv": sys.argv[1:], "cpus": os.cpu_count(),
           "load_avg_1m": round(os.getloadavg()[0], 1), "rows": rows}
    text = json.dumps(doc, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["_ask"]:
        ask_and_profile(sys.argv[3:], Path(sys.argv[2]))
    else:
        main()
