"""The placement registry covers the language surface (reference B.3, G.8)."""

import inspect

from tilewright import ttl
from tilewright.compiler.split import registry
from tilewright.lang.unsupported import UNSUPPORTED


def test_every_callable_ttl_export_is_classified():
    missing = []
    for name in ttl.__all__:
        value = getattr(ttl, name)
        if inspect.ismodule(value) or not callable(value) or name in UNSUPPORTED:
            continue
        if name not in registry.TTL_CALLS:
            missing.append(name)
    assert not missing, f"register these in split.registry.TTL_CALLS: {missing}"


def test_namespaces_are_classified():
    for ns in ("math", "block"):
        assert registry.TTL_NAMESPACES[ns] is registry.Placement.COMPUTE


def test_both_spellings_of_raw_element_access():
    for name in (
        "raw_element_read",
        "raw_element_write",
        "element_read",
        "element_write",
        "read_index",
    ):
        assert registry.TTL_CALLS[name] is registry.Placement.DATA_MOVEMENT
