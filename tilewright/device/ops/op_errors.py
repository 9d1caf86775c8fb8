"""Errors of the block-math op registry (``tilewright.device.ops``).

Every rejection the registry makes is one of these types.  They derive from
:class:`tilewright.errors.TilewrightError` (so they carry ``rule``/``hint``/``loc``
and render like every other Tilewright error) and also from the builtin exception a
Python user would expect (``KeyError`` for an unknown op, ``ValueError`` for a bad
shape, ``TypeError`` for a bad argument), so ``except ValueError`` keeps working in
code written against the TT-Lang simulator, which raises bare ``ValueError`` here.

The ``ttl`` layer attaches the user's source location (``loc``) when it re-raises;
this package never looks at frames.
"""

from __future__ import annotations

from tilewright.errors import TilewrightError

__all__ = [
    "RULE_FORMAT",
    "RULE_PARAM",
    "RULE_SHAPE",
    "RULE_UNKNOWN_OP",
    "OpError",
    "OpFormatError",
    "OpParamError",
    "OpShapeError",
    "UnknownOpError",
]

RULE_UNKNOWN_OP = "op-unknown"
RULE_SHAPE = "op-shape"
RULE_PARAM = "op-param"
RULE_FORMAT = "op-format"


class OpError(TilewrightError):
    """Base of the op registry's errors."""

    default_rule = "op"


class UnknownOpError(OpError, KeyError):
    """A name that is not in the registry (nor a legacy alias of an entry).

    ``str()`` is the rendered message, not ``KeyError``'s quoted key.
    """

    default_rule = RULE_UNKNOWN_OP

    def __str__(self) -> str:
        return OpError.__str__(self)


class OpShapeError(OpError, ValueError):
    """Operand or result block shapes that break an op's shape rule."""

    default_rule = RULE_SHAPE


class OpParamError(OpError, TypeError):
    """A missing, unknown or ill-typed scalar parameter of an op."""

    default_rule = RULE_PARAM


class OpFormatError(OpError, TypeError):
    """A data format (dtype) the op does not support."""

    default_rule = RULE_FORMAT
