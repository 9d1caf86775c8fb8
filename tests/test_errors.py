"""``tilewright/errors.py``: the one walker from a frame to the user's code, and how the
command line prints an error."""

import sys

import pytest

from tilewright import errors
from tilewright.errors import (
    InterfaceError,
    SourceLoc,
    format_error,
    internal_file,
    traceback_location,
    user_frame,
    user_location,
)


def test_internal_files_are_tilewright_and_synthetic_ones():
    assert internal_file(errors.__file__)
    assert internal_file("<frozen importlib._bootstrap>")
    assert internal_file("<string>")
    assert not internal_file(__file__)
    before = internal_file.cache_info().hits
    internal_file(__file__)
    assert internal_file.cache_info().hits == before + 1  # a cached predicate


def test_user_location_skips_tilewright_frames():
    here = sys._getframe()
    assert user_frame(here) is here
    line = here.f_lineno
    loc = user_location()
    assert loc == SourceLoc(__file__, line + 1)


def test_traceback_location_is_the_innermost_user_frame():
    def fail():
        raise InterfaceError("boom")  # <- here

    with pytest.raises(InterfaceError) as info:
        fail()
    loc = traceback_location(info.value)
    assert loc is not None and loc.file == __file__
    with open(__file__) as f:
        assert "# <- here" in f.read().splitlines()[loc.line - 1]


def test_format_error_adds_the_notes():
    err = InterfaceError("bad grid")
    err.add_note("in node (0, 0)")
    assert format_error(err) == "InterfaceError: error: bad grid\nnote: in node (0, 0)"
