"""The interpreter runs ``raw.call`` ops of compiled kernels (a kernel's static inline
functions) as the emitted C++ does: a fresh scope of parameters and locals."""

from __future__ import annotations

from tilewright.kir.interp import Env, run
from tilewright.kir.ir import BinOp, Const, Function, Op, Ty, Var

N, ACC, IDX = Var("p_n", Ty.I64), Var("v1", Ty.I64), Var("i2", Ty.I64)
# raw_sum(p_n): v1 = 0; for i2 in range(p_n): v1 += i2; return v1 * 2
SUM = Function(
    "raw_sum_1",
    (N,),
    (),
    (ACC, IDX),
    (
        Op("set", (ACC, Const(0, Ty.I64))),
        Op(
            "for",
            (IDX, Const(0, Ty.I64), N, 1),
            ((Op("set", (ACC, BinOp("add", ACC, IDX, Ty.I64))),),),
        ),
    ),
    BinOp("mul", ACC, Const(2, Ty.I64), Ty.I64),
)


def test_a_raw_call_runs_the_function_in_its_own_scope():
    out = Var("tw_raw_1", Ty.I64)
    env = Env(values={"tw_raw_1": 0, "v1": 99}, functions={SUM.name: SUM})
    run((Op("raw.call", ("raw_sum_1", (Const(5, Ty.I64),), (), "tw_raw_1")),), env)
    assert env.values["tw_raw_1"] == 2 * (0 + 1 + 2 + 3 + 4)
    assert env.values["v1"] == 99  # the caller's local of the same name is untouched
    run(
        (Op("raw.call", ("raw_sum_1", (BinOp("add", out, Const(1, Ty.I64), Ty.I64),), (), "")),),
        env,
    )
    assert env.values["tw_raw_1"] == 20  # no result local: nothing assigned
