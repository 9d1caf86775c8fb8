"""Categories that call operations in the driver's child process (see the package doc)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
Case = tuple[str, Callable[[], object]]


def _tests():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def cache_mutations(
    wrong: type[Exception], kinds: tuple[str, ...], quick: bool, seed: int
) -> Iterator[Case]:
    """Random sequences of calls of one operation, one input kind changed between calls,
    every compiled result compared with the interpreter's; half of the sequences with the
    warm-call cache off (the lowering cache alone)."""
    _tests()
    import torch

    from tests.robustness import test_cache_keys as keys
    from tilewright import ttnn
    from tilewright.compiler import warm

    rng = random.Random(seed)
    device = ttnn.open_device(device_id=0)
    sequences, steps = (2, 6) if quick else (8, 10)
    original = warm.key_of
    for n in range(sequences):
        op, set_cell = keys.make_add()
        inputs = keys.Inputs()
        lowering_only = n % 2 == 1
        for step in range(steps):
            kind = rng.choice(kinds)

            def case(
                kind=kind, op=op, set_cell=set_cell, inputs=inputs, step=step, lo=lowering_only
            ):
                keys._mutate(kind, rng, inputs, set_cell)
                warm.key_of = (lambda *a, **k: None) if lo else original
                try:
                    got = keys._call(op, device, inputs, inputs.engine, seed * 1000 + step)
                finally:
                    warm.key_of = original
                want = keys._call(op, device, inputs, "python", seed * 1000 + step)
                if not torch.equal(got, want):
                    raise wrong(f"after changing the {kind}: compiled differs from the interpreter")
                return "matches the interpreter"

            cache = "lowering cache" if lowering_only else "both caches"
            yield f"sequence {n} ({cache}) step {step}: {kind}", case


def aliasing(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    yield from cache_mutations(wrong, ("alias", "shape", "dtype"), quick, 261)


def captured(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    kinds = ("cell float", "cell int", "module global", "class attribute", "module attribute",
             "tuple", "memory config", "grid", "engine")  # fmt: skip
    yield from cache_mutations(wrong, kinds, quick, 262)


def overflow(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """The integer programs of tests/robustness/test_integers.py on every engine: a clean
    error, or the interpreter's (Python's) answer."""
    _tests()
    from tests.robustness import test_integers as ints

    for case in ("index", "loop", "floordiv", "mod", "truediv"):
        for runtime in (True, False):
            for engine in ints.ENGINES:

                def run(case=case, runtime=runtime, engine=engine):
                    got = ints._run(ints.make(case, runtime), engine)
                    if case == "loop" and got == 3.0:
                        return "Python's answer"
                    raise wrong(f"ran and gave {got}")

                yield f"{case} ({'run-time' if runtime else 'constant'} n) on {engine}", run
    for engine in ints.ENGINES:

        def big(engine=engine):
            if ints._run(ints.range_2_64, engine) != 3.0:
                raise wrong("range(2**64) gave a wrong result")
            return "ran (interpreted)"

        yield f"range(2**64) on {engine}", big


def huge_shapes(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """Creation ops with shapes beyond DRAM, L1 or the host, in a memory-capped process."""
    import resource

    from tilewright import ttnn

    limit = 6 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    device = ttnn.open_device(device_id=0)
    rng = random.Random(263)
    makers = ["zeros", "ones", "full", "empty", "rand", "randn"]
    layouts = [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT]
    configs = [ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG]
    n = 12 if quick else 60
    for i in range(n):
        rank = rng.randint(1, 4)
        shape = tuple(1 << rng.randint(5, 24) for _ in range(rank))
        maker, layout, config = rng.choice(makers), rng.choice(layouts), rng.choice(configs)
        on_device = rng.random() < 0.8

        def case(shape=shape, maker=maker, layout=layout, config=config, on_device=on_device):
            kw = dict(layout=layout)
            if on_device:
                kw.update(device=device, memory_config=config)
            if maker == "full":
                t = ttnn.full(shape, 1.0, **kw)
            else:
                t = getattr(ttnn, maker)(shape, **kw)
            if on_device:
                ttnn.deallocate(t)
            return "created"

        where = f"{config.buffer_type.name}" if on_device else "host"
        yield f"#{i} ttnn.{maker}({shape}, {layout.name}) on {where}", case


def descriptors(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """Random mutations of a correct generic_op descriptor: a DescriptorError, never a run."""
    _tests()
    from tests.robustness import test_generic_op_inputs as gen
    from tilewright import ttnn

    device = ttnn.open_device(device_id=0)
    for name, desc, mutated in gen.descriptor_mutations(264, 15 if quick else 120):

        def case(desc=desc, mutated=mutated):
            gen.run_generic_op(device, desc)
            if mutated:
                raise wrong("a malformed descriptor ran")
            return "the correct descriptor ran"

        yield name, case
