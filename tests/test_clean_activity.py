"""The activity gate on copies of REAL transcripts (examples/, written by the real clients) and REAL
processes (a symlink to sleep named like the client, so /proc shows exactly what it shows for the
client; the real clients themselves are driven in test_clean_realclient.py).

The seed-000 regression: a process of one provider working in a folder that another provider's
session names (the same path, or a same-named folder elsewhere) blocks nothing of that other
provider. The world here is the real process table, not a fixture that shares the code's model;
what is relocated is said beside it (a copied Gemini project's registry entries point at a temp
dir; a Claude project DIRECTORY is renamed to the encoding of a temp dir, its transcript's bytes
untouched)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.clean import activity as A
from sessionsift.clean.scan import scan
from sessionsift.providers.scope import RootRequest, survey
from sessionsift.worktrees import procs as P
from tests.clean_util import EX, corpus, fake_process
from tests.realclient.runner import encode_project_dir

GEM = "7851216c-dbe3-446c-8362-79ae024b32ee"   # Gemini CLI session of project gem-resumed
FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"    # Claude Code files_basic
INTER = "dd7270d6-d04e-5744-ab2f-2e9ad4fab464"  # Claude Code interactive (its live registry row was captured)


@pytest.fixture
def mine_only(monkeypatch):
    """The gate sees only the processes this test started (our children): another engineer's real
    client running elsewhere on this machine must not decide these assertions."""
    real = P.snapshot

    def snap():
        t = real()
        t.procs = [p for p in t.procs if p.ppid == os.getpid()]
        return t

    monkeypatch.setattr(A.P, "snapshot", snap)


@pytest.fixture
def world(tmp_path):
    home = corpus(tmp_path / "h", (".claude", ".codex", ".gemini"))
    # relocate the Gemini project gem-resumed to a temp dir (its registry entries only)
    work = tmp_path / "work" / "gem-resumed"
    work.mkdir(parents=True)
    pj = home / ".gemini" / "projects.json"
    d = json.loads(pj.read_text())
    d["projects"] = {(str(work) if k.endswith("/gem-resumed") else k): v for k, v in d["projects"].items()}
    pj.write_text(json.dumps(d))
    (home / ".gemini/tmp/gem-resumed/.project_root").write_text(str(work))
    # the Claude files_basic project dir renamed to the encoding of a temp dir
    cw = tmp_path / "cwork"
    cw.mkdir()
    projs = home / ".claude" / "projects"
    os.rename(projs / "-tmp-ssift-rc-files-basic-work", projs / encode_project_dir(str(cw)))
    return home, work, cw


def _gates(home: Path, env=None):
    rep = scan(survey(RootRequest(home=str(home))), older_than="1m", data=home.parent / "data", env=env or {})
    return {(v.provider, v.session_id): v.gates["activity"] for v in rep.verdicts}, rep


def _stop(*ps):
    for p in ps:
        p.kill()
        p.wait()


def test_a_claude_process_in_a_gemini_project_blocks_no_gemini_session(world, tmp_path, mine_only):
    home, work, _cw = world
    g0, _ = _gates(home)
    assert g0[("gemini-cli", GEM)].proven
    other = tmp_path / "elsewhere" / "gem-resumed"  # a same-named folder of another path
    other.mkdir(parents=True)
    ps = [fake_process(tmp_path, "claude", work), fake_process(tmp_path, "claude", other)]
    try:
        g, _ = _gates(home)
    finally:
        _stop(*ps)
    gem = {k: v for k, v in g.items() if k[0] == "gemini-cli"}
    assert gem and all(v.proven for v in gem.values()), {k: v.reason for k, v in gem.items() if not v.proven}
    assert g[("gemini-cli", GEM)].reason == "no_agent_working_in_this_project"
    # and they block no Claude session either: none of them works in a Claude session's project
    assert all(v.proven for k, v in g.items() if k[0] == "claude-code")


def test_a_gemini_process_blocks_only_the_gemini_sessions_of_its_project(world, tmp_path, mine_only):
    home, work, _cw = world
    p = fake_process(tmp_path, "gemini", work)
    try:
        g, _ = _gates(home)
    finally:
        _stop(p)
    blocked = {k for k, v in g.items() if not v.proven}
    assert blocked == {("gemini-cli", GEM)}, {k: g[k].reason for k in blocked}
    assert g[("gemini-cli", GEM)].reason == "agent_working_in_this_project"
    assert g[("gemini-cli", GEM)].evidence[0]["pid"] == p.pid


def test_a_codex_process_blocks_every_codex_session_and_nothing_else(world, tmp_path, mine_only):
    home, work, _cw = world
    p = fake_process(tmp_path, "codex", work)  # even inside a Gemini project
    try:
        g, _ = _gates(home)
    finally:
        _stop(p)
    codex = {k for k in g if k[0] == "codex"}
    assert codex and {k for k, v in g.items() if not v.proven} == codex
    assert {g[k].reason for k in codex} == {"provider_is_running"}


def test_a_claude_process_blocks_its_project_unless_a_registry_row_names_its_session(world, tmp_path, mine_only):
    home, _work, cw = world
    p = fake_process(tmp_path, "claude", cw)
    try:
        g, _ = _gates(home)
        assert g[("claude-code", FB)].reason == "agent_working_in_this_project"
        assert {k for k, v in g.items() if not v.proven} == {("claude-code", FB)}
        # the REAL registry row the client wrote while busy (examples/live-snapshots), pointed at our
        # process: pid and start ticks rewritten, the rest as the client wrote it
        row = json.loads(next((EX / "live-snapshots/interactive/P1-turn1/sessions").glob("*.json")).read_text())
        start = int(Path(f"/proc/{p.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19])
        from sessionsift.providers.claude.live.registry import local_pid_domain

        row.update(pid=p.pid, procStart=str(start), pidDomain=local_pid_domain(), cwd=str(cw))
        sd = home / ".claude" / "sessions"
        sd.mkdir()
        (sd / f"{p.pid}.json").write_text(json.dumps(row))
        g, _ = _gates(home)
        # the row says that process is session INTER: INTER is live, files_basic is not blocked
        assert g[("claude-code", INTER)].reason == "session_is_live"
        assert g[("claude-code", FB)].proven and g[("claude-code", FB)].reason == "no_live_session"
        assert g[("claude-code", FB)].evidence[0]["is_session"] == INTER
        # the row names files_basic itself
        row["sessionId"] = FB
        (sd / f"{p.pid}.json").write_text(json.dumps(row))
        g, _ = _gates(home)
        assert g[("claude-code", FB)].reason == "session_is_live" and g[("claude-code", INTER)].proven
        # a start time that does not match: the pid was reused, the row is stale
        row["procStart"] = str(start + 10_000)
        (sd / f"{p.pid}.json").write_text(json.dumps(row))
        g, _ = _gates(home)
        assert g[("claude-code", FB)].reason == "agent_working_in_this_project"  # the process is still there
    finally:
        _stop(p)
    g, _ = _gates(home)
    assert all(v.proven for v in g.values()), "a row whose owner is gone blocks nothing (REG-013)"


def test_the_session_running_this_command_blocks_only_itself(world, tmp_path, mine_only):
    home, _work, _cw = world
    g, rep = _gates(home, env={"CLAUDE_CODE_SESSION_ID": INTER})
    assert g[("claude-code", INTER)].reason == "session_is_live"
    assert "the session running this command" in g[("claude-code", INTER)].detail
    assert {k for k, v in g.items() if not v.proven} == {("claude-code", INTER)}
    assert rep.world.self_json()["claude_code_session_id"] == INTER


def test_this_commands_caller_is_named_and_blocks_what_it_covers(world, tmp_path):
    """The scan run by a process named claude (our caller, as an agent's Bash tool would be) in
    the files_basic project: with $CLAUDE_CODE_SESSION_ID naming another session it blocks only
    that one; without it, it blocks its project and the output says it is the caller."""
    home, _work, cw = world
    claude = tmp_path / "bin2" / "claude"
    claude.parent.mkdir()
    claude.symlink_to(sys.executable)
    code = ("import subprocess, sys; r = subprocess.run([sys.argv[3], '-m', 'sessionsift', 'clean', 'scan', "
            "'--home', sys.argv[1], '--older-than', '1m', '--format', 'json', '--data-dir', sys.argv[2]], "
            "capture_output=True, text=True); sys.stdout.write(r.stdout)")

    def run(env):
        e = {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_SESSION_ID"} | env
        r = subprocess.run([str(claude), "-c", code, str(home), str(tmp_path / "d"), sys.executable], cwd=cw, env=e,
                           capture_output=True, text=True, timeout=120)
        rows = [json.loads(l) for l in r.stdout.splitlines()]
        return rows[0], {x["session_id"]: x["gates"]["activity"] for x in rows if x["kind"] == "session"}

    head, g = run({"CLAUDE_CODE_SESSION_ID": INTER})
    anc = head["caller"]["agent_ancestors"]
    assert anc and anc[0]["providers"] == ["claude-code"] and anc[0]["cwd"] == str(cw)
    assert g[INTER]["reason"] == "session_is_live"
    assert g[FB]["proven"], g[FB]
    head, g = run({})
    assert g[FB]["reason"] == "agent_working_in_this_project"
    assert g[FB]["evidence"][0]["this_commands_caller"] is True
    assert "this command's own caller" in g[FB]["detail"]
