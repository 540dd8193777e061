"""Waiting for a real client: the one place tests poll what a running client writes.

A test that drives a real client cannot be told when the client has written something (it is
another program), so it looks again until the condition holds or a deadline passes. The polling
interval only bounds how soon the condition is seen; no answer depends on it: a condition that
never holds fails with `what` named, one that holds is seen at the next look."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def until(cond: Callable[[], T], timeout: float, what: str, every: float = 0.1) -> T:
    """The first truthy value of `cond()`, looked at every `every` seconds; AssertionError naming
    `what` once `timeout` seconds passed without one."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def while_running(alive: Callable[[], bool], step: Callable[[], None], timeout: float, every: float = 0.2) -> bool:
    """Call `step()` every `every` seconds while `alive()` holds (a client still running), at most
    `timeout` seconds; True when `alive()` ended first (the client finished), False at the deadline."""
    end = time.monotonic() + timeout
    while alive():
        if time.monotonic() >= end:
            return False
        step()
        time.sleep(every)
    return True
