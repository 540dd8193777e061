"""read.fanout.imap_forked: the tasks' results in task order, whatever worker computed them, when
tasks cost unevenly, when a worker dies mid-task, and when the reader stops early (no worker is
left behind). The search cold path runs its batches through it (tests/test_search_fast.py holds
the parallel answers to the serial ones on the real corpora)."""

from __future__ import annotations

import os

import pytest

from sessionsift.read import fanout as F

pytestmark = pytest.mark.skipif(not F.can_fork(), reason="needs os.fork and 2 CPUs, no other thread")

_PARENT = os.getpid()


def _task(i: int):
    if i % 7 == 3:
        s = 0
        for k in range(20_000):  # uneven costs: some tasks take far longer than others
            s += k
    return {"i": i, "pid": os.getpid(), "blob": b"x" * (i * 3000)}  # some results exceed a pipe buffer


def test_results_come_in_task_order_from_several_workers():
    got = list(F.imap_forked(_task, 60, 2))
    assert [g["i"] for g in got] == list(range(60))
    assert all(g["blob"] == b"x" * (g["i"] * 3000) for g in got)
    pids = {g["pid"] for g in got}
    assert _PARENT not in pids and len(pids) == 2


def _dies_on_5(i: int):
    if i == 5 and os.getpid() != _PARENT:
        os._exit(3)  # a worker killed mid-task
    return i * i


def test_a_dead_worker_costs_time_not_results():
    assert list(F.imap_forked(_dies_on_5, 20, 2)) == [i * i for i in range(20)]
    assert list(F.imap_forked(_dies_on_5, 20, 1)) == [i * i for i in range(20)]


_HOLD: list[int] = []
"""The read end of a pipe: a worker on a task past the first three blocks on it until the test
writes (no sleep: the workers are provably still running when the caller stops)."""


def _slow(i: int):
    if i >= 3:
        os.read(_HOLD[0], 1)
    return i


def _children() -> set[int]:
    """Our child processes (zombies included: a worker not waited for stays listed)."""
    me, out = os.getpid(), set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        out.add(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_stopping_early_leaves_no_worker():
    before = _children()
    r, w = os.pipe()
    _HOLD[:] = [r]
    try:
        it = F.imap_forked(_slow, 50, 2)
        assert [next(it) for _ in range(3)] == [0, 1, 2]
        assert len(_children() - before) == 2  # both still on a task: nothing has let them finish
        os.write(w, b"xx")  # each may now finish the task it holds (close waits for that, then reaps)
        it.close()
        assert _children() - before == set()  # every worker ended and was reaped
    finally:
        os.close(r)
        os.close(w)


def test_no_task_and_one_task():
    assert list(F.imap_forked(_task, 0, 2)) == []
    assert [g["i"] for g in F.imap_forked(_task, 1, 2)] == [0]
