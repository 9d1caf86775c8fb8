"""Lowering one kernel function's Python AST to the kernel IR.

:class:`Lowering` walks the kernel function's statements (the AST the compiler parsed
with the user's lines) with a static environment: each name is bound to a
:class:`~.values.Value`.  Scalar code becomes IR expressions and locals; ``for`` over
``range`` / ``ttl.static_range``, ``if`` and ``while`` become structured control flow;
calls go through the tables of :mod:`.calls`; DFB acquisitions, copies and block
expressions through :mod:`.protocol`, :mod:`.dataflow` and :mod:`.compute`.

Whatever the compiled engine cannot run raises
:class:`~tilewright.errors.NotCompilableError` at the user's line with the reason:
Python objects or containers in kernel code, calls into arbitrary Python, recursion,
``try`` / ``raise`` / ``global`` / ``nonlocal`` / ``lambda`` / comprehensions, a
block whose state depends on the path taken, and so on.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tilewright.compiler.backend.lower import affine, helpers
from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.analysis import (
    CONFLICT,
    assigned,
    construct,
    kind_text,
    merge,
    node_values,
)
from tilewright.compiler.backend.lower.blocks import Tracker
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    FuncRef,
    HelperRef,
    Scalar,
    Static,
    TupleV,
    Value,
    World,
    is_scalar_py,
    py_const,
)
from tilewright.errors import NotCompilableError, SourceLoc
from tilewright.kir.ir import Arg, Const, Expr, Op, Ty, Var

__all__ = ["KernelInput", "Lowering", "CONFLICT"]


def _holds_scalars(value: TupleV) -> bool:
    return any(
        isinstance(v, Scalar) or (isinstance(v, TupleV) and _holds_scalars(v)) for v in value.items
    )


# C++ names a Python local must not take (keywords and the API's own names).
_RESERVED = frozenset(
    """alignas alignof and asm auto bool break case catch char class const constexpr continue
    default delete do double else enum explicit export extern false float for friend goto if
    inline int long mutable namespace new noexcept not nullptr operator or private protected
    public register return short signed sizeof static struct switch template this throw true
    try typedef typeid typename union unsigned using virtual void volatile while xor int64_t
    uint32_t uint64_t int32_t uint8_t main kernel_main NAMESPACE MAIN""".split()
)


@dataclass(slots=True)
class KernelInput:
    """One kernel function of the operation, on every node."""

    name: str
    kind: str  # "compute" | "data_movement"
    slot: str
    tree: ast.FunctionDef
    fns: list[Callable]  # the kernel function of each node (same order as World.setups)
    file: str
    selector: object = None  # the kernel decorator's kernel= selector


@dataclass
class _Scope:
    """One function being lowered: the kernel itself or an inlined nested function."""

    counts: dict[str, int]  # assignment sites per name (analysis.assigned: 2 in a loop)
    prefix: str
    node: ast.FunctionDef
    depth: int = 0
    loop_base: int = 0  # the lowering's loop depth where this function's body starts
    fns: tuple | None = None  # a helper's function on every node (its free names' closure)
    file: str | None = None  # a helper's file, if not the kernel's

    def one_site(self, name: str, loop_depth: int) -> bool:
        """``name`` has one assignment site in this function: once, or once inside a loop
        when the site being lowered is in a loop *of this function* (a helper inlined in
        the caller's loop has its own sites, counted outside the caller's loops)."""
        in_loop = loop_depth > self.loop_base
        return self.counts.get(name, 0) <= (2 if in_loop else 1)


@dataclass
class _Frame:
    """Loop bookkeeping for break / continue: the blocks held at the loop's entry, and the
    facts where the body jumps (the loop's exit joins the breaks, the next iteration the
    continues)."""

    entry_key: tuple
    next_iteration: Callable[[], None] | None = None  # what a `continue` does first
    breaks: list[Tracker] = field(default_factory=list)
    continues: list[Tracker] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Hooks:
    """The lowering functions of the other modules (``lower/__init__`` assembles them):
    the core walks statements and expressions and hands each construct to its module."""

    call: Callable
    attribute: Callable
    binop_values: Callable
    unary_value: Callable
    compare_values: Callable
    subscript: Callable
    range_bounds: Callable
    classify_object: Callable
    accumulate: Callable
    exit_block: Callable
    name_block: Callable
    finish_send: Callable
    pipe_copy: Callable


@dataclass
class Lowering:
    """The state of lowering one kernel."""

    world: World
    kin: KernelInput
    dst_tiles: int
    hooks: Hooks
    env: dict[str, Value] = field(default_factory=dict)
    tracker: Tracker = field(default_factory=lambda: Tracker(()))
    known: dict[str, tuple] = field(default_factory=dict)  # locals' values per node, if known
    locals: dict[str, Var] = field(default_factory=dict)
    region: list[Op] = field(default_factory=list)
    loc: SourceLoc | None = None
    args: list[tuple[str, list[int]]] = field(default_factory=list)  # runtime args per node
    arg_index: dict[str, int] = field(default_factory=dict)
    sites: int = 0
    handles: int = 0
    signposts: int = 0  # signpost zones so far (their trace spans' start clocks)
    scope: _Scope | None = None
    loops: list[_Frame] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # accessors, scratch, scaler, ... (other modules)

    # -- errors and emission --------------------------------------------------------------------

    @property
    def file(self) -> str:
        """The file of the code being lowered (a helper's, or the kernel's)."""
        scope = self.scope
        return scope.file if scope is not None and scope.file is not None else self.kin.file

    def fail(self, reason: str, node: ast.AST | None = None) -> NotCompilableError:
        """A not-compilable error at ``node`` (default: the current statement)."""
        loc = self.loc
        if node is not None and hasattr(node, "lineno"):
            loc = SourceLoc(self.file, node.lineno, getattr(node, "col_offset", None))
        return NotCompilableError(f"kernel '{self.kin.name}': {reason}", loc=loc)

    def emit(self, code: str, *args: object, regions: tuple = ()) -> Op:
        op = Op(code, tuple(args), regions, self.loc)
        self.region.append(op)
        return op

    def emit_ops(self, ops: list[Op]) -> None:
        self.region.extend(ops)

    @contextmanager
    def new_region(self) -> Iterator[list[Op]]:
        saved, self.region = self.region, []
        try:
            yield self.region
        finally:
            self.region = saved

    def local(self, name: str, ty: Ty) -> Var:
        """The kernel local ``name`` (declared on first use; one type per name)."""
        var = self.locals.get(name)
        if var is None:
            var = self.locals[name] = Var(name, ty)
        elif var.ty is not ty:
            raise self.fail(f"'{name}' holds a {var.ty} and a {ty}; a local keeps one type")
        return var

    def temp(self, stem: str, ty: Ty) -> Var:
        self.sites += 1
        return self.local(f"tw_{stem}_{self.sites}", ty)

    def py_local(self, name: str, ty: Ty) -> Var:
        """The C++ local of Python local ``name`` of the current scope."""
        return self.local(self._cpp_name(name), ty)

    def runtime_arg(self, name: str, values: list[int]) -> int:
        """The index of a per-core runtime argument (values in node order)."""
        index = self.arg_index.get(name)
        if index is None:
            index = self.arg_index[name] = len(self.args)
            self.args.append((name, list(values)))
        return index

    def new_site(self) -> int:
        self.sites += 1
        return self.sites

    # -- names ---------------------------------------------------------------------------------

    def lookup(self, name: str, node: ast.AST) -> Value:
        value = self.env.get(name)
        if value is not None:
            if value is CONFLICT:
                raise self.fail(
                    f"'{name}' refers to different objects depending on the path taken", node
                )
            return value
        scope = self.scope
        if scope is not None and name in scope.counts:
            raise self.fail(f"'{name}' may be read before it is assigned", node)
        return self.captured(name, node)

    def captured(self, name: str, node: ast.AST) -> Value:
        """A name of the operation body or the module, from every node's closure (a
        helper's names from the helper's)."""
        fns: tuple | list = self.kin.fns
        label = name
        free = self.extra.get("free_names", {}).get(name)
        if free is not None:  # a free name of an expanded generator (lower/helpers.py)
            helper, name = free
            fns, label = helper.fns, f"{helper.node.name}.{name}"
        elif self.scope is not None and self.scope.fns is not None:
            fns, label = self.scope.fns, f"{self.scope.node.name}.{name}"
        code = fns[0].__code__
        if name in code.co_freevars:
            i = code.co_freevars.index(name)
            try:
                values = [fn.__closure__[i].cell_contents for fn in fns]
            except ValueError:
                raise self.fail(f"'{name}' is not bound when the kernel runs", node) from None
            return self.classify(label, values, node)
        glb = fns[0].__globals__
        if name in glb:
            return self.classify(label, [glb[name]], node)
        if hasattr(builtins, name):
            return Static(getattr(builtins, name))
        raise self.fail(f"name '{name}' is not defined", node)

    def classify(self, name: str, values: list[object], node: ast.AST) -> Value:
        """The compile-time view of a captured value (one value per node)."""
        first = values[0]
        if is_scalar_py(first) and all(type(v) is type(first) for v in values):
            if all(v == first for v in values):
                return Scalar(py_const(first))  # type: ignore[arg-type]
            if isinstance(first, int) and not isinstance(first, bool):
                if any(not -(1 << 31) <= int(v) < 1 << 31 for v in values):  # type: ignore[call-overload]
                    raise self.fail(
                        f"'{name}' differs between nodes and does not fit in 32 bits", node
                    )
                index = self.runtime_arg(
                    f"{name} (per node)",
                    [int(v) & 0xFFFFFFFF for v in values],  # type: ignore[call-overload]
                )

                return Scalar(Arg(index, f"{name} (per node)", Ty.I64))
            raise self.fail(
                f"'{name}' is a {type(first).__name__} that differs between nodes", node
            )
        if isinstance(first, tuple) and all(
            isinstance(v, tuple) and len(v) == len(first) for v in values
        ):
            return TupleV(
                tuple(
                    self.classify(f"{name}[{k}]", [v[k] for v in values], node)  # type: ignore[index]
                    for k in range(len(first))
                )
            )
        value = self.hooks.classify_object(self, first, values, node)
        if value is None:
            raise self.fail(
                f"'{name}' is a Python {type(first).__name__} object; kernel code may use ints, "
                "floats, bools, tuples of them and TT-Lang objects (Python objects and containers "
                "are not compilable)",
                node,
            )
        return value

    def bind(self, target: ast.expr, value: Value) -> None:
        """Assign ``value`` to ``target`` (a name or a tuple of names)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, TupleV) or len(value.items) != len(target.elts):
                raise self.fail(
                    "tuple unpacking of a value that is not a tuple of that length", target
                )
            for t, v in zip(target.elts, value.items):
                self.bind(t, v)
            return
        if not isinstance(target, ast.Name):
            raise self.fail(f"assignment to {type(target).__name__.lower()} targets", target)
        name = target.id
        if isinstance(value, Scalar):
            self.env[name] = self._scalar_site(name, name, value, target)
            return
        if isinstance(value, TupleV) and _holds_scalars(value):
            # a tuple holds its items' values of now: each run-time item is a local of its
            # own (``p.0`` ...), under the rules of the name's assignment sites
            self.env[name] = self._tuple_site(name, name, value, target)
            return
        if isinstance(value, BlockRef):
            self.hooks.name_block(self, value.site, name)
        self.env[name] = value

    def _tuple_site(self, name: str, path: str, value: TupleV, target: ast.expr) -> TupleV:
        items: list[Value] = []
        for i, item in enumerate(value.items):
            sub = f"{path}.{i}"
            if isinstance(item, TupleV):
                items.append(self._tuple_site(name, sub, item, target))
            elif isinstance(item, Scalar):
                items.append(self._scalar_site(name, sub, item, target))
            else:
                items.append(item)
        return TupleV(tuple(items))

    def _scalar_site(self, name: str, local: str, value: Scalar, target: ast.expr) -> Scalar:
        """The value ``name`` (or its tuple item ``local``) holds after this assignment."""
        scope = self.scope
        # one assignment site: a constant, or an index expression kept symbolic, so
        # that slice extents fold (lower/affine.py)
        one_site = scope is None or scope.one_site(name, len(self.loops))
        if one_site and (value.static or affine.is_affine(self, value.expr)):
            return value
        ty: Ty = Ty.I64 if value.expr.ty in (Ty.U32, Ty.U64) else value.expr.ty
        existing = self.locals.get(self._cpp_name(local))
        if existing is not None and existing.ty is not ty:
            if {existing.ty, ty} <= {Ty.I64, Ty.BOOL}:
                ty = existing.ty
            elif {existing.ty, ty} <= {Ty.I64, Ty.F64}:
                raise self.fail(
                    f"'{name}' holds an int and a float; a compiled local keeps one type",
                    target,
                )
        var = self.py_local(local, ty)
        expr = S.to_type(value.expr, ty)
        self.emit("set", var, expr)
        # per-node values of plain names only (a tuple item is forgotten with its name
        # nowhere: loops and branches forget names, not their items)
        if self.loops or local != name:
            self.known.pop(var.name, None)
        else:
            self.known[var.name] = node_values(self, expr)
        return Scalar(var)

    def _cpp_name(self, name: str) -> str:
        prefix = self.scope.prefix if self.scope is not None else ""
        if "." in name:  # a generator's renamed local, a tuple's item: escaped, unique
            if name.startswith("tw."):  # renamed apart (lower/helpers.py): scope-free
                prefix, name = "", name[3:]
            escaped = (prefix + name).replace("_", "_u").replace(".", "_d")
            return "tw_" + escaped  # user names never start with tw_ (u_tw_...)
        cpp = prefix + name
        if cpp in _RESERVED or cpp.startswith("tw_") or cpp.startswith("__"):
            cpp = "u_" + cpp.lstrip("_")
        return cpp

    # -- statements ----------------------------------------------------------------------------

    def statements(self, stmts: list[ast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            if self.tracker.dead:  # the path raised or jumped: the rest never runs
                return
            self.loc = SourceLoc(self.file, stmt.lineno)
            method = getattr(self, f"stmt_{type(stmt).__name__}", None)
            if method is None:
                raise self.fail(f"'{construct(stmt)}' statements are not compilable", stmt)
            method(stmt, stmts[i + 1 :])

    def stmt_Expr(self, stmt: ast.Expr, rest) -> None:
        if isinstance(stmt.value, ast.Constant):  # docstrings
            return
        self.expr(stmt.value)

    def stmt_Pass(self, stmt, rest) -> None:
        pass

    def stmt_Assign(self, stmt: ast.Assign, rest) -> None:
        value = self.expr(stmt.value)
        for target in stmt.targets:
            self.bind(target, value)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, rest) -> None:
        if stmt.value is not None:
            self.bind(stmt.target, self.expr(stmt.value))

    def stmt_AugAssign(self, stmt: ast.AugAssign, rest) -> None:
        if not isinstance(stmt.target, ast.Name):
            raise self.fail("augmented assignment to a non-name target", stmt)
        current = self.lookup(stmt.target.id, stmt.target)
        rhs = self.expr(stmt.value)
        if isinstance(current, BlockRef) and isinstance(stmt.op, ast.Add):
            self.hooks.accumulate(self, current, rhs, stmt)
            return
        self.bind(stmt.target, self.hooks.binop_values(self, stmt.op, current, rhs, stmt))

    def stmt_Return(self, stmt: ast.Return, rest) -> None:
        scope = self.scope
        if scope is not None and scope.depth:  # a helper's last return is inline()'s
            raise self.fail(
                f"'return' other than as the last statement of '{scope.node.name}' (a call of "
                "it is inlined)",
                stmt,
            )
        body = self.kin.tree.body
        if stmt.value is not None or not body or stmt is not body[-1]:
            # anywhere else it ends the kernel early on the paths reaching it
            raise self.fail("'return' other than at the end of a kernel function", stmt)

    def stmt_FunctionDef(self, stmt: ast.FunctionDef, rest) -> None:
        if stmt.decorator_list:
            raise self.fail("decorated functions inside a kernel", stmt)
        self.env[stmt.name] = FuncRef(stmt)

    def stmt_If(self, stmt: ast.If, rest) -> None:
        cond = self.truth(self.expr(stmt.test), stmt.test)
        names = set(assigned(stmt.body)) | set(assigned(stmt.orelse))
        self.branch(
            cond,
            lambda: self.statements(stmt.body),
            lambda: self.statements(stmt.orelse),
            stmt,
            names,
        )

    def branch(
        self,
        cond: Expr,
        then: Callable[[], None],
        orelse: Callable[[], None] | None,
        node: ast.stmt,
        names: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """``if cond: then() else: orelse()``, each path with the nodes that take it."""
        if isinstance(cond, Const):
            if cond.value:
                then()
            elif orelse is not None:
                orelse()
            return
        active = self.tracker.active
        values = node_values(self, cond)
        if all(v is not None for v, on in zip(values, active) if on):
            then_mask = tuple(bool(on and v) for on, v in zip(active, values))
            else_mask = tuple(bool(on and not v) for on, v in zip(active, values))
            if not any(then_mask):  # false on every node that gets here
                if orelse is not None:
                    orelse()
                return
            if not any(else_mask):
                then()
                return
        else:
            then_mask = else_mask = active
        env0, tr0 = dict(self.env), self.tracker.copy()
        self.tracker.active = then_mask
        with self.new_region() as then_ops:
            then()
        env1, tr1 = self.env, self.tracker
        self.env, self.tracker = dict(env0), tr0.copy()
        self.tracker.active = else_mask
        with self.new_region() as else_ops:
            if orelse is not None:
                orelse()
        env2, tr2 = self.env, self.tracker
        for name in names:
            self.known.pop(self._cpp_name(name), None)
        self.loc = SourceLoc(self.file, node.lineno)
        if not (tr1.dead or tr2.dead):
            if tr1.shape_key() != tr2.shape_key():
                raise self.fail(
                    "the branches of this 'if' leave different DFB blocks acquired; acquire and "
                    "release blocks within each branch (or in both)",
                    node,
                )
            if tr1.pending_key() != tr2.pending_key():
                raise self.fail("the branches of this 'if' wait different transfers", node)
        # the nodes that leave either branch alive (every node that entered, unless a
        # branch raised or jumped)
        self.tracker = tr1.join(tr2)
        self.env = env2 if tr1.dead else env1 if tr2.dead else merge(env1, env2)
        self.emit("if", cond, regions=(tuple(then_ops), tuple(else_ops)))

    def truth(self, value: Value, node: ast.AST) -> Expr:
        if isinstance(value, Scalar):
            return S.truth(value.expr)
        if isinstance(value, Static) and value.obj is None:
            return Const(False, Ty.BOOL)
        if isinstance(value, TupleV):
            return Const(bool(value.items), Ty.BOOL)
        raise self.fail(f"the truth value of {kind_text(value)}", node)

    def _loop(
        self,
        build: Callable[[], None],
        stmt: ast.stmt,
        runs: bool = False,
        next_iteration: Callable[[], None] | None = None,
    ) -> list[Op]:
        """Lower a loop body to a fixpoint of block states; the body's ops.

        ``runs``: the body runs at least once (a range with a static positive trip count),
        so after the loop only the states an iteration ends in are possible;
        ``next_iteration`` emits what the end of the body does before the next iteration
        (a ``while`` loop's condition), which a ``continue`` must do too."""
        for name in assigned(getattr(stmt, "body", [])):
            self.known.pop(self._cpp_name(name), None)
        env0, tr0 = dict(self.env), self.tracker.copy()
        entry = tr0
        for _ in range(4):
            self.env, self.tracker = dict(env0), entry.copy()
            frame = _Frame(entry.shape_key(), next_iteration)
            self.loops.append(frame)
            try:
                with self.new_region() as body:
                    build()
            finally:
                self.loops.pop()
            out = self.tracker
            for jumped in frame.continues:  # the next iteration starts from these too
                out = out.join(jumped)
            self.loc = SourceLoc(self.file, stmt.lineno)
            if not out.dead:
                self._check_iteration(out, entry, stmt)
            if out.dead or not out.grew(entry):
                exit_ = out if runs else entry.join(out)
                for jumped in frame.breaks:
                    exit_ = exit_.join(jumped)
                self.tracker = exit_
                if not out.dead:
                    self.env = self.env if runs else merge(env0, self.env)
                elif not runs:
                    self.env = env0
                return body
            entry = entry.join(out)
        raise self.fail("block states do not settle over the iterations of this loop", stmt)

    def _check_iteration(self, out: Tracker, entry: Tracker, stmt: ast.stmt) -> None:
        """What every path through a loop body must give back at its end."""
        if out.shape_key() != entry.shape_key():
            raise self.fail(
                "a loop iteration ends holding other DFB blocks than it started with; "
                "release every block acquired in the loop body within the iteration",
                stmt,
            )
        open_handles = [
            h for i, h in out.handles.items() if not h.waited and i not in entry.handles
        ]
        if open_handles:
            raise self.fail(
                "a transfer started in a loop iteration is still pending when the iteration ends",
                stmt,
            )

    def stmt_For(self, stmt: ast.For, rest) -> None:
        generator = helpers.generator_call(self, stmt.iter)
        if generator is not None:  # a loop over a helper generator: its body, inlined
            helpers.lower_for(self, stmt, *generator)
            return
        if stmt.orelse:
            raise self.fail("'for ... else'", stmt)
        if not isinstance(stmt.target, ast.Name):
            raise self.fail("a loop target that is not a single name", stmt.target)
        start, stop, step = self.hooks.range_bounds(self, stmt.iter)
        span = S.static_difference(stop, start)
        trips = None if span is None else len(range(0, span, step))
        if trips == 0:
            return
        target = stmt.target.id
        var = self.py_local(target, Ty.I64)

        reassigned = target in assigned(stmt.body)

        def build() -> None:
            self.env[target] = Scalar(var)
            with affine.stable_loop(self, var, reassigned):
                self.statements(stmt.body)

        body = self._loop(build, stmt, runs=bool(trips))
        affine.forget(self.env, var)  # symbolic locals of the loop's variable end with it
        self.env[stmt.target.id] = Scalar(var)
        self.emit("for", var, start, stop, step, regions=(tuple(body),))

    def stmt_While(self, stmt: ast.While, rest) -> None:
        if stmt.orelse:
            raise self.fail("'while ... else'", stmt)
        # The condition is evaluated before every iteration: kept in a local flag.
        cond = self.truth(self.expr(stmt.test), stmt.test)
        if isinstance(cond, Const) and not cond.value:
            return
        flag = self.temp("while", Ty.BOOL)
        self.emit("set", flag, cond)

        def test() -> None:  # Python evaluates the condition before every iteration
            self.loc = SourceLoc(self.file, stmt.lineno)
            self.emit("set", flag, self.truth(self.expr(stmt.test), stmt.test))

        def build() -> None:
            self.statements(stmt.body)
            test()

        body = self._loop(build, stmt, next_iteration=test)
        self.emit("while", flag, regions=(tuple(body),))

    def stmt_Break(self, stmt, rest) -> None:
        self._jump("break", stmt)

    def stmt_Continue(self, stmt, rest) -> None:
        self._jump("continue", stmt)

    def _jump(self, code: str, stmt: ast.stmt) -> None:
        if not self.loops:
            raise self.fail(f"'{code}' outside a loop", stmt)
        frame = self.loops[-1]
        if self.tracker.shape_key() != frame.entry_key:
            raise self.fail(f"'{code}' while holding DFB blocks acquired in the loop body", stmt)
        (frame.breaks if code == "break" else frame.continues).append(self.tracker.copy())
        if code == "continue" and frame.next_iteration is not None:
            loc = self.loc
            frame.next_iteration()
            self.loc = loc
        self.emit(code)
        self.tracker.kill()  # the statements after a jump never run

    def stmt_With(self, stmt: ast.With, rest) -> None:
        entered: list[BlockRef | tuple[str, Var]] = []
        for item in stmt.items:
            ctx = self.expr(item.context_expr)
            if isinstance(ctx, Static) and getattr(ctx.obj, "ttl_signpost", False):
                # its trace span: from here to the item's exit (lang.misc.signpost)
                self.signposts += 1
                start = self.local(f"tw_signpost{self.signposts}", Ty.U64)
                self.emit("trace.clock", start)
                entered.append((f"signpost {getattr(ctx.obj, 'name', '')}", start))
                continue
            if not isinstance(ctx, BlockRef):
                raise self.fail(
                    "a 'with' item that is not a DFB acquisition (dfb.reserve() / dfb.wait()) "
                    "or ttl.signpost",
                    item.context_expr,
                )
            if item.optional_vars is not None:
                self.bind(item.optional_vars, ctx)
            entered.append(ctx)
        self.statements(stmt.body)
        self.loc = SourceLoc(self.file, stmt.lineno)
        for entry in reversed(entered):
            if isinstance(entry, BlockRef):
                self.hooks.exit_block(self, entry)
            else:
                self.emit("trace.span", entry[0], entry[1], "", "", ())

    # -- expressions -----------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Value:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"{construct(node)} in kernel code is not compilable", node)
        try:
            return method(node)
        except OverflowError as exc:  # an integer beyond int64, folded (lower/scalars.py)
            raise self.fail(str(exc), node) from None

    def scalar(self, node: ast.expr) -> Expr:
        value = self.expr(node)
        if not isinstance(value, Scalar):
            raise self.fail(f"expected a number, got {kind_text(value)}", node)
        return value.expr

    def expr_Constant(self, node: ast.Constant) -> Value:
        v = node.value
        if is_scalar_py(v):
            return Scalar(py_const(v))  # type: ignore[arg-type]
        if v is None or isinstance(v, str):
            return Static(v)
        raise self.fail(f"the constant {v!r}", node)

    def expr_Name(self, node: ast.Name) -> Value:
        return self.lookup(node.id, node)

    def expr_Tuple(self, node: ast.Tuple) -> Value:
        return TupleV(tuple(self.expr(e) for e in node.elts))

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        return self.hooks.attribute(self, self.expr(node.value), node.attr, node)

    def expr_Call(self, node: ast.Call) -> Value:
        return self.hooks.call(self, node)

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left = self.expr(node.left)
        right = self.expr(node.right)
        return self.hooks.binop_values(self, node.op, left, right, node)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        return self.hooks.unary_value(self, node.op, self.expr(node.operand), node)

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        operands = [self.expr(v) for v in node.values]
        if any(not (isinstance(v, Scalar) and v.expr.ty is Ty.BOOL) for v in operands):
            # Python's `a or b` gives one of the operands, not a bool
            raise self.fail("'and' / 'or' of values that are not bools", node)
        values = [self.truth(v, n) for v, n in zip(operands, node.values)]
        op = "and" if isinstance(node.op, ast.And) else "or"
        out = values[0]
        for v in values[1:]:
            out = S.logical(op, out, v)
        return Scalar(out)

    def expr_Compare(self, node: ast.Compare) -> Value:
        return self.hooks.compare_values(self, node)

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        return self.hooks.subscript(self, node)

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, Const):
            return self.expr(node.body if cond.value else node.orelse)
        raise self.fail("a conditional expression with a run-time condition", node)

    # -- nested functions (pipe callbacks) -------------------------------------------------------

    def inline(self, fn: FuncRef | HelperRef, args: list[Value], node: ast.AST) -> Value:
        """Call a helper function: its body is inlined here, its arguments bound; a
        ``return`` as its last statement gives the call's value."""
        f = fn.node
        depth = self.scope.depth if self.scope is not None else 0
        if depth >= 8 or any(s is f for s in self._active):
            raise self.fail(f"recursive call of '{f.name}'", node)
        if helpers.is_generator(f):
            raise self.fail(
                f"the generator '{f.name}' used other than as the iterable of a for loop", node
            )
        a = f.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            raise self.fail(f"'{f.name}' takes only plain positional parameters here", node)
        if len(args) != len(a.args):
            raise self.fail(f"'{f.name}' takes {len(a.args)} argument(s), got {len(args)}", node)
        body, ret = f.body, None
        last = body[-1] if body else None
        if isinstance(last, ast.Return):
            body, ret = body[:-1], last
        counts = assigned(f.body)
        for p in a.args:
            counts[p.arg] = counts.get(p.arg, 0) + 1
        self._inline_count += 1
        saved_env, saved_scope, saved_loc = self.env, self.scope, self.loc
        fns: tuple | None
        file: str | None
        if isinstance(fn, HelperRef):  # Python's scoping: it sees its own closure only
            self.env = {}
            fns, file = fn.fns, fn.file
        else:  # defined in the kernel: it reads the kernel's names
            self.env = {k: v for k, v in saved_env.items() if k not in counts}
            fns = saved_scope.fns if saved_scope is not None else None
            file = saved_scope.file if saved_scope is not None else None
        self.scope = _Scope(
            counts,
            f"{f.name}{self._inline_count}_",
            f,
            depth + 1,
            len(self.loops),
            fns,
            file,
        )
        self._active.append(f)
        result: Value = Static(None)
        try:
            for p, v in zip(a.args, args):
                self.env[p.arg] = v
            self.statements(body)
            if ret is not None and ret.value is not None and not self.tracker.dead:
                self.loc = SourceLoc(self.file, ret.lineno)
                result = self.expr(ret.value)
        finally:
            self._active.pop()
            self.env, self.scope, self.loc = saved_env, saved_scope, saved_loc
        return result

    _active: list = field(default_factory=list)
    _inline_count: int = 0
