"""Physical-index reuse beyond straight-line native code (reference C.7, C.6).

Three rules, each with a program that shares (index equality, the ``explain`` note,
a run whose numbers are checked while the run-time sharing check watches) and one
that does not (the note says why):

* exact DSATUR colouring when first-fit exceeds the index limit;
* external calls' ``dfb_effects`` / ``DFBAccess.inspect`` in the lifecycle proof,
  and opaque occurrences terminated by a synchronized reset;
* disjoint launch-node domains need no order.
"""

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.compiler.helpers import expect_error, line_of, load, program, write
from tilewright.compiler.dfb_reuse import ReuseProver
from tilewright.errors import DFBContractError
from tilewright.lang.dfb_share import SharedIndexDFB

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READER = os.path.join(ROOT, "examples", "07_extern_reader")  # read_tiles<D>(accessor, start, n)
CPP = os.path.join(ROOT, "tests", "extern", "cpp")  # contract.hpp: peek<D>, push_in_halves<D>


def compile_and_run(tmp_path, source: str, call: str, op: str):
    """Run a program; (namespace, {dfb: (index, note)}, explain report, path, DFB classes)."""
    from tilewright.cli.explain import describe_compilation
    from tilewright.compiler import program_builder

    reports, kinds, declared = [], {}, []

    def observe(operation, prog, setups) -> None:
        reports.append(describe_compilation(operation, prog, setups, str(tmp_path)))
        declared[:] = next(iter(setups.values())).dfbs
        kinds.update({d.name: type(d) for d in declared})

    program_builder.BUILD_OBSERVERS.append(observe)
    try:
        path = write(tmp_path, program(source, call))
        ns = load(path)
    finally:
        program_builder.BUILD_OBSERVERS.remove(observe)
    ns["declared_dfbs"] = {d.name: d for d in declared}
    prog = ns[op].last_program
    rows = {
        name: (index, note)
        for (name, index, _, _), note in zip(prog.dfb_table, prog.dfb_allocation.notes)
    }
    return ns, rows, reports[0], path, kinds


def explain_row(report: str, name: str) -> str:
    return next(line for line in report.splitlines() if line.split()[:1] == [name] and "0x" in line)


# -- exact colouring when first-fit exceeds num_cbs -------------------------------------------

# 62 DFBs that are never acquired (each needs its own index) and four staggered lifetimes on
# one kernel: x1 overlaps x2, x2 overlaps x3, x3 overlaps x4.  Declared x1, x4, x2, x3, first-fit
# puts x4 with x1 and then needs a third index for x3 (65 in all); {x1, x3} + {x2, x4} fit in 64.
FILLERS = "\n".join(
    f"    f{i} = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)" for i in range(62)
)
STAGGER = f"""
@ttl.operation(grid=(1, 1){{options}})
def stagger(a, out):
{FILLERS}
    x1 = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    x4 = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    x2 = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    x3 = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    with x1.reserve() as b:
        ttl.copy(a[0:1, 0:1], b).wait()
    with x2.reserve() as b:
        ttl.copy(a[0:1, 1:2], b).wait()
    with x1.wait() as w:
        ttl.copy(w, out[0:1, 0:1]).wait()
    with x3.reserve() as b:
        ttl.copy(a[0:1, 2:3], b).wait()
    with x2.wait() as w:
        ttl.copy(w, out[0:1, 1:2]).wait()
    with x4.reserve() as b:
        ttl.copy(a[0:1, 3:4], b).wait()
    with x3.wait() as w:
        ttl.copy(w, out[0:1, 2:3]).wait()
    with x4.wait() as w:
        ttl.copy(w, out[0:1, 3:4]).wait()
"""

STAGGER_CALL = """
ah = torch.rand(32, 128).to(torch.bfloat16)
o = dev(torch.zeros(32, 128))
stagger(dev(ah), o)  # <-
ok = torch.equal(ttnn.to_torch(o), ah)
"""


def test_exact_colouring_fits_what_first_fit_does_not(tmp_path):
    ns, rows, report, _, kinds = compile_and_run(
        tmp_path, STAGGER.format(options=""), STAGGER_CALL, "stagger"
    )
    assert ns["ok"]
    assert rows["x1"][0] == rows["x3"][0] == 62 and rows["x4"][0] == rows["x2"][0] == 63
    assert len({index for index, _ in rows.values()}) == 64
    assert rows["x3"][1] == (
        "reuses index 62 of 'x1': terminal pop happens-before first use (exact DSATUR colouring)"
    )
    assert rows["x2"][1] == (
        "reuses index 63 of 'x4': terminal pop happens-before first use (exact DSATUR colouring)"
    )
    assert "reuses index 62 of 'x1'" in explain_row(report, "x3")
    assert (
        "  DFB indices: first-fit needed 65 of 64 indices; exact search found a colouring with 64 "
        "indices in 2 states" in report
    )
    assert kinds["x1"] is SharedIndexDFB and kinds["x4"] is SharedIndexDFB


def test_first_fit_is_used_when_it_fits(tmp_path):
    source = STAGGER.format(options="").replace(FILLERS, FILLERS.split("\n")[0])
    ns, rows, report, _, _ = compile_and_run(tmp_path, source, STAGGER_CALL, "stagger")
    assert ns["ok"]
    assert rows["x4"] == (1, "reuses index 1 of 'x1': terminal pop happens-before first use")
    assert rows["x3"] == (
        3,
        ("not shared with 'f0': lifecycle of 'f0' is not bounded: 'f0' is never acquired"),
    )
    assert "  DFB indices: first-fit, 4 of 64 indices" in report


# -- external calls in the lifecycle proof -------------------------------------------------------

# x -> ox through compute, then y -> oy; x is produced by the phase {fill} (native or external).
PHASES = """
def make():
    reset = ttl.DFBReset(participants=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT, ttl.PIPE_SOURCE_KERNEL))

    @ttl.operation(grid=(1, 1))
    def phases(a, b, out_a, out_b):
        x = ttl.make_dataflow_buffer_like(a, shape={shape}, block_count=1)
        ox = ttl.make_dataflow_buffer_like(out_a, shape={shape}, block_count=1)
        y = ttl.make_dataflow_buffer_like(b, shape={shape}, block_count=1)
        oy = ttl.make_dataflow_buffer_like(out_b, shape={shape}, block_count=1)
{fill}
        xin = x.wait()
        xo = ox.reserve()
        xo.store(xin * 2.0)
        xin.pop()
        xo.push()
        ttl.copy(ox.wait(), out_a[0:1, {cols}]).wait()
{between}
        with y.reserve() as yb:
            ttl.copy(b[0:1, {cols}], yb).wait()
{after_y}
        yin = y.wait()
        yo = oy.reserve()
        yo.store(yin + yin)
        yin.pop()
        yo.push()
        ttl.copy(oy.wait(), out_b[0:1, {cols}]).wait()
    return phases

phases = make()
"""

NATIVE_FILL = """
        with x.reserve() as xb:
            ttl.copy(a[0:1, 0:1], xb).wait()
"""

EXTERN_FILL = f"""
        ttl.call_extern_func(  # <- fill
            "reader.hpp",
            "read_tiles",
            template_args=[ttl.dfb_descriptor(x)],
            func_args=[a, 0, 1],
            dfb_effects=[ttl.DFBEffect.reserve(x, tiles=1), ttl.DFBEffect.push(x, tiles=1)],
            include_paths=[{READER!r}],
            kernel=ttl.KernelKind.DATA_MOVEMENT,
        )
"""


def peek(access: str = "", indent: str = "        ") -> str:
    return (
        f"{indent}seen = ttl.call_extern_func(  # <- peek\n"
        f'{indent}    "contract.hpp", "peek", template_args=[ttl.dfb_descriptor(x)], func_args=[0],\n'
        f"{indent}    result_type=ttl.ScalarType.I32, include_paths=[{CPP!r}],\n"
        f"{indent}    kernel=ttl.KernelKind.DATA_MOVEMENT{access})\n"
    )


PHASES_CALL = """
ah = torch.rand(32, 64).to(torch.bfloat16)
bh = torch.rand(32, 64).to(torch.bfloat16)
oa, ob = dev(torch.zeros(32, 64)), dev(torch.zeros(32, 64))
phases(dev(ah), dev(bh), oa, ob)
ok = torch.equal(ttnn.to_torch(oa)[:, :32], (ah[:, :32].float() * 2).to(torch.bfloat16)) and torch.equal(
    ttnn.to_torch(ob)[:, :32], (bh[:, :32].float() * 2).to(torch.bfloat16))
"""


def run_phases(tmp_path, fill=NATIVE_FILL, between="", after_y="", shape="(1, 1)", cols="0:1"):
    source = PHASES.format(fill=fill, between=between, after_y=after_y, shape=shape, cols=cols)
    return compile_and_run(tmp_path, source, PHASES_CALL, "phases")


def test_external_effects_are_transactions_of_the_lifecycle(tmp_path):
    ns, rows, report, path, kinds = run_phases(tmp_path, fill=EXTERN_FILL)
    assert ns["ok"]
    line = line_of(path, "# <- fill")
    note = (
        "reuses index 0 of 'x': terminal pop happens-before first use (external dfb_effects / "
        f"accesses at line {line})"
    )
    assert rows["y"] == (0, note) and rows["x"][0] == 0
    assert note in explain_row(report, "y")
    assert kinds["x"] is SharedIndexDFB


def test_an_opaque_external_dependency_is_not_shared(tmp_path):
    opaque = EXTERN_FILL.replace(
        "dfb_effects=[ttl.DFBEffect.reserve(x, tiles=1), ttl.DFBEffect.push(x, tiles=1)],", ""
    )
    ns, rows, report, path, _ = run_phases(tmp_path, fill=opaque)
    assert ns["ok"]
    line = line_of(path, "# <- fill")
    note = (
        f"not shared with 'x': lifecycle of 'x' is not bounded: 'x' is an opaque dependency of the "
        f"external call at line {line} (no dfb_effects or dfb_accesses) and no later ttl.reset_dfbs / "
        "reset_all_dfbs / reconfigure_dfbs(discard_dfb_state=True) on data_movement terminates it"
    )
    assert rows["y"] == (2, note)
    assert note in explain_row(report, "y")


def test_a_partial_external_transaction_is_not_bounded(tmp_path):
    # push_in_halves: reserve(2) then push(1), push(1) -- declared exactly, but not a transaction.
    halves = f"""
        ttl.call_extern_func(  # <- fill
            "contract.hpp", "push_in_halves", template_args=[ttl.dfb_descriptor(x)],
            dfb_effects=[ttl.DFBEffect.reserve(x, tiles=2), ttl.DFBEffect.push(x, tiles=1),
                         ttl.DFBEffect.push(x, tiles=1)],
            include_paths=[{CPP!r}], kernel=ttl.KernelKind.DATA_MOVEMENT)
"""
    _, rows, _, path, _ = run_phases(tmp_path, fill=halves, shape="(1, 2)", cols="0:2")
    line = line_of(path, "# <- fill")
    assert rows["y"] == (
        2,
        (
            f"not shared with 'x': lifecycle of 'x' is not bounded: the external call at line {line} declares "
            "reserve(x, tiles=2) but push(x, tiles=1); a transaction's tile counts must match"
        ),
    )


def test_an_inspection_is_a_use_within_the_lifecycle(tmp_path):
    inspect = peek(", dfb_accesses=[ttl.DFBAccess.inspect(x)]")
    ns, rows, _, path, _ = run_phases(tmp_path, fill=NATIVE_FILL + inspect)
    assert ns["ok"]
    line = line_of(path, "# <- peek")
    assert rows["y"] == (
        0,
        (
            "reuses index 0 of 'x': terminal pop happens-before first use (external dfb_effects / "
            f"accesses at line {line})"
        ),
    )


def test_an_inspection_after_the_other_dfb_starts_prevents_sharing(tmp_path):
    inspect = peek(", dfb_accesses=[ttl.DFBAccess.inspect(x)]")
    ns, rows, _, _, _ = run_phases(tmp_path, after_y=inspect)
    assert ns["ok"]
    assert rows["y"] == (2, "not shared with 'x': 'x' and 'y' may be live at the same time")


def test_a_reset_terminates_an_opaque_access(tmp_path):
    between = peek() + "        ttl.reset_dfbs(reset, dfbs=[x])  # <- reset\n"
    ns, rows, report, path, kinds = run_phases(tmp_path, between=between)
    assert ns["ok"]
    note = (
        "reuses index 0 of 'x': terminal pop happens-before first use (the opaque access to 'x' at "
        f"line {line_of(path, '# <- peek')} ends at the reset at line {line_of(path, '# <- reset')})"
    )
    assert rows["y"] == (0, note)
    assert note in explain_row(report, "y")
    assert kinds["y"] is SharedIndexDFB


def test_an_unterminated_opaque_access_is_not_shared(tmp_path):
    between = peek() + "        ttl.reset_dfbs(reset, dfbs=[ox])\n"  # resets another DFB
    ns, rows, _, path, _ = run_phases(tmp_path, between=between)
    assert ns["ok"]
    assert rows["y"] == (
        2,
        (
            f"not shared with 'x': lifecycle of 'x' is not bounded: 'x' is an opaque dependency of the "
            f"external call at line {line_of(path, '# <- peek')} (no dfb_effects or dfb_accesses) and no "
            "later ttl.reset_dfbs / reset_all_dfbs / reconfigure_dfbs(discard_dfb_state=True) on "
            "data_movement terminates it"
        ),
    )
    assert rows["oy"][1].startswith("reuses index 1 of 'ox'")  # the reset of ox ends ox's lifetime


def test_unknown_dfb_access_makes_every_dfb_opaque(tmp_path):
    ns, rows, _, path, _ = run_phases(tmp_path, between=peek(", unknown_dfb_access=True"))
    assert ns["ok"]
    line = line_of(path, "# <- peek")
    assert rows["y"] == (
        2,
        (
            f"not shared with 'x': lifecycle of 'x' is not bounded: the external call at line {line} has "
            "unknown_dfb_access=True and no later ttl.reset_dfbs / reset_all_dfbs / "
            "reconfigure_dfbs(discard_dfb_state=True) on data_movement terminates it"
        ),
    )
    assert rows["oy"][0] == 3  # every DFB is opaque: nothing shares


GROUPED = f"""
def make():
    group = ttl.make_dfb_allocation_group()

    @ttl.operation(grid=(1, 1))
    def op(a, b, out_a, out_b):
        x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1, allocation_group=group)
        y = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1, allocation_group=group)
        ttl.call_extern_func(
            "reader.hpp", "read_tiles", template_args=[ttl.dfb_descriptor(x)], func_args=[a, 0, 1],
            dfb_effects=[ttl.DFBEffect.reserve(x, tiles=1), ttl.DFBEffect.push(x, tiles=1)],
            include_paths=[{READER!r}], kernel=ttl.KernelKind.DATA_MOVEMENT)
        with y.reserve() as yb:  # <- live
            ttl.copy(b[0:1, 0:1], yb).wait()
        with x.wait() as xw:
            ttl.copy(xw, out_a[0:1, 0:1]).wait()
        with y.wait() as yw:
            ttl.copy(yw, out_b[0:1, 0:1]).wait()
    return op

op = make()
"""


def test_the_runtime_check_sees_external_pushes(tmp_path):
    err = expect_error(
        tmp_path,
        program(
            GROUPED,
            """
        z = dev(torch.zeros(32, 32))
        op(dev(torch.ones(32, 32)), dev(torch.ones(32, 32)), z, z)
        """,
        ),
        DFBContractError,
        "y.reserve(): DFBs 'y' and 'x' share physical index 0 (allocation group) on node",
        marker="# <- live",
    )
    assert "'x' is still live (1 pushed block(s) not yet popped)" in err.message


# -- disjoint launch-node domains -----------------------------------------------------------------

NODES = """
@ttl.operation(grid=(2, 1))
def split_nodes(a, b, out_a, out_b):
    x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    ox = ttl.make_dataflow_buffer_like(out_a, shape=(1, 1), block_count=1)
    y = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
    oy = ttl.make_dataflow_buffer_like(out_b, shape=(1, 1), block_count=1)
    node_id = ttl.node(dims=1)
{prelude}
    if {x_guard}:  # <- x guard
        with x.reserve() as xb:
            ttl.copy(a[0:1, 0:1], xb).wait()
        with x.wait() as xin, ox.reserve() as xo:
            xo.store(xin * 2.0)
        with ox.wait() as r:
            ttl.copy(r, out_a[0:1, 0:1]).wait()
    {y_branch}  # <- y guard
        with y.reserve() as yb:
            ttl.copy(b[0:1, 0:1], yb).wait()
        with y.wait() as yin, oy.reserve() as yo:
            yo.store(yin + yin)
        with oy.wait() as r:
            ttl.copy(r, out_b[0:1, 0:1]).wait()
"""

NODES_CALL = """
ah = torch.rand(32, 32).to(torch.bfloat16)
bh = torch.rand(32, 32).to(torch.bfloat16)
oa, ob = dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32))
split_nodes(dev(ah), dev(bh), oa, ob)
ok = torch.equal(ttnn.to_torch(oa), (ah.float() * 2).to(torch.bfloat16)) and torch.equal(
    ttnn.to_torch(ob), (bh.float() * 2).to(torch.bfloat16))
"""


def run_nodes(tmp_path, x_guard="node_id == 0", y_branch="else:", prelude=""):
    source = NODES.format(x_guard=x_guard, y_branch=y_branch, prelude=prelude)
    return compile_and_run(tmp_path, source, NODES_CALL, "split_nodes")


def test_disjoint_node_domains_share_without_order(tmp_path):
    ns, rows, report, _, kinds = run_nodes(tmp_path)
    assert ns["ok"]
    note = (
        "reuses index 0 of 'x': launch-node domains are disjoint ('x' on node (0, 0), 'y' on node "
        "(1, 0)): no order needed"
    )
    assert rows["y"] == (0, note) and rows["x"][0] == 0
    assert rows["oy"][0] == rows["ox"][0] == 1
    assert note in explain_row(report, "y")
    assert kinds["y"] is SharedIndexDFB


def test_node_coordinates_and_captured_constants(tmp_path):
    ns, rows, _, _, _ = run_nodes(
        tmp_path,
        prelude="    nx, ny = ttl.node(dims=2)",
        x_guard="nx < ttl.grid_size(dims=2)[0] - 1 and ny == 0",
        y_branch="if not nx < 1:",
    )
    assert ns["ok"]
    assert rows["y"][0] == 0 and "launch-node domains are disjoint" in rows["y"][1]


def test_overlapping_node_domains_are_not_shared(tmp_path):
    ns, rows, _, _, _ = run_nodes(tmp_path, y_branch="if node_id >= 0:")
    assert ns["ok"]
    assert rows["y"] == (
        2,
        (
            "not shared with 'x': 'x' and 'y' may both be used on node (0, 0); lifetimes under node "
            "guards are not ordered by the proof"
        ),
    )


def test_an_unknown_node_domain_is_not_shared(tmp_path):
    ns, rows, _, path, _ = run_nodes(
        tmp_path,
        prelude="    count = 0\n    for i in range(2):\n        count += 1",
        y_branch="if count == 2:",
    )
    assert ns["ok"]
    line = line_of(path, "# <- y guard")
    assert rows["y"] == (
        2,
        (
            f"not shared with 'x': lifecycle of 'y' is not bounded: 'y' is used at line {line + 1} under a "
            f"condition that is not a launch-node guard (line {line}: 'count' is a local value, not a node "
            "coordinate)"
        ),
    )


GROUPED_INSPECT = """
def make():
    group = ttl.make_dfb_allocation_group()

    @ttl.operation(grid=(1, 1))
    def op(a, b, out_a, out_b):
        x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1, allocation_group=group)
        y = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1, allocation_group=group)
        with x.reserve() as xb:
            ttl.copy(a[0:1, 0:1], xb).wait()
        with x.wait() as xw:
            ttl.copy(xw, out_a[0:1, 0:1]).wait()
        with y.reserve() as yb:
            ttl.copy(b[0:1, 0:1], yb).wait()
{peek}
        with y.wait() as yw:
            ttl.copy(yw, out_b[0:1, 0:1]).wait()
    return op

op = make()
"""


def test_the_runtime_check_sees_external_inspections(tmp_path):
    source = GROUPED_INSPECT.replace("{peek}", peek(", dfb_accesses=[ttl.DFBAccess.inspect(x)]"))
    err = expect_error(
        tmp_path,
        program(
            source,
            """
        z = dev(torch.zeros(32, 32))
        op(dev(torch.ones(32, 32)), dev(torch.ones(32, 32)), z, z)
        """,
        ),
        DFBContractError,
        "DFBAccess.inspect(x) in ttl.call_extern_func('contract.hpp', 'peek'): DFBs 'x' and 'y' share "
        "physical index 0 (allocation group)",
        marker="# <- peek",
    )
    assert "'y' is still live (1 pushed block(s) not yet popped)" in err.message


# -- soundness: random lifetimes on one kernel ------------------------------------------------------


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.permutations(["f0", "d0", "f1", "d1", "f2", "d2", "f3", "d3"]))
def test_sharing_matches_the_lifetimes_of_a_random_schedule(tmp_path, order):
    """DFB i lives from its fill to its drain: DFBs share iff those intervals are disjoint."""
    events = list(order)
    for i in range(4):  # a drain follows its fill
        f, d = events.index(f"f{i}"), events.index(f"d{i}")
        if d < f:
            events[f], events[d] = events[d], events[f]
    lines = []
    for e in events:
        i = int(e[1])
        if e[0] == "f":
            lines.append(
                f"    with x{i}.reserve() as b:\n        ttl.copy(a[0:1, {i}:{i + 1}], b).wait()"
            )
        else:
            lines.append(
                f"    with x{i}.wait() as w:\n        ttl.copy(w, out[0:1, {i}:{i + 1}]).wait()"
            )
    decls = "\n".join(
        f"    x{i} = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)"
        for i in range(4)
    )
    source = (
        f"@ttl.operation(grid=(1, 1))\ndef schedule(a, out):\n{decls}\n" + "\n".join(lines) + "\n"
    )
    call = """
ah = torch.rand(32, 128).to(torch.bfloat16)
o = dev(torch.zeros(32, 128))
schedule(dev(ah), o)
ok = torch.equal(ttnn.to_torch(o), ah)
"""
    ns, rows, _, _, _ = compile_and_run(tmp_path, source, call, "schedule")
    assert ns["ok"]  # and the run-time sharing check did not fire
    span = {i: (events.index(f"f{i}"), events.index(f"d{i}")) for i in range(4)}
    op = ns["schedule"]
    prover = ReuseProver(op.record, op.split_plan, (1, 1))
    setup_dfbs = ns["declared_dfbs"]
    for i in range(4):
        for j in range(i + 1, 4):
            disjoint = span[i][1] < span[j][0] or span[j][1] < span[i][0]
            ok, _why = prover.may_share(setup_dfbs[f"x{i}"], setup_dfbs[f"x{j}"])
            assert ok == disjoint, (events, i, j)
            if rows[f"x{i}"][0] == rows[f"x{j}"][0]:
                assert disjoint
