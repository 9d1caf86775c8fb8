"""Shared fixtures for compiler tests."""

import gc

import pytest


@pytest.fixture(autouse=True)
def _release_devices():
    """Programs keep devices reachable through cycles; collect them so L1 mappings are freed."""
    yield
    gc.collect()
