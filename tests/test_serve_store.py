"""serve's store (serve/store.py) under concurrent requests: a question asked by several requests
at once is computed once (the others wait for its answer), a page is kept as the bytes sent, and
the answers of one kind can be bounded in number (a search's answer holds every hit's text). The
store is driven directly with threads (no server): the answers are plain values made here."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("starlette")

from sessionsift.serve.store import Store  # noqa: E402


def test_a_question_asked_by_several_threads_at_once_is_computed_once():
    store = Store(lambda targets: None)
    calls = []

    def make():
        calls.append(threading.current_thread().name)
        time.sleep(0.3)
        return "the status of every session"

    got = []
    threads = [threading.Thread(target=lambda: got.append(store.memo(("live",), make)), name=f"t{i}")
               for i in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert len(calls) == 1
    assert got == ["the status of every session"] * 5
    pages = []
    threads = [threading.Thread(target=lambda: pages.append(store.page(("live",), lambda: make() + " é")))
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
