"""The ``#ttcore.system_desc<...>`` text form: printer and parser (reference §6).

The printer follows tt-mlir's output exactly (§6.3): inner attributes in stripped form,
capabilities as ``1 : i32``, the leading-space quirk of ``custom<VargDimensionList>`` lists
(``[ 4x16,  16x16]``, ``[ 0x0x0x0]``) and the channel group omitted when empty.  It refuses
descriptors that would not parse back (§6.6, §11 rule 25), e.g. the Quasar compiler default.

The parser implements the grammar of §6.4 and accepts a bare attribute or a whole MLIR
module: ``#system_desc = #ttcore.system_desc<...>`` alias definitions and the
``ttcore.system_desc = ...`` module attribute (inline or via an alias).  Errors are
:class:`SystemDescError` whose message starts with ``line:column:`` and says what was
expected.  Both directions walk the field tables of :mod:`fields` and the text style each
field declares; the JSON form lives in :mod:`jsonform`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from tilewright.errors import SystemDescError
from tilewright.target.enums import ARCH, CPU_ROLE, DATA_TYPE, MLIR_DATA_TYPES, ChipCapability
from tilewright.target.fields import (
    CHIP_CHANNEL,
    SYSTEM_DESC,
    UINT32,
    Field,
    Scalar,
    StructSpec,
    TableSpec,
    Text,
    VectorKind,
)
from tilewright.target.findings import Finding, Severity, error_for
from tilewright.target.model import ChipChannel, Dim2d, SystemDesc, SystemDescRoot

__all__ = [
    "ATTR_PREFIX",
    "MODULE_ATTR",
    "MlirSystemDescs",
    "mlir_problems",
    "parse_mlir_system_descs",
    "parse_system_desc",
    "print_mlir_module",
    "print_system_desc",
]

ATTR_PREFIX = "#ttcore.system_desc"
MODULE_ATTR = "ttcore.system_desc"
_U32_MAX = UINT32.hi


# --- what cannot be printed (§6.6, §11 rules 15, 18, 21, 25) -------------------------------


def mlir_problems(sd: SystemDesc, prefix: str = "") -> list[Finding]:
    """Reasons ``sd`` cannot be printed as text that parses back (as E findings).

    Args:
        prefix: prepended to field paths (``"system_desc."`` inside a root).
    """
    out: list[Finding] = []

    def bad(rule: int, path: str, message: str) -> None:
        out.append(Finding(Severity.ERROR, rule, message, prefix + path))

    for f in SYSTEM_DESC.fields:
        if f.text is not Text.CHANNEL_LIST and not getattr(sd, f.name):
            rule = 15 if f.name == "cpu_descs" else 25
            extra = " (the Quasar compiler default has no chips)" if f.name == "chip_descs" else ""
            bad(rule, f.name, f"{f.name} is empty; MLIR cannot parse '[]' here (§6.6){extra}")
    for i, chip in enumerate(sd.chip_descs):
        at = f"chip_descs[{i}]"
        for name in ("supported_data_types", "supported_tile_sizes"):
            if not getattr(chip, name):
                bad(18, f"{at}.{name}", f"{name} is empty; MLIR cannot parse '[]' here")
        lost = [DATA_TYPE.fb_name(t) for t in chip.supported_data_types if t not in MLIR_DATA_TYPES]
        if lost:
            bad(
                18,
                f"{at}.supported_data_types",
                f"{', '.join(lost)} have no MLIR spelling (FlatBuffer-only data types 13-17)",
            )
        for name in ("l1_size", "dram_channel_size"):
            if getattr(chip, name) > _U32_MAX:
                bad(
                    21,
                    f"{at}.{name}",
                    f"{name} = {getattr(chip, name)} does not fit MLIR's 32-bit unsigned parameter",
                )
        for name in (
            "grid_size",
            "coord_translation_offsets",
            "dram_grid_size",
            "supported_tile_sizes",
        ):
            value = getattr(chip, name)
            dims = value if isinstance(value, tuple) else (value,)
            if any(d.y < 0 or d.x < 0 for d in dims):
                bad(
                    25,
                    f"{at}.{name}",
                    f"{name} has a negative dimension, which a MLIR dimension list cannot spell",
                )
    return out


# --- printer ---------------------------------------------------------------------------------


def _escape(text: str) -> str:
    """MLIR string escaping (``llvm::printEscapedString``): ``\\\\``, ``\\22``, ``\\XX``."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and char != '"':
            out.append(char)
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def _varg(values: tuple[int, ...]) -> str:
    # ODS prints a space before a format that starts with a custom directive (§6.3).
    return " " + "x".join(str(v) for v in values)


def _channel(ch: ChipChannel) -> str:
    c0, c1 = ch.ethernet_core_coord0, ch.ethernet_core_coord1
    return f"<[{ch.device_id0}, {c0.y}, {c0.x}], [{ch.device_id1}, {c1.y}, {c1.x}]>"


def _elem_spec(f: Field) -> Any:
    assert isinstance(f.kind, VectorKind)
    return f.kind.elem


def _style(f: Field) -> Text:
    if f.text is None:
        raise AssertionError(f"field {f.name} has no text form")
    return f.text


def _print_table(spec: TableSpec, obj: Any) -> str:
    items = ", ".join(
        f"{f.key} = {_PRINT[_style(f)](f, getattr(obj, f.name))}" for f in spec.fields
    )
    return "{" + items + "}"


_PRINT: dict[Text, Callable[[Field, Any], str]] = {
    Text.UINT: lambda f, v: str(v),
    Text.ARCH_ATTR: lambda f, v: f"<{ARCH.keyword(v)}>",
    Text.KEYWORD: lambda f, v: str(CPU_ROLE.keyword(v)),
    Text.STRING: lambda f, v: _escape(v),
    Text.DIMS: lambda f, v: f"{v.y}x{v.x}",
    Text.DTYPE_LIST: lambda f, v: "[" + ", ".join(f"<{DATA_TYPE.keyword(t)}>" for t in v) + "]",
    Text.VARG_LIST: lambda f, v: "[" + ", ".join(_varg(_elem_spec(f).flatten(e)) for e in v) + "]",
    Text.CORE_LIST: lambda f, v: "[" + ", ".join(f"({d.y}, {d.x})" for d in v) + "]",
    Text.TABLE_LIST: lambda f, v: "[" + ", ".join(_print_table(_elem_spec(f), e) for e in v) + "]",
    Text.UINT_LIST: lambda f, v: "[" + ", ".join(str(i) for i in v) + "]",
    Text.CAP_LIST: lambda f, v: "[" + ", ".join(f"{int(c)} : i32" for c in v) + "]",
    Text.CHANNEL_LIST: lambda f, v: "[" + ", ".join(_channel(c) for c in v) + "]",
}


def print_system_desc(obj: SystemDesc | SystemDescRoot) -> str:
    """Print ``#ttcore.system_desc<...>`` exactly as tt-mlir does (§6.2-6.3).

    Raises:
        SystemDescError: the descriptor would not parse back (empty lists, FlatBuffer-only
            data types, sizes above 2**32 - 1; §6.6, §11 rules 15, 18, 21, 25).
    """
    sd = obj.system_desc if isinstance(obj, SystemDescRoot) else obj
    problems = mlir_problems(sd, "system_desc." if isinstance(obj, SystemDescRoot) else "")
    if problems:
        raise error_for(problems[0])
    parts = [
        _PRINT[_style(f)](f, getattr(sd, f.name))
        for f in SYSTEM_DESC.fields
        # The optional channel group is omitted when empty (§6.3).
        if f.text is not Text.CHANNEL_LIST or getattr(sd, f.name)
    ]
    return f"{ATTR_PREFIX}<{', '.join(parts)}>"


def print_mlir_module(obj: SystemDesc | SystemDescRoot) -> str:
    """An MLIR module carrying the descriptor the way ``ttmlir-opt`` prints it (§6.2 alias)."""
    return (
        f"#system_desc = {print_system_desc(obj)}\n"
        f"module attributes {{{MODULE_ATTR} = #system_desc}} {{\n}}\n"
    )


# --- parser ----------------------------------------------------------------------------------

# ASCII only, as MLIR's lexer: no Unicode digits or letters.
_WS = re.compile(r"(?:\s+|//[^\n]*)*", re.ASCII)
_UINT = re.compile(r"0x[0-9a-fA-F]+|\d+", re.ASCII)
_INT = re.compile(r"-?(?:0x[0-9a-fA-F]+|\d+)", re.ASCII)
_DIMS = re.compile(r"\d+(?:x\d+)*(?![\w])", re.ASCII)
_WORD = re.compile(r"[A-Za-z_][\w.]*", re.ASCII)
_TOKEN = re.compile(r"[A-Za-z_0-9.#\-]{1,40}|\S")
_MAX_DIGITS = 24


def _to_int(token: str) -> int:
    """Decimal (leading zeros allowed) or ``0x`` hex, as MLIR's ``parseInteger``."""
    negative = token.startswith("-")
    digits = token.lstrip("-")
    # int(..., 0) would reject decimal leading zeros ("012"), which MLIR accepts.
    value = int(digits, 16) if digits.startswith("0x") else int(digits, 10)
    return -value if negative else value


class _Parser:
    """Recursive descent over §6.4 with positions; every error says what was expected."""

    def __init__(self, text: str, pos: int = 0, source: str | None = None) -> None:
        self.text = text
        self.pos = pos
        self.source = source

    # -- positions and errors --
    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        prefix = f"{self.source}:" if self.source else ""
        return f"{prefix}{line}:{col}"

    def error(
        self,
        expected: str,
        *,
        pos: int | None = None,
        rule: int | None = None,
        field: str | None = None,
    ) -> NoReturn:
        at = self.pos if pos is None else pos
        token = _TOKEN.match(self.text, at)
        found = f"'{token.group()}'" if token else "end of input"
        suffix = f" [rule {rule}]" if rule is not None else ""
        raise SystemDescError(
            f"{self.where(at)}: expected {expected}, found {found}{suffix}",
            field=field,
            offset=at,
            rule=f"system-desc.{rule}" if rule is not None else None,
        )

    # -- lexical helpers --
    def skip(self) -> None:
        m = _WS.match(self.text, self.pos)  # matches the empty string too
        self.pos = m.end() if m else self.pos

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.pos)

    def accept(self, literal: str) -> bool:
        if self.peek(literal):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str, context: str) -> None:
        if not self.accept(literal):
            self.error(f"'{literal}' {context}")

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if not m:
            self.error(what)
        self.pos = m.end()
        return m.group()

    def number(self, pattern: re.Pattern[str], what: str) -> tuple[int, int]:
        """(value, start position) of an integer token; absurdly long ones are errors."""
        self.skip()
        start = self.pos
        token = self.match(pattern, what)
        if len(token) > _MAX_DIGITS:  # also keeps int() below Python's digit limit
            self.error(f"{what} of at most {_MAX_DIGITS} digits", pos=start)
        return _to_int(token), start

    def uint(self, what: str, limit: int = _U32_MAX) -> int:
        value, start = self.number(_UINT, f"an unsigned integer for {what}")
        if value > limit:
            self.error(f"{what} <= {limit} (MLIR unsigned is 32-bit)", pos=start, rule=21)
        return value

    def int32(self, what: str) -> int:
        value, start = self.number(_INT, f"an integer for {what}")
        if not -(2**31) <= value < 2**31:
            self.error(f"{what} within int32", pos=start)
        return value

    def dims(self, count: int, what: str, limit: int = 2**31 - 1) -> tuple[int, ...]:
        self.skip()
        start = self.pos
        token = self.match(_DIMS, f"a dimension list like {'x'.join(['8'] * count)} for {what}")
        parts = token.split("x")
        if len(parts) != count:
            self.error(f"exactly {count} dimensions for {what}, got {len(parts)}", pos=start)
        if any(len(p) > _MAX_DIGITS or int(p) > limit for p in parts):
            self.error(f"dimensions of {what} of at most {limit}", pos=start)
        return tuple(int(p) for p in parts)

    def word(self, what: str) -> str:
        return self.match(_WORD, what)

    def string(self, what: str) -> str:
        self.skip()
        if not self.text.startswith('"', self.pos):
            self.error(f"a quoted string for {what}")
        out = bytearray()
        i = self.pos + 1
        escapes = {"\\": b"\\", '"': b'"', "n": b"\n", "t": b"\t"}
        while i < len(self.text) and self.text[i] != '"':
            char = self.text[i]
            if char == "\n":
                self.error(f"a closing '\"' for {what}", pos=i)
            if char != "\\":
                out += char.encode("utf-8")
                i += 1
            elif self.text[i + 1 : i + 2] in escapes:
                out += escapes[self.text[i + 1]]
                i += 2
            elif re.fullmatch(r"[0-9a-fA-F]{2}", self.text[i + 1 : i + 3]):
                out.append(int(self.text[i + 1 : i + 3], 16))
                i += 3
            else:
                self.error('an escape \\\\, \\", \\n, \\t or \\XX in a string', pos=i)
        if i >= len(self.text):
            self.error(f"a closing '\"' for {what}", pos=i)
        self.pos = i + 1
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            self.error(f"UTF-8 text in {what}", pos=i)

    def listing(
        self, parse_item: Callable[[], Any], what: str, *, allow_empty: bool
    ) -> tuple[Any, ...]:
        """``'[' item (',' item)* ']'``; MLIR rejects ``[]`` for ODS lists (§6.3)."""
        self.expect("[", f"to open the {what} list")
        if self.accept("]"):
            if not allow_empty:
                self.error(
                    f"at least one {what} (MLIR cannot parse an empty list here)",
                    pos=self.pos - 1,
                    rule=25,
                )
            return ()
        items = [parse_item()]
        while self.accept(","):
            items.append(parse_item())
        self.expect("]", f"or ',' after {what} {len(items)}")
        return tuple(items)

    def enum_word(self, table: Any, what: str) -> Any:
        self.skip()
        word = _WORD.match(self.text, self.pos)
        member = table.from_keyword(word.group()) if word else None
        if word is None or member is None:
            self.error(f"{what} ({', '.join(table.keywords())})")
        self.pos = word.end()
        return member

    def enum_attr(self, table: Any, what: str) -> Any:
        """``'<' keyword '>'``: the stripped form of an enum attribute (``<bf16>``)."""
        self.expect("<", f"before {what}")
        member = self.enum_word(table, what)
        self.expect(">", f"after {what}")
        return member

    # -- grammar (§6.4) --
    def attribute(self) -> SystemDesc:
        self.expect(ATTR_PREFIX, "to start a system descriptor")
        self.expect("<", f"after {ATTR_PREFIX}")
        values: dict[str, Any] = {}
        for i, f in enumerate(SYSTEM_DESC.fields):
            if f.text is Text.CHANNEL_LIST:
                values[f.name] = self.value(f) if self.accept(",") else ()
                continue
            if i:
                self.expect(",", f"before the {f.name} list")
            values[f.name] = self.value(f)
        self.expect(">", "to close #ttcore.system_desc (or ', [' for chip channels)")
        return SystemDesc(**values)

    def table(self, spec: TableSpec) -> Any:
        self.expect("{", f"to open a {spec.name}")
        values: dict[str, Any] = {}
        for i, f in enumerate(spec.fields):
            if i:
                self.expect(",", f"after {spec.name} field '{spec.fields[i - 1].key}'")
            self.skip()
            key = _WORD.match(self.text, self.pos)
            if not key or key.group() != f.key:
                self.error(
                    f"'{f.key}' ({spec.name} field {i + 1} of {len(spec.fields)}; fields "
                    "are positional)"
                )
            self.pos = key.end()
            self.expect("=", f"after '{f.key}'")
            values[f.name] = self.value(f)
        self.expect("}", f"to close the {spec.name} after '{spec.fields[-1].key}'")
        return spec.cls(**values)

    def value(self, f: Field) -> Any:
        return _PARSE[_style(f)](self, f)

    def varg(self, f: Field) -> Any:
        spec: StructSpec = _elem_spec(f)
        # Dim2d members are int32, ChipCoord members uint32.
        limit = min(m.hi for _, m in spec.members if isinstance(m, Scalar))
        return spec.build(self.dims(len(spec.members), f.key or f.name, limit))

    def core(self, what: str) -> Dim2d:
        self.expect("(", f"to open a (y, x) coordinate in {what}")
        y = self.int32(what)
        self.expect(",", "between y and x")
        x = self.int32(what)
        self.expect(")", "to close a (y, x) coordinate")
        return Dim2d(y, x)

    def channel(self) -> ChipChannel:
        self.expect("<", "to open a chip channel")
        ends = []
        for n in (0, 1):
            if n:
                self.expect(",", "between the two channel endpoints")
            self.expect("[", f"to open channel endpoint {n} [device_id, y, x]")
            device = self.uint(f"device_id{n}")
            self.expect(",", f"after device_id{n}")
            y = self.int32("ethernet core y")
            self.expect(",", "between ethernet core y and x")
            x = self.int32("ethernet core x")
            if not self.accept("]"):
                self.error("']': an ethernet core coordinate has exactly 2 components", rule=14)
            ends.append((device, y, x))
        self.expect(">", "to close a chip channel")
        channel: ChipChannel = CHIP_CHANNEL.build((*ends[0], *ends[1]))
        return channel

    def capability(self) -> ChipCapability:
        value = self.uint("a chip capability", 2**31 - 1)
        if not self.accept(":"):
            self.error(
                "': i32' after a capability (an untyped integer is i64, which tt-mlir rejects)"
            )
        if self.word("the type i32") != "i32":
            self.error("type 'i32' for a chip capability", pos=self.pos - 1)
        return ChipCapability(value)


_PARSE: dict[Text, Callable[[_Parser, Field], Any]] = {
    Text.UINT: lambda p, f: p.uint(f.key or f.name),
    Text.ARCH_ATTR: lambda p, f: p.enum_attr(ARCH, "an arch"),
    Text.KEYWORD: lambda p, f: p.enum_word(CPU_ROLE, "a CPU role"),
    Text.STRING: lambda p, f: p.string(f.key or f.name),
    Text.DIMS: lambda p, f: Dim2d(*p.dims(2, f.key or f.name)),
    Text.DTYPE_LIST: lambda p, f: p.listing(
        lambda: p.enum_attr(DATA_TYPE, "a data type"),
        "data type",
        allow_empty=False,
    ),
    Text.VARG_LIST: lambda p, f: p.listing(lambda: p.varg(f), f.key or f.name, allow_empty=False),
    Text.CORE_LIST: lambda p, f: p.listing(
        lambda: p.core(f.key or f.name), "(y, x) coordinate", allow_empty=True
    ),
    Text.TABLE_LIST: lambda p, f: p.listing(
        lambda: p.table(_elem_spec(f)), _elem_spec(f).name, allow_empty=False
    ),
    Text.UINT_LIST: lambda p, f: p.listing(
        lambda: p.uint("a chip desc index"), "chip desc index", allow_empty=False
    ),
    Text.CAP_LIST: lambda p, f: p.listing(p.capability, "chip capability", allow_empty=False),
    Text.CHANNEL_LIST: lambda p, f: p.listing(p.channel, "chip channel", allow_empty=False),
}


# --- module scanning ---------------------------------------------------------------------------

# Comments and string literals are blanked (same length) before scanning for aliases, so a
# "ttcore.system_desc =" inside a string or comment is never mistaken for a definition.
_MASK = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')
_ALIAS_DEF = re.compile(r"(?m)^[ \t]*#([A-Za-z_][\w$.\-]*)\s*=\s*(?=#ttcore\.system_desc\s*<)")
_MODULE_USE = re.compile(r"(?<![#\w.])ttcore\.system_desc\s*=\s*")
_ALIAS_REF = re.compile(r"#([A-Za-z_][\w$.\-]*)")


@dataclass(frozen=True, slots=True)
class MlirSystemDescs:
    """System descriptors found in an MLIR module text.

    Attributes:
        aliases: alias name (without ``#``) → descriptor, in definition order.
        module: the descriptors of ``ttcore.system_desc = ...`` module attributes, in order.
    """

    aliases: dict[str, SystemDesc]
    module: tuple[SystemDesc, ...]


def parse_mlir_system_descs(text: str, *, source: str | None = None) -> MlirSystemDescs:
    """Find and parse every system descriptor alias and module attribute in ``text``."""
    masked = _MASK.sub(lambda m: " " * len(m.group()), text)
    aliases: dict[str, SystemDesc] = {}
    module: list[SystemDesc] = []
    events = sorted(
        [(m.end(), "def", m.group(1)) for m in _ALIAS_DEF.finditer(masked)]
        + [(m.end(), "use", "") for m in _MODULE_USE.finditer(masked)]
    )
    for pos, event, name in events:
        parser = _Parser(text, pos, source)
        if event == "def":
            aliases[name] = parser.attribute()
        elif text.startswith(ATTR_PREFIX, pos):
            module.append(parser.attribute())
        else:
            ref = _ALIAS_REF.match(text, pos)
            if ref is None:
                parser.error("#ttcore.system_desc<...> or a #alias after 'ttcore.system_desc ='")
            if ref.group(1) not in aliases:
                parser.error(
                    f"a defined alias (known: {', '.join('#' + a for a in aliases) or 'none'})"
                )
            module.append(aliases[ref.group(1)])
    return MlirSystemDescs(aliases, tuple(module))


def parse_system_desc(text: str, *, source: str | None = None) -> SystemDesc:
    """Parse a ``#ttcore.system_desc<...>`` attribute or an MLIR module carrying one.

    For a module, the descriptor of its ``ttcore.system_desc`` attribute is returned; a
    module without that attribute but with exactly one alias definition returns that.

    Args:
        text: the attribute or module text.
        source: file name prefixed to error positions.

    Raises:
        SystemDescError: ``"line:col: expected ..."`` on a syntax error, or when no (or no
            unambiguous) descriptor is present.
    """
    parser = _Parser(text, 0, source)
    if parser.peek(ATTR_PREFIX):
        sd = parser.attribute()
        parser.skip()
        if parser.pos != len(text):
            parser.error("end of input after the #ttcore.system_desc attribute")
        return sd
    found = parse_mlir_system_descs(text, source=source)
    if len(found.module) == 1:
        return found.module[0]
    if not found.module and len(found.aliases) == 1:
        return next(iter(found.aliases.values()))
    if len(found.module) > 1:
        raise SystemDescError(
            f"{len(found.module)} modules carry a ttcore.system_desc; use "
            "parse_mlir_system_descs() to get them all"
        )
    if found.aliases:
        raise SystemDescError(
            f"{len(found.aliases)} system_desc aliases but no module attribute "
            "'ttcore.system_desc = ...' says which one applies"
        )
    parser.pos = 0
    parser.error(
        "a #ttcore.system_desc<...> attribute or a module with "
        "'attributes {ttcore.system_desc = ...}'"
    )
