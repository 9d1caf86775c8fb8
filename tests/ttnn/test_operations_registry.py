"""The ttnn operation registry: Operation records, registration, goldens and fallbacks."""

import inspect

import pytest
import torch

from tilewright import ttnn
from tilewright.device.ops import OpParamError
from tilewright.ttnn import operations
from tilewright.ttnn.operations import MissingGoldenError, RegistrationError
from tilewright.ttnn.operations.eltwise_rules import RULES
from tilewright.ttnn.operations.methods import TENSOR_METHODS


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


@pytest.fixture
def scratch():
    """Register throwaway operations; they are discarded after the test."""
    made = []

    def register(name, **kwargs):
        def function(input_tensor, *args, **kw):
            """A scratch operation."""
            return input_tensor

        op = ttnn.register_python_operation(name=name, **kwargs)(function)
        made.append(op)
        return op

    yield register
    for op in made:
        ttnn.REGISTERED_OPERATIONS.discard(op)


# --- what is registered ---------------------------------------------------------------------------


def _bound_operations():
    return {
        n: getattr(operations, n)
        for n in operations.__all__
        if isinstance(getattr(operations, n), ttnn.Operation)
    }


def test_every_bound_operation_is_registered_under_its_ttnn_name():
    bound = _bound_operations()
    assert len(bound) == 52
    for name, op in bound.items():
        assert getattr(ttnn, name) is op
        assert op.python_fully_qualified_name == f"ttnn.{name}"
        assert op in ttnn.REGISTERED_OPERATIONS
        assert name in ttnn.__all__
    names = [op.python_fully_qualified_name for op in ttnn.query_registered_operations()]
    assert names == sorted(f"ttnn.{n}" for n in bound)


def test_elementwise_table_rows_are_bound():
    bound = set(_bound_operations())
    assert set(RULES) <= bound
    for rule in RULES.values():
        if rule.block_op is not None:
            assert rule.spec.torch_golden is not None  # the registry golden is reused


def test_builtins_are_not_shadowed_inside_the_package():
    from tilewright.ttnn.operations import eltwise, reduction

    assert (
        "sum" not in vars(reduction) and "max" not in vars(reduction) and "abs" not in vars(eltwise)
    )
    assert ttnn.sum.python_fully_qualified_name == "ttnn.sum"


def test_operation_record_fields_and_doc():
    op = ttnn.exp
    assert op.__name__ == "ttnn.exp" and repr(op) == "<ttnn operation ttnn.exp>"
    assert not op.is_cpp_operation and not op.is_experimental
    assert op.__doc__.startswith("ttnn.exp(input_tensor, *, fast_and_approximate_mode=False")
    assert "math.exp" in op.__doc__
    assert list(inspect.signature(op).parameters)[:2] == [
        "input_tensor",
        "fast_and_approximate_mode",
    ]
    assert "HiFi4" in ttnn.matmul.__doc__
    assert (
        op.preprocess_golden_function_inputs is not None
        and op.postprocess_golden_function_outputs is not None
    )


def test_queue_id_is_accepted_and_ignored():
    a = ttnn.from_torch(torch.ones(2, 2))
    assert ttnn.to_torch(ttnn.neg(a, queue_id=0)).tolist() == [[-1.0, -1.0], [-1.0, -1.0]]


# --- registration -------------------------------------------------------------------------------------


def test_query_filters_experimental_operations(scratch):
    exp_op = scratch("ttnn.experimental.scratch_op", is_experimental=True)
    stable = scratch("ttnn.zz_scratch_op")
    default = ttnn.query_registered_operations()
    assert stable in default and exp_op not in default
    everything = ttnn.query_registered_operations(include_experimental=True)
    assert everything[-1] is exp_op and everything[: len(default)] == default
    assert exp_op.is_experimental


def test_duplicate_names_are_rejected(scratch):
    scratch("ttnn.scratch_dup")
    with pytest.raises(
        RegistrationError, match='operation with name "ttnn.scratch_dup" is already registered'
    ):
        scratch("ttnn.scratch_dup")
    with pytest.raises(RuntimeError):  # ttnn raises RuntimeError; ours is one too
        scratch("ttnn.add")


@pytest.mark.parametrize(
    "name, message",
    [("scratch", "at least two dotted parts"), ("torch.scratch", 'must start with "ttnn."')],
)
def test_bad_names_are_rejected(name, message):
    with pytest.raises(RegistrationError, match=message):
        ttnn.register_python_operation(name=name)


def test_doc_argument_replaces_the_docstring(scratch):
    op = scratch("ttnn.scratch_doc", doc="Custom documentation.")
    assert op.__doc__ == "Custom documentation."
    assert op("x") == "x"


def test_is_method_returns_an_unregistered_method_wrapper():
    method = ttnn.register_python_operation(
        name="ttnn.Tensor.scratch_method", is_method=True, golden_function=lambda x: x * 2
    )(lambda self, k: self * k)
    assert "ttnn.Tensor.scratch_method" not in ttnn.REGISTERED_OPERATIONS
    assert method(3, 4) == 12
    assert method.operation.python_fully_qualified_name == "ttnn.Tensor.scratch_method"
    assert ttnn.get_golden_function(method)(5) == 10


def test_tensor_method_aliases_are_installed_with_goldens():
    for name, method in TENSOR_METHODS.items():
        assert getattr(ttnn.Tensor, name) is method
        assert method.operation not in ttnn.REGISTERED_OPERATIONS
    golden = ttnn.get_golden_function(ttnn.Tensor.__rsub__)
    assert golden(torch.tensor([1.0]), 3.0).tolist() == [2.0]


# --- goldens ------------------------------------------------------------------------------------------


def test_get_golden_function_raises_naming_the_operation(scratch):
    op = scratch("ttnn.experimental.scratch_nogold")
    with pytest.raises(
        MissingGoldenError,
        match=r"ttnn\.experimental\.scratch_nogold does not have a golden function",
    ):
        ttnn.get_golden_function(op)
    with pytest.raises(RuntimeError):
        ttnn.get_fallback_function(op)


def test_get_golden_function_needs_an_operation():
    with pytest.raises(OpParamError, match="is not a ttnn operation"):
        ttnn.get_golden_function(torch.exp)


def test_attach_golden_function_and_fallback(scratch, device):
    op = scratch("ttnn.scratch_attach")
    ttnn.attach_golden_function(op, lambda t, k: t * k)
    assert ttnn.get_golden_function(op)(torch.ones(2), 3).tolist() == [3.0, 3.0]
    a = ttnn.from_torch(
        torch.ones(32, 32),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    out = ttnn.get_fallback_function(op)(a, 3)
    # default postprocess: the first input tensor's dtype, layout and device (ttnn: default memory config)
    assert (out.dtype, out.layout, out.device()) == (ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    assert torch.equal(ttnn.to_torch(out), torch.full((32, 32), 3.0, dtype=torch.bfloat16))


def test_custom_pre_and_postprocess_hooks(scratch):
    seen = []

    def pre(args, kwargs):
        seen.append("pre")
        return (torch.tensor([float(args[0])]),), kwargs

    def post(output, args, kwargs):
        seen.append("post")
        return float(output[0])

    op = scratch("ttnn.scratch_hooks")
    ttnn.attach_golden_function(
        op,
        lambda t: t + 1,
        preprocess_golden_function_inputs=pre,
        postprocess_golden_function_outputs=post,
    )
    assert ttnn.get_fallback_function(op)(4) == 5.0
    assert seen == ["pre", "post"]


def test_fallback_matches_the_operation(device):
    a = ttnn.from_torch(
        torch.linspace(-2, 2, 64 * 32).reshape(64, 32),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
    )
    for op in (ttnn.gelu, ttnn.softmax, ttnn.neg):
        fallback = ttnn.get_fallback_function(op)(a)
        torch.testing.assert_close(
            ttnn.to_torch(fallback), ttnn.to_torch(op(a)), rtol=2**-7, atol=1e-3
        )
    summed = ttnn.get_fallback_function(ttnn.sum)(a)  # rank 0 from a TILE input: stored ROW_MAJOR
    assert summed.layout == ttnn.ROW_MAJOR_LAYOUT and list(summed.shape) == []


def test_goldens_keep_the_input_torch_dtype():
    x = torch.linspace(-1, 1, 8).bfloat16()
    assert ttnn.get_golden_function(ttnn.exp)(x).dtype == torch.bfloat16
    assert ttnn.get_golden_function(ttnn.gt)(x, 0.0).dtype == torch.bfloat16
    assert ttnn.get_golden_function(ttnn.add)(torch.arange(3, dtype=torch.int32), 2).tolist() == [
        2,
        3,
        4,
    ]
