"""Fixtures for tests/native: the shared native build cache, a device, a subprocess runner."""

from tests.native_fixtures import device, native_cache, run_tilewright  # noqa: F401
