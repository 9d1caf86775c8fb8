"""Fixtures for tests/robustness: the session's shared native build cache, a subprocess runner."""

from tests.native_fixtures import native_cache, run_tilewright  # noqa: F401
