"""The call signature: everything a compiled call depends on, computed once per call.

Two caches skip work for a repeated call: the warm-call cache (``compiler/warm.py``: the
node setups and the installed program) and the lowering cache
(``compiler/backend/compile.py``: the lowered kernels).  A cache is a proof that the
cached result is the one the call would compute, so its key names everything that
result depends on.  Both keys are read off one :class:`CallSignature`, built once per
call by :func:`of_call` (STYLE.md, "Caches are proofs"):

* the device (the object, its capacity, where its lowest L1 buffer starts: the
  compiler's circular buffers go below it), the grid, the engine, the operation's
  options (compute configuration) by value;
* every tensor argument's spec (shape, padded page grid, layout, dtype, page size,
  memory config, accessor words, device; not its address) and the *aliasing* of the
  arguments: which of them share one device buffer (``add(a, a, y)`` lowers to one
  accessor for two parameters);
* every free name of the body and its kernels (closure cells, module globals) *by
  value*: numbers with their type and, for floats, their bit pattern (``0.0`` and
  ``-0.0``, NaN payloads), containers by their contents, tensors by spec and address,
  TT-Lang objects by what the lowering reads of them; code (functions, classes,
  modules) by identity *and* the value of every attribute path the operation's source
  reads from it (``Cfg.SCALE``, ``consts.SCALE``, ``cfg.inner.N``), so a changed class
  or module attribute is a new key.

A value the signature can only name by identity (an arbitrary object, a container too
large to compare) is *opaque*: the warm cache does not keep the call, and the lowering,
which never reads such an object, keys it by identity.
"""

from __future__ import annotations

import ast
import enum
import struct
import types
from dataclasses import dataclass

from tilewright.compiler.source import same_file, source_of
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.errors import TilewrightError
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.pipes import PipeNet
from tilewright.lang.semaphore import MulticastRemoteSemaphore, Semaphore, UnicastRemoteSemaphore
from tilewright.ttnn.tensor import Tensor

__all__ = [
    "CallSignature",
    "OPAQUE",
    "attribute_paths",
    "code_names",
    "free_values",
    "is_opaque",
    "of_call",
    "sign_cells",
    "sign_names",
    "value_sig",
]

OPAQUE = "obj"  # the tag of a value signed by identity only
_LIMIT = 4096  # container items compared by value; a larger one is opaque
_CODE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)


@dataclass(frozen=True, slots=True)
class CallSignature:
    """One call's inputs as the caches see them (module docstring)."""

    device: tuple  # (id, capacity, lowest allocated L1 address)
    grid: tuple[int, ...]
    engine: str | None  # None: a bad --tw-engine (the full path reports it)
    options: object  # the operation's options, by value
    tensors: tuple  # each argument's spec
    aliases: tuple[int, ...]  # per argument, the first argument sharing its buffer
    free: tuple  # (name, signature) of the body's free names
    opaque: bool  # a free value is known only by identity
    opaque_names: frozenset[str]  # the free names whose values are (in part) opaque
    keep: tuple  # the objects signed by identity, kept alive while the key is
    values: dict  # the free values themselves (what the warm path checks), not keyed

    def key(self) -> tuple:
        """The parts every cache keys on (not ``keep``, not ``opaque``)."""
        return (
            self.device,
            self.grid,
            self.engine,
            self.options,
            self.tensors,
            self.aliases,
            self.free,
        )


# -- values -----------------------------------------------------------------------------------


def _float_bits(v: float) -> bytes:
    return struct.pack("<d", v)


class _Signer:
    """Signs values by value, recording what it can only sign by identity."""

    __slots__ = ("keep", "opaque", "budget", "paths", "addresses", "helper_file", "_open")

    def __init__(
        self,
        paths: dict[str, frozenset[tuple[str, ...]]] | None = None,
        addresses: bool = True,
        helper_file: str | None = None,
    ) -> None:
        self.keep: list[object] = []
        self.opaque = False
        self.budget = _LIMIT
        self.paths = paths or {}
        self.addresses = addresses  # tensors with their address (not for the lowering)
        # the operation's file: its functions are helpers the lowering inlines, so what
        # they read is part of the key (lower/helpers.py)
        self.helper_file = helper_file
        self._open: set[int] = set()  # helpers being signed (recursion)

    def by_id(self, tag: str, v: object) -> tuple:
        self.keep.append(v)  # alive while the key is: its id stays its own
        return (tag, id(v))

    def named(self, name: str, v: object) -> object:
        """``v`` bound to the free name ``name``, with the attribute paths read from it."""
        sig = self.sign(v)
        paths = self.paths.get(name)
        if paths and isinstance(v, (types.ModuleType, type)):
            return (sig, tuple(sorted((p, self.path(v, p)) for p in paths)))
        return sig

    def path(self, root: object, path: tuple[str, ...]) -> object:
        """The value at ``root.a.b...``, walked through modules and classes (what the
        lowering resolves at compile time, and what a body reads by a dotted name)."""
        v = root
        for i, attr in enumerate(path):
            if i and not isinstance(v, (types.ModuleType, type)):
                break  # an instance's attributes: the value is signed as a whole below
            try:
                v = getattr(v, attr)
            except Exception as exc:  # noqa: BLE001 - a missing or raising attribute is a state too
                return ("missing", type(exc).__name__)
        return self.sign(v)

    def sign(self, v: object) -> object:
        self.budget -= 1
        if self.budget < 0:
            self.opaque = True
            return self.by_id(OPAQUE, v)
        if v is None or isinstance(v, (bool, int, str, bytes)):
            return (type(v), v)
        if isinstance(v, float):
            return (float, _float_bits(v))
        if isinstance(v, complex):
            return (complex, _float_bits(v.real), _float_bits(v.imag))
        if isinstance(v, tuple):
            return ("tuple", type(v), tuple(self.sign(x) for x in v))
        if isinstance(v, list):
            return ("list", tuple(self.sign(x) for x in v))
        if isinstance(v, (set, frozenset)):
            items = [self.sign(x) for x in v]
            return ("set", type(v), frozenset(items))
        if isinstance(v, dict):
            return ("dict", tuple((self.sign(k), self.sign(x)) for k, x in v.items()))
        if isinstance(v, enum.Enum):
            return ("enum", self.by_id("class", type(v)), v.name)
        if isinstance(v, Tensor):  # a captured tensor's address is not a runtime arg
            return _tensor_spec(v) + (_address(v),) if self.addresses else _tensor_spec(v)
        if isinstance(v, DataflowBuffer):
            return (
                "dfb",
                v.name,
                v.index,
                v.address,
                v.shape,
                v.block_count,
                v.data_format,
                v.tiled,
            )
        if isinstance(v, Semaphore):
            return ("sem", v.sem_id)
        if isinstance(v, UnicastRemoteSemaphore):
            return ("usem", v.sem.sem_id, v.node)
        if isinstance(v, MulticastRemoteSemaphore):
            return ("msem", v.sem.sem_id, v.lo, v.hi)
        if isinstance(v, PipeNet):
            return ("net", tuple((p.src, tuple(repr(c) for c in p.dst)) for p in v.pipes))
        if isinstance(v, types.ModuleType):
            return ("module", v.__name__, self.by_id("id", v))
        if isinstance(v, types.FunctionType):  # by identity and its code (reassignable)
            sig = ("fn", self.by_id("id", v), self.by_id("id", v.__code__))
            if self.helper_file is None or id(v) in self._open:
                return sig
            if not same_file(v.__code__.co_filename, self.helper_file):
                return sig
            return sig + (self._helper(v),)
        if isinstance(v, _CODE):
            return self.by_id("code", v)
        signature = getattr(v, "cache_signature", None)  # a raw IR function: what its body reads
        if callable(signature) and not isinstance(v, type):
            self.keep.append(v)
            return signature()
        self.opaque = True
        return self.by_id(OPAQUE, v)

    def _helper(self, fn: types.FunctionType) -> object:
        """What a helper the lowering inlines reads: its closure cells and the globals it
        names, with the attribute paths its own source reads from them."""
        try:
            free = free_values(fn)
        except ValueError:  # an empty cell
            self.opaque = True
            return OPAQUE
        try:
            paths = attribute_paths(source_of(fn).tree)
        except TilewrightError:
            paths = {}
        saved, self.paths = self.paths, paths
        self._open.add(id(fn))
        try:
            return tuple((name, self.named(name, free[name])) for name in sorted(free))
        finally:
            self._open.discard(id(fn))
            self.paths = saved


def value_sig(v: object) -> object:
    """The signature of one value (tests and other caches: :class:`_Signer`)."""
    return _Signer().sign(v)


def is_opaque(sig: object) -> bool:
    """A signature that holds a value only by identity."""
    if not isinstance(sig, tuple):
        return False
    return (bool(sig) and sig[0] == OPAQUE) or any(is_opaque(part) for part in sig)


def _address(t: Tensor) -> int:
    return int(t.buffer.address)


def _tensor_spec(t: Tensor) -> tuple:
    buf = t.buffer
    return (
        "tensor",
        tuple(t.shape),
        tuple(t.page_grid()),
        t.layout,
        t.dtype,
        buf.page_size,
        repr(t.memory_config()),
        tuple(tensor_accessor_args(buf)),
        id(t.device()),
    )


def _aliases(args) -> tuple[int, ...]:
    """Per argument, the position of the first argument on the same device buffer."""
    first: dict[tuple, int] = {}
    out = []
    for i, a in enumerate(args):
        buf = a.buffer
        where = (id(a.device()), bool(buf.is_dram), int(buf.address))
        out.append(first.setdefault(where, i))
    return tuple(out)


# -- what a body reads ------------------------------------------------------------------------


def code_names(code: types.CodeType) -> set[str]:
    """Every name the code and its nested code objects look up (globals, attributes)."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= code_names(const)
    return out


def free_values(fn: types.FunctionType) -> dict[str, object]:
    """The function's free names: the module globals its code names, then its closure cells.
    ``ValueError`` for an empty closure cell."""
    out: dict[str, object] = {}
    glb = fn.__globals__
    for name in code_names(fn.__code__):
        if name in glb:
            out[name] = glb[name]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        out[name] = cell.cell_contents
    return out


_PATHS: dict[int, tuple[ast.AST, dict[str, frozenset[tuple[str, ...]]]]] = {}


def attribute_paths(tree: ast.AST | None) -> dict[str, frozenset[tuple[str, ...]]]:
    """The dotted reads of ``tree``: root name -> the attribute paths read from it
    (``Cfg.inner.N`` gives ``{"Cfg": {("inner", "N")}}``).  Computed once per tree."""
    if tree is None:
        return {}
    got = _PATHS.get(id(tree))
    if got is not None and got[0] is tree:
        return got[1]
    found: dict[str, set[tuple[str, ...]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        path: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            path.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name):
            found.setdefault(base.id, set()).add(tuple(reversed(path)))
    paths = {name: frozenset(p) for name, p in found.items()}
    if len(_PATHS) > 1024:
        _PATHS.clear()
    _PATHS[id(tree)] = (tree, paths)  # the tree stays alive: its id stays its own
    return paths


def sign_names(
    values: dict[str, object], paths, addresses: bool = True, helper_file: str | None = None
) -> tuple[tuple, frozenset[str], tuple]:
    """``(name, signature)`` of each value, the names of the opaque ones, what was kept alive.
    ``addresses``: tensors with their address (the lowering reads every tensor it may use
    as an argument, whose address is a runtime arg)."""
    signer = _Signer(paths, addresses, helper_file)
    out, opaque = [], set()
    for name in sorted(values):
        signer.opaque = False
        out.append((name, signer.named(name, values[name])))
        if signer.opaque:
            opaque.add(name)
    return tuple(out), frozenset(opaque), tuple(signer.keep)


def sign_cells(fns, paths, helper_file: str | None = None) -> tuple[tuple, tuple]:
    """Each function's closure cells by value (one tuple per function: every node's
    kernel), with the attribute paths read from them; tensors by spec (the lowering makes
    their addresses runtime args); ``ValueError`` for an empty cell."""
    signer = _Signer(paths, addresses=False, helper_file=helper_file)
    out = []
    for fn in fns:
        names = fn.__code__.co_freevars
        out.append(
            tuple(signer.named(n, c.cell_contents) for n, c in zip(names, fn.__closure__ or ()))
        )
    return tuple(out), tuple(signer.keep)


# -- the call -----------------------------------------------------------------------------------


def of_call(op, device, grid, args, engine: str | None, paths) -> CallSignature:
    """The signature of ``op(*args)`` on ``device`` over ``grid`` under ``engine`` (None
    for a bad ``--tw-engine``); ``paths``: :func:`attribute_paths` of the body's source."""
    free: tuple = ()
    opaque = True  # a body whose free names cannot be read (an empty cell)
    opaque_names: frozenset[str] = frozenset()
    keep: tuple = ()
    values: dict = {}
    if isinstance(op.body, types.FunctionType):
        try:
            values = free_values(op.body)
        except ValueError:
            values = {}
        else:
            free, opaque_names, keep = sign_names(
                values, paths, helper_file=op.body.__code__.co_filename
            )
            opaque = bool(opaque_names)
    options_signer = _Signer()
    options = options_signer.sign(op.options)
    lowest = device.l1_allocator.lowest_allocated_address()
    return CallSignature(
        device=(id(device), device.capacity, lowest),
        grid=tuple(grid),
        engine=engine,
        options=options,
        tensors=tuple(_tensor_spec(a) for a in args),
        aliases=_aliases(args),
        free=free,
        opaque=opaque or options_signer.opaque,
        opaque_names=opaque_names,
        keep=keep + (device, *options_signer.keep),
        values=values,
    )
