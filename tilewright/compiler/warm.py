"""Warm calls: a compiled call whose inputs were seen before reuses that call's program.

tt-metal's program cache hashes an operation's attributes and its tensors' specs, and
on a hit skips building the program: it only overrides the runtime arguments (the
buffer addresses).  This is the same for a TT-Lang operation on the native engine.  A
call evaluates the operation body once per node, builds the device ``Program``, lowers
the kernels (or finds them in the lowering cache) and installs them -- all of it a
function of what the body reads.  When that is the same as an earlier compiled call's,
the earlier call's node setups and program are reused, and only the tensor addresses
among the runtime args are written again (:meth:`CompiledCall.rebind`).

The body must be *declarative* for that (:func:`declarative`, checked once per
operation on its AST): outside its kernel functions it calls only ``ttl`` / tilewright
functions, a few pure builtins (``range``, ``len``, ``min``, ...) and ``math``; it
assigns no attribute or item, declares nothing ``global`` / ``nonlocal`` and defines
no function but its kernels, and calls methods only of the resources it declared.
Every value it or its kernels take from outside (a closure cell or a module global)
must be a value the key can compare (numbers, strings, tuples of them, tensors, TT-Lang
objects), code (a function, class or module) or an enum member.  A body that prints,
draws random numbers or reads a mutable object runs on every call as before.

The key (:func:`key_of`): the device (the object, and where its lowest L1 buffer
starts), the grid, the engine, every tensor argument's spec (shape, dtype, layout,
page grid, memory and accessor words -- not its address), and the value of every
closure cell and module global the body or its kernels name.  A call under the
``python`` engine, with a runtime resource factory, or while ``explain`` / ``emit``
observe programs takes the full path.  Entries live on the operation (a few keys).
"""

from __future__ import annotations

import ast
import builtins
import types
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilewright.compiler import program_builder, signature
from tilewright.compiler.backend.engine import COMPILE_OBSERVERS, engine_of
from tilewright.errors import InterfaceError

if TYPE_CHECKING:
    from tilewright.device.device import Device
    from tilewright.lang.node import NodeSetup

__all__ = ["WarmCall", "declarative", "key_of", "lookup", "remember", "signature_of"]

_PURE_BUILTINS = frozenset(
    "abs bool divmod enumerate float int isinstance len max min pow range reversed round "
    "slice str sum tuple zip".split()
)
_MODULES = ("tilewright", "ttl", "math")  # module roots whose functions the body may call
_INJECTED = "__ttl_"  # names the splitter gives the values it injects into a unified body
_ENTRIES = 32  # warm entries per operation (e.g. one per chip of a mesh)


@dataclass(frozen=True, slots=True)
class WarmCall:
    """A compiled call's setups and program, reusable by a call with the same key."""

    device: Device
    setups: dict[int, NodeSetup]
    program: program_builder.OperationProgram
    keep: tuple = ()  # what the key names by identity (``CallSignature.keep``)


@dataclass(frozen=True, slots=True)
class _Body:
    """What :func:`declarative` found in an operation body."""

    called: frozenset[str]  # free names the body calls (outside its kernels)
    read: frozenset[str]  # free names the body reads otherwise (outside its kernels)


_BODIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # op -> _Body | None
_PATHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # op -> attribute paths
_WARM: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # op -> {key: WarmCall}


def _kernel_decorated(fn: ast.FunctionDef) -> bool:
    """A kernel function of the body (``@ttl.compute()``, ``@ttl.datamovement()``, or the
    splitter's generated kernel decorator): its body runs in the kernel, not in setup."""
    return bool(fn.decorator_list) and all(isinstance(d, ast.Call) for d in fn.decorator_list)


class _Scan(ast.NodeVisitor):
    """Walk a body outside its kernels; ``ok`` turns False at the first non-declarative node."""

    def __init__(self) -> None:
        self.ok = True
        self.called: set[str] = set()
        self.loaded: set[str] = set()
        self.stored: set[str] = set()
        self.stores: dict[str, int] = {}  # local -> how many times it is bound
        self.made: dict[str, str] = {}  # local bound by ``local = root.f(...)`` -> root

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(
            node,
            (
                ast.Global,
                ast.Nonlocal,
                ast.Yield,
                ast.YieldFrom,
                ast.Await,
                ast.Lambda,
                ast.ClassDef,
                ast.AsyncFunctionDef,
                ast.Import,
                ast.ImportFrom,
                ast.Delete,
            ),
        ):
            self.ok = False
            return
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            self.ok = False  # mutates an object (maybe one outside the body)
            return
        super().generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if not _kernel_decorated(node):
            self.ok = False  # a helper function: what it does is not scanned
            return
        self.stored.add(node.name)
        for dec in node.decorator_list:
            self.visit(dec)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loaded.add(node.id)
        else:
            self.stored.add(node.id)
            self.stores[node.id] = self.stores.get(node.id, 0) + 1

    def visit_Assign(self, node: ast.Assign) -> None:
        target, value = node.targets[0], node.value
        if len(node.targets) == 1 and isinstance(target, ast.Name) and isinstance(value, ast.Call):
            root = _root(value.func)
            if root is not None:
                self.made[target.id] = root
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self.stored.add(node.arg)

    def visit_Call(self, node: ast.Call) -> None:
        root = _root(node.func)
        if root is None:
            self.ok = False  # a call of a call's result, of an item, ...
            return
        self.called.add(root)
        self.generic_visit(node)


def _root(func: ast.expr) -> str | None:
    """``x`` of a call of ``x``, ``x.f`` or ``x.a.f``; None for other callees."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


def declarative(tree: ast.FunctionDef) -> _Body | None:
    """The free names a body calls and reads, if it is declarative (module docstring)."""
    scan = _Scan()
    scan.visit(tree.args)
    for stmt in tree.body:
        scan.visit(stmt)
        if not scan.ok:
            return None
    local = scan.stored
    called = set(scan.called - local)
    for name in scan.called & local:
        # a method of a resource the body declared (``sem.get_remote(...)`` of
        # ``sem = ttl.Semaphore()``); of anything else (a tensor argument, a value) it
        # may read what the key does not see
        root = scan.made.get(name)
        if root is None or root in local or scan.stores.get(name) != 1:
            return None
        called.add(root)
    return _Body(frozenset(called), frozenset(scan.loaded - scan.called - local))


def _tree_of(op) -> ast.AST | None:
    """The body's function: the operation's, or the splitter's generated multi-kernel one."""
    tree: ast.AST | None = op.record.source.tree
    if op.split_plan is not None:  # the generated multi-kernel function
        try:
            module = ast.parse(op.split_plan.generated_source)
        except SyntaxError:  # pragma: no cover - generated from an AST
            module = None
        tree = next(
            (n for n in getattr(module, "body", ()) if isinstance(n, ast.FunctionDef)), None
        )
    return tree


def _body_of(op) -> _Body | None:
    if op in _BODIES:
        return _BODIES[op]
    tree = _tree_of(op)
    found = declarative(tree) if isinstance(tree, ast.FunctionDef) else None
    _BODIES[op] = found
    return found


def _paths_of(op) -> dict:
    """The attribute paths the body's source reads (``signature.attribute_paths``)."""
    got = _PATHS.get(op)
    if got is None:
        got = _PATHS[op] = signature.attribute_paths(_tree_of(op))
    return got


def _callable_ok(name: str, values: dict[str, object]) -> bool:
    if name not in values:
        return name in _PURE_BUILTINS and hasattr(builtins, name)
    v = values[name]
    if isinstance(v, types.ModuleType):
        return v.__name__.split(".")[0] in _MODULES
    if not isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)):
        return False  # an object's method may read its state
    return str(getattr(v, "__module__", "") or "").split(".")[0] == "tilewright"


def signature_of(op, device, grid: tuple[int, ...], args) -> signature.CallSignature:
    """The one signature of a call (``compiler/signature.py``), read by the warm-call cache
    and, passed down, by the lowering cache."""
    try:
        engine: str | None = engine_of(op.options, op.name).engine
    except InterfaceError:  # a bad --tw-engine: the full path reports it at its place
        engine = None
    return signature.of_call(op, device, grid, args, engine, _paths_of(op))


def key_of(op, sig: signature.CallSignature, factory) -> tuple | None:
    """The warm key of a call, or None when the call takes the full path."""
    if (
        factory is not None
        or program_builder.BUILD_OBSERVERS
        or COMPILE_OBSERVERS
        or not isinstance(op.body, types.FunctionType)
        or sig.engine in (None, "python")
        or not sig.values
        and op.body.__code__.co_freevars  # an empty closure cell
    ):
        return None
    body = _body_of(op)
    if body is None:
        return None
    if not all(_callable_ok(n, sig.values) for n in body.called):
        return None
    if any(not name.startswith(_INJECTED) for name in sig.opaque_names):
        return None  # the body or a kernel reads an object whose state the key cannot see
    return sig.key()


def lookup(op, key: tuple | None, device, args) -> WarmCall | None:
    """The warm call of ``key`` with its runtime args rebound to ``args``, or None."""
    if key is None:
        return None
    hit = _WARM.get(op, {}).get(key)
    if hit is None or hit.device is not device or device.closed:
        return None
    compiled = getattr(hit.program, "compiled", None)
    if compiled is None:  # pragma: no cover - only compiled programs are remembered
        return None
    compiled.rebind(hit.program, op.interface.params, args)
    return hit


def remember(op, key: tuple | None, device, setups, program, keep: tuple = ()) -> None:
    """Keep a compiled call's setups and program for the next call with ``key``."""
    if key is None or getattr(program, "compiled", None) is None:
        return
    entries = _WARM.setdefault(op, {})
    if len(entries) >= _ENTRIES:
        entries.clear()
    entries[key] = WarmCall(device, setups, program, keep)
