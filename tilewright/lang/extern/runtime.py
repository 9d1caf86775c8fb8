"""Running external calls: bind a call site on a kernel, build it, call it, check it.

The first evaluation of a call site on a kernel run *binds* it (:class:`Binding`):
the site is found in the operation's plan by its source position, the run's kernel
must be one the call selects, the dependency occurrences are resolved to the node's
DFBs (their capacities checked against the declared tile counts), tensors are
checked for the kernel kind and turned into accessor handles, the C++ glue is
generated (:mod:`.glue`), built or found in the cache, and loaded.  Every later
evaluation is the fast path: marshal the scalar arguments into a preallocated
``int64`` array, run the entry point through the bridge with the site's contract
monitor attached, and return the scalar result.

Bindings are per launch: a new launch (``lang.state.CURRENT``) drops
them, as it drops the bridge's accessor handles.  What is checked around each call
(capacities, the contract, escaped C++ exceptions, dispatch conditions) is
:mod:`.checks`, which the compiled engine runs too.
"""

from __future__ import annotations

import ctypes
import math
import struct

import numpy as np

from tilewright.device.engine import ACTIVE
from tilewright.device.formats import DATA_TYPE_NAMES, TTNN_TO_DATA_FORMAT
from tilewright.device.formats.dataformat import ELEMENT_SIZE
from tilewright.device.kernel_api.accessor import (
    TensorAccessor,
    TensorAccessorArgs,
    tensor_accessor_args,
)
from tilewright.errors import ExternCallError, SourceLoc
from tilewright.lang import state
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.extern import glue
from tilewright.lang.extern.checks import CallChecks, launch_state
from tilewright.lang.extern.types import DFBDescriptorArg, DFBIdArg, RawAddr, UInt32
from tilewright.lang.selectors import LogicalKernel, kernel_of
from tilewright.native import bridge, isolate
from tilewright.native.build import build_shared_object, is_current
from tilewright.ttnn.tensor import Tensor

__all__ = ["call", "Binding", "build_site"]


_LIBS: dict = {}

_I32 = (-(1 << 31), (1 << 31) - 1)
_I64 = (-(1 << 63), (1 << 63) - 1)
_U32 = (0, (1 << 32) - 1)

# Tensor data types an external call may take: any in tiles; in rows, those with an element
# size (block-float formats exist only as tiles).
_TILE_DTYPES = frozenset(t.name for t in DATA_TYPE_NAMES)
_ROW_MAJOR_DTYPES = frozenset(
    t.name for t in DATA_TYPE_NAMES if TTNN_TO_DATA_FORMAT[t] in ELEMENT_SIZE
)


def call(frame, func_args, template_args, dfb_dependencies, site_id=None):
    """Evaluate the external call at ``frame``'s current call instruction on the running kernel
    (``site_id``: the call site composition named, else found by source position)."""
    run = ACTIVE.run
    per = launch_state()
    launch = per.launch
    key = (run, frame.f_code, frame.f_lasti)
    binding = per.bindings.get(key)
    if binding is None:
        binding = per.bindings[key] = Binding(
            run, launch, frame, func_args, template_args, dfb_dependencies, site_id
        )
    return binding.invoke(func_args)


def _position(code, lasti: int):
    for i, pos in enumerate(code.co_positions()):
        if 2 * i == lasti:
            return pos
    return None


def _find_site(run, launch, frame, site_id=None):
    setup = launch.setups.get(run.core.index) if launch.setups else None
    op = getattr(setup, "op", None)
    plan = getattr(op, "extern_plan", None)
    site = None
    if plan is not None and site_id is not None:
        site = plan.site_by_id(site_id)
    elif plan is not None:
        site = plan.by_code.get((frame.f_code, frame.f_lasti))
        if site is None:
            pos = _position(frame.f_code, frame.f_lasti)
            site = plan.site_at(pos) if pos is not None else None
            if site is not None:
                plan.by_code[(frame.f_code, frame.f_lasti)] = site
    if site is None:
        raise ExternCallError(
            "this ttl.call_extern_func call was not validated with its operation: write it as "
            "ttl.call_extern_func(...) directly in the operation body or one of its kernel functions",
            loc=SourceLoc(frame.f_code.co_filename, frame.f_lineno),
            rule="extern-unvalidated",
        )
    return site


def _kernel_keys(run, launch) -> tuple[str, ...]:
    """Keys of per-kernel mappings that may name the running kernel, most specific first."""
    setup = launch.setups.get(run.core.index)
    kind = run.kernel_context().kernel.kind
    decl = next((d for d in getattr(setup, "kernels", ()) if d.name == run.name), None)
    kernel = kernel_of(decl.selector) if decl is not None else None
    if kernel is None or kernel.kind != kind:
        kernel = LogicalKernel(kind, "canonical")
    return kernel.keys


def _runtime_key_matches(selector, key: str) -> bool:
    kernel = kernel_of(selector)
    return kernel is not None and kernel.key == key


class Binding:
    """One call site bound on one kernel run: entry point, argument layout, contract."""

    __slots__ = (
        "site",
        "run",
        "variant_key",
        "lib",
        "argv",
        "result",
        "result_ref",
        "scalars",
        "fixed",
        "monitor",
        "checks",
        "token",
        "signature",
        "state_args",
        "kind",
        "native",
        "floats",
    )

    def __init__(
        self, run, launch, frame, func_args, template_args, dfb_dependencies, site_id=None
    ) -> None:
        site = self.site = _find_site(run, launch, frame, site_id)
        self.run = run
        kind = self.kind = run.kernel_context().kernel.kind
        if site.kernel_kinds is not None and kind not in site.kernel_kinds:
            raise ExternCallError(
                f"{site.title} selects {', '.join(sorted(site.kernel_kinds))} kernels but runs on "
                f"{run.label}",
                loc=site.loc,
            )
        variant_key = self.variant_key = site.variant_key(_kernel_keys(run, launch))
        variant = site.variants[variant_key]
        args = self._args_of(func_args)
        if len(args) != len(variant.func_args):
            raise ExternCallError(
                f"{site.title}: func_args has {len(args)} values at run time, the source lists "
                f"{len(variant.func_args)}",
                loc=site.loc,
            )
        dfbs = self._occurrence_dfbs(variant, args, template_args or [], dfb_dependencies or [])
        # the capacities are checked before anything is built (first of the call's checks)
        self.checks = CallChecks(site, run, variant, dfbs, launch.setups.get(run.core.index))
        self.monitor = self.checks.monitor
        template_texts = self._template_texts(template_args or [])
        self.state_args = (args, template_texts, dfbs)
        self.signature = self._initial_signature(variant, args)
        # (position, slot, object) of the arguments fixed at binding; set by _build
        self.fixed: tuple[tuple[int, int, object], ...] = ()
        self._build()
        self.token = (site.id, run.core.logical.x, run.core.logical.y)
        self.native = bridge.prepare(
            self.lib, observer=self.monitor.observe, token=self.token, title=self.site.title
        )

        isolate.announce(site)

    # -- binding -----------------------------------------------------------------------------

    def _args_of(self, func_args) -> list:
        if func_args is None:
            return []
        if isinstance(func_args, dict):
            for sel, value in func_args.items():
                if self.variant_key is not None and _runtime_key_matches(sel, self.variant_key):
                    return list(value)
            return []
        return func_args

    def _error(self, message: str, cls=ExternCallError, **kw):
        return cls(f"{self.site.title}: {message}", loc=self.site.loc, **kw)

    def _occurrence_dfbs(self, variant, args, template_args, deps) -> list:
        out = []
        for occ in variant.occurrences:
            try:
                if occ.where == "func_args":
                    obj = args[occ.position]
                elif occ.where == "template_args":
                    marker = template_args[occ.position]
                    obj = marker.dfb if isinstance(marker, DFBDescriptorArg) else None
                else:
                    obj = deps[occ.position]
            except (IndexError, KeyError, TypeError):
                obj = None
            if not isinstance(obj, DataflowBuffer):
                raise self._error(
                    f"{occ.where}[{occ.position}] ('{occ.dfb}') is {type(obj).__name__} at run time, not a DFB"
                )
            if obj.index is None:
                raise self._error(f"DFB '{occ.dfb}' has no physical index")
            out.append(obj)
        return out

    def _template_texts(self, template_args) -> list[str]:
        texts = []
        for i, t in enumerate(self.site.template_args):
            if t.kind in ("descriptor", "dfb_id"):
                marker = template_args[i] if i < len(template_args) else None
                dfb = getattr(marker, "dfb", None)
                if not isinstance(marker, (DFBDescriptorArg, DFBIdArg)) or not isinstance(
                    dfb, DataflowBuffer
                ):
                    raise self._error(
                        f"template_args[{i}] is not a DFB descriptor / id at run time"
                    )
                texts.append(
                    glue.descriptor_text(dfb) if t.kind == "descriptor" else str(dfb.index)
                )
            else:
                texts.append(t.text)
        return texts

    def _initial_signature(self, variant, args) -> tuple[bool, ...]:
        """Per function argument: True if a scalar is passed as int64_t (else int32_t)."""
        sig = []
        for a, v in zip(variant.func_args, args, strict=True):
            wide = a.kind == "i64"  # a typed signature's int64_t (ttl.raw.cpp)
            if a.kind == "scalar":
                v = self._scalar(v, a, 0)
                wide = not _I32[0] <= v <= _I32[1]
            sig.append(wide)
        return tuple(sig)

    def _scalar(self, v, a, pos: int) -> int:
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, int):
            return v
        if type(v).__name__ == "GlobalSemaphore" and hasattr(v, "address"):
            return int(v.address() if callable(v.address) else v.address)
        if isinstance(v, np.integer):
            return int(v)
        raise self._error(
            f"func_args element {a.source} is {type(v).__name__} {v!r} at run time; scalar function "
            "arguments are integers"
        )

    def _tensor_param(self, i: int, a, tensor, slot: int):
        """Check a tensor function argument for this kernel kind (C.9 item 16); its parameter."""
        if not isinstance(tensor, Tensor):
            raise self._error(
                f"func_args element {a.source} is {type(tensor).__name__} at run time, not a tensor"
            )
        buf = tensor.buffer
        dtype, layout = tensor.dtype.name, tensor.layout.name
        desc = f"{layout} {dtype} tensor in {buf.buffer_type.name} ({buf.layout.name.lower()})"
        allowed = _TILE_DTYPES if layout == "TILE" else _ROW_MAJOR_DTYPES
        if dtype not in allowed:
            raise self._error(
                f"func_args element {a.source}: {layout} tensors of {dtype} are not supported for external "
                f"calls (supported: {', '.join(sorted(allowed))})"
            )
        if self.kind == "compute":
            if buf.shard is None or buf.buffer_type.name not in ("L1", "L1_SMALL"):
                raise self._error(
                    f"func_args element {a.source}: a tensor passed to a compute kernel must be height-, "
                    f"width- or block-sharded in L1 (a LocalTensorAccessor of the node's shard); got a {desc}"
                )
            core = self.run.core
            if all(c is not core for c in buf.shard_cores):
                raise self._error(
                    f"func_args element {a.source}: node {core.logical} holds no shard of the tensor; every "
                    "node executing a compute-kernel external call must own a shard"
                )
            value = core.host_base + buf.address
            decl = (
                f"const LocalTensorAccessor<uint8_t> v{i}(static_cast<uint32_t>(tw_argv[{slot}]));"
            )
            return value, decl
        if buf.buffer_type.name == "L1_SMALL" and buf.shard is None:
            raise self._error(
                f"func_args element {a.source}: an L1_SMALL tensor must be sharded; got a {desc}"
            )

        ctx = self.run.context
        saved = ctx.compile_args
        # TensorAccessorArgs decodes the words from the kernel's compile-time args (one
        # decoder for both paths); hand it this tensor's words for the moment.
        ctx.compile_args = tensor_accessor_args(buf)
        try:
            args = TensorAccessorArgs(0)
        finally:
            ctx.compile_args = saved
        handle = bridge.new_handle(TensorAccessor(args, buf.address, buf.page_size))
        return handle, f"const auto v{i} = ::tw::accessor_arg(tw_argv[{slot}]);"

    def _raw_address(self, a, marker) -> int:
        tensor = getattr(marker, "tensor", None)
        if not isinstance(marker, RawAddr) or not isinstance(tensor, Tensor):
            raise self._error(
                f"func_args element {a.source} is not ttl.raw_addr(tensor) at run time"
            )
        buf = tensor.buffer
        if buf.buffer_type.name in ("L1", "L1_SMALL"):
            return (
                self.run.core.host_base + buf.address
            )  # an L1 address is a pointer in native code
        return buf.address

    def _build(self) -> None:
        site, variant = self.site, self.site.variants[self.variant_key]
        args, template_texts, _ = self.state_args
        params: list[glue.Param] = []
        scalars: list[tuple[int, int, tuple[int, int]]] = []
        floats: list[tuple[int, int]] = []  # (slot, argument) of float parameters
        fixed: list[tuple[int, int, object]] = []
        values: list[int] = []
        extra_headers: list[str] = []
        accessors: dict[int, tuple[int, int]] = {}  # id(tensor) -> (argument, slot) (C.4)
        for i, a in enumerate(variant.func_args):
            slot = len(values)
            v = args[i]
            if a.kind == "dfb":
                params.append(glue.Param(f"constexpr uint32_t v{i} = {v.index};", f"v{i}"))
                continue
            if a.kind == "tensor" and id(v) in accessors:
                # Repeated occurrences of one tensor reuse its accessor, in argument order.
                first, first_slot = accessors[id(v)]
                params.append(glue.Param("", f"v{first}"))
                fixed.append((i, first_slot, v))
                continue
            if a.kind == "tensor":
                accessors[id(v)] = (i, slot)
                value, decl = self._tensor_param(i, a, v, slot)
                if self.kind == "compute":
                    extra_headers.append("api/tensor/local_tensor_accessor.h")
                params.append(glue.Param(decl, f"v{i}"))
                fixed.append((i, slot, v))
                values.append(value)
                continue
            if a.kind == "raw_addr":
                values.append(self._raw_address(a, v))
                fixed.append((i, slot, v.tensor))
                params.append(
                    glue.Param(
                        f"const uint32_t v{i} = static_cast<uint32_t>(tw_argv[{slot}]);", f"v{i}"
                    )
                )
                continue
            if a.kind == "uint32":
                scalars.append((slot, i, _U32))
                values.append(0)
                params.append(
                    glue.Param(
                        f"const uint32_t v{i} = static_cast<uint32_t>(tw_argv[{slot}]);", f"v{i}"
                    )
                )
                continue
            if a.kind == "f32":  # a typed signature's float: its binary32 bits in the word
                floats.append((slot, i))
                values.append(0)
                params.append(
                    glue.Param(
                        f"const float v{i} = __builtin_bit_cast(float, static_cast<uint32_t>(tw_argv[{slot}]));",
                        f"v{i}",
                    )
                )
                continue
            ctype, bounds = ("int64_t", _I64) if self.signature[i] else ("int32_t", _I32)
            scalars.append((slot, i, bounds))
            values.append(0)
            params.append(
                glue.Param(f"const {ctype} v{i} = static_cast<{ctype}>(tw_argv[{slot}]);", f"v{i}")
            )
        source = glue.generate(
            title=site.title,
            where=str(site.loc),
            kernel_kind=self.kind,
            header=site.header,
            callee=site.callee,
            template_texts=template_texts,
            params=params,
            result_cpp=site.result_type.cpp_type if site.result_type is not None else None,
            uses_descriptor=any(t.kind == "descriptor" for t in site.template_args),
            extra_headers=tuple(dict.fromkeys(extra_headers)),
            defines=tuple(getattr(self.run.kernel_context().kernel.config, "defines", ())),
        )
        self.lib = load_source(source, site)
        self.argv = (ctypes.c_int64 * max(1, len(values)))(*values)
        self.result = ctypes.c_int64(0)
        self.result_ref = ctypes.byref(self.result)
        self.scalars = tuple(scalars)
        self.floats = tuple(floats)
        self.fixed = tuple(fixed)

    # -- the fast path ---------------------------------------------------------------------------

    def invoke(self, func_args):
        args = func_args if self.variant_key is None else self._args_of(func_args)
        argv = self.argv
        for slot, pos, (lo, hi) in self.scalars:
            v = args[pos]
            if v.__class__ is not int:
                v = self._marshal(pos, v)
            if v < lo or v > hi:
                v = self._widen(pos, v)
                return self.invoke(func_args)
            argv[slot] = v
        for slot, pos in self.floats:
            argv[slot] = self._f32_bits(pos, args[pos])
        for pos, _slot, obj in self.fixed:
            given = args[pos]
            if given is not obj and getattr(given, "tensor", None) is not obj:
                raise self._error(
                    f"func_args element {self.site.variants[self.variant_key].func_args[pos].source} "
                    "names a different tensor than when the call was first bound"
                )
        checks = self.checks
        checks.begin()
        tracer = state.TRACER
        if tracer is None:
            rc = bridge.invoke(self.native, argv, self.result_ref)
        else:  # one span per external call on the kernel's track
            start = self.run.clock
            rc = bridge.invoke(self.native, argv, self.result_ref)
            tracer.span(self.run, f"extern {self.site.callee}", start, self.run.clock)
        if rc == 2:
            checks.end(self.lib.last_error().decode("utf-8", "replace"), None)
        if self.site.result_type is None:
            checks.end(None, None)
            return None
        value = self.result.value
        checks.end(None, value)
        return value

    def _marshal(self, pos: int, v) -> int:
        a = self.site.variants[self.variant_key].func_args[pos]
        if a.kind == "uint32":
            if not isinstance(v, UInt32):
                return self._scalar(v, a, pos)
            return v.value
        return self._scalar(v, a, pos)

    def _f32_bits(self, pos: int, v) -> int:
        """A float argument's binary32 bits (ints and numpy scalars convert; overflow is an error)."""
        a = self.site.variants[self.variant_key].func_args[pos]
        if isinstance(v, (bool, np.bool_)) or not isinstance(
            v, (int, float, np.integer, np.floating)
        ):
            raise self._error(
                f"func_args element {a.source} is {type(v).__name__} {v!r} at run time; the parameter "
                "is a 32-bit float"
            )
        try:
            bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
        except OverflowError:
            bits = None
        if bits is None or (math.isfinite(float(v)) and (bits & 0x7F800000) == 0x7F800000):
            raise self._error(f"func_args element {a.source} = {v!r} does not fit a 32-bit float")
        return bits

    def _widen(self, pos: int, v: int) -> int:
        a = self.site.variants[self.variant_key].func_args[pos]
        if a.kind in ("uint32", "i32") or self.signature[pos] or not _I64[0] <= v <= _I64[1]:
            width = {"uint32": "an unsigned 32-bit", "i32": "a signed 32-bit"}.get(
                a.kind, "a 64-bit"
            )
            raise self._error(f"func_args element {a.source} = {v} does not fit {width} integer")
        sig = list(self.signature)
        sig[pos] = True
        self.signature = tuple(sig)
        self._build()  # the same call with an int64_t parameter (another cached object)
        self.native = bridge.prepare(
            self.lib, observer=self.monitor.observe, token=self.token, title=self.site.title
        )
        return v


def load_source(source: str, site) -> bridge.NativeLibrary:
    """Build (or find in the cache) and load the glue of a call site; rebuilt when a
    header it read changed since it was loaded (``native.build.is_current``)."""
    key = (source, site.include_paths)
    kept = _LIBS.get(key)
    if kept is not None and is_current(kept[1]):
        return kept[0]
    result = build_shared_object(
        source,
        include_paths=site.include_paths,
        what=f"{site.title} at {site.loc}",
        loc=site.loc,
    )
    lib = bridge.load(result.path)
    _LIBS[key] = (lib, result)
    return lib


def build_site(site, source: str) -> str:
    """Path of the shared object of ``source`` (a site's glue); used by benchmarks and tests."""
    return build_shared_object(
        source, include_paths=site.include_paths, what=site.title, loc=site.loc
    ).path
