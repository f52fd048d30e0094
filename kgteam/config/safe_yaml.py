"""PyYAML hardened for files a stranger may have written (team files, playbooks).

PyYAML's safe loader runs no code, but a few hundred bytes can still make it recurse past
Python's stack (deep nesting, a recursive alias), build billions of objects (an alias bomb),
spend minutes on one integer, or raise errors that are not ``YAMLError``. Every limit here is
checked while the text is decoded and the node graph composed, *before* any Python object is
built, and every refusal carries the line it is about, so a hostile file fails fast and clearly.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.reader import Reader


@dataclass(frozen=True)
class YamlLimits:
    """Generous for a hand-written config file, small enough that a load stays well under a second."""

    max_bytes: int = 256 * 1024
    max_depth: int = 64  # nesting levels, counted through aliases too
    max_aliases: int = 200  # "*name" references in one file
    max_nodes: int = 20_000  # values once every alias is expanded (what loading would build)
    max_number_chars: int = 100  # an int or float longer than this is a mistake (and slow to convert)


LIMITS = YamlLimits()

_YAML = "tag:yaml.org,2002:"
MERGE_TAG = _YAML + "merge"
_SCALAR_TAGS = {_YAML + t for t in ("null", "bool", "int", "float", "str", "timestamp", "merge")}
_NUMBER_TAGS = {_YAML + "int", _YAML + "float"}
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


class YamlRefused(Exception):
    """The text is not a YAML file kgteam will read; ``line`` is 1-based (None: the whole file)."""

    def __init__(self, line: int | None, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def _line_at(text: str | bytes, index: int) -> int:
    newline = "\n" if isinstance(text, str) else b"\n"
    return text.count(newline, 0, index) + 1  # type: ignore[arg-type]


def decode(data: bytes, limits: YamlLimits = LIMITS) -> str:
    """UTF-8 bytes → text (a UTF-8 byte-order mark is dropped); anything else is refused with its line."""
    if len(data) > limits.max_bytes:
        raise YamlRefused(None, f"the file is {len(data):,} bytes; a team file is at most {limits.max_bytes:,}")
    for bom, name in _BOMS:  # UTF-32 before UTF-16: their little-endian marks share a prefix
        if data.startswith(bom):
            raise YamlRefused(1, f"the file is {name} (byte-order mark); save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise YamlRefused(_line_at(data, exc.start),
                          f"not UTF-8: byte 0x{data[exc.start]:02x} in column {column}; save the file as UTF-8") \
            from None
    check_text(text, limits)
    return text


def check_text(text: str, limits: YamlLimits = LIMITS) -> None:
    """Size and characters YAML forbids (NUL and other control characters), with the line."""
    if len(text) > limits.max_bytes:
        raise YamlRefused(None, f"the text is {len(text):,} characters; a team file is at most {limits.max_bytes:,}")
    bad = Reader.NON_PRINTABLE.search(text)
    if bad:
        char = bad.group()
        what = "a NUL byte" if char == "\0" else f"the control character U+{ord(char):04X}"
        raise YamlRefused(_line_at(text, bad.start()), f"{what} is not allowed in YAML")


def _show_tag(tag: str) -> str:
    return "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag


class _LimitedLoader(yaml.SafeLoader):
    """The safe loader, with nesting, alias and node counts checked as each node is composed."""

    def __init__(self, text: str, limits: YamlLimits):
        super().__init__(text)
        self.limits = limits
        self.depth = self.aliases = self.nodes = 0
        self.open_anchors: set[str] = set()

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > self.limits.max_aliases:
                raise YamlRefused(line, f"more than {self.limits.max_aliases} aliases (*name)")
            if event.anchor in self.open_anchors:
                raise YamlRefused(line, f"recursive alias *{event.anchor}: it refers to a value that contains it")
            return super().compose_node(parent, index)
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise YamlRefused(line, f"more than {self.limits.max_nodes:,} values")
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise YamlRefused(line, f"nested more than {self.limits.max_depth} levels deep")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self.open_anchors.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1
            self.open_anchors.discard(anchor)


def compose(text: str, limits: YamlLimits = LIMITS) -> tuple[yaml.SafeLoader, yaml.Node | None]:
    """The checked node graph of ``text`` and the loader that can construct its scalars.

    Raises :class:`YamlRefused` for a limit or a value kgteam will not build, ``yaml.YAMLError``
    for a syntax error. The caller disposes of the loader.
    """
    check_text(text, limits)
    loader = _LimitedLoader(text, limits)
    try:
        node = loader.get_single_node()
        if node is not None:
            _GraphCheck(limits).visit(node)
    except BaseException:
        loader.dispose()
        raise
    return loader, node


class _GraphCheck:
    """One pass over the composed graph, each shared (anchored) node measured once: how many values
    and levels building it would take once aliases are expanded, and shapes plain data cannot take."""

    def __init__(self, limits: YamlLimits):
        self.limits = limits
        self.measured: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) when expanded

    def visit(self, node: yaml.Node) -> tuple[int, int]:
        known = self.measured.get(id(node))
        if known is not None:  # an alias to a node already measured: its cost counts again, not its walk
            return known
        values, depth = self._measure(node)
        line = node.start_mark.line + 1
        if values > self.limits.max_nodes:
            raise YamlRefused(line, f"aliases expand to more than {self.limits.max_nodes:,} values (an alias bomb?)")
        if depth > self.limits.max_depth:
            raise YamlRefused(line, f"aliases nest more than {self.limits.max_depth} levels deep")
        self.measured[id(node)] = values, depth
        return values, depth

    def _measure(self, node: yaml.Node) -> tuple[int, int]:
        line = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            if node.tag not in _SCALAR_TAGS:
                raise YamlRefused(line, f"unsupported tag {_show_tag(node.tag)!r}: a team file holds plain "
                                        "strings, numbers, booleans, lists and mappings")
            if node.tag in _NUMBER_TAGS and len(node.value) > self.limits.max_number_chars:
                raise YamlRefused(line, f"a number of {len(node.value):,} characters; quote it if it is text")
            return 1, 1
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _YAML + "seq":
                raise YamlRefused(line, f"unsupported tag {_show_tag(node.tag)!r} on a list")
            return self._sum(node.value)
        if node.tag != _YAML + "map":
            raise YamlRefused(line, f"unsupported tag {_show_tag(node.tag)!r} on a mapping")
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                kind = "mapping" if isinstance(key, yaml.MappingNode) else "list"
                raise YamlRefused(key.start_mark.line + 1, f"a key must be a plain value, not a {kind}")
            if key.tag == MERGE_TAG:
                _check_merge(value)
        return self._sum([n for pair in node.value for n in pair])

    def _sum(self, children: list[yaml.Node]) -> tuple[int, int]:
        values, depth = 1, 0
        for child in children:
            child_values, child_depth = self.visit(child)
            values += child_values
            depth = max(depth, child_depth)
        return values, depth + 1


def _check_merge(value: yaml.Node) -> None:
    items = value.value if isinstance(value, yaml.SequenceNode) else [value]
    if not all(isinstance(item, yaml.MappingNode) for item in items):
        raise YamlRefused(value.start_mark.line + 1,
                          "'<<' merges a mapping (<<: *name) or a list of mappings (<<: [*a, *b])")


def construct_scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """The Python value of a checked scalar; a value its tag cannot hold (``!!int abc``,
    ``2024-13-45``) is refused at its line instead of escaping as ValueError/KeyError."""
    try:
        return loader.construct_object(node, deep=True)
    except Exception as exc:  # noqa: BLE001 - the constructors raise several unrelated types
        detail = exc.problem if isinstance(exc, yaml.MarkedYAMLError) else exc
        raise YamlRefused(node.start_mark.line + 1,
                          f"cannot read {node.value[:40]!r} as {_show_tag(node.tag)}: {detail}") from None
