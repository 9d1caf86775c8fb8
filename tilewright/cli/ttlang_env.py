"""The real TT-Lang compiler's Python 3.12 environment: where it is, how it is made, how to enter it.

Tenstorrent's compiler (PyPI ``tt-lang``, an MLIR build) ships for CPython 3.12 only, so it
lives in an environment of its own, shared by every Tilewright checkout on the machine::

    ~/.cache/tilewright/ttlang-py312      (or $TILEWRIGHT_TTLANG_ENV)

:func:`setup` makes it (``tilewright setup-ttlang``; ``./dev ttlang-env``): a venv of a
Python 3.12 interpreter (``$TILEWRIGHT_PYTHON312``, ``python3.12`` on ``PATH``, or pyenv's
``~/.pyenv/versions/3.12.*``) holding ``tt-lang`` without its dependencies -- its ``ttnn``
needs a card, Tilewright's ``ttnn`` stands in -- plus the small dependencies tt-lang's
metadata names, torch (PyPI's Linux wheel is the CUDA build; it runs on the CPU) and
Tilewright's own dependencies.  Tilewright itself is *not* installed there: :func:`command`
starts the environment's interpreter with the running checkout's ``tilewright`` package on
its path (through a link folder per checkout), so one environment serves every checkout and
never runs a stale Tilewright.  A stamp file records what was installed; an environment
whose stamp does not match :data:`SPEC` is made again.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tilewright.errors import TilewrightError
from tilewright.lazy import lazy_import

# importlib.metadata (email, zipfile, csv ...) is read only when the environment is made:
# loading it for every `tilewright run` cost a tenth of its start-up (issue 22).
metadata = lazy_import("importlib.metadata")

__all__ = [
    "SPEC",
    "EnvError",
    "TtlangEnv",
    "default_path",
    "find",
    "setup",
    "command",
    "run_in_env",
    "SETUP_COMMAND",
]

SETUP_COMMAND = "tilewright setup-ttlang"
"""What a user runs to make the environment (named in every message about a missing one)."""


@dataclass(frozen=True)
class Spec:
    """What the environment holds (a change here makes :func:`setup` rebuild it)."""

    python: str = "3.12"
    tt_lang: str = "tt-lang==1.1.1"
    torch: str = "torch==2.14.1"
    # tt-lang 1.1.1's Requires-Dist without ttnn (needs a card) and torch (above).
    tt_lang_deps: tuple[str, ...] = (
        "pydantic<3",
        "numpy>=1.20.0",
        "greenlet>=3.0.0",
        "PyYAML>=5.4.0,<=6.0.1",
        "typing_extensions>=4.12.2",
        "ml_dtypes>=0.1.0,<=0.6.0",
    )
    version: int = 1

    def stamp(self) -> dict:
        return {
            "version": self.version,
            "python": self.python,
            "packages": [self.tt_lang, self.torch, *self.tt_lang_deps, *_tilewright_deps()],
        }


SPEC = Spec()


class EnvError(TilewrightError):
    """The real compiler's environment is missing, broken, or cannot be made."""


def _tilewright_deps() -> list[str]:
    """Tilewright's own runtime dependencies (pyproject's, read from the installed metadata)."""
    try:
        requires = metadata.requires("tilewright") or []
    except metadata.PackageNotFoundError:
        raise EnvError(
            "Tilewright's package metadata is not installed, so its dependencies for the "
            "tt-lang environment are unknown",
            hint="install Tilewright (pip install -e . in the checkout, or ./dev test once)",
        ) from None
    return sorted(r.split(";")[0].strip() for r in requires if "extra ==" not in r)


def default_path() -> Path:
    env = os.environ.get("TILEWRIGHT_TTLANG_ENV")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/tilewright/ttlang-py312").expanduser()


@dataclass(frozen=True)
class TtlangEnv:
    """A ready environment: its folder and interpreter."""

    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def stamp_file(self) -> Path:
        return self.path / ".tilewright-ttlang-env.json"


def find(path: Path | None = None) -> TtlangEnv | None:
    """The environment at ``path`` (default :func:`default_path`) if it is made and current."""
    env = TtlangEnv(path or default_path())
    try:
        stamp = json.loads(env.stamp_file.read_text())
    except (OSError, ValueError):
        return None
    if not holds(stamp, SPEC.stamp()) or not env.python.exists():
        return None
    return env


def holds(stamp: object, wanted: dict) -> bool:
    """Whether an environment stamped ``stamp`` holds what ``wanted`` names: the same spec
    version and Python, and every wanted package among those installed.  A package installed
    beyond them (a dependency Tilewright has since dropped, such as ``ml_dtypes`` in issue 22)
    does no harm, and remaking the environment means downloading torch again."""
    if not isinstance(stamp, dict) or not isinstance(stamp.get("packages"), list):
        return False
    same = all(stamp.get(key) == wanted[key] for key in wanted if key != "packages")
    return same and set(wanted["packages"]) <= set(stamp["packages"])


def require(path: Path | None = None) -> TtlangEnv:
    """The environment, or an :class:`EnvError` naming the command that makes it."""
    env = find(path)
    if env is None:
        where = path or default_path()
        raise EnvError(
            f"the real TT-Lang compiler ({SPEC.tt_lang}, Python {SPEC.python}) is not set up "
            f"at {where}",
            hint=f"run `{SETUP_COMMAND}` once (about 6 GB with torch's CUDA libraries, a few "
            "minutes); docs/compatibility.md describes what it installs",
        )
    return env


def python312() -> str:
    """A Python 3.12 interpreter to make the environment from."""
    candidates = [os.environ.get("TILEWRIGHT_PYTHON312"), shutil.which("python3.12")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python")))
    for exe in candidates:
        if exe and os.access(exe, os.X_OK) and _version_of(exe) == SPEC.python:
            return exe
    raise EnvError(
        "no Python 3.12 interpreter found (tt-lang's wheels are for CPython 3.12 only)",
        hint="install one (e.g. `pyenv install 3.12`) or name it in $TILEWRIGHT_PYTHON312",
    )


def _version_of(exe: str) -> str | None:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _pip(env: TtlangEnv, *args: str, echo) -> None:
    cmd = [str(env.python), "-m", "pip", "install", "--disable-pip-version-check", *args]
    echo("  " + " ".join(cmd[3:]))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise EnvError(f"pip failed while making the tt-lang environment:\n{tail}")


def setup(path: Path | None = None, *, python: str | None = None, echo=print) -> TtlangEnv:
    """Make (or remake, when its stamp is stale) the environment; return it."""
    env = TtlangEnv(path or default_path())
    if find(env.path) is not None:
        echo(f"tt-lang environment ready: {env.path}")
        return env
    exe = python or python312()
    if env.path.exists():
        if any(env.path.iterdir()) and not (env.path / "pyvenv.cfg").exists():
            raise EnvError(
                f"{env.path} exists and is not a Python environment; not replacing it",
                hint="remove it, or choose another place (--env / $TILEWRIGHT_TTLANG_ENV)",
            )
        shutil.rmtree(env.path)  # an out-of-date or half-made environment
    env.path.parent.mkdir(parents=True, exist_ok=True)
    echo(f"making the tt-lang environment at {env.path} from {exe}")
    proc = subprocess.run([exe, "-m", "venv", str(env.path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise EnvError(f"{exe} -m venv {env.path} failed:\n{proc.stderr.strip()}")
    _pip(env, "--no-deps", SPEC.tt_lang, echo=echo)
    _pip(env, SPEC.torch, *SPEC.tt_lang_deps, *_tilewright_deps(), echo=echo)
    check = subprocess.run(
        [str(env.python), "-c", "import ttl.ttl_api, torch"], capture_output=True, text=True
    )
    if check.returncode != 0:
        raise EnvError(f"the tt-lang environment does not import:\n{check.stderr.strip()[-2000:]}")
    env.stamp_file.write_text(json.dumps(SPEC.stamp(), indent=1))
    echo(f"tt-lang environment ready: {env.path}")
    return env


def _link_folder(env: TtlangEnv) -> Path:
    """A folder holding only a link to the running checkout's ``tilewright`` package."""
    package = Path(__file__).resolve().parents[1]  # tilewright/cli/ttlang_env.py
    key = hashlib.sha256(str(package).encode()).hexdigest()[:16]
    folder = env.path / "checkouts" / key
    link = folder / "tilewright"
    if not (link.is_symlink() and link.resolve() == package):
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".tilewright.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(package, target_is_directory=True)
        os.replace(tmp, link)  # atomic: concurrent runs see the old link or the new one
    return folder


def command(env: TtlangEnv, argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) that run ``python -m tilewright ARGV`` in ``env`` on this checkout."""
    variables = dict(os.environ)
    path = [str(_link_folder(env))]
    if variables.get("PYTHONPATH"):
        path.append(variables["PYTHONPATH"])
    variables["PYTHONPATH"] = os.pathsep.join(path)
    variables.pop("PYTHONHOME", None)
    return [str(env.python), "-m", "tilewright", *argv], variables


def in_real_compiler() -> bool:
    """Whether this interpreter can import the real compiler (the environment's own)."""
    return sys.version_info[:2] == (3, 12) and importlib.util.find_spec("ttl") is not None


def run_in_env(argv: list[str], **kwargs) -> int:
    """Run ``tilewright ARGV`` in the environment (made already); its exit status."""
    cmd, variables = command(require(), argv)
    return subprocess.run(cmd, env=variables, **kwargs).returncode
