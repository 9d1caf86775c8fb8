"""The Tilewright error hierarchy: one leaf module, stdlib only, imported by every layer.

Every rejection Tilewright reports is one of these types.  Each error carries

* ``loc``  -- a :class:`SourceLoc` (the user's file, line and column) when known,
* ``rule`` -- a short stable identifier of the rule that was broken (tests and docs
  refer to rules by this id),
* ``hint`` -- what to do about it, in the user's names.

``str(err)`` renders ``file:line:col: error: message`` followed by a caret excerpt of
the source line and the hint, in the style of the TT-Lang front end.  Run-time
errors raised inside kernels get the node and kernel added as notes
(``BaseException.add_note``) so the original type is kept.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
from dataclasses import dataclass
from types import FrameType

__all__ = [
    "SourceLoc",
    "TilewrightError",
    "TTLangCompileError",
    "InterfaceError",
    "SplitError",
    "CapacityError",
    "ExternCallError",
    "NotCompilableError",
    "RawIRError",
    "IRVerifyError",
    "KernelError",
    "BlockStateError",
    "DFBContractError",
    "NocError",
    "DeadlockError",
    "NativeBuildError",
    "NativeCrashError",
    "DescriptorError",
    "SystemDescError",
    "DeviceError",
    "OutOfMemoryError",
    "FormatError",
    "internal_file",
    "treat_as_internal",
    "user_frame",
    "user_location",
    "traceback_location",
    "format_error",
    "tag_rule",
    "untag_rule",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_INTERNAL_DIRS: tuple[str, ...] = (_PACKAGE_DIR,)
# Python's standard library is never the user's line either: a kernel interrupted inside
# ``subprocess`` (a build) or ``concurrent.futures`` is reported at the user's call to it.
# Installed packages can sit below it (a Python without a venv): those stay the user's.
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
_SITE_DIRS = (_STDLIB_DIR + "site-packages" + os.sep, _STDLIB_DIR + "dist-packages" + os.sep)


def treat_as_internal(directory: str) -> None:
    """Count the files under ``directory`` as not the user's, like Tilewright's own.

    For a compiler that runs on Tilewright in the user's place (the real TT-Lang compiler
    under ``tilewright run --compiler ttlang``): a diagnostic names the user's line, not the
    compiler's frame that called ttnn.
    """
    global _INTERNAL_DIRS
    root = os.path.abspath(directory) + os.sep
    if root not in _INTERNAL_DIRS:
        _INTERNAL_DIRS = (*_INTERNAL_DIRS, root)
        internal_file.cache_clear()


@functools.lru_cache(maxsize=4096)
def internal_file(filename: str) -> bool:
    """True for code that is not the user's: Tilewright's own files, Python's standard
    library (not the packages installed below it) and synthetic files.

    Tilewright's files are recognised by the package directory derived from
    ``__file__`` (never by a path substring), so the test keeps working once the
    package is installed.  Synthetic files (``<frozen importlib._bootstrap>``,
    ``<string>`` of generated dataclass methods) have no line to show either.  Cached:
    the same few file names are asked about on every walk.
    """
    if filename.startswith(_INTERNAL_DIRS) or filename.startswith("<"):
        return True
    return filename.startswith(_STDLIB_DIR) and not filename.startswith(_SITE_DIRS)


def user_frame(frame: FrameType | None) -> FrameType | None:
    """``frame`` or the nearest frame it was called from that is the user's (None if none).

    The one walker of the stack: diagnostics call it only when they raise or report,
    never on a hot path.
    """
    while frame is not None and internal_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def user_location(frame: FrameType | None = None) -> SourceLoc | None:
    """The user's innermost frame, from ``frame`` (default: the caller's), as a location."""
    found = user_frame(frame if frame is not None else sys._getframe(1))
    return SourceLoc(found.f_code.co_filename, found.f_lineno) if found is not None else None


def traceback_location(exc: BaseException) -> SourceLoc | None:
    """The innermost user frame of an exception's traceback (where the user's code failed)."""
    tb = exc.__traceback__
    loc = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not internal_file(name):
            loc = SourceLoc(name, tb.tb_lineno)
        tb = tb.tb_next
    return loc


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in the user's source: 1-based line, 0-based column (as ``ast``)."""

    file: str
    line: int
    col: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        if self.col is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.col + 1}"

    def excerpt(self) -> str:
        """The source line with a caret under the construct, or '' if unavailable."""
        text = linecache.getline(self.file, self.line)
        if not text:
            return ""
        text = text.rstrip("\n")
        gutter = f"{self.line:>5} | "
        lines = [gutter + text]
        if self.col is not None:
            stop = self.end_col if self.end_col and self.end_col > self.col else self.col + 1
            stop = min(stop, len(text)) if len(text) > self.col else self.col + 1
            lines.append(" " * len(gutter) + " " * self.col + "^" * max(1, stop - self.col))
        return "\n".join(lines)

    @classmethod
    def from_frame(cls, frame) -> SourceLoc:  # frame: types.FrameType
        return cls(frame.f_code.co_filename, frame.f_lineno)


_RULE_TAG = "{rule:"


def tag_rule(rule: str, message: str) -> str:
    """``message`` carrying its rule id across a boundary that passes only (class, text):
    the ``fail`` ops compiled kernels raise (``ttlang/support.h``, the IR interpreter).
    The error's constructor takes the tag off again, so every engine reports the rule."""
    return f"{_RULE_TAG}{rule}}}{message}"


def untag_rule(message: str) -> tuple[str | None, str]:
    """``(rule, message)`` of a message :func:`tag_rule` tagged (``(None, message)`` if not)."""
    if message.startswith(_RULE_TAG) and "}" in message:
        rule, _, text = message[len(_RULE_TAG) :].partition("}")
        return rule, text
    return None, message


class TilewrightError(Exception):
    """Base of every error Tilewright raises on purpose."""

    default_rule = "error"

    def __init__(
        self,
        message: str,
        *,
        loc: SourceLoc | None = None,
        rule: str | None = None,
        hint: str | None = None,
    ) -> None:
        tagged, message = untag_rule(message)  # a message that crossed a fail op
        rule = rule or tagged
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.rule = rule or self.default_rule
        self.hint = hint

    def __str__(self) -> str:
        head = f"error: {self.message}"
        if self.loc is not None:
            head = f"{self.loc}: {head}"
        parts = [head]
        if self.loc is not None:
            excerpt = self.loc.excerpt()
            if excerpt:
                parts.append(excerpt)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)

    def __reduce__(self):  # keep keyword state across pickling (child-process isolation)
        return (_rebuild, (type(self), self.message, self.loc, self.rule, self.hint, self.__dict__))


def _rebuild(cls, message, loc, rule, hint, state):
    err = cls.__new__(cls)
    TilewrightError.__init__(err, message, loc=loc, rule=rule, hint=hint)
    err.__dict__.update(state)
    return err


def format_error(exc: BaseException) -> str:
    """How the command line reports an error: ``Type: message`` plus its notes (node, kernel)."""
    text = str(exc)
    notes = getattr(exc, "__notes__", ())
    if notes:
        text += "\n" + "\n".join(f"note: {n}" for n in notes)
    return f"{type(exc).__name__}: {text}"


# --- programs the TT-Lang front end rejects ----------------------------------------------


class TTLangCompileError(TilewrightError):
    """A TT-Lang program rejected before it runs (the reference front end's name)."""

    default_rule = "compile"


class InterfaceError(TTLangCompileError):
    """An operation's interface breaks the rules (parameters, tensors, grid)."""

    default_rule = "interface"


class SplitError(TTLangCompileError):
    """A unified operation body cannot be split into logical kernels."""

    default_rule = "split"


class CapacityError(TTLangCompileError):
    """More kernels, DFBs or L1 bytes than the target provides."""

    default_rule = "capacity"


class ExternCallError(TTLangCompileError):
    """A ``ttl.call_extern_func`` call breaks a rule of the must-reject checklist."""

    default_rule = "extern"


class NotCompilableError(TTLangCompileError):
    """A construct the hardware compiler cannot compile (Python objects in kernel code,
    calls into arbitrary Python, recursion, ...): ``--engine native`` reports it,
    ``--engine auto`` runs the operation interpreted instead."""

    default_rule = "not-compilable"


class RawIRError(TTLangCompileError):
    """A raw IR function or call (``ttl.raw``) breaks a rule (signature, call, builder use)."""

    default_rule = "raw-ir"


class IRVerifyError(TTLangCompileError):
    """Kernel IR that breaks a rule of the IR (the message prints it, the op marked)."""

    default_rule = "ir-verify"


# --- faults while kernels run ---------------------------------------------------------------


class KernelError(TilewrightError):
    """A fault detected while kernels run on the virtual device."""

    default_rule = "kernel"


class BlockStateError(KernelError):
    """A block was used in a way its state (MW, MR, RW, ROR, NAW, OS) forbids."""

    default_rule = "block-state"


class DFBContractError(KernelError):
    """A dataflow-buffer protocol or an external call's declared contract was broken."""

    default_rule = "dfb-contract"


class NocError(KernelError):
    """A NoC transfer that the hardware would reject or silently corrupt."""

    default_rule = "noc"


class DeadlockError(TilewrightError):
    """No kernel can make progress; the message lists every blocked kernel."""

    default_rule = "deadlock"


# --- native code ----------------------------------------------------------------------------


class NativeBuildError(TilewrightError):
    """Compiling or loading external / generated C++ failed."""

    default_rule = "native-build"
    compiler_output: str = ""
    """The compiler's messages (empty unless compiling failed)."""
    source: str = ""
    """The C++ source that failed to compile."""
    undefined_symbols: tuple[str, ...] = ()
    """Symbols the linker reported as declared but never defined."""


class NativeCrashError(KernelError):
    """Native code crashed (signal) inside an isolated simulation."""

    default_rule = "native-crash"


# --- descriptors, device, formats -----------------------------------------------------------


class DescriptorError(TilewrightError):
    """A malformed or inconsistent descriptor (file or model)."""

    default_rule = "descriptor"


class SystemDescError(DescriptorError):
    """A system descriptor (``.ttsys``, text form or model) is malformed or invalid.

    Binary decoding errors name the field and the byte offset in ``field`` and
    ``offset`` (also part of the message).
    """

    default_rule = "system-desc"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        offset: int | None = None,
        loc: SourceLoc | None = None,
        rule: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, loc=loc, rule=rule, hint=hint)
        self.field = field
        self.offset = offset


class DeviceError(TilewrightError):
    """Misuse of the virtual device or its host API."""

    default_rule = "device"


class OutOfMemoryError(DeviceError):
    """An allocation does not fit: names the request, free bytes and largest free block."""

    default_rule = "out-of-memory"


class FormatError(DeviceError):
    """Data that cannot be represented in the requested data format or tile shape."""

    default_rule = "format"
