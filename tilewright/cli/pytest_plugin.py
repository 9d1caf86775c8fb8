"""The pytest plugin: run an existing TT-Lang / ttnn test suite on Tilewright, unmodified.

``pytest -p tilewright tests/`` (or ``--tilewright`` on the command line, or
``tilewright = true`` in the suite's pytest configuration) gives the suite what
``tilewright run`` gives a script:

* ``import ttl`` / ``import ttnn`` -- in test modules, conftests and the helpers they
  import -- resolve to Tilewright's modules, by the runner's meta-path finder
  (``cli.runner.install_aliases``), installed before the first conftest is imported;
* a fresh session (``device.session.reset``): ``--tilewright-board`` /
  ``--tilewright-system-desc`` choose the chips ``ttnn.open_device`` builds, as
  ``tilewright run --board`` / ``--system-desc`` do;
* a ``device`` fixture (``ttnn.open_device(device_id=0)``, closed after the test),
  which a suite's own ``device`` fixture overrides; devices a suite leaves open are
  closed when the session ends;
* a failing test whose exception is a Tilewright diagnostic shows the user's frames only
  and the diagnostic -- location, excerpt, notes -- as a report section, as
  ``tilewright run`` prints it.

The plugin is registered under the ``pytest11`` entry point ``tilewright``; loaded
automatically it stays inactive unless one of the three switches turns it on, so a
suite that uses tt-lang itself is never redirected by accident.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest

from tilewright import __version__
from tilewright.errors import TilewrightError, format_error
from tilewright.lazy import lazy_import

# Loaded by pytest's entry point in every pytest run of this environment: imports nothing
# more of Tilewright until a switch turns the plugin on (the runner, the device layer).
runner = lazy_import("tilewright.cli.runner")
device_session = lazy_import("tilewright.device.session")
chips = lazy_import("tilewright.ttnn.chips")
ttnn_device = lazy_import("tilewright.ttnn.device")
targets = lazy_import("tilewright.cli.plugin_targets")  # option checks: target and device layers

__all__ = ["ENTRY_POINT"]

ENTRY_POINT = "tilewright"
_ACTIVE = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tilewright", "Tilewright (TT-Lang and ttnn on a virtual device)")
    group.addoption(
        "--tilewright",
        action="store_true",
        default=False,
        help="run the suite on Tilewright: `import ttl` / `import ttnn` give Tilewright's modules",
    )
    group.addoption(
        "--tilewright-board",
        default=None,
        help="board preset ttnn.open_device builds (n150, n300, p150, ...)",
    )
    group.addoption(
        "--tilewright-system-desc",
        default=None,
        help="system descriptor (.ttsys, .mlir or .json) the devices are built from",
    )
    parser.addini(
        "tilewright", type="bool", default=False, help="run the suite on Tilewright (--tilewright)"
    )


def _requested(config: pytest.Config) -> bool:
    """``-p tilewright`` (by entry point or module), ``--tilewright``, or the ini switch."""
    ns = config.known_args_namespace
    named = {p for p in (getattr(ns, "plugins", None) or [])}
    return bool(
        named & {ENTRY_POINT, __name__}
        or getattr(ns, "tilewright", False)
        or config.getini("tilewright")
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Before the first conftest is imported: the aliases and a fresh session."""
    active = _requested(early_config)
    early_config.stash[_ACTIVE] = active
    if not active:
        return
    ns = early_config.known_args_namespace
    board, descriptor = _checked_options(
        getattr(ns, "tilewright_board", None), getattr(ns, "tilewright_system_desc", None)
    )
    runner.install_aliases()
    device_session.reset(board=board, system_desc=descriptor)


def _checked_options(board: str | None, path: str | None) -> tuple[str | None, object]:
    """The board and the system descriptor, checked once at start-up as ``tilewright run``
    checks them: a bad one is a usage error here, not a failure of every test (located in
    ``_pytest/fixtures.py``)."""
    if board is not None and path is not None:
        raise pytest.UsageError(
            "--tilewright-board and --tilewright-system-desc both choose the system the "
            "devices are built from; give one"
        )
    try:
        if board is not None:
            targets.check_runnable(targets.board_preset(board))
        if path is not None:
            root = targets.read_system_desc(path)
            targets.check_runnable(root)
            return None, root
    except TilewrightError as err:
        flag = "--tilewright-board" if board is not None else "--tilewright-system-desc"
        hint = f" (hint: {err.hint})" if err.hint else ""
        raise pytest.UsageError(f"{flag} {board or path}: {err.message}{hint}") from None
    return board, None


def pytest_report_header(config: pytest.Config) -> str | None:
    if not config.stash.get(_ACTIVE, False):
        return None
    return f"tilewright {__version__}: ttl and ttnn are Tilewright's (virtual device)"


@pytest.fixture
def device(request: pytest.FixtureRequest) -> Iterator[object]:
    """A virtual device (``ttnn.open_device(device_id=0)``), closed after the test."""
    if not request.config.stash.get(_ACTIVE, False):
        pytest.fail("the `device` fixture of the tilewright plugin needs `pytest -p tilewright`")
    dev = ttnn_device.open_device(device_id=0)
    try:
        yield dev
    finally:
        if not dev.closed:
            ttnn_device.close_device(dev)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Close the devices the suite left open (``tilewright run`` does so after a script)."""
    if not session.config.stash.get(_ACTIVE, False):
        return
    for dev in chips.open_devices():
        ttnn_device.close_device(dev)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    except TilewrightError as exc:
        if item.config.stash.get(_ACTIVE, False):
            runner.users_frames(exc)
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    excinfo = call.excinfo
    if (
        excinfo is not None
        and isinstance(excinfo.value, TilewrightError)
        and item.config.stash.get(_ACTIVE, False)
    ):
        report.sections.append(("Tilewright diagnostic", format_error(excinfo.value)))
    return report
