"""Fixtures for tests/device/perf: the shared native build cache and a subprocess runner."""

from tests.native_fixtures import native_cache, run_tilewright  # noqa: F401
