"""Pipes and pipe nets at run time (in progress)."""

PIPE_TYPES: tuple = ()


def send(run, block, pipe):
    raise NotImplementedError


def receive(run, pipe, block):
    raise NotImplementedError
