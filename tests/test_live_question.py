"""The live questions written once for every agent (sessionsift.live) over the providers' hooks.

Data: the real Claude Code 2.1.258 sample corpus (examples/claude-home) for the Claude adapter; the
precedence on its own (providers.liveness.decide) with the rungs each provider gives it."""
from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.live.status import status
from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.live.verdict import assess
from sessionsift.providers.liveness import RUNGS, VERDICTS, decide, parse_condition, satisfied, LiveState
from sessionsift.providers.scope import RootRequest, select, survey

REPO = Path(__file__).resolve().parents[1]
CLAUDE = REPO / "examples" / "claude-home"


def _sel(**roots):
    return select(survey(RootRequest(roots=roots), light=frozenset({"claude-code"})), [])


def test_the_claude_adapter_gives_the_deep_verdict_of_every_session_unchanged():
    sel = _sel(**{"claude-code": str(CLAUDE)})
    res = status(sel, now=2e9)
    deep = {s.session_id: assess(s, CLAUDE, now=2e9) for s in resolve_targets([], CLAUDE).sessions}
    assert {v.unit.ref.session_id for v in res.verdicts} == set(deep)
    for v in res.verdicts:
        d = deep[v.unit.ref.session_id]
        assert (v.state.verdict, v.state.reason, v.state.settled, v.state.notes) == (d.verdict, d.reason, d.settled, d.notes)
        assert [e["surface"] for e in v.state.evidence] == [e["surface"] for e in d.evidence]
        assert all(isinstance(e["proves"], str) and e["proves"] for e in v.state.evidence)
        row = v.to_json()
        assert row["provider"] == "claude-code" and row["is_subagent"] is False and row["parent_session_id"] is None
        assert row["background_launches"] == len(d.background) and row["owner_ended"] is d.owner_ended
    assert res.counts == {"idle-background-open": 1, "idle-eot": 7}


def test_decide_takes_the_first_rung_that_holds_and_a_dispute_is_unknown():
    assert RUNGS[:3] == VERDICTS[:3] and RUNGS[4:] == VERDICTS[3:6]
    assert decide({"idle-eot": "ended", "running": "open"}, "none") == ("running", "open")
    assert decide({"stale-dead": "dead", "waiting": "human"}, "none") == ("stale-dead", "dead")
    assert decide({"disputed": "owner says idle, tail open", "waiting-children": "kids"}, "none") == (
        "unknown", "owner says idle, tail open")
    assert decide({"idle-eot": None, "waiting-children": ""}, "nothing decides") == ("unknown", "nothing decides")


@pytest.mark.parametrize("verdict,owner_ended,turn_ended,want", [
    ("idle-eot", None, True, (True, True, False)),
    ("stale-dead", True, False, (True, True, False)),
    ("idle-background-open", True, True, (True, True, False)),
    ("idle-background-open", None, True, (False, True, False)),  # the owner may still report: not stopped
    ("idle-background-open", True, None, (False, True, False)),
    ("running", False, False, (False, False, False)),
    ("waiting", False, False, (False, False, True)),
])
def test_the_wait_conditions_read_the_shared_state(verdict, owner_ended, turn_ended, want):
    st = LiveState(verdict, "r", [], owner_ended=owner_ended, turn_ended=turn_ended)
    got = tuple(satisfied(parse_condition(c), st) for c in ("stop", "idle", "human"))
    assert got == want


def test_a_provider_without_the_capability_answers_unknown_with_its_reason(tmp_path, monkeypatch):
    """Hand-made: a reader that declares it cannot offer live state (no client writes this)."""
    from sessionsift.live.status import SessionVerdict, assess as ask
    from sessionsift.live.world import Unit
    from sessionsift.providers.base import Provider, SessionRef
    from sessionsift.providers.liveness import LiveWorld

    class Blind(Provider):
        name, display, home_flag, default_rel = "blind", "Blind", "--blind-home", ".blind"
        lacks = {"live_state": "the client writes its transcript once, at exit: nothing on disk while it runs"}

    u = Unit("blind", "Blind", Blind(), SessionRef("blind", "b1", [tmp_path / "b1.json"]))
    st = ask(u, LiveWorld(now=0.0))
    assert st.verdict == "unknown" and st.reason == Blind.lacks["live_state"]
    assert st.invisible == [] and st.evidence[0]["proves"] == "nothing: " + Blind.lacks["live_state"]
    row = SessionVerdict(u, st).to_json()
    assert row["verdict"] == "unknown" and row["evidence"][0]["surface"] == "reader"

    class Broken(Blind):
        lacks = {}

        def live_state(self, ref, world):
            raise ValueError("bad row")

    st = ask(Unit("blind", "Blind", Broken(), SessionRef("blind", "b2", [tmp_path / "b2.json"])), LiveWorld(now=0.0))
    assert st.verdict == "unknown" and st.unreadable == [{"surface": "reader", "path": str(tmp_path / "b2.json"),
                                                          "why": "ValueError: bad row"}]


def _run(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300)


def test_status_answers_short_for_every_agent_and_says_a_repeated_note_once():
    """issue 27: `status` printed 111 lines for 8 sessions, three notes under every one. Now one line
    per session of every agent (its verdict and strongest evidence), a note said under several
    sessions once (with how many), what each agent's disk cannot show once; --verbose keeps
    every evidence row."""
    import json

    home = str(REPO / "examples" / "home")
    j = _run("status", "--home", home, "--format", "json")
    rows = [json.loads(x) for x in j.stdout.splitlines()]
    sess = [r for r in rows if r["kind"] == "session"]
    looked = {c["provider"] for c in rows[-1]["coverage"] if c["sessions"]}
    assert j.returncode == 0 and {r["provider"] for r in sess} == looked  # a verdict for every session of every agent
    assert looked >= {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code"}
    lacking = {x["provider"]: x["why"] for x in rows[-1]["no_live_state"]}
    assert not lacking.keys() & {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code"}
    for r in sess:  # a reader without live state answers unknown with its reason, never a refusal
        if r["provider"] in lacking:
            assert (r["verdict"], r["reason"]) == ("unknown", lacking[r["provider"]])
    t = _run("status", "--home", home)
    lines = t.stdout.splitlines()
    assert t.returncode == 0
    heads = [ln for ln in lines if not ln.startswith(" ") and ln.split("  ")[0] in {r["session_id"] for r in sess}]
    assert len(heads) == len(sess)
    for r in sess:
        (ln,) = [x for x in heads if x.startswith(r["session_id"] + "  ")]
        assert ln.split("  ")[1].split(" ")[0] == r["verdict"]
    counts: dict[str, int] = {}
    for r in sess:
        for n in r["notes"]:
            counts[n] = counts.get(n, 0) + 1
    from sessionsift.cli.cmd_live import plain_note  # text leaves the claims-catalog codes out; JSON keeps them

    for n, k in counts.items():
        n = plain_note(n)
        said = [ln for ln in lines if ln.endswith(n) or ln == f"  note: {n}"]
        assert len(said) == 1, (n, said)
        if k > 1:
            assert said[0] == f"note ({k} sessions): {n}"
    claude = [r for r in sess if r["provider"] == "claude-code"]
    # what is still open (background work, tasks) is listed under its session: `  title:` then its items
    still_open = [ln for ln in lines if ln.startswith("    ") or (ln.startswith("  ") and ln.endswith(":"))]
    assert len(lines) - len(still_open) < len(sess) + len(counts) + 20  # short: no evidence rows
    v = _run("status", "--home", home, "--verbose")
    assert v.returncode == 0
    for r in claude:
        for e in r["evidence"]:
            assert f"  [{e['surface']}] {e['value'][:150]}" in v.stdout


def test_status_narrows_through_the_shared_invocation():
    """--provider, --project and -n select the sessions of other agents as they do for list."""
    import json

    home = str(REPO / "examples" / "home")
    j = _run("status", "--home", home, "--provider", "qwen-code", "--project", "/tmp/ssift-qwen-sample/fork/work",
             "--format", "json")
    rows = [json.loads(x) for x in j.stdout.splitlines()]
    sess = [r for r in rows if r["kind"] == "session"]
    truth = json.loads((REPO / "examples" / "qwen-ground-truth" / "fork.json").read_text())
    assert j.returncode == 0 and sorted(r["session_id"] for r in sess) == sorted(s["id"] for s in truth["sessions"])
    assert {r["provider"] for r in sess} == {"qwen-code"} and len(sess) == 2
    lst = _run("list", "--home", home, "--provider", "pi", "--format", "json")
    newest = max((json.loads(x) for x in lst.stdout.splitlines() if '"kind":"session"' in x),
                 key=lambda r: r["last_at"]["utc"])
    j = _run("status", "--home", home, "--provider", "pi", "-n", "1", "--format", "json")
    (one,) = [json.loads(x) for x in j.stdout.splitlines() if '"kind":"session"' in x]
    assert j.returncode == 0 and one["session_id"] == newest["session_id"]
