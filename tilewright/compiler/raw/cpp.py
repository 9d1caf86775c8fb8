"""``ttl.raw.cpp(...)``: a C++ function with a typed signature, called from kernels (TLE-Raw §10.3).

The C++ flavour of the raw escape hatch is ``ttl.call_extern_func`` with two
differences: the source may be inline text, and the function has a typed
signature (``ttl.raw.DFB``, ``ttl.raw.f32``, ...) that every call is checked
against at decoration.  Everything after that is the external-call machinery:

* construction (:func:`cpp`) validates the declaration -- the source (a file that
  exists, or non-empty inline text), the entry (a C++ name that the source defines),
  the signature and result markers, include paths, template arguments and the shape
  of ``effects`` -- and reports errors at the user's ``ttl.raw.cpp(`` line;
* inline text becomes a content-addressed header (``tw_raw_<sha256>.hpp`` in the
  native build cache, :func:`header_for`): the generated glue includes it, so
  editing the text rebuilds;
* each call ``ext(src, dst, 2.0, n, kernel=...)`` in an operation becomes the same
  :class:`~tilewright.lang.extern.plan.CallSite` a ``call_extern_func`` site becomes
  (:mod:`.cpp_calls`), with its declared effects evaluated against the call's
  arguments (:mod:`.cpp_effects`), so the splitter, DFB allocation, ``explain``,
  the interpreter's run time (glue, build cache, contract monitor) and the compiled
  engine treat it unchanged;
* at run time, in an explicit kernel function, :meth:`CppFunction.__call__` hands the
  call to the external-call run time (a unified body calls it through the
  ``ttl.call_extern_func`` the splitter generated).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from tilewright.compiler.extern.frontend_args import ArgumentChecks
from tilewright.device.engine import ACTIVE
from tilewright.errors import ExternCallError, SourceLoc, user_location
from tilewright.lang import raw_types, state
from tilewright.lang.extern import runtime
from tilewright.lang.extern.plan import TemplateArg
from tilewright.lang.extern.surface import KernelOnlyError
from tilewright.lang.extern.types import (
    AccessItem,
    DFBDescriptorArg,
    DFBIdArg,
    EffectItem,
    EffectRepeat,
    RawAddr,
    ScalarType,
)
from tilewright.native import toolchain

__all__ = ["CppFunction", "RawCppError", "cpp", "header_for"]

_ENTRY = re.compile(r"^(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*$")
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_RESULTS = {"i32": ScalarType.I32, "i64": ScalarType.I64, "index": ScalarType.I32}
_MARKER_NAMES = ", ".join(f"ttl.raw.{m.name}" for m in raw_types.MARKERS)


class RawCppError(ExternCallError):
    """A ``ttl.raw.cpp`` declaration or one of its calls breaks a rule."""

    default_rule = "raw-cpp"


class _TemplateArgs(ArgumentChecks):
    """The external-call front end's template-argument rules, applied to static values."""

    def __init__(self, title: str, loc: SourceLoc | None) -> None:
        self.title = title
        self.loc = loc  # type: ignore[assignment]

    def error(self, message, hint=None, cls=RawCppError):
        return cls(f"{self.title}: {message}", loc=self.loc, hint=hint)


class CppFunction:
    """A validated ``ttl.raw.cpp`` declaration; call it inside a kernel of an operation."""

    __slots__ = (
        "entry",
        "signature",
        "result",
        "result_type",
        "header",
        "include_paths",
        "template_args",
        "template_params",
        "template_values",
        "effects",
        "effect_names",
        "loc",
        "source_path",
        "inline_text",
        "digest",
    )

    def __init__(
        self,
        *,
        entry: str,
        signature: tuple[raw_types.RawType, ...],
        result: raw_types.RawType | None,
        source_path: Path | None,
        inline_text: str | None,
        include_paths: tuple[str, ...],
        template_args: tuple[TemplateArg, ...],
        template_params: tuple[tuple[int, int], ...],
        template_values: tuple[object, ...],
        effects: Callable[..., object] | tuple[object, ...] | None,
        effect_names: tuple[str, ...],
        loc: SourceLoc | None,
    ) -> None:
        self.entry = entry
        self.signature = signature
        self.result = result
        self.result_type = _RESULTS[result.name] if result is not None else None
        self.source_path = source_path
        self.inline_text = inline_text
        text = inline_text if inline_text is not None else str(source_path)
        self.digest = hashlib.sha256(text.encode()).hexdigest()
        self.header = source_path.name if source_path is not None else _inline_name(self.digest)
        self.include_paths = include_paths
        self.template_args = template_args
        # (template argument, DFB parameter) of ttl.dfb_descriptor(i) / ttl.get_dfb_id(i)
        self.template_params = template_params
        self.template_values = template_values  # as declared (the rewritten call shows them)
        self.effects = effects
        self.effect_names = effect_names  # the effects lambda's parameter names (messages)
        self.loc = loc

    @property
    def title(self) -> str:
        return f"ttl.raw.cpp function '{self.entry}'"

    @property
    def where(self) -> str:
        """Where the source is: the file, or the inline text's header and declaration."""
        if self.source_path is not None:
            return str(self.source_path)
        return f"inline source {self.header} declared at {self.loc}"

    def __call__(self, *args: object, kernel: object = None) -> int | None:
        """Run the call on the running kernel (an explicit kernel function's call; validated at
        decoration, found by its source position, run by the external-call run time)."""
        if ACTIVE.run is None or state.CURRENT is None:
            raise KernelOnlyError(
                f"{self.title} is valid only in a compiled kernel",
                loc=user_location(),
                hint="call it inside an @ttl.operation (a kernel function or a unified body)",
            )
        func_args = [
            RawAddr(a) if m is raw_types.RawAddr and not isinstance(a, RawAddr) else a
            for m, a in zip(self.signature, args, strict=False)
        ]
        template = self.template_markers(args) if self.template_params else None
        try:
            return runtime.call(sys._getframe(1), func_args, template, None, None)
        except ExternCallError as exc:
            if exc.rule != "extern-unvalidated":
                raise
            raise RawCppError(
                f"this call of {self.title} was not validated with its operation: call it by its "
                "name directly in the operation body or one of its kernel functions (not through a "
                "helper function or a local alias)",
                loc=exc.loc,
            ) from None

    def template_markers(self, args: Sequence[object]) -> list[object]:
        """The run-time template arguments of a call: the DFB parameters' descriptors / ids."""
        out: list[object] = [None] * len(self.template_args)
        for t, p in self.template_params:
            dfb = args[p] if p < len(args) else None
            kind = self.template_args[t].kind
            out[t] = DFBDescriptorArg(dfb) if kind == "descriptor" else DFBIdArg(dfb)
        return out

    def __repr__(self) -> str:
        sig = ", ".join(repr(m) for m in self.signature)
        return f"<ttl.raw.cpp {self.entry}({sig}) from {self.where}>"


def _inline_name(digest: str) -> str:
    return f"tw_raw_{digest[:24]}.hpp"


def header_for(fn: CppFunction) -> tuple[str, tuple[str, ...]]:
    """(header, include paths) the glue of a call of ``fn`` uses.

    A file source is included by name from its directory; inline text is written once to
    ``<native cache>/raw_cpp/tw_raw_<sha256>.hpp`` (content-addressed: an edited text is a
    new header, so the call's glue and its shared object are new too).
    """
    if fn.inline_text is None:
        assert fn.source_path is not None
        return fn.header, (str(fn.source_path.parent), *fn.include_paths)

    directory = toolchain.OPTIONS.resolved_cache_dir() / "raw_cpp"
    path = directory / fn.header
    if not path.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(fn.inline_text)
        os.replace(tmp, path)
    return fn.header, (str(directory), *fn.include_paths)


# -- construction --------------------------------------------------------------------------------


def cpp(
    source: str | os.PathLike[str],
    *,
    entry: str,
    signature: Sequence[raw_types.RawType],
    result: raw_types.RawType | None = None,
    include_paths: Sequence[str | os.PathLike[str]] | None = None,
    template_args: Sequence[object] | None = None,
    effects: Callable[..., object] | Sequence[object] | None = None,
) -> CppFunction:
    """Declare a C++ function for kernels: ``ttl.raw.cpp(source=..., entry=..., signature=...)``.

    Args:
        source: a ``pathlib.Path`` to a C++ file (relative to the declaring file), or the
            C++ text itself (a ``str``).  The text is included into the generated glue
            after the kernel API of the calling kernel's kind.
        entry: the function to call (``name`` or ``ns::name``; a template when
            ``template_args`` are given).
        signature: one marker per parameter: ``ttl.raw.i32 / i64 / u32 / index / f32``
            (scalars), ``ttl.raw.DFB`` (the DFB's physical index), ``ttl.raw.TensorAccessor``
            (a tensor parameter of the operation), ``ttl.raw.RawAddr`` (its address).
        result: ``ttl.raw.i32`` / ``ttl.raw.i64`` (``index``: i32) or None (void).
        include_paths: extra include directories (relative to the declaring file).
        template_args: ints (32-bit), bools, floats (binary32 bits), as ``call_extern_func``.
        effects: the DFB protocol actions the function performs, in order: a function of
            the parameters returning a list of ``ttl.DFBEffect`` / ``ttl.DFBAccess.inspect``
            (evaluated against each call's arguments), a list naming DFB parameters by
            position, or None (every DFB argument is an opaque dependency).
    """
    loc = user_location()
    title = f"ttl.raw.cpp(entry={entry!r})"

    def error(message: str, hint: str | None = None) -> RawCppError:
        return RawCppError(f"{title}: {message}", loc=loc, hint=hint)

    base = Path(loc.file).parent if loc is not None else Path.cwd()
    if not isinstance(entry, str) or not _ENTRY.match(entry):
        raise error(
            f"entry {entry!r} is not a C++ function name (an identifier, optionally qualified "
            "with ::)"
        )
    source_path, inline_text = _source(source, base, error)
    paths = _include_paths(include_paths, base, error)
    if source_path is not None:
        text = source_path.read_text(errors="replace")
        search = (source_path.parent, *map(Path, paths))
    else:
        text, search = inline_text or "", tuple(map(Path, paths))
    _check_entry_defined(entry, text, source_path, search, error)
    sig = _signature(signature, error)
    if result is not None and (
        not isinstance(result, raw_types.RawType) or result.name not in _RESULTS
    ):
        raise error(
            f"result={result!r}: a raw C++ function returns at most one signed integer, "
            "ttl.raw.i32 or ttl.raw.i64 (call_extern_func's result_type), or None",
        )
    targs, tparams = _template_args(template_args, sig, title, loc, error)
    checked_effects, names = _effects_shape(effects, sig, error)
    return CppFunction(
        entry=entry,
        signature=sig,
        result=result,
        source_path=source_path,
        inline_text=inline_text,
        include_paths=paths,
        template_args=targs,
        template_params=tparams,
        template_values=tuple(template_args or ()),
        effects=checked_effects,
        effect_names=names,
        loc=loc,
    )


def _source(source: object, base: Path, error) -> tuple[Path | None, str | None]:
    if isinstance(source, str):
        if not source.strip():
            raise error("the inline C++ source is empty", hint="pass the C++ text, or Path(file)")
        if "\n" not in source and re.search(r"\.(c|cc|cpp|cxx|h|hh|hpp|hxx)$", source.strip()):
            raise error(
                f"source={source!r} is a str, which ttl.raw.cpp takes as inline C++ text",
                hint=f"pass pathlib.Path({source!r}) for a file",
            )
        return None, source
    if isinstance(source, os.PathLike):
        path = Path(os.fspath(source))
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise error(f"source file {os.fspath(source)!r} does not exist ({path})")
        return path.resolve(), None
    raise error(
        f"source must be a pathlib.Path (a C++ file) or a str (inline C++ text), got "
        f"{type(source).__name__}"
    )


def _check_entry_defined(
    entry: str, text: str, path: Path | None, search: tuple[Path, ...], error
) -> None:
    """The entry must appear in the source -- unless the source includes one of the user's
    own headers (found beside the source or in ``include_paths``), which may define it:
    then the C++ compiler decides.  The kernel API's headers define no user function."""
    name = entry.rsplit("::", 1)[-1]
    if re.search(rf"\b{re.escape(name)}\b", text):
        return
    for header in _LOCAL_INCLUDE.findall(text):
        if any((d / header).is_file() for d in search):
            return
    where = str(path) if path is not None else "the inline source"
    raise error(f"entry '{entry}' is not defined in {where}: the name does not appear in it")


def _signature(signature: object, error) -> tuple[raw_types.RawType, ...]:
    if not isinstance(signature, (tuple, list)):
        raise error(
            f"signature must be a tuple of ttl.raw type markers ({_MARKER_NAMES}), got "
            f"{type(signature).__name__}"
        )
    for i, m in enumerate(signature):
        if not isinstance(m, raw_types.RawType) or m not in raw_types.MARKERS:
            shown = getattr(m, "__name__", None) or repr(m)
            raise error(
                f"signature[{i}] is {shown}, not a ttl.raw type marker",
                hint=f"use one of {_MARKER_NAMES}",
            )
    return tuple(signature)


def _include_paths(paths: object, base: Path, error) -> tuple[str, ...]:
    if paths is None:
        return ()
    if isinstance(paths, (str, os.PathLike)) or not isinstance(paths, (list, tuple)):
        raise error(f"include_paths must be a list of directories, got {paths!r}")
    out = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise error(f"include_paths element {p!r} is not a path")
        path = Path(os.fspath(p))
        path = path if path.is_absolute() else base / path
        if not path.is_dir():
            raise error(f"include_paths element {os.fspath(p)!r} is not a directory ({path})")
        out.append(str(path.resolve()))
    return tuple(out)


def _template_args(
    args: object, sig: tuple[raw_types.RawType, ...], title: str, loc: SourceLoc | None, error
) -> tuple[tuple[TemplateArg, ...], tuple[tuple[int, int], ...]]:
    """Static template arguments as C++ text, and ``ttl.dfb_descriptor(i)`` /
    ``ttl.get_dfb_id(i)`` of DFB parameter ``i`` (resolved per call)."""
    if args is None:
        return (), ()
    if not isinstance(args, (list, tuple)):
        raise error(f"template_args must be a list, got {type(args).__name__}")
    checks = _TemplateArgs(title, loc)
    out: list[TemplateArg] = []
    params: list[tuple[int, int]] = []
    for v in args:
        if isinstance(v, (DFBDescriptorArg, DFBIdArg)):
            kind = "descriptor" if isinstance(v, DFBDescriptorArg) else "dfb_id"
            p = v.dfb
            if not (isinstance(p, int) and 0 <= p < len(sig) and sig[p] is raw_types.DFB):
                raise error(
                    f"template argument {v!r} must name a ttl.raw.DFB parameter by its position "
                    f"in the signature (ttl.dfb_descriptor(i) / ttl.get_dfb_id(i)), got {p!r}"
                )
            params.append((len(out), p))
            out.append(TemplateArg(kind))
            continue
        out.append(checks.template_value(v, repr(v)))
    return tuple(out), tuple(params)


def _effects_shape(
    effects: object, sig: tuple[raw_types.RawType, ...], error
) -> tuple[Callable[..., object] | tuple[object, ...] | None, tuple[str, ...]]:
    """``effects`` checked as far as it can be without a call: None, a list whose DFBs are
    parameter positions, or a function taking exactly the parameters."""
    if effects is None:
        return None, ()
    if callable(effects):
        try:
            params = list(inspect.signature(effects).parameters.values())
        except (TypeError, ValueError):
            raise error("effects is a callable whose parameters cannot be read") from None
        positional = [
            p
            for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
        if len(positional) != len(sig) or any(p.kind is p.VAR_POSITIONAL for p in params):
            raise error(
                f"effects takes {len(positional)} parameter(s) but the signature has {len(sig)}; "
                "effects=lambda <one name per parameter>: [ttl.DFBEffect..., ...]"
            )
        return effects, tuple(p.name for p in positional)
    if isinstance(effects, (list, tuple)):
        for item in effects:
            _check_listed(item, sig, error)
        return tuple(effects), ()
    raise error(
        f"effects must be a function of the parameters, a list of ttl.DFBEffect entries or None, "
        f"got {type(effects).__name__}"
    )


def _check_listed(item: object, sig: tuple[raw_types.RawType, ...], error) -> None:
    if isinstance(item, EffectRepeat):
        for e in item.effects:
            _check_listed(e, sig, error)
        return
    if not isinstance(item, (EffectItem, AccessItem)):
        raise error(
            f"effects elements must be ttl.DFBEffect.reserve/push/wait/pop/repeat(...) or "
            f"ttl.DFBAccess.inspect(...), got {item!r}"
        )
    dfb = item.dfb
    if not (isinstance(dfb, int) and 0 <= dfb < len(sig) and sig[dfb] is raw_types.DFB):
        raise error(
            f"effects list entry {item.kind}({dfb!r}) must name a ttl.raw.DFB parameter by its "
            "position in the signature",
            hint="or write effects=lambda <params>: [...] to name parameters",
        )
