"""Fixtures for tests/raw: the shared native build cache and a device."""

from tests.native_fixtures import device, native_cache  # noqa: F401
