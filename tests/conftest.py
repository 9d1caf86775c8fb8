"""Shared pytest configuration."""

# tests/data holds inputs, not tests: descriptors, and a TT-Lang project's own test suite
# (data/ttlang_suite) that tests/cli/test_pytest_plugin.py runs through `pytest -p tilewright`.
collect_ignore = ["data"]
