"""serve's store (serve/store.py) under concurrent requests: a question asked by several requests
at once is computed once (the others wait for its answer), a page is kept as the bytes sent, and
the answers of one kind can be bounded in number (a search's answer holds every hit's text). The
store is driven directly with threads (no server): the answers are plain values made here."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("starlette")

from sessionsift.serve.store import Store  # noqa: E402


def test_a_question_asked_by_several_threads_at_once_is_computed_once():
    store = Store(lambda targets: None)
    calls = []
    entered = []
    all_in = threading.Event()  # no sleep: the answer is made only once every thread has asked

    def make():
        calls.append(threading.current_thread().name)
        assert all_in.wait(30), "the other threads never asked"
        return "the status of every session"

    def ask(fn):
        def run():
            entered.append(1)
            if len(entered) == 5:
                all_in.set()
            fn()
        return run

    got = []
    threads = [threading.Thread(target=ask(lambda: got.append(store.memo(("live",), make))), name=f"t{i}")
               for i in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert len(calls) == 1
    assert got == ["the status of every session"] * 5
    pages = []
    entered.clear()
    all_in.clear()
    entered.extend([1, 1])  # three threads this time: the third to ask sets all_in
    threads = [threading.Thread(target=ask(lambda: pages.append(store.page(("live",), lambda: make() + " é"))))
               for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert len(calls) == 2
    assert pages == ["the status of every session é".encode()] * 3
    assert store.cached(("live",)) == pages[0]
    store.bump(["/a/changed/transcript.jsonl"])
    assert store.cached(("live",)) is None


def test_at_most_keep_answers_of_a_kind_are_kept():
    store = Store(lambda targets: None)
    for i in range(12):
        store.memo(("search", i), lambda: i, keep=8)
    store.memo(("live",), lambda: "live")
    made = []
    assert store.memo(("search", 11), lambda: made.append(11)) == 11  # kept: not made again
    assert store.memo(("search", 3), lambda: made.append(3) or 3) == 3  # dropped: made again
    assert made == [3]
    assert store.memo(("live",), lambda: "again") == "live"
