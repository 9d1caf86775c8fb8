"""Front-end checks of an external call's DFB contract (reference C.6; C.9 items 17-24).

Dependency occurrences (DFB function arguments, then descriptors, then
``dfb_dependencies``), ``dfb_effects`` (expanded, at most 4096 actions, static tile
counts) and ``dfb_accesses``, each effect or access resolved to exactly one
occurrence.  A mixin of the call checker in :mod:`.frontend`.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from tilewright.compiler.extern.checker import CheckerBase
from tilewright.compiler.extern.scope import NotStaticError
from tilewright.compiler.source import call_name
from tilewright.lang.extern import surface
from tilewright.lang.extern.plan import EFFECT_KINDS, MAX_EXPANDED_EFFECTS, Effect, Occurrence

__all__ = ["ContractChecks"]


class ContractChecks(CheckerBase):
    """Dependency, effect and access checks (mixed into the call checker)."""

    def check_dependencies(
        self, node: ast.expr | None, automatic: list[Occurrence]
    ) -> list[Occurrence]:
        if node is None:
            return []
        if not isinstance(node, ast.List):
            raise self.error(f"dfb_dependencies must be a list literal, got {self.text(node)}")
        out: list[Occurrence] = []
        for i, e in enumerate(node.elts):
            dfb = self.dfb_identity(e)
            if not isinstance(e, ast.Name) or dfb is None:
                raise self.error(f"dfb_dependencies element {self.text(e)} is not a DFB")
            if any(o.dfb == dfb for o in [*automatic, *out]):
                raise self.error(
                    f"dfb_dependencies must contain only distinct dependency-only DFBs; '{e.id}' is already a "
                    "dependency of the call (a DFB function argument, a descriptor, or listed twice)"
                )
            out.append(Occurrence(dfb, "dfb_dependencies", i))
        return out

    def effect_call(self, node: ast.AST) -> tuple[str, ast.Call] | None:
        """(kind, call) if ``node`` is ttl.DFBEffect.<kind>(...) / DFBEffect.<kind>(...), else None."""
        if not isinstance(node, ast.Call):
            return None
        recv, name = call_name(node.func)
        if recv in ("DFBEffect", "ttl.DFBEffect") and name in (*EFFECT_KINDS, "repeat"):
            return name, node
        fn = self.r.static_object(node.func, self.chain)
        for kind in (*EFFECT_KINDS, "repeat"):
            if fn is getattr(surface.DFBEffect, kind):
                return kind, node
        return None

    def access_call(self, node: ast.AST) -> TypeGuard[ast.Call]:
        if not isinstance(node, ast.Call):
            return False
        recv, name = call_name(node.func)
        if recv in ("DFBAccess", "ttl.DFBAccess") and name == "inspect":
            return True
        return self.r.static_object(node.func, self.chain) is surface.DFBAccess.inspect

    def check_effects(self, node: ast.expr | None, occurrences: list[Occurrence]) -> list[Effect]:
        if node is None:
            return []
        if not isinstance(node, ast.List):
            raise self.error(
                f"dfb_effects must be a list literal of ttl.DFBEffect entries (use ttl.DFBEffect.repeat to "
                f"repeat), got {self.text(node)}"
            )
        total = self.effects_size(node.elts)
        if total > MAX_EXPANDED_EFFECTS:
            raise self.error(
                f"dfb_effects expand to {total} actions; at most {MAX_EXPANDED_EFFECTS} are allowed per call"
            )
        return self.expand(node.elts, occurrences)

    def effects_size(self, elts: list[ast.expr]) -> int:
        total = 0
        for e in elts:
            effect = self.effect_call(e)
            if effect is None:
                if self.access_call(e):
                    raise self.error(
                        f"dfb_effects element {self.text(e)} is a DFBAccess; list it in dfb_accesses"
                    )
                raise self.error(
                    f"dfb_effects elements must be ttl.DFBEffect.reserve/push/wait/pop/repeat(...), got "
                    f"{self.text(e)}"
                )
            kind, call = effect
            if kind != "repeat":
                total += 1
                continue
            count, body = self.repeat_parts(call)
            total += count * self.effects_size(body.elts)
            if total > MAX_EXPANDED_EFFECTS:
                return total
        return total

    def repeat_parts(self, call: ast.Call) -> tuple[int, ast.List]:
        if (
            len(call.args) != 2
            or call.keywords
            or any(isinstance(a, ast.Starred) for a in call.args)
        ):
            raise self.error(
                f"ttl.DFBEffect.repeat takes exactly 2 positional arguments (count, [effects]), got "
                f"{self.text(call)}"
            )
        try:
            count = self.r.static_int(call.args[0], self.chain)
        except NotStaticError as exc:
            raise self.error(
                f"ttl.DFBEffect.repeat count {self.text(call.args[0])} is not static: {exc.reason}"
            ) from None
        if count < 0:
            raise self.error(f"ttl.DFBEffect.repeat count must be >= 0, got {count}")
        body = call.args[1]
        if not isinstance(body, ast.List):
            raise self.error(
                f"ttl.DFBEffect.repeat body must be a list literal, got {self.text(body)}"
            )
        if not body.elts:
            raise self.error("ttl.DFBEffect.repeat body must not be empty")
        return count, body

    def expand(self, elts: list[ast.expr], occurrences: list[Occurrence]) -> list[Effect]:
        out: list[Effect] = []
        for elt in elts:
            effect = self.effect_call(elt)
            if effect is None:  # effects_size() rejected it before expanding
                raise self.error(
                    f"dfb_effects elements must be ttl.DFBEffect.reserve/push/wait/pop/repeat(...), got "
                    f"{self.text(elt)}"
                )
            kind, e = effect
            if kind == "repeat":
                count, body = self.repeat_parts(e)
                once = self.expand(body.elts, occurrences)
                out.extend(once * count)
                continue
            what = f"ttl.DFBEffect.{kind}"
            if len(e.args) != 1 or isinstance(e.args[0], ast.Starred):
                raise self.error(
                    f"{what} takes exactly one positional argument (the DFB) and tiles=, got {self.text(e)}"
                )
            names = [k.arg for k in e.keywords]
            if names != ["tiles"]:
                extra = [n for n in names if n != "tiles"]
                if extra:
                    raise self.error(
                        f"{what} accepts only the tiles= keyword, got {', '.join(f'{n}=' for n in extra)}"
                    )
                raise self.error(f"{what} requires tiles=N (the number of tiles of the action)")
            tiles_node = e.keywords[0].value
            try:
                tiles = self.r.static_int(tiles_node, self.chain)
            except NotStaticError as exc:
                raise self.error(
                    f"{what}: tiles={self.text(tiles_node)} is not a static integer: {exc.reason}"
                ) from None
            if tiles <= 0:
                raise self.error(f"{what}: tiles must be positive, got {tiles}")
            occ = self.occurrence_of(e.args[0], occurrences, what)
            out.append(Effect(kind, occ, tiles))
        return out

    def occurrence_of(self, node: ast.AST, occurrences: list[Occurrence], what: str) -> int:
        dfb = self.dfb_identity(node)
        if not isinstance(node, ast.Name) or dfb is None:
            raise self.error(f"{what}({self.text(node)}): the argument must be a DFB")
        hits = [i for i, o in enumerate(occurrences) if o.dfb == dfb]
        if not hits:
            raise self.error(
                f"{what}({node.id}) references a DFB that is not a function argument, descriptor, or "
                "dependency of this call",
                hint=f"pass {node.id} in func_args, as ttl.dfb_descriptor({node.id}), or in dfb_dependencies",
            )
        if len(hits) > 1:
            places = ", ".join(f"{occurrences[i].where}[{occurrences[i].position}]" for i in hits)
            raise self.error(
                f"{what}({node.id}): the reference is ambiguous: '{node.id}' is {len(hits)} dependency "
                f"occurrences of this call ({places}); pass it once, or use distinct DFB parameters of a "
                "composed operation"
            )
        return hits[0]

    def check_accesses(
        self, node: ast.expr | None, occurrences: list[Occurrence], effects: list[Effect]
    ) -> list[int]:
        if node is None:
            return []
        if not isinstance(node, ast.List):
            raise self.error(f"dfb_accesses must be a list literal, got {self.text(node)}")
        out: list[int] = []
        with_effects = {e.occurrence for e in effects}
        for e in node.elts:
            if not self.access_call(e):
                raise self.error(
                    f"dfb_accesses elements must be ttl.DFBAccess.inspect(dfb), got {self.text(e)}"
                )
            if len(e.args) != 1 or e.keywords or isinstance(e.args[0], ast.Starred):
                raise self.error(
                    f"ttl.DFBAccess.inspect takes exactly one argument: the DFB (got {self.text(e)})"
                )
            occ = self.occurrence_of(e.args[0], occurrences, "ttl.DFBAccess.inspect")
            if occ in with_effects:
                raise self.error(
                    f"DFB '{occurrences[occ].dfb}' has both dfb_effects and a DFBAccess.inspect; one dependency "
                    "occurrence cannot have both"
                )
            if occ in out:
                raise self.error(f"ttl.DFBAccess.inspect({occurrences[occ].dfb}) is listed twice")
            out.append(occ)
        return out
