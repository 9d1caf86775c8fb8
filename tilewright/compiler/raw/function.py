"""``@ttl.raw.ir``: a raw IR function and its typed signature.

The decorator reads the signature from the annotations (evaluated in the function's
module, so ``ttl.raw.DFB`` and friends are objects): every parameter needs one of the
markers of :mod:`.types`, the return annotation is one scalar marker or ``None``.  A
missing or unknown annotation is a :class:`RawIRError` at the ``def`` line.  The body
is not run here: it runs at trace time (:mod:`.trace`), once per specialisation.
"""

from __future__ import annotations

import inspect
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from tilewright.errors import RawIRError, SourceLoc
from tilewright.lang.raw_types import SCALARS, RawType

__all__ = ["RawIRError", "RawIRFunction", "ir"]


@dataclass(frozen=True, eq=False)
class RawIRFunction:
    """A ``@ttl.raw.ir`` function: its body (run at trace time) and typed signature."""

    fn: Callable[..., object]
    name: str
    params: tuple[tuple[str, RawType], ...]
    result: RawType | None
    loc: SourceLoc

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise RawIRError(
            f"raw IR function '{self.name}' is called directly; call it from a kernel with "
            f"ttl.raw.call({self.name}, ...)",
            loc=_caller(),
        )

    def __repr__(self) -> str:
        sig = ", ".join(f"{n}: {t!r}" for n, t in self.params)
        return f"<ttl.raw.ir {self.name}({sig}) -> {self.result!r}>"

    @cached_property
    def _global_names(self) -> tuple[str, ...]:
        return tuple(sorted(_code_names(self.fn.__code__)))

    def reads(self) -> tuple[tuple[str, object], ...]:
        """The plain values (numbers, strings, tuples of them) the body reads from its module
        and its closure: a trace depends on them, so a changed one means tracing again."""
        glb = self.fn.__globals__
        out = [(n, _plain(glb[n])) for n in self._global_names if n in glb]
        for i, cell in enumerate(self.fn.__closure__ or ()):
            try:
                out.append((f"<cell {i}>", _plain(cell.cell_contents)))
            except ValueError:  # an empty cell
                continue
        return tuple(x for x in out if x[1] is not _OTHER)

    def cache_signature(self) -> object:
        """What a cache of compiled kernels keys on for this function (``backend.compile._sig``)."""
        return ("raw.ir", id(self), self.reads())


_OTHER = object()


def _plain(v: object) -> object:
    """``v`` if it is a plain value a trace may fold, else ``_OTHER``."""
    if isinstance(v, float):  # by bit pattern: 0.0 and -0.0, NaN payloads differ
        return ("float", struct.pack("<d", v))
    if v is None or isinstance(v, (bool, int, str)):
        return (type(v).__name__, v)
    if isinstance(v, tuple):
        items = tuple(_plain(x) for x in v)
        return _OTHER if any(x is _OTHER for x in items) else items
    return _OTHER


def _code_names(code) -> set[str]:
    out = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            out |= _code_names(const)
    return out


def _caller() -> SourceLoc | None:
    frame = inspect.currentframe()
    frame = frame.f_back.f_back if frame and frame.f_back else None
    return SourceLoc.from_frame(frame) if frame is not None else None


def ir(fn: Callable[..., object]) -> RawIRFunction:
    """``@ttl.raw.ir``: declare a raw IR function (see docs/raw.md)."""
    if not inspect.isfunction(fn):
        raise RawIRError(f"@ttl.raw.ir decorates a function, got {type(fn).__name__}")
    code = fn.__code__
    loc = SourceLoc(code.co_filename, _def_line(fn, code.co_firstlineno))
    title = f"@ttl.raw.ir function '{fn.__name__}'"
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception as exc:  # a NameError / AttributeError in an annotation string
        raise RawIRError(
            f"{title}: an annotation cannot be evaluated ({type(exc).__name__}: {exc})", loc=loc
        ) from None
    params: list[tuple[str, RawType]] = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise RawIRError(
                f"{title}: parameter '{p.name}' is {p.kind.description}; raw functions take "
                "plain positional parameters",
                loc=loc,
            )
        if p.default is not p.empty:
            raise RawIRError(f"{title}: parameter '{p.name}' has a default value", loc=loc)
        ann = annotations.get(p.name)
        if ann is None:
            raise RawIRError(
                f"{title}: parameter '{p.name}' has no type annotation",
                loc=loc,
                hint="annotate it with ttl.raw.i32 / i64 / u32 / f32 / index / DFB / "
                "TensorAccessor / RawAddr",
            )
        if not isinstance(ann, RawType):
            raise RawIRError(
                f"{title}: parameter '{p.name}' is annotated {ann!r}, not a ttl.raw type",
                loc=loc,
                hint="use ttl.raw.i32 / i64 / u32 / f32 / index / DFB / TensorAccessor / RawAddr",
            )
        params.append((p.name, ann))
    result = annotations.get("return")
    if result is not None and (not isinstance(result, RawType) or result not in SCALARS):
        raise RawIRError(
            f"{title}: the result is annotated {result!r}; a raw function returns at most one "
            "scalar (ttl.raw.i32 / i64 / u32 / f32 / index) or None",
            loc=loc,
        )
    return RawIRFunction(fn, fn.__name__, tuple(params), result, loc)


def _def_line(fn: Callable[..., object], first: int) -> int:
    """The line of ``def`` (after the decorators)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return first
    for i, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ")):
            return start + i
    return first
