"""The table of TT-Lang rules: a stable id, the error type and the spec section of each.

A rule is registered once, next to its check function (``lang.rules.dfb``, ``copy``,
``sync``); ``RULES`` lists them all, in registration order, for the documentation and
for the test that runs every rule's bad program on every engine
(``tests/errors/test_rules_all_engines.py``).  ``Rule.violation(message)`` is the one
way a check builds its error, so the id travels with every diagnostic: the interpreter
raises it, and the lowering carries it into the compiled kernel's ``fail`` op
(``errors.tag_rule``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.errors import TilewrightError

__all__ = ["Rule", "RULES", "rule", "shape_text", "RUNTIME_INT", "printf_format"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the language."""

    id: str
    error: type[TilewrightError]
    spec: str
    """The section of the TT-Lang digest (reference/ttlang-language.md) it implements."""
    summary: str

    def violation(self, message: str, hint: str | None = None) -> TilewrightError:
        """The error reporting a break of this rule (located by whoever raises it)."""
        return self.error(message, rule=self.id, hint=hint)


RULES: dict[str, Rule] = {}
"""Every rule by id, in registration order."""


def rule(id: str, error: type[TilewrightError], spec: str, summary: str) -> Rule:  # noqa: A002
    """Register a rule (once: a second registration of an id is a programming error)."""
    if id in RULES:
        raise ValueError(f"rule {id!r} is registered twice")
    RULES[id] = made = Rule(id, error, spec, summary)
    return made


def shape_text(shape) -> str:
    """A shape as messages write it: ``(2, 2)``, ``(4,)``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


RUNTIME_INT = "\x00"
"""What a message function is given in place of a run-time integer when the lowering
formats the message of a check it emits into the IR (see :func:`printf_format`)."""


def printf_format(message: str) -> str:
    """A message built with :data:`RUNTIME_INT` slots as the ``failf`` format that prints
    the same text: literal ``%`` doubled, each slot a ``%lld`` (``snprintf`` of the
    ``long long`` values, in the order the slots appear)."""
    return message.replace("%", "%%").replace(RUNTIME_INT, "%lld")
