"""The root rule on the commands that read only Claude Code (docs/cli.md "Data roots").

Once any root is named, a provider without one is not looked at -- never this machine's home.
The review found `status`, `agents`, `plan`, `verbatim`, `audit reinjection` (and `wait`,
`whoami`, `image`, `index`) reading `$HOME/.claude` (or `$CLAUDE_CONFIG_DIR`) when the command
line named only `--codex-home`, and `worktrees scan` reading `~/.claude/sessions` the same way.

The data: a transcript the real Claude Code 2.1.258 client wrote (examples/claude-home), put where
the machine's default resolution finds it, next to the real Codex CLI's rollouts
(examples/codex-home).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
SRC = EX / "claude-home" / "projects" / "-tmp-ssift-rc-files-basic-work"
SID = "8414eb07-cca2-5cca-9059-e9baedac31e1"



@pytest.fixture(params=["HOME/.claude", "CLAUDE_CONFIG_DIR"])
def machine(request, tmp_path, monkeypatch):
    """This 'machine's' own Claude Code home, holding a real session."""
    if request.param == "HOME/.claude":
        monkeypatch.delenv("CLAUDE_CONFIG_DIR")
        root = Path(os.environ["HOME"]) / ".claude"
    else:
        root = Path(os.environ["CLAUDE_CONFIG_DIR"])
    (root / "projects").mkdir(parents=True)
    shutil.copytree(SRC, root / "projects" / "-x")
    assert (root / "projects" / "-x" / f"{SID}.jsonl").is_file()
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SID)  # whoami's source
    return root


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


CODEX = ("--codex-home", str(EX / "codex-home"))
EVERY_AGENT = [(("audit", "reinjection"), CODEX, 1, "Codex CLI"), (("index", "status"), CODEX, 0, "Codex CLI"),
               (("index", "update"), CODEX, 0, "Codex CLI"), (("index", "clear"), CODEX, 0, "Codex CLI"),
               (("audit", "reinjection"), ("--gemini-home", str(EX / "gemini-home")), 1, "Gemini CLI"),
               (("index", "status"), ("--root", f"codex={EX / 'codex-home'}"), 0, "Codex CLI")]
CODEX_DONE = "01a230e8-b40a-72c2-ab04-5c68941a624d"  # examples/codex-ground-truth/shell_and_patch.json: ended
LIVE = [(("status",), CODEX, 0), (("agents",), CODEX, 0), (("whoami",), CODEX, 1),
        (("wait", CODEX_DONE, "--for", "stop", "--timeout", "1"), CODEX, 0),
        (("status",), ("--root", f"codex={EX / 'codex-home'}"), 0), (("agents",), ("--gemini-home", str(EX / "gemini-home")), 0)]


@pytest.mark.parametrize("cmd,other,code", LIVE, ids=[" ".join(c) + " " + o[0] for c, o, _ in LIVE])
def test_the_live_questions_answer_for_the_provider_named_and_never_read_the_machines_claude_home(machine, cmd,
                                                                                                   other, code):
    """status/agents/wait/whoami read every agent now: naming only another provider's root answers
    for it (whoami: the machine's $CLAUDE_CODE_SESSION_ID names a session of an agent not looked
    at, so it cannot tell), and Claude Code is not looked at -- never this machine's home."""
    p = cli(*cmd, *other, "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == code, (p.returncode, p.stdout[-800:], p.stderr[-800:])
    assert SID not in p.stdout and str(machine) not in p.stdout  # nothing of the machine's home
    assert rows[0]["claude_home"] is None
    if cmd[0] == "whoami":
        w = next(r for r in rows if r["kind"] == "whoami")
        assert w["session_id"] is None and "Claude Code" in w["not_looked"]
    else:
        cc = next(c for c in rows[-1]["coverage"] if c["provider"] == "claude-code")
        assert cc["state"] == "not_looked"
    t = cli(*cmd, *other)
    assert t.returncode == code and SID not in t.stdout and str(machine) not in t.stdout


@pytest.mark.parametrize("cmd,other,code,named", EVERY_AGENT, ids=[" ".join(c) + " " + o[0] for c, o, _, _ in EVERY_AGENT])
def test_audit_and_index_answer_for_the_provider_named_and_never_read_the_machines_claude_home(machine, cmd, other,
                                                                                               code, named):
    """`audit reinjection` and `index` were refused (exit 2, "reads only Claude Code") when the command
    line named only another provider's root. They answer now: that provider is named with why its data
    holds nothing for them (its lacks["reinjection"]; nothing of it in the index), Claude Code is not
    looked at -- never this machine's home."""
    p = cli(*cmd, *other, "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == code, (p.returncode, p.stdout[-800:], p.stderr[-800:])
    assert SID not in p.stdout and str(machine) not in p.stdout  # nothing of the machine's home
    assert rows[0]["claude_home"] is None and "not_read" not in rows[0]
    s = rows[-1]
    if cmd[0] == "audit":
        assert list(s["lacks"]) == [named] and "writes no record of a file that changed on disk" in s["lacks"][named]
        cc = next(c for c in s["coverage"] if c["provider"] == "claude-code")
        assert cc["state"] == "not_looked" and s["lanes_read"] == 0
    else:
        assert [x["display"] for x in s["not_indexed"]] == [named] and s["not_indexed"][0]["sessions"] >= 1
    t = cli(*cmd, *other)
    assert t.returncode == code and SID not in t.stdout and str(machine) not in t.stdout
    assert f"{named}: " in t.stdout and "reads only Claude Code" not in t.stdout + t.stderr


@pytest.mark.parametrize("how", ["--claude-home", "--home", "--root"])
def test_a_named_claude_root_is_still_read(machine, tmp_path, how):
    """The control: the same session is found when Claude Code's root is named (so the refusal
    above is the rule at work, not a broken scope)."""
    home = tmp_path / "h"
    shutil.copytree(machine, home / ".claude")
    arg = {"--claude-home": ("--claude-home", str(home / ".claude")), "--home": ("--home", str(home)),
           "--root": ("--root", f"claude-code={home / '.claude'}")}[how]
    p = cli("status", *arg, "--codex-home", str(EX / "codex-home"), "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == 0, p.stderr
    assert rows[0]["claude_home"] == str(home / ".claude")
    assert [r["session_id"] for r in rows if r["kind"] == "session" and r["provider"] == "claude-code"] == [SID]


def test_worktrees_scan_with_only_codex_home_does_not_read_the_machines_claude_home(machine):
    # a registry row the real Claude Code 2.1.258 client wrote (examples/live-snapshots)
    row = EX / "live-snapshots" / "interactive" / "P1-turn1" / "sessions" / "20505.json"
    shutil.copytree(row.parent, machine / "sessions")
    reg_sid = json.loads(row.read_text())["sessionId"]
    for sub in ("scan", "sweep"):
        p = cli("worktrees", sub, "--codex-home", str(EX / "codex-home"), "--format", "json")
        rows = [json.loads(x) for x in p.stdout.splitlines()]
        head, summ = rows[0], rows[-1]
        assert head["claude_home"] is None and head["claude_home_source"] == "not looked at (pass --claude-home)"
        assert head["codex_home"] == str(EX / "codex-home")
        cl = [x for x in summ["listings"] if x["harness"] == "claude-code"][0]
        assert cl["state"] == "not looked at (pass --claude-home)" and cl["entries"] is None and cl["path"] == ""
        assert str(machine) not in p.stdout and reg_sid not in p.stdout
        # the sweep cannot prove liveness without that listing: it stops, and says how to include it
        stop = summ["sweep_would_stop"] if sub == "scan" else summ["stopped"]
        assert stop == "the claude-code listing of running sessions is not looked at (pass --claude-home)"
        t = cli("worktrees", sub, "--codex-home", str(EX / "codex-home"))
        assert "harness listing claude-code: not looked at (pass --claude-home)\n" in t.stdout, t.stdout
        assert str(machine) not in t.stdout and reg_sid not in t.stdout


def test_worktrees_scan_with_only_claude_home_does_not_read_the_machines_codex_home(tmp_path, monkeypatch):
    cx = Path(os.environ["CODEX_HOME"])
    (cx / "thread-writer-locks").mkdir(parents=True)
    # hand-made: Codex's thread lock is an empty file named <thread id>.lock (docs/worktrees.md);
    # the examples hold none (Codex leaves them under its own home, which the harness discards)
    (cx / "thread-writer-locks" / "t.lock").write_text("")
    p = cli("worktrees", "scan", "--claude-home", str(EX / "claude-home"), "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows[0]["codex_home"] is None and rows[0]["codex_home_source"] == "not looked at (pass --codex-home)"
    cxl = [x for x in rows[-1]["listings"] if x["harness"] == "codex"][0]
    assert cxl["state"] == "not looked at (pass --codex-home)" and cxl["entries"] is None
    assert str(cx) not in p.stdout




def test_image_over_home_reads_every_provider_and_lists_the_crush_picture():
    """`image --home examples/home` read Claude Code only (its one image) while a Crush session holds
    a picture (the sample's logo.png, a ``binary`` part); it reads every provider now: nothing is
    `not_read`, both images are listed, and the providers whose readers read no image are named."""
    p = cli("image", "--home", str(EX / "home"), "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == 0, p.stderr
    assert "not_read" not in rows[0]
    ims = [r for r in rows if r["kind"] == "image"]
    assert {r["provider"] for r in ims} == {"claude-code", "crush"}
    crush = [r for r in ims if r["provider"] == "crush" and r["size"] is not None]
    assert len(crush) == 1 and crush[0]["media_type"] == "image/png" and crush[0]["path"].endswith("/logo.png")
    # every provider's reader reads images now (Gemini 8c237c8, opencode/Kilo b4ea8a4, Copilot c0ca9dd):
    # none lacks the capability, and every one was read
    assert rows[-1]["lacks"] is None, rows[-1]
    assert {c["provider"]: c["state"] for c in rows[-1]["coverage"] if c["state"] != "ok"} == {}


OTHERS = ["Codex CLI", "Gemini CLI", "opencode", "Crush", "pi", "Qwen Code", "GitHub Copilot CLI", "Kilo Code"]


@pytest.mark.parametrize("cmd", [("audit", "reinjection"), ("index", "status")], ids=["audit reinjection", "index status"])
def test_every_other_agent_named_by_home_is_answered_for(cmd):
    """`--home examples/home` names all nine sample corpora; these commands read Claude Code only and
    said so (`not_read`). They read every agent now: each other one is named with why its data holds
    nothing for them, never left out in silence."""
    p = cli(*cmd, "--home", str(EX / "home"), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert "not_read" not in rows[0] and "not read" not in p.stderr
    s = rows[-1]
    got = list(s["lacks"]) if cmd[0] == "audit" else [x["display"] for x in s["not_indexed"]]
    assert got == OTHERS
    t = cli(*cmd, "--home", str(EX / "home"))
    assert t.returncode == 0 and all(f"\n{o}: " in "\n" + t.stdout for o in OTHERS)
    # --provider narrows: the others are not looked at, so none is named
    n = cli(*cmd, "--home", str(EX / "home"), "--provider", "claude-code", "--format", "json")
    s = json.loads(n.stdout.splitlines()[-1])
    assert n.returncode == 0
    if cmd[0] == "audit":
        assert s["lacks"] is None
    else:
        assert s["not_indexed"] == []
    one = cli(*cmd, "--home", str(EX / "home"), "--provider", "pi", "--format", "json")
    assert one.returncode == (1 if cmd[0] == "audit" else 0), one.stderr  # audit: no Claude Code lane read
    s = json.loads(one.stdout.splitlines()[-1])
    assert (list(s["lacks"]) if cmd[0] == "audit" else [x["display"] for x in s["not_indexed"]]) == ["pi"]


@pytest.mark.parametrize("cmd,status", [(("plan",), 0), (("image",), 1)])
def test_plan_and_image_with_another_providers_root_answer_for_it_and_never_read_the_machines_claude_home(
        machine, cmd, status):
    """`plan` and `image` read every provider now (they read only Claude Code before): with only
    --codex-home named, they answer for Codex CLI's sessions (a row per session for `plan`, none of
    these rollouts holds an image) and Claude Code is not looked at."""
    p = cli(*cmd, *CODEX, "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == status, (p.returncode, p.stdout[-800:], p.stderr[-800:])
    cov = {c["provider"]: c for c in rows[-1]["coverage"]}
    assert cov["claude-code"]["state"] == "not_looked" and cov["codex"]["state"] == "ok"
    assert SID not in p.stdout and str(machine) not in p.stdout  # nothing of the machine's home
    if cmd == ("plan",):
        assert {r["provider"] for r in rows if r["kind"] == "plan"} == {"codex"}



def test_verbatim_naming_only_another_providers_root_never_reads_the_machines_claude_home(machine):
    """`verbatim` asks every provider looked at (it no longer reads only Claude Code): with only
    --codex-home named, the machine's Claude Code session is not found, and the error names what
    was looked at and the flag that would include Claude Code."""
    p = cli("verbatim", SID[:8], *CODEX, "--format", "json")
    assert p.returncode == 2, (p.returncode, p.stdout[-800:], p.stderr[-800:])
    err = [json.loads(x) for x in p.stdout.splitlines()][-1]["error"]
    assert err["kind"] == "target", err
    assert "looked at: Codex CLI" in err["message"] and "Claude Code (pass --claude-home or --home DIR)" in err["message"]
    assert SID not in p.stdout and str(machine) not in p.stdout
