"""DFB index allocation errors (reference C.7, E.4): the exact search's outcome, its option."""

from tests.compiler.helpers import expect_error, program
from tests.compiler.test_dfb_reuse import FILLERS, STAGGER, STAGGER_CALL
from tilewright.errors import CapacityError, InterfaceError


def test_exact_search_stopped_by_its_state_limit(tmp_path):
    expect_error(
        tmp_path,
        program(
            STAGGER.format(options=', options="--ttl-dfb-exact-coloring-search-limit 1"'),
            STAGGER_CALL,
        ),
        CapacityError,
        "operation 'stagger' needs 65 DFB indices but the target has 64 (num_cbs); exact search explored "
        "1 states without finding a colouring with <= 64 indices (--ttl-dfb-exact-coloring-search-limit 1)",
    )


def test_exact_search_proves_the_index_limit_too_small(tmp_path):
    # x3 now also overlaps x1: x1, x2, x3 pairwise overlap, with the 62 fillers a 65-clique.
    overlapping = STAGGER.format(options="").replace(
        """    with x1.wait() as w:
        ttl.copy(w, out[0:1, 0:1]).wait()
    with x3.reserve() as b:
        ttl.copy(a[0:1, 2:3], b).wait()""",
        """    with x3.reserve() as b:
        ttl.copy(a[0:1, 2:3], b).wait()
    with x1.wait() as w:
        ttl.copy(w, out[0:1, 0:1]).wait()""",
    )
    expect_error(
        tmp_path,
        program(overlapping, STAGGER_CALL),
        CapacityError,
        "operation 'stagger' needs 65 DFB indices but the target has 64 (num_cbs); exact search proved "
        "that at least 65 indices are needed (0 states) (--ttl-dfb-exact-coloring-search-limit 1000000)",
    )


def test_exact_search_limit_must_be_a_count(tmp_path):
    source = STAGGER.format(options=', options="--ttl-dfb-exact-coloring-search-limit=lots"')
    expect_error(
        tmp_path,
        program(source.replace(FILLERS, ""), STAGGER_CALL),
        InterfaceError,
        "operation 'stagger': --ttl-dfb-exact-coloring-search-limit takes a non-negative integer number "
        "of states, got 'lots'",
    )
