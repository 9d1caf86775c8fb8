"""The one static resolver (``compiler/scope.py``) and the one logical-kernel
representation (``lang/selectors.py``)."""

import ast

from tilewright import ttl
from tilewright.compiler.extern.scope import LocalScope, Resolver
from tilewright.compiler.scope import MISSING, Scope, static_attribute
from tilewright.lang.selectors import (
    COMPUTE,
    DATA_MOVEMENT,
    PIPE_SOURCE,
    LogicalKernel,
    format_kernels,
    kernel_of,
    logical_kernel_of,
)

LIMIT = 4


def _factory():
    captured = 7

    def op(a):
        return captured + LIMIT + len(a)

    return op


def test_scope_resolves_closure_globals_builtins_and_attribute_paths():
    scope = Scope(_factory(), {"injected": 1})
    assert [scope.where(n) for n in ("injected", "captured", "LIMIT", "len", "nope")] == [
        "injected",
        "closure",
        "global",
        "builtin",
        None,
    ]
    node = ast.parse("ttl.KernelKind.COMPUTE", mode="eval").body
    assert Scope(_factory(), {"ttl": ttl}).resolve(node) is ttl.KernelKind.COMPUTE
    assert Scope(_factory(), {"ttl": ttl}).resolve(node, local={"ttl"}) is MISSING


def test_static_attributes_run_no_code_and_unwrap_static_methods():
    assert static_attribute(ttl.DFBEffect, "reserve") is ttl.DFBEffect.reserve
    assert static_attribute(ttl, "nope") is MISSING


def test_the_extern_resolver_puts_body_names_in_front_of_the_scope():
    resolver = Resolver(_factory())
    body = LocalScope(ast.parse("pass"), bound={"LIMIT"})
    assert resolver.lookup("LIMIT", []).kind == "module"
    assert resolver.lookup("LIMIT", [body]).kind == "local"
    assert resolver.lookup("captured", []).value == 7
    node = ast.parse("LIMIT", mode="eval").body
    assert resolver.static_object(node, []) == 4
    assert resolver.static_object(node, [body]) is MISSING


def test_one_logical_kernel_for_every_selector():
    handle = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
    handle.bind("reader", "mod.op")
    assert kernel_of(ttl.KernelKind.COMPUTE) == COMPUTE
    assert kernel_of(ttl.PIPE_SOURCE_KERNEL) == PIPE_SOURCE
    reader = kernel_of(handle)
    assert reader == LogicalKernel("data_movement", "explicit", "reader", "mod.op")
    twin = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)  # another factory product, equal identity
    twin.bind("reader", "mod.op")
    other = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)  # different captures: another identity
    other.bind("reader", "mod.op[captures=1234]")
    assert kernel_of(twin) == reader and kernel_of(other) != reader
    assert kernel_of(ttl.Kernel(ttl.KernelKind.COMPUTE)) is None  # unbound
    assert reader.keys == ("kernel:reader", "kind:data_movement", "*")
    assert PIPE_SOURCE.keys == ("pipe_source", "kind:data_movement", "*")
    assert COMPUTE.keys == ("kind:compute", "*")
    assert format_kernels({reader, PIPE_SOURCE, DATA_MOVEMENT, COMPUTE}) == (
        "compute, data_movement, data_movement kernel '<pipe_source>', "
        "data_movement kernel 'reader'"
    )
    assert logical_kernel_of(handle, "data_movement", "fn", None) == reader
    assert logical_kernel_of(None, "compute", "fn", None) == COMPUTE
