"""``kgteam kg connect`` on synthetic copies of MetaQA served by ``oxigraph serve-read-only``.

Copy 0 is MetaQA itself; copies 1..k-1 rename every entity "Name [cK]" and every relation
"rel_cK". The copies are loaded without vectors, exported with ``kg export``, loaded into a server
store with ``oxigraph load`` and served; then the endpoint is connected (labels streamed in pages)
and one question is asked through the connected KG. Prints JSON: export, server load and connect
times, label triples streamed per second, the connecting process's peak RSS, the server's RSS.

    python benchmarks/endpoint_connect.py --copies 8 --kb /work/shared/data/metaqa/kb.txt --work /tmp/endpoint/bench
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))  # the test server launchers (servers.py)


_CONNECT = """
import json, resource, sys
from pathlib import Path
from kgteam.tools.loading.endpoint import connect_endpoint
connect_endpoint("served", sys.argv[1], home=Path(sys.argv[2]), timeout_s=600, page_size=int(sys.argv[3]))
print(json.dumps({"peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def synthetic_kb(kb: Path, copies: int, out: Path) -> int:
    lines = [line.rstrip("\n") for line in kb.open(encoding="utf-8") if line.count("|") == 2]
    with out.open("w", encoding="utf-8") as fh:
        for k in range(copies):
            for line in lines:
                if k == 0:
                    fh.write(line + "\n")
                else:
                    s, r, o = line.split("|")
                    fh.write(f"{s} [c{k}]|{r}_c{k}|{o} [c{k}]\n")
    return len(lines) * copies


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--kb", type=Path, default=Path("/work/shared/data/metaqa/kb.txt"))
    ap.add_argument("--work", type=Path, required=True, help="scratch folder (removed first)")
    ap.add_argument("--page-size", type=int, default=10_000)
    ap.add_argument("--question", default="what movies did Temuera Morrison act in")
    args = ap.parse_args()

    from servers import oxigraph_load, start_oxigraph

    from kgteam.tools.kg import kg_folder
    from kgteam.tools.loading import build_kg
    from kgteam.tools.loading.export import export_kg
    from kgteam.tools.loading.manifest import KGManifest

    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    home = args.work / "home"
    facts = synthetic_kb(args.kb, args.copies, args.work / "kb.txt")
    t = time.perf_counter()
    build_kg([args.work / "kb.txt"], "local", home=home, format="metaqa", progress=False)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    triples = export_kg(kg_folder("local", home), args.work / "kg.nt", "nt")
    export_s = time.perf_counter() - t
    shutil.rmtree(home / "kgs" / "local")
    t = time.perf_counter()
    oxigraph_load(args.work / "server-store", [args.work / "kg.nt"])
    server_load_s = time.perf_counter() - t
    (args.work / "kg.nt").unlink()
    server = start_oxigraph(args.work / "server-store", query_timeout_s=600)
    try:
        t = time.perf_counter()  # in its own process, so its peak RSS is the connect's alone
        out = subprocess.run([sys.executable, "-c", _CONNECT, server.url, str(home), str(args.page_size)],
                             capture_output=True, text=True, check=True).stdout
        connect_s = time.perf_counter() - t
        connected = json.loads(out)
        m = KGManifest.read(home / "kgs" / "served")
        server_rss = rss_mb(server.pid or 0)
        from kgteam.api import Team

        with Team.default(kg="served", model="none", home=home) as team:
            t = time.perf_counter()
            answer = team.ask(args.question)
            ask_s = time.perf_counter() - t
        server_rss_after = rss_mb(server.pid or 0)
    finally:
        server.stop()
    print(json.dumps({
        "copies": args.copies, "facts": facts, "triples": triples, "embedded_load_s": round(load_s, 1),
        "export_s": round(export_s, 1), "oxigraph_load_s": round(server_load_s, 1),
        "connect_s": round(connect_s, 1), "label_triples": m.counts.label_triples,
        "label_triples_per_s": round(m.counts.label_triples / connect_s),
        "entities": m.counts.entities, "relations": m.counts.relations, "page_size": args.page_size,
        "label_index_mb": round(m.disk_bytes / 1e6, 1),
        "connect_peak_rss_mb": connected["peak_rss_mb"],
        "server_rss_mb_after_connect": round(server_rss), "server_rss_mb_after_question": round(server_rss_after),
        "question": args.question, "answer_count": len(answer.values), "ask_s": round(ask_s, 2),
    }, indent=2))


if __name__ == "__main__":
    main()
