"""Fixtures for the target-layer tests."""

from __future__ import annotations

import pytest

from .helpers import BOARDS


@pytest.fixture(params=BOARDS)
def board(request: pytest.FixtureRequest) -> str:
    return request.param
