"""Physical DFB indices: reuse proofs, allocation groups, limits (reference C.7, A.4, D.1).

Every reuse rule of C.7 has a test: the DFB's placement note names the rule that
prevented sharing, and the table row points at the DFB's declaration line.
"""

from tests.compiler.helpers import expect_error, line_of, load, program, write
from tilewright.errors import CapacityError, DFBContractError, InterfaceError
from tilewright.lang.dfb_share import SharedIndexDFB

# Two sequential phases: x -> ox (through compute), then y -> oy.  Each DFB moves one block,
# once, in straight-line code; the compute kernel pops x before it pushes ox, and the data
# movement kernel waits for ox before it reserves y: x's terminal pop happens-before y's use.
PHASES = """
@ttl.operation(grid=(1, 1){options})
def phases(a, b, out_a, out_b):
    x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)  # <- x
    ox = ttl.make_dataflow_buffer_like(out_a, shape=(1, 1), block_count=1)
    y = ttl.make_dataflow_buffer_like(b, shape={y_shape}, block_count={y_count})  # <- y
    oy = ttl.make_dataflow_buffer_like(out_b, shape=(1, 1), block_count=1)
    with x.reserve() as xb:
        ttl.copy(a[0:1, 0:1], xb).wait()
    xin = x.wait()
    xo = ox.reserve()
    xo.store(xin * 2.0)
    xin.pop()
    xo.push()
    ttl.copy(ox.wait(), out_a[0:1, 0:1]).wait()
{y_phase}
"""

Y_PHASE = """
    with y.reserve() as yb:
        ttl.copy(b[0:1, 0:1], yb).wait()
    yin = y.wait()
    yo = oy.reserve()
    yo.store(yin + yin)
    yin.pop()
    yo.push()
    ttl.copy(oy.wait(), out_b[0:1, 0:1]).wait()
"""

CALL = """
ah = torch.rand(32, 32).to(torch.bfloat16)
bh = torch.rand(32, 32).to(torch.bfloat16)
oa, ob = dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32))
phases(dev(ah), dev(bh), oa, ob)
ok = torch.equal(ttnn.to_torch(oa), (ah.float() * 2).to(torch.bfloat16)) and torch.equal(
    ttnn.to_torch(ob), (bh.float() * 2).to(torch.bfloat16))
"""


def run_phases(tmp_path, *, y_phase=Y_PHASE, y_shape="(1, 1)", y_count=1, options=""):
    source = PHASES.format(y_phase=y_phase, y_shape=y_shape, y_count=y_count, options=options)
    path = write(tmp_path, program(source, CALL))
    ns = load(path)
    prog = ns["phases"].last_program
    rows = {
        name: (index, note)
        for (name, index, _, _), note in zip(prog.dfb_table, prog.dfb_allocation.notes)
    }
    return ns, path, rows


def test_disjoint_lifetimes_share_an_index(tmp_path):
    ns, _, rows = run_phases(tmp_path)
    assert ns["ok"]
    assert rows["y"] == (0, "reuses index 0 of 'x': terminal pop happens-before first use")
    assert rows["oy"] == (1, "reuses index 1 of 'ox': terminal pop happens-before first use")
    assert (
        rows["ox"][1] == "not shared with 'x': pointer owners differ (producer or consumer kernel)"
    )
    prog = ns["phases"].last_program
    assert [s.members for s in prog.dfb_allocation.slots] == [(0, 2), (1, 3)]


def test_explain_table_shows_the_declaration_line_and_decision(tmp_path):
    from tilewright.cli.explain import describe_compilation
    from tilewright.compiler import program_builder

    reports = []

    def observer(op, prog, setups):
        reports.append(describe_compilation(op, prog, setups, str(tmp_path)))

    program_builder.BUILD_OBSERVERS.append(observer)
    try:
        _, path, _ = run_phases(tmp_path)
    finally:
        program_builder.BUILD_OBSERVERS.remove(observer)
    y_row = next(
        line for line in reports[0].splitlines() if line.split()[:1] == ["y"] and "0x" in line
    )
    assert f"line {line_of(path, '# <- y')}" in y_row and "reuses index 0 of 'x'" in y_row


def test_rule_identical_block_shape(tmp_path):
    source = PHASES.format(
        y_phase="""
    with y.reserve() as yb:
        ttl.copy(b[0:1, 0:2], yb).wait()
    with y.wait() as yin:
        ttl.copy(yin, out_b[0:1, 0:2]).wait()
""",
        y_shape="(1, 2)",
        y_count=1,
        options="",
    )
    path = write(
        tmp_path,
        program(
            source,
            """
        oa, ob = dev(torch.zeros(32, 32)), dev(torch.zeros(32, 64))
        phases(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 64)), oa, ob)
        """,
        ),
    )
    prog = load(path)["phases"].last_program
    notes = dict(zip([r[0] for r in prog.dfb_table], prog.dfb_allocation.notes))
    assert notes["y"] == "not shared with 'x': block shapes differ ((1, 1) vs (1, 2))"


def test_rule_identical_block_count(tmp_path):
    _, _, rows = run_phases(tmp_path, y_count=2)
    assert rows["y"][1] == "not shared with 'x': block counts differ (1 vs 2)"


def test_rule_bounded_lifecycle(tmp_path):
    loop = """
    for i in range(1):
        with y.reserve() as yb:  # <- loop
            ttl.copy(b[0:1, 0:1], yb).wait()
    yin = y.wait()
    yo = oy.reserve()
    yo.store(yin + yin)
    yin.pop()
    yo.push()
    ttl.copy(oy.wait(), out_b[0:1, 0:1]).wait()
"""
    ns, path, rows = run_phases(tmp_path, y_phase=loop)
    assert ns["ok"]
    line = line_of(path, "# <- loop")
    assert rows["y"][1] == (
        f"not shared with 'x': lifecycle of 'y' is not bounded: 'y' is acquired at line {line} in a loop, "
        "branch or callback"
    )


def test_rule_identical_transaction_counts(tmp_path):
    twice = Y_PHASE + Y_PHASE.replace("yb", "yb2").replace("yin", "yin2").replace("yo", "yo2")
    twice = twice.replace("out_b[0:1, 0:1]", "out_b[0:1, 0:1]")
    _, _, rows = run_phases(tmp_path, y_phase=twice)
    assert rows["y"][1] == "not shared with 'x': transaction counts differ (1 vs 2)"


def test_rule_same_pointer_owners(tmp_path):
    _, _, rows = run_phases(tmp_path)
    assert rows["ox"] == (
        1,
        "not shared with 'x': pointer owners differ (producer or consumer kernel)",
    )


def test_rule_happens_before(tmp_path):
    overlapped = """
    with y.reserve() as yb:
        ttl.copy(b[0:1, 0:1], yb).wait()
    yin = y.wait()
    yo = oy.reserve()
    yo.store(yin + yin)
    yin.pop()
    yo.push()
    ttl.copy(oy.wait(), out_b[0:1, 0:1]).wait()
"""
    # Move the y phase's reservation before x is consumed: the lifetimes overlap.
    source = PHASES.format(y_phase="", y_shape="(1, 1)", y_count=1, options="")
    source = source.replace(
        "    xin = x.wait()", overlapped.split("    yin = y.wait()")[0] + "    xin = x.wait()"
    )
    source += "\n".join(overlapped.split("\n")[3:]) + "\n"
    path = write(tmp_path, program(source, CALL))
    ns = load(path)
    prog = ns["phases"].last_program
    notes = dict(zip([r[0] for r in prog.dfb_table], prog.dfb_allocation.notes))
    assert ns["ok"]
    assert notes["y"] == "not shared with 'x': 'x' and 'y' may be live at the same time"


def test_rule_no_opaque_access(tmp_path):
    opaque = Y_PHASE + "    keep = [y]  # <- value\n"
    _, path, rows = run_phases(tmp_path, y_phase=opaque)
    line = line_of(path, "# <- value")
    assert (
        rows["y"][1]
        == f"not shared with 'x': lifecycle of 'y' is not bounded: 'y' is used as a value at line {line}"
    )


def test_reuse_can_be_disabled(tmp_path):
    _, _, rows = run_phases(tmp_path, options=', options="--no-ttl-reuse-user-dfbs"')
    assert rows["y"] == (2, "not shared with 'x': reuse disabled (--no-ttl-reuse-user-dfbs)")


def test_explicit_operations_never_share(tmp_path):
    path = write(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
            y = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)

            @ttl.datamovement()
            def mover():
                with x.reserve() as blk:
                    ttl.copy(a[0:1, 0:1], blk).wait()
                with x.wait() as blk:
                    ttl.copy(blk, out[0:1, 0:1]).wait()
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
    )
    prog = load(path)["op"].last_program
    assert (
        prog.dfb_allocation.notes[1]
        == "not shared with 'x': no split plan proves disjoint lifetimes (explicit operation)"
    )


def test_index_limit(tmp_path):
    decls = "\n".join(
        f"    d{i} = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)"
        for i in range(65)
    )
    expect_error(
        tmp_path,
        program(
            f"""
@ttl.operation(grid=(1, 1))
def op(a, out):
{decls}

    @ttl.datamovement()
    def mover():
        pass
""",
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))  # <-
        """,
        ),
        CapacityError,
        "operation 'op' needs 65 DFB indices but the target has 64 (num_cbs); exact search proved that "
        "at least 65 indices are needed (0 states)",
    )


def test_l1_limit(tmp_path):
    expect_error(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            big = ttl.make_dataflow_buffer_like(a, shape=(32, 32), block_count=32)

            @ttl.datamovement()
            def mover():
                pass
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))  # <-
        """,
        ),
        CapacityError,
        "the DFBs of operation 'op' need 67108864 B of L1 per node but only",
    )


GROUPED = """
def make():
    group = ttl.make_dfb_allocation_group()

    @ttl.operation(grid=(1, 1))
    def op(a, b, out_a, out_b):
        x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count={x_count}, allocation_group=group)
        y = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1, allocation_group=group)  # <- y
{body}
    return op

op = make()
"""

SEQUENTIAL = """
        with x.reserve() as xb:
            ttl.copy(a[0:1, 0:1], xb).wait()
        with x.wait() as xw:
            ttl.copy(xw, out_a[0:1, 0:1]).wait()
        with y.reserve() as yb:
            ttl.copy(b[0:1, 0:1], yb).wait()
        with y.wait() as yw:
            ttl.copy(yw, out_b[0:1, 0:1]).wait()
"""

GROUP_CALL = """
ah, bh = torch.rand(32, 32).to(torch.bfloat16), torch.rand(32, 32).to(torch.bfloat16)
oa, ob = dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32))
op(dev(ah), dev(bh), oa, ob)
ok = torch.equal(ttnn.to_torch(oa), ah) and torch.equal(ttnn.to_torch(ob), bh)
"""


def test_allocation_group_shares_one_index(tmp_path):
    ns = load(write(tmp_path, program(GROUPED.format(x_count=1, body=SEQUENTIAL), GROUP_CALL)))
    prog = ns["op"].last_program
    assert ns["ok"]
    assert [row[1] for row in prog.dfb_table] == [0, 0]
    assert prog.dfb_allocation.notes[1] == "shares index 0 with 'x' (allocation group)"


def test_allocation_group_members_must_match(tmp_path):
    expect_error(
        tmp_path,
        program(GROUPED.format(x_count=2, body=SEQUENTIAL), GROUP_CALL),
        InterfaceError,
        "DFBs 'x' and 'y' are in one allocation group but differ in capacity (4096 vs 2048)",
        marker="# <- y",
    )


def test_allocation_group_members_need_the_same_pointer_owners(tmp_path):
    crossed = """
        with x.reserve() as xb:
            ttl.copy(a[0:1, 0:1], xb).wait()
        with x.wait() as xw:
            ttl.copy(xw, out_a[0:1, 0:1]).wait()
        with y.reserve() as yb:
            yb.store(ttl.block.fill(1.0, shape=(1, 1)))
        with y.wait() as yw:
            ttl.copy(yw, out_b[0:1, 0:1]).wait()
"""
    expect_error(
        tmp_path,
        program(GROUPED.format(x_count=1, body=crossed), GROUP_CALL),
        InterfaceError,
        "DFBs 'x' and 'y' are in one allocation group but have different pointer owners",
        marker="# <- y",
    )


def test_sharing_dfbs_live_at_once_is_a_runtime_error(tmp_path):
    overlapping = """
        with x.reserve() as xb:
            ttl.copy(a[0:1, 0:1], xb).wait()
        with y.reserve() as yb:  # <- live
            ttl.copy(b[0:1, 0:1], yb).wait()
        with x.wait() as xw:
            ttl.copy(xw, out_a[0:1, 0:1]).wait()
        with y.wait() as yw:
            ttl.copy(yw, out_b[0:1, 0:1]).wait()
"""
    err = expect_error(
        tmp_path,
        program(GROUPED.format(x_count=1, body=overlapping), GROUP_CALL),
        DFBContractError,
        "y.reserve(): DFBs 'y' and 'x' share physical index 0 (allocation group) on node",
        marker="# <- live",
    )
    assert "two logical DFBs sharing an index must never be live at once" in err.message


def test_shared_dfbs_carry_the_runtime_check(tmp_path):
    from tilewright.compiler import program_builder
    from tilewright.lang.dfb import DataflowBuffer

    seen = []

    def observer(op, prog, setups):
        seen.extend(setups.values())

    program_builder.BUILD_OBSERVERS.append(observer)
    try:
        ns, _, _ = run_phases(tmp_path)
    finally:
        program_builder.BUILD_OBSERVERS.remove(observer)
    assert ns["ok"]
    kinds = {d.name: type(d) for d in seen[0].dfbs}
    assert kinds == {
        "x": SharedIndexDFB,
        "ox": SharedIndexDFB,
        "y": SharedIndexDFB,
        "oy": SharedIndexDFB,
    }
    assert issubclass(SharedIndexDFB, DataflowBuffer)
