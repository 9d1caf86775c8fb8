"""Compiler tests run their programs on both engines (docs/compiler.md, "Testing")."""

import pytest


@pytest.fixture(autouse=True, params=["python", "auto"], ids=["interpreted", "compiled"])
def engine(request):
    """Each program runs interpreted, and compiled where it compiles (``--engine auto``)."""
    from tilewright.device import session

    saved = session.OPTIONS.engine
    session.OPTIONS.engine = request.param
    yield request.param
    session.OPTIONS.engine = saved
