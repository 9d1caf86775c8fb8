"""``ttl`` is a façade: every name is the language runtime's (``tilewright.lang``) or the
compiler's ``@ttl.operation``, and every callable it exports is fully annotated."""

import inspect
import types

import pytest

from tilewright import ttl
from tilewright.lang import declare
from tilewright.lang import types as lang_types

_OWNERS = ("tilewright.lang", "tilewright.compiler.operation")


def _exported():
    for name in ttl.__all__:
        yield name, getattr(ttl, name)


def _functions(name: str, obj: object):
    """(label, function) of an exported function, or a class's public methods."""
    if inspect.isclass(obj):
        for member, fn in vars(obj).items():
            if (not member.startswith("_") or member == "__init__") and inspect.isfunction(fn):
                yield f"{name}.{member}", fn
    elif inspect.isfunction(obj):
        yield name, obj


def test_every_name_comes_from_lang_or_the_compiler_operation():
    foreign = []
    for name, obj in _exported():
        if isinstance(obj, types.ModuleType):
            continue  # ttl.math / ttl.block: façades of lang.math / lang.block; ttl.utils
        if name == "TILE_SHAPE":  # a plain value: lang's
            assert obj is declare.TILE_SHAPE
            continue
        if name in lang_types.__all__:  # the spec's type aliases: typing objects, lang's
            assert obj is getattr(lang_types, name)
            continue
        module = getattr(obj, "__module__", None) or type(obj).__module__
        if not module.startswith(_OWNERS):
            foreign.append(f"ttl.{name} is defined in {module}")
    assert not foreign, "\n".join(foreign)


@pytest.mark.parametrize("namespace", [ttl, ttl.math, ttl.block], ids=lambda m: m.__name__)
def test_every_exported_callable_is_annotated(namespace):
    missing = []
    for name in namespace.__all__:
        for label, fn in _functions(name, getattr(namespace, name)):
            sig = inspect.signature(fn)
            params = [
                p
                for p, v in sig.parameters.items()
                if p not in ("self", "cls") and v.annotation is inspect.Parameter.empty
            ]
            returns = sig.return_annotation is inspect.Signature.empty and not label.endswith(
                "__init__"
            )
            if params or returns:
                what = ", ".join([*(f"parameter {p}" for p in params), *(["return"] * returns)])
                missing.append(f"{namespace.__name__}.{label} ({fn.__module__}): {what}")
    assert not missing, "unannotated:\n" + "\n".join(missing)
