"""Back-end tests choose their engines themselves."""

import pytest


@pytest.fixture(autouse=True)
def engine():
    """Overrides the compiler tests' engine parametrisation: one run, session default."""
    yield None
