"""A ``ttl.raw.cpp`` function's declared DFB effects, evaluated against one call (reference C.6).

``effects=lambda src, dst, f, n: [...]`` is called once per call site at decoration:
DFB parameters receive a :class:`DFBParam` (the position of the argument, which is
the call's dependency occurrence), scalar parameters receive the call's argument
when it is a compile-time constant, else a :class:`RuntimeScalar` that refuses to
be used (a repeat count or tile count must be static).  The entries are expanded
exactly as ``call_extern_func``'s ``dfb_effects`` are -- ``repeat`` unrolled, at
most 4096 actions, positive tile counts -- into the plan's ``Effect`` records and
the inspected occurrences.
"""

from __future__ import annotations

from collections.abc import Callable

from tilewright.lang import raw_types
from tilewright.lang.extern.plan import EFFECT_KINDS, MAX_EXPANDED_EFFECTS, Effect
from tilewright.lang.extern.types import AccessItem, EffectItem, EffectRepeat

__all__ = ["DFBParam", "RuntimeScalar", "NotStatic", "evaluate"]


class DFBParam(int):
    """A DFB parameter inside an effects function: its position (an int, so that
    ``ttl.DFBEffect`` accepts it before any kernel runs) and its name."""

    name: str

    def __new__(cls, position: int, name: str) -> DFBParam:
        obj = super().__new__(cls, position)
        obj.name = name
        return obj

    def __repr__(self) -> str:
        return self.name


class NotStatic(Exception):
    """An effects function used a scalar parameter whose call argument is a run-time value."""

    def __init__(self, param: RuntimeScalar) -> None:
        super().__init__(param.name)
        self.param = param


class RuntimeScalar:
    """A scalar parameter whose argument at this call is known only at run time."""

    __slots__ = ("name", "source")

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source

    def _refuse(self, *args: object) -> object:
        raise NotStatic(self)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = _refuse
    __int__ = __index__ = __bool__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse

    def __repr__(self) -> str:
        return self.name


def evaluate(
    effects: Callable[..., object] | tuple[object, ...],
    arguments: list[object],
    signature: tuple[raw_types.RawType, ...],
    fail: Callable[[str], Exception],
) -> tuple[list[Effect], list[int]]:
    """(expanded effects, inspected occurrence indices) of one call.

    ``arguments`` holds what each parameter is at this call (a :class:`DFBParam`, a static
    value or a :class:`RuntimeScalar`); occurrences are the DFB parameters in order.
    ``fail(message)`` makes the located error.
    """
    occurrence: dict[int, int] = {}
    for i, m in enumerate(signature):
        if m is raw_types.DFB:
            occurrence[i] = len(occurrence)
    if callable(effects):
        try:
            items = effects(*arguments)
        except NotStatic as exc:
            raise _not_static(exc.param, fail) from None
        except Exception as exc:  # the user's function: report what it raised, located
            raise fail(f"effects raised {type(exc).__name__}: {exc}") from None
        if not isinstance(items, (list, tuple)):
            raise fail(
                f"effects must return a list of ttl.DFBEffect entries, got {type(items).__name__}"
            )
        items = [_params_only(item, fail) for item in items]
    else:
        items = effects
    size = _size(items, fail)
    if size > MAX_EXPANDED_EFFECTS:
        raise fail(
            f"effects expand to {size} actions; at most {MAX_EXPANDED_EFFECTS} are allowed per call"
        )
    out: list[Effect] = []
    inspected: list[int] = []
    _expand(items, occurrence, signature, out, inspected, fail)
    with_effects = {e.occurrence for e in out}
    for occ in inspected:
        if occ in with_effects:
            raise fail(
                "a DFB parameter has both DFB effects and a DFBAccess.inspect; one dependency "
                "occurrence cannot have both"
            )
    return out, inspected


def _params_only(item: object, fail: Callable[[str], Exception]) -> object:
    """An effects function names DFBs by its parameters: a plain int there is not a DFB."""
    if isinstance(item, EffectRepeat):
        for e in item.effects:
            _params_only(e, fail)
    elif isinstance(item, (EffectItem, AccessItem)) and not isinstance(item.dfb, DFBParam):
        what = (
            "ttl.DFBAccess.inspect"
            if isinstance(item, AccessItem)
            else f"ttl.DFBEffect.{item.kind}"
        )
        raise fail(
            f"{what}({item.dfb!r}): the argument must be a ttl.raw.DFB parameter of the function "
            "(a name of the effects function's parameters)"
        )
    return item


def _not_static(param: RuntimeScalar, fail: Callable[[str], Exception]) -> Exception:
    return fail(
        f"effects use {param.name}, but its argument {param.source} is a run-time value; repeat "
        "and tile counts must be compile-time constants (a literal, or a module-level or "
        "captured int)"
    )


def _count(value: object, what: str, fail: Callable[[str], Exception]) -> int:
    if isinstance(value, RuntimeScalar):
        raise _not_static(value, fail)
    if isinstance(value, DFBParam) or not isinstance(value, int) or isinstance(value, bool):
        raise fail(f"{what} must be a static integer, got {value!r}")
    return int(value)


def _size(items: object, fail: Callable[[str], Exception]) -> int:
    total = 0
    for item in items:  # type: ignore[attr-defined]
        if isinstance(item, EffectRepeat):
            count = _count(item.count, "ttl.DFBEffect.repeat count", fail)
            if count < 0:
                raise fail(f"ttl.DFBEffect.repeat count must be >= 0, got {count}")
            if not item.effects:
                raise fail("ttl.DFBEffect.repeat body must not be empty")
            total += count * _size(item.effects, fail)
            if total > MAX_EXPANDED_EFFECTS:
                return total
        elif isinstance(item, EffectItem):
            total += 1
        elif not isinstance(item, AccessItem):
            raise fail(
                "effects elements must be ttl.DFBEffect.reserve/push/wait/pop/repeat(...) or "
                f"ttl.DFBAccess.inspect(...), got {item!r}"
            )
    return total


def _occurrence(
    dfb: object,
    what: str,
    occurrence: dict[int, int],
    signature: tuple[raw_types.RawType, ...],
    fail: Callable[[str], Exception],
) -> int:
    """The dependency occurrence an effect names: a :class:`DFBParam` (an effects function)
    or a parameter position (an effects list, whose entries were checked at construction)."""
    if isinstance(dfb, int) and not isinstance(dfb, bool):
        position = int(dfb)
        if position in occurrence:
            return occurrence[position]
        if isinstance(dfb, DFBParam):
            raise fail(
                f"{what}({dfb!r}) names {signature[position]!r} parameter, not a ttl.raw.DFB"
            )
    raise fail(
        f"{what}({dfb!r}): the argument must be a ttl.raw.DFB parameter of the function "
        "(a name of the effects function's parameters)"
    )


def _expand(
    items: object,
    occurrence: dict[int, int],
    signature: tuple[raw_types.RawType, ...],
    out: list[Effect],
    inspected: list[int],
    fail: Callable[[str], Exception],
) -> None:
    for item in items:  # type: ignore[attr-defined]
        if isinstance(item, EffectRepeat):
            once: list[Effect] = []
            _expand(item.effects, occurrence, signature, once, inspected, fail)
            out.extend(once * int(item.count))
            continue
        if isinstance(item, AccessItem):
            occ = _occurrence(item.dfb, "ttl.DFBAccess.inspect", occurrence, signature, fail)
            if occ not in inspected:
                inspected.append(occ)
            continue
        assert isinstance(item, EffectItem) and item.kind in EFFECT_KINDS
        what = f"ttl.DFBEffect.{item.kind}"
        tiles = _count(item.tiles, f"{what}: tiles", fail)
        if tiles <= 0:
            raise fail(f"{what}: tiles must be positive, got {tiles}")
        out.append(
            Effect(item.kind, _occurrence(item.dfb, what, occurrence, signature, fail), tiles)
        )
