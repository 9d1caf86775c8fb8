"""The split runs' barrier channel: a run's reads drop what an earlier run left behind, a
gather answers by key, and a closed end is reported with its key (never a hang)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("ray")

from tilewright.distributed import channel  # noqa: E402 - needs ray's cloudpickle


def _pair(key: bytes):
    worker = channel.WorkerEnd(key)
    driver = channel.connect(worker.address, key)
    return worker, driver


def test_a_run_drops_the_messages_an_earlier_run_left():
    key = os.urandom(32)
    worker, driver = _pair(key)
    try:
        w = worker.connection()
        channel.send(driver, 1, "abort")  # run 1 was given up on: nobody read this
        channel.send(driver, 2, ("go", [1, 2]))
        assert channel.receive(w, 2) == ("go", [1, 2])
        channel.send(w, 1, ("aborted",))  # the answer to that abort, read by run 2
        channel.send(w, 2, ("round", [], False))
        assert channel.gather({7: driver}, 2) == {7: ("round", [], False)}
    finally:
        worker.close()
        driver.close()


def test_a_gather_names_the_end_that_closed():
    key = os.urandom(32)
    (wa, da), (wb, db) = _pair(key), _pair(key)
    try:
        channel.send(wa.connection(), 3, "ok")
        wb.connection().close()  # worker b is gone
        with pytest.raises(channel.Lost) as info:
            channel.gather({0: da, 1: db}, 3)
        assert info.value.args[1] == 1
        with pytest.raises(channel.Lost):
            channel.receive(db, 3)
    finally:
        for end in (wa, wb, da, db):
            end.close()


def test_a_wrong_key_does_not_connect():
    worker = channel.WorkerEnd(os.urandom(32))
    with pytest.raises(Exception, match="digest|authentication|challenge"):
        channel.connect(worker.address, os.urandom(32))
    with pytest.raises(channel.Lost, match="did not connect"):
        worker.connection()  # the worker's end refused it, and listens no more


def test_a_message_that_does_not_pickle_sends_nothing():
    """A share's end that cannot be pickled raises before a byte is written, so the share
    can send an error in its place (host.SplitRun._tell_end)."""
    import threading

    key = os.urandom(32)
    worker, driver = _pair(key)
    try:
        w = worker.connection()
        with pytest.raises(Exception) as info:
            channel.send(w, 4, ("ok", threading.Lock()))
        assert not isinstance(info.value, channel.Lost)
        channel.send(w, 4, ("error", "in its place"))
        assert channel.receive(driver, 4) == ("error", "in its place")
    finally:
        worker.close()
        driver.close()
