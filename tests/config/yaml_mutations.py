"""Seeded mutations of team files, for the loader fuzz test and ``benchmarks/yaml_fuzz.py``.

Starts from the example team files and a few hand-written hostile snippets (the shapes that
broke the loader before it had limits) and applies 1-3 random edits: byte flips, YAML syntax
dropped anywhere, tags, anchors and aliases, alias bombs, deep nesting, truncation, huge
scalars, cut and repeated lines. The same seed gives the same cases.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A few hundred bytes whose aliases expand to width**levels values."""
    names = [f"l{i}" for i in range(levels + 1)]
    lines = [f"{names[0]}: &{names[0]} [" + ", ".join(["lol"] * width) + "]"]
    for prev, name in zip(names, names[1:], strict=False):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
    return "\n".join(lines) + "\n"


VALID = ["""\
# explicit roles and routes, with an anchor and merges: the legitimate use of aliases
name: explicit
model: &model {provider: openai, base_url: "http://127.0.0.1:9/v1", model: tiny, timeout_s: 5}
kg: {backend: oxigraph, name: "${FUZZ_KG:-metaqa}"}
roles:
  contextualizer: contextualizer
  generalist: {role: generalist, model: {<<: *model, temperature: 0.2}}
  decision_maker: {role: decision_maker}
  advisor: advisor
routes:
  - {kind: question, to: contextualizer, sender: user}
  - {kind: question, to: generalist, sender: contextualizer}
  - {kind: sparql_template, to: decision_maker}
  - {kind: query_result, to: advisor}
  - {kind: retry_signal, to: [generalist], when: {phase: parsing}}
entry: contextualizer
answer_role: advisor
budgets: {max_retries: 2, max_llm_calls: 20, timeout_s: 60}
"""]

HOSTILE = [
    "name: x\nplaybook: !custom triad\n",
    "name: x\nplaybook: !!python/object/apply:os.system [echo pwned]\n",
    "name: &t {name: x, self: *t}\n",
    "roles: &r [a, *r]\n",
    "name: x\nroles: " + "[" * 1000 + "\n",
    "name: x\nkg: " + "{a: " * 500 + "1" + "}" * 500 + "\n",
    "? {name: x}\n: 1\n",
    "? [a, b]\n: 1\n",
    "name: x\nbudgets: {max_turns: " + "9" * 5000 + "}\n",
    "name: x\nbudgets: {timeout_s: " + "1" * 400 + ".5}\n",
    "name: x\n<<: 1\n",
    "name: x\nbudgets: {<<: [1, 2]}\n",
    "name: x\x00\n",
    "name: \x07bell\n",
    "name: x\nkg: {name: 2024-13-45}\n",
    "name: !!int abc\n",
    "name: !!bool maybe\n",
    "name: !!binary aGVsbG8=\n",
    "name: !!set {a, b}\n",
    alias_bomb(),
    "d: &d {backend: oxigraph, name: metaqa}\nname: t\nkg: {<<: *d, name: other}\nplaybook: triad\n",
    "name: [x\n",
    "%YAML 1.1\n%TAG ! tag:example.com,2000:\n---\nname: !foo x\n",
    "--- a\n--- b\n",
    "name: ${UNSET_FUZZ_VAR}\nplaybook: triad\n",
    "roles: [{name: [a, b]}, {name: {x: 1}}, {role: [1]}]\nname: t\n",
    "roles: {a: [1, 2], b: 3, c: {role: {x: y}}}\nname: t\n",
    "routes: [{to: {a: b}}, 1, [x]]\nname: t\n",
    "name: t\nkg: {path: [1], labels: {path: {a: 1}}}\nmodel: {script: 3}\n",
]

TOKENS = ["[", "]", "{", "}", ": ", "- ", "? ", ",", "&a ", "*a", "&b [*a, *a] ", "<<: ", "<<: *a\n",
          "!custom ", "!!python/name:os.system ", "!!binary ", "!!str ", "!!int ", "!!float ", "!!map ",
          "!!seq ", "!!timestamp ", "!<tag:x> ", "%YAML 1.2\n", "---\n", "...\n", '"', "'", "|\n", ">-\n",
          "#", "\t", "\n", "\r\n", "  ", "${X}", "${", "$${", "\x00", "\ufeff", "\u2028", "\x85", "\\x",
          "0x", "0o7", "1_000", "1:20:30", ".inf", "-.nan", "~", "null", "yes", "2024-02-30", "1e999"]

RAW = [b"\xff", b"\xfe\xff", b"\xed\xa0\x80", b"\xc3", b"\xe2\x82", b"\x00", b"\xef\xbb\xbf", b"\x80\x80"]


def seeds() -> list[tuple[str, bytes]]:
    files = sorted((ROOT / "examples" / "teams").glob("*.yaml"))
    valid = [(f.name, f.read_bytes()) for f in files] + [("explicit", text.encode()) for text in VALID]
    return valid + [(f"hostile[{i}]", text.encode("utf-8")) for i, text in enumerate(HOSTILE)]


def _pos(rng: random.Random, data: bytes) -> int:
    return rng.randint(0, len(data))


def _flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _token(rng: random.Random, data: bytes) -> bytes:
    p = _pos(rng, data)
    return data[:p] + rng.choice(TOKENS).encode("utf-8") + data[p:]


def _raw(rng: random.Random, data: bytes) -> bytes:
    p = _pos(rng, data)
    return data[:p] + rng.choice(RAW) + data[p:]


def _nest(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([10, 63, 65, 100, 1000, 3000])
    opener, closer = rng.choice([("[", "]"), ("{a: ", "}"), ("- ", "")])
    body = (opener * depth + "x" + closer * rng.choice([0, depth])).encode()
    p = _pos(rng, data)
    return data[:p] + body + data[p:]


def _block_nest(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([30, 70, 300])
    return data + b"\nx:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(depth)).encode()


def _bomb(rng: random.Random, data: bytes) -> bytes:
    return data + b"\n" + alias_bomb(rng.randint(2, 12), rng.randint(2, 12)).encode()


def _recursive(rng: random.Random, data: bytes) -> bytes:
    return data + rng.choice([b"\nr: &r {x: *r}\n", b"\nr: &r [*r]\n", b"\nr: &r {<<: *r}\n",
                              b"\nr: &r {a: {b: [*r]}}\n"])


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:_pos(rng, data)]


def _huge(rng: random.Random, data: bytes) -> bytes:
    size = rng.choice([4301, 10_000, 100_000, 300_000])
    scalar = rng.choice(["9", "x", "1:", "0b1", "'a", "a "]) * (size // 2 + 1)
    return data + f"\nhuge: {scalar[:size]}\n".encode()


def _cut(rng: random.Random, data: bytes) -> bytes:
    a, b = sorted((_pos(rng, data), _pos(rng, data)))
    return data[:a] + data[b:]


def _repeat(rng: random.Random, data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    i = rng.randrange(len(lines))
    return b"".join(lines[: i + 1] + [lines[i]] * rng.randint(1, 50) + lines[i + 1:])


def _swap(rng: random.Random, data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


MUTATORS: list[Callable[[random.Random, bytes], bytes]] = [
    _flip, _token, _token, _token, _raw, _nest, _block_nest, _bomb, _recursive, _truncate, _huge, _cut,
    _repeat, _swap]


def cases(seed: int, n: int) -> Iterator[tuple[str, bytes]]:
    """``n`` cases: every seed file as it is first, then random mutations of random seeds (a valid
    team file half of the time, so mutations also reach the structure and name checks)."""
    rng = random.Random(seed)
    base = seeds()
    for i in range(n):
        valid = base[: len(base) - len(HOSTILE)]
        name, data = base[i] if i < len(base) else rng.choice(valid if rng.random() < 0.5 else base)
        steps = []
        for _ in range(0 if i < len(base) else rng.randint(1, 3)):
            mutate = rng.choice(MUTATORS)
            data = mutate(rng, data)
            steps.append(mutate.__name__.lstrip("_"))
        yield f"{name}+{'+'.join(steps) or 'as is'}", data


WHOLE_FILE = ("the file is ",)  # issues about the whole file (its size, its encoding) have no line


@dataclass
class Outcome:
    status: str  # accepted | refused | crash (not TeamConfigError) | internal | no_line
    detail: str
    cpu_s: float
    wall_s: float


def judge(path: Path) -> Outcome:
    """Load one file the way ``kgteam validate`` does and classify what came out."""
    from kgteam.config import TeamConfigError, load_team

    wall, cpu = time.perf_counter(), time.process_time()
    try:
        load_team(path)
        status, detail = "accepted", ""
    except TeamConfigError as exc:
        status, detail = "refused", str(exc)
        for issue in exc.issues:
            if "internal error" in issue.message:
                status, detail = "internal", str(issue)
            elif issue.line is None and not issue.message.startswith(WHOLE_FILE):
                status, detail = "no_line", str(issue)
    except BaseException as exc:  # noqa: BLE001 - exactly what the fuzz is looking for
        status, detail = "crash", f"{type(exc).__name__}: {str(exc)[:200]}"
    return Outcome(status, detail, time.process_time() - cpu, time.perf_counter() - wall)
