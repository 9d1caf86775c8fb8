"""Launch-node guards: recognised at decoration, evaluated per node at call time (reference C.7)."""

import ast
import textwrap

import pytest

from tilewright.compiler.split.domains import GuardError, guard_term, node_names, nodes_of
from tilewright.compiler.split.plan import NodeGuard
from tilewright.lang.declare import grid_extent, node_coords


def body(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


def guard_of(source: str, captures: dict | None = None, grid=(3, 2)) -> frozenset:
    """The nodes where the body's last statement (an ``if``) takes its ``if`` branch."""
    tree = body(source)
    names = node_names(tree)
    index = len(tree.body) - 1
    text, captured = guard_term(tree.body[index].test, names, index)
    guard = NodeGuard(((text, True, tree.body[index].lineno),), captured)
    return nodes_of(guard, grid, (captures or {}).get)


def python_truth(prelude: str, test: str, grid, env: dict) -> frozenset:
    """Where Python, running the body with the run-time ttl.node / ttl.grid_size, takes the branch."""
    source = f"def op():\n{textwrap.indent(prelude, '    ')}\n    return bool({test})\n"
    out = set()
    for x in range(grid[0]):
        for y in range(grid[1]):
            ttl = type(
                "ttl",
                (),
                {
                    "node": staticmethod(lambda dims=2, xy=(x, y): node_coords(grid, xy, dims)),
                    "grid_size": staticmethod(lambda dims=2: grid_extent(grid, dims)),
                },
            )
            scope = {"ttl": ttl, **env}
            exec(source, scope)  # noqa: S102 - the test's own program
            if scope["op"]():
                out.add((x, y))
    return frozenset(out)


@pytest.mark.parametrize(
    "prelude, test",
    [
        ("n = ttl.node(dims=1)", "n == 0"),
        ("n = ttl.node(dims=1)", "n % 2 == 1 or n >= 4"),
        ("nx, ny = ttl.node(dims=2)", "nx < ttl.grid_size(dims=2)[0] - 1 and ny == 0"),
        ("node_x = ttl.node(dims=2)[0]", "not node_x <= 1"),
        ("n = ttl.node(1)\nlast = ttl.grid_size(dims=1) - 1", "n == last"),
        ("pass", "ttl.node(dims=2) == (1, 1)"),
        ("pass", "0 < ttl.node(dims=2)[1] + K <= 1"),
    ],
)
def test_guards_evaluate_like_python(prelude, test):
    source = f"def op(a):\n{textwrap.indent(prelude, '    ')}\n    if {test}:\n        pass\n"
    env = {"K": 0}
    expected = python_truth(prelude, test, (3, 2), env)
    assert expected  # the cases select some nodes ...
    assert guard_of(source, env) == expected


@pytest.mark.parametrize(
    "source, reason",
    [
        (
            "def op(a):\n    n = 0\n    n += 1\n    if n == 1:\n        pass\n",
            "'n' is a local value, not a node coordinate",
        ),
        (
            "def op(a):\n    if a.shape[0] == 1:\n        pass\n",
            "a.shape is not a node expression",
        ),
        (
            "def op(a):\n    if a == 1:\n        pass\n",
            "'a' is a local value, not a node coordinate",
        ),
        (
            "def op(a):\n    if ttl.node(dims=d) == 0:\n        pass\n",
            "ttl.node(dims=d): dims must be a positive int literal",
        ),
        (
            "def op(a):\n    if ttl.num_nodes() == 0:\n        pass\n",
            "ttl.num_nodes(...) is not ttl.node or ttl.grid_size",
        ),
        (
            "def op(a):\n    if ttl.node(dims=1) == 0.5:\n        pass\n",
            "0.5 is not an int",
        ),
    ],
)
def test_what_is_not_a_node_guard(source, reason):
    tree = body(source)
    with pytest.raises(GuardError) as info:
        guard_term(tree.body[-1].test, node_names(tree), len(tree.body) - 1)
    assert info.value.reason == reason


def test_a_name_bound_after_the_condition_is_not_a_node_value():
    tree = body("def op(a):\n    if n == 0:\n        pass\n    n = ttl.node(dims=1)\n")
    with pytest.raises(GuardError, match="'n' is bound after the condition"):
        guard_term(tree.body[0].test, node_names(tree), 0)


def test_captured_values_must_be_ints_when_the_operation_is_called():
    with pytest.raises(GuardError, match="captured 'LIMIT' is float, not an int"):
        guard_of("def op(a):\n    if ttl.node(dims=1) < LIMIT:\n        pass\n", {"LIMIT": 0.5})


def test_evaluation_errors_make_the_domain_unknown():
    with pytest.raises(GuardError, match=r"cannot be evaluated on node \(0, 0\)"):
        guard_of("def op(a):\n    if 1 // ttl.node(dims=1) == 0:\n        pass\n")
