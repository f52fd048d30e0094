"""The docs and the real parser agree: every ``kgteam COMMAND --flag`` the docs name exists, and
help shows flags as flags (no ``<bool>`` value that the parser would refuse)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer.core
import typer.main
from typer.testing import CliRunner

from kgteam.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
GROUP = typer.main.get_command(app)
assert isinstance(GROUP, typer.core.TyperGroup)

# `kgteam ...` in inline code, or a shell line (in a fence) that runs kgteam
_INLINE = re.compile(r"`(?:\$ )?(?:\.venv/bin/)?kgteam ((?:[^`]|\\`)+)`")
_SHELL = re.compile(r"^\s*(?:\$ )?(?:\.venv/bin/)?kgteam\s+(.*)$")
_PLACEHOLDER = re.compile(r"^--?[A-Za-z][\w-]*")


def _opts(command: typer.core.TyperCommand | typer.core.TyperGroup) -> set[str]:
    return {o for p in command.params if isinstance(p, typer.core.TyperOption) for o in (*p.opts, *p.secondary_opts)}


def _all_opts(command: typer.core.TyperCommand | typer.core.TyperGroup) -> set[str]:
    """A command's options; for a group (``kgteam corpus``), its sub-commands' too."""
    subs = command.commands.values() if isinstance(command, typer.core.TyperGroup) else ()
    return _opts(command).union(*(_opts(c) for c in subs))


def _usages() -> list[tuple[str, str]]:
    """(where, the text after ``kgteam``) for every usage in the docs."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        in_fence = False
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            where = f"{doc.relative_to(ROOT)}:{n}"
            if in_fence:
                m = _SHELL.match(line)
                if m:
                    rest, k = m.group(1), n
                    while rest.rstrip().endswith("\\") and k < len(lines):  # continued shell line
                        rest = rest.rstrip()[:-1] + " " + lines[k]
                        k += 1
                    found.append((where, rest))
            else:
                found += [(where, m.group(1)) for m in _INLINE.finditer(line)]
    return found


def _words(rest: str) -> list[str]:
    rest = rest.split(" #")[0]  # a shell comment
    rest = re.sub(r"\s[<|>].*$", "", rest)  # a redirection or pipe ends the command
    try:
        return shlex.split(rest)
    except ValueError:  # an unbalanced quote in prose (`kgteam eval … --model 'x`): plain split
        return rest.split()


def _problems(rest: str) -> list[str]:
    words = _words(rest)
    global_opts = _opts(GROUP)
    i = 0
    while i < len(words) and words[i].startswith("-"):  # global options come before the command
        flag = words[i].split("=")[0]
        if flag not in global_opts:
            return [f"global option {flag} does not exist"]
        takes_value = not next(p for p in GROUP.params if flag in (*p.opts, *p.secondary_opts)).is_flag
        i += 2 if takes_value and "=" not in words[i] else 1
    if i == len(words):
        return []
    name = words[i]
    command = GROUP.commands.get(name)
    if command is None:
        return [f"command {name!r} does not exist"]
    if isinstance(command, typer.core.TyperGroup) and i + 1 < len(words) and not words[i + 1].startswith("-"):
        i += 1  # a sub-command: `kgteam corpus add ...`
        sub = command.commands.get(words[i])
        if sub is None:
            return [f"command '{name} {words[i]}' does not exist"]
        name, command = f"{name} {words[i]}", sub
    known = _opts(command) | {"--help"}
    problems = []
    for word in words[i + 1:]:
        m = _PLACEHOLDER.match(word)
        if word.startswith("-") and m and m.group(0) not in known and word != "-":
            problems.append(f"{name}: option {m.group(0)} does not exist")
    return problems


def test_the_docs_name_kgteam_usages():
    usages = _usages()
    assert len(usages) > 60  # the scanner finds them (README, cli.md, eval.md ...)
    assert {"ask", "eval", "report", "trace", "init", "mcp"} <= {_words(r)[0] for _, r in usages if _words(r)}


def test_every_command_and_flag_the_docs_name_exists():
    problems = [f"{where}: kgteam {rest.strip()}: {p}" for where, rest in _usages() for p in _problems(rest)]
    assert not problems, "\n".join(problems)


def test_the_checker_catches_a_wrong_command_and_a_wrong_flag():
    assert _problems("ask 'x' --jsn") == ["ask: option --jsn does not exist"]
    assert _problems("kgz list") == ["command 'kgz' does not exist"]
    assert _problems("--log-level INFO ask 'who directed Kismet' --json") == []
    assert _problems("corpus add notes a.md --chunk-chars 500") == []
    assert _problems("corpus list --chunk-chars 5") == ["corpus list: option --chunk-chars does not exist"]
    assert _problems("corpus zap x") == ["command 'corpus zap' does not exist"]
    assert _problems("datasets get metaqa --force --home h") == []
    assert _problems("datasets get metaqa --forse") == ["datasets get: option --forse does not exist"]
    documented = [_words(rest) for _, rest in _usages()]
    assert any(w[:2] == ["datasets", "get"] and "--force" in w for w in documented)  # the docs show the new command


def _command_paths() -> list[tuple[str, ...]]:
    paths = []
    for name, command in sorted(GROUP.commands.items()):
        paths.append((name,))
        if isinstance(command, typer.core.TyperGroup):
            paths += [(name, sub) for sub in sorted(command.commands)]
    return paths


def _command(path: tuple[str, ...]):
    command = GROUP
    for word in path:
        command = command.commands[word]
    return command


@pytest.mark.parametrize("path", _command_paths(), ids=" ".join)
def test_help_shows_flags_without_a_value_type(path):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output
    flags = [p for p in _command(path).params if isinstance(p, typer.core.TyperOption) and p.is_flag]
    for flag in flags:
        assert flag.opts[0] in result.output


def test_a_flag_takes_no_value():
    assert CliRunner().invoke(app, ["roles", "--json"]).exit_code == 0
    refused = CliRunner().invoke(app, ["roles", "--json", "true"])
    assert refused.exit_code == 2 and "unexpected extra argument" in refused.output


def test_every_flag_named_in_a_cli_md_section_exists_on_its_commands():
    """Prose in ``## `kgteam X` `` sections names flags alone (`--min-count`): they must exist on X."""
    problems = []
    commands: list[str] = []
    for n, line in enumerate((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("## "):
            commands = re.findall(r"`kgteam ([a-z]+)", line)
            continue
        known = set().union(*(_all_opts(GROUP.commands[c]) for c in commands if c in GROUP.commands), _opts(GROUP))
        for flag in re.findall(r"`(--[a-z][\w-]*)", line):
            if commands and flag not in known:
                problems.append(f"docs/cli.md:{n}: {flag} is not an option of {', '.join(commands)}")
    assert not problems, "\n".join(problems)


def test_every_markdown_file_the_docs_and_package_cite_exists():
    cited = ROOT.glob("**/*")
    problems = []
    for path in [*DOCS, *(p for p in cited if p.suffix in {".py", ".yaml"} and ".venv" not in p.parts
                          and "tests" not in p.relative_to(ROOT).parts)]:
        for name in re.findall(r"[\w./-]+\.md\b", path.read_text(encoding="utf-8", errors="replace")):
            if Path(name).name == "report.md":  # what `kgteam report` writes
                continue
            if not any((base / name).exists() for base in (ROOT, ROOT / "docs", path.parent)):
                problems.append(f"{path.relative_to(ROOT)} cites {name}, which is not in the repository")
    assert not problems, "\n".join(problems)


def test_the_commands_docs_list_for_home_and_db_are_the_ones_that_take_them():
    text = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    for flag, word in (("--home", "home"), ("--db", "db")):
        listed = re.search(rf"\({word}: ([a-z, ]+)\)", text)
        assert listed, f"docs/cli.md no longer lists the commands that take {flag}"
        documented = {c.strip() for c in listed.group(1).split(",")}
        assert documented == {name for name, c in GROUP.commands.items() if flag in _all_opts(c)}, flag


# Flags added since issue 21, each with the command whose docs/cli.md section must explain it
# (older flags are listed by --help; add each new flag here).
NEW_FLAGS = [("sparql", "--no-labels")]


@pytest.mark.parametrize(("command", "flag"), NEW_FLAGS)
def test_each_new_flag_exists_and_its_cli_md_section_explains_it(command, flag):
    assert flag in _all_opts(GROUP.commands[command])
    sections = re.split(r"^## ", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), flags=re.M)
    own = [s for s in sections if f"`kgteam {command}`" in s.splitlines()[0]]
    assert own and any(f"`{flag}`" in s for s in own), f"docs/cli.md: the kgteam {command} section lacks {flag}"
