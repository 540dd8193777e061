"""Searches in a long-lived process (serve answers every search in the one server process) see
what appeared after the first one: Claude Code's search scan remembers, per process, which
session directories a project directory holds (a session's sidecar) and which saved tool outputs
of a sidecar match a pattern -- kept by the directory's stat identity, so a session, sidecar or
saved output written after an earlier search is looked at by the next one.

Two searches in this one process, the store changed between them; the count checked is the
left-out count of persisted outputs (a saved output under `<project>/<session>/tool-results/`
matching where the transcript's preview does not), as tests/test_search.py's sidecar test
builds it (a hand-made pointer on a real client's tool result)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.model.lane import LaneIndex
from sessionsift.providers.claude.search import plan as A
from sessionsift.providers.claude.search.lanes import lane_search
from sessionsift.search import Query

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "claude-home"


def _tool_result() -> dict:
    for s in resolve_targets([], EXAMPLES).sessions:
        for ln in s.lanes():
            idx = LaneIndex.build(ln)
            for x in idx.entries:
                if x.labels[:1] == ("agent.tool.result",):
                    return idx.load(x)
    raise AssertionError("no tool result in examples/claude-home")


def _pointer(obj: dict, saved: Path, uuid: str) -> str:
    o = json.loads(json.dumps(obj))
    o["uuid"] = uuid
    blk = next(b for b in o["message"]["content"] if b.get("type") == "tool_result")
    blk["content"] = (f"<persisted-output>\nOutput too large (40KB). Full output saved to: {saved}\n\n"
                      f"Preview (first 2KB):\nhead\n</persisted-output>")
    o["toolUseResult"] = {"stdout": "", "stderr": "", "persistedOutputPath": str(saved)}
    return json.dumps(o, separators=(",", ":")) + "\n"


def _persisted(home: Path) -> int:
    r = lane_search(Query(patterns=("wombat-5528",), count_by="total"), resolve_targets([], home))
    list(r.outcomes())
    return {x["kind"]: x["further_hits"] for x in r.summary.left_out}[A.PERSISTED]


def test_a_session_and_a_saved_output_written_after_a_search_are_found_by_the_next(tmp_path, monkeypatch):
    for k in ("HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(k, str(tmp_path / k.lower()))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    obj = _tool_result()
    home = tmp_path / "h"
    dest = home / "projects" / "-p"
    dest.mkdir(parents=True)
    for src in sorted((EXAMPLES / "projects").rglob("*.jsonl"))[:4]:  # real sessions without a sidecar
        if "subagents" not in src.parts:
            shutil.copy(src, dest / src.name)
    first = sorted(dest.glob("*.jsonl"))[0]
    (dest / first.stem / "tool-results").mkdir(parents=True)  # one session with a sidecar, no match in it
    (dest / first.stem / "tool-results" / "toolu_other.txt").write_text("nothing to see\n")
    assert _persisted(home) == 0  # the project dir listed: one session dir in it

    # a new session with a sidecar, written after that search (the server keeps running)
    sid = "22222222-2828-4828-8828-222222222228"
    saved = dest / sid / "tool-results" / "toolu_saved.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("the external payload says wombat-5528\n")
    t = dest / f"{sid}.jsonl"
    t.write_text(_pointer(obj, saved, "33333333-2828-4828-8828-000000000001"))
    assert _persisted(home) == 1

    # a second saved output in the same sidecar, and its pointer appended
    saved2 = saved.with_name("toolu_saved2.txt")
    saved2.write_text("again wombat-5528\n")
    with open(t, "a") as f:
        f.write(_pointer(obj, saved2, "33333333-2828-4828-8828-000000000002"))
    assert _persisted(home) == 2

    # and a new project directory holding such a session
    other = home / "projects" / "-q"
    saved3 = other / sid.replace("2828", "2929") / "tool-results" / "toolu_saved3.txt"
    saved3.parent.mkdir(parents=True)
    saved3.write_text("once more wombat-5528\n")
    (other / f"{saved3.parent.parent.name}.jsonl").write_text(_pointer(obj, saved3, "33333333-2828-4828-8828-000000000003"))
    assert _persisted(home) == 3


def test_the_kinds_table_of_one_search_is_never_anothers(monkeypatch):
    """index/search.py keeps, per (plan, kinds table), which kinds a search's plan lets through
    (computed once for a whole data root). It was keyed on id(plan): a later search whose plan
    object got a freed plan's id (CPython reuses addresses; serve makes a plan per search in one
    process) took the other search's answer. Every id made equal here, as a reused one is."""
    import sessionsift.providers.claude.cache.search as S

    monkeypatch.setattr(S, "id", lambda o: 28, raising=False)
    monkeypatch.setattr(S, "_PASSING", {})
    keys = [("user", 0, 0, ("user.message",)), ("assistant", 0, 0, ("agent.tool.use",)),
            ("assistant", 0, 0, ("agent.message",))]
    prompts = A.plan(Query(patterns=("x",), include=("user.message",)))
    calls = A.plan(Query(patterns=("x",), include=("agent.tool.use",)))
    assert S._passing(prompts, keys) == [True, False, False]
    assert S._passing(calls, keys) == [False, True, False]
    assert S._passing(prompts, list(keys)) == [True, False, False]
