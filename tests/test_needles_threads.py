"""The needle pre-filter (read/needles.py file_holds) answers right when several threads read at
once, as `sessionsift serve` does: each thread reads into its own buffer. With one buffer per
process, a thread looked for its needle in the bytes another thread had just read there (three
concurrent `-i hello` searches of one served store counted 17,862, 17,875 and 17,914 hits).

The files are plain bytes written here (the pre-filter reads bytes, not records); the interleaving
is forced, not hoped for: thread A has read its file when thread B reads its own, then A looks."""

from __future__ import annotations

import os
import threading

from sessionsift.read import needles as N


def test_a_thread_finds_its_needle_while_another_thread_reads_another_file(tmp_path, monkeypatch):
    holds = tmp_path / "holds.jsonl"
    holds.write_bytes(b'{"text": "' + b"x" * 5000 + b' canary-28 "}\n')
    lacks = tmp_path / "lacks.jsonl"
    lacks.write_bytes(b'{"text": "' + b"y" * 9000 + b'"}\n')
    real = os.preadv
    a_read, b_read = threading.Event(), threading.Event()

    def preadv(fd, bufs, pos):
        n = real(fd, bufs, pos)
        if threading.current_thread().name == "A":
            a_read.set()
            assert b_read.wait(10)
        else:
            b_read.set()
        return n

    def b_after_a():
        assert a_read.wait(10)
        got["B"] = N.file_holds(lacks, ["canary-28"], False)

    got: dict = {}
    monkeypatch.setattr(os, "preadv", preadv)
    ta = threading.Thread(target=lambda: got.__setitem__("A", N.file_holds(holds, ["canary-28"], False)), name="A")
    tb = threading.Thread(target=b_after_a, name="B")
    ta.start()
    tb.start()
    ta.join(20)
    tb.join(20)
    assert got == {"A": (True, holds.stat().st_size, None), "B": (False, lacks.stat().st_size, None)}
