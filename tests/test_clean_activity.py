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
import time
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


def _full(g) -> tuple:
    """A gate whole: its name, verdict, reason, the detail a person reads and the evidence rows
    (mutation testing: the name, the details and the evidence keys of most reasons were unchecked)."""
    return g.name, g.proven, g.reason, g.detail, g.evidence


def _stop(*ps):
    for p in ps:
        p.kill()
        p.wait()


def test_a_claude_process_in_a_gemini_project_blocks_no_gemini_session(world, tmp_path, mine_only):
    home, work, _cw = world
    g0, _ = _gates(home)
    assert _full(g0[("gemini-cli", GEM)]) == ("activity", True, "no_agent_working_in_this_project",
                                              "no Gemini CLI process works in this project", [])
    assert _full(g0[("claude-code", FB)]) == (
        "activity", True, "no_agent_working_in_this_project",
        "no Claude Code process works in this project (claude-code registry absent: proven at project level only)", [])
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
    # the evidence names the process as /proc shows it (mutation testing: a wrong key or argv
    # index, and a detail without the agent's name, passed every test)
    assert g[("gemini-cli", GEM)].evidence == [{"pid": p.pid, "cwd": os.path.realpath(work),
                                               "argv0": str(tmp_path / "bin" / "gemini"),
                                               "this_commands_caller": False}]
    assert g[("gemini-cli", GEM)].detail == f"Gemini CLI pid {p.pid} works in this project"
    assert _full(g[("gemini-cli", GEM)])[:3] == ("activity", False, "agent_working_in_this_project")
    # every other Gemini session: proven, and the process elsewhere counted (mutation testing: the
    # count dropped from the detail passed)
    rest = [_full(v) for k, v in g.items() if k[0] == "gemini-cli" and k != ("gemini-cli", GEM)]
    assert rest and rest == [("activity", True, "no_agent_working_in_this_project",
                              "no Gemini CLI process works in this project (1 elsewhere)", [])] * len(rest)


def test_a_codex_process_blocks_every_codex_session_and_nothing_else(world, tmp_path, mine_only):
    home, work, _cw = world
    g0, _ = _gates(home)
    n = sum(1 for k in g0 if k[0] == "codex")
    assert n and [_full(v) for k, v in g0.items() if k[0] == "codex"] == [
        ("activity", True, "provider_not_running", "no Codex CLI process is running", [])] * n
    p = fake_process(tmp_path, "codex", work)  # even inside a Gemini project
    try:
        g, _ = _gates(home)
    finally:
        _stop(p)
    codex = {k for k in g if k[0] == "codex"}
    assert codex and {k for k, v in g.items() if not v.proven} == codex
    assert [_full(g[k]) for k in codex] == [(
        "activity", False, "provider_is_running", f"Codex CLI pid {p.pid} is running and Codex CLI records no "
        "project per session", [{"pid": p.pid, "cwd": os.path.realpath(work), "argv0": str(tmp_path / "bin" / "codex"),
                                 "this_commands_caller": False}])] * len(codex)


def test_a_claude_process_blocks_its_project_unless_a_registry_row_names_its_session(world, tmp_path, mine_only):
    home, _work, cw = world
    p = fake_process(tmp_path, "claude", cw)
    try:
        g, _ = _gates(home)
        working = ("activity", False, "agent_working_in_this_project",
                   f"Claude Code pid {p.pid} works in this project and no listing row names the session it writes",
                   [{"pid": p.pid, "cwd": str(cw), "argv0": str(tmp_path / "bin" / "claude"),
                     "this_commands_caller": False, "note": None}])
        assert _full(g[("claude-code", FB)]) == working
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
        assert _full(g[("claude-code", INTER)]) == (
            "activity", False, "session_is_live", f"live claude-code registry row {p.pid}.json (pid {p.pid}, matched)",
            [{"source": "claude-code registry", "path": str(sd / f"{p.pid}.json"), "pid": p.pid, "pids": [p.pid],
              "probe": "alive", "guard": "matched", "detail": f"alive (start-time guard matched: {start} ticks since boot)",
              "this_commands_caller": False}])
        assert _full(g[("claude-code", FB)]) == (
            "activity", True, "no_live_session", "claude-code registry present (1 live row(s), none for this session); "
            "1 client process(es) here are other sessions, each blocks only its own",
            [{"pid": p.pid, "cwd": str(cw), "argv0": str(tmp_path / "bin" / "claude"), "this_commands_caller": False,
              "is_session": INTER, "blocks": "only that session"}])
        # the row names files_basic itself
        row["sessionId"] = FB
        (sd / f"{p.pid}.json").write_text(json.dumps(row))
        g, _ = _gates(home)
        assert g[("claude-code", FB)].reason == "session_is_live" and g[("claude-code", INTER)].proven
        # a stale row (start time not matching: the pid reused) naming INTER does not account for the
        # process as INTER: it blocks files_basic again (mutation testing: 'keeps or session_id' passed)
        row.update(sessionId=INTER, procStart=str(start + 10_000))
        (sd / f"{p.pid}.json").write_text(json.dumps(row))
        g, _ = _gates(home)
        assert _full(g[("claude-code", FB)]) == working and g[("claude-code", INTER)].proven
        row["sessionId"] = FB
        # a start time that does not match: the pid was reused, the row is stale
        row["procStart"] = str(start + 10_000)
        (sd / f"{p.pid}.json").write_text(json.dumps(row))
        g, _ = _gates(home)
        assert _full(g[("claude-code", FB)]) == working  # the process is still there
    finally:
        _stop(p)
    g, _ = _gates(home)
    assert all(v.proven for v in g.values()), "a row whose owner is gone blocks nothing (REG-013)"
    assert _full(g[("claude-code", FB)]) == ("activity", True, "no_live_session",
                                             "claude-code registry present (0 live row(s), none for this session)", [])


def test_the_session_running_this_command_blocks_only_itself(world, tmp_path, mine_only):
    home, _work, _cw = world
    g, rep = _gates(home, env={"CLAUDE_CODE_SESSION_ID": INTER})
    assert _full(g[("claude-code", INTER)]) == (
        "activity", False, "session_is_live", f"the session running this command (CLAUDE_CODE_SESSION_ID = {INTER})",
        [{"source": "CLAUDE_CODE_SESSION_ID"}])
    assert {k for k, v in g.items() if not v.proven} == {("claude-code", INTER)}
    assert rep.world.self_json()["claude_code_session_id"] == INTER
    assert rep.world.self_json()["sessions"] == [{"provider": "claude-code", "session_id": INTER, "source": "CLAUDE_CODE_SESSION_ID"}]
    # every provider looked at has its key, null where its environment names no session (mutation
    # testing: only the providers with a caller kept theirs)
    assert rep.world.self_json()["codex_session_id"] is None
    assert rep.world.self_json()["gemini_cli_session_id"] is None


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


# --- every way a client is launched; recognition that fails blocks ------------------------------


def _node_client(tmp_path: Path, cwd: Path, how: str) -> subprocess.Popen:
    """A REAL node process launched the way npm installs the Claude Code client: its script at
    the package's path (`<prefix>/lib/node_modules/@anthropic-ai/claude-code/cli.js`, what
    `npm i -g` makes) or a local install's `node_modules/.bin/claude` (a symlink whose
    `#!/usr/bin/env node` line the kernel turns into `node <path>/.bin/claude`). The script is
    ours (it only waits): the command line /proc shows is the client's."""
    pkg = tmp_path / how / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
    pkg.mkdir(parents=True, exist_ok=True)
    cli = pkg / "cli.js"
    cli.write_text("#!/usr/bin/env node\nconsole.log('ready'); setInterval(() => {}, 1000);\n")
    cli.chmod(0o755)
    if how == "global":
        argv = ["node", str(cli)]
    else:
        b = tmp_path / how / "lib" / "node_modules" / ".bin"
        b.mkdir(exist_ok=True)
        (b / "claude").symlink_to("../@anthropic-ai/claude-code/cli.js")
        argv = [str(b / "claude")]
    p = subprocess.Popen(argv, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    assert p.stdout.readline() == b"ready\n"
    return p


@pytest.mark.parametrize("how", ["global", "local-bin"])
def test_a_claude_client_launched_through_node_blocks_its_project(world, tmp_path, mine_only, how):
    """Before: only argv[0]'s basename was checked (`node`), so the running client was not
    recognised and its project's sessions were proven idle (and removed while it ran)."""
    home, _work, cw = world
    p = _node_client(tmp_path, cw, how)
    try:
        cmd = Path(f"/proc/{p.pid}/cmdline").read_bytes().split(b"\0")
        assert os.path.basename(cmd[0].decode()) == "node"  # what /proc shows: the interpreter first
        g, rep = _gates(home)
    finally:
        _stop(p)
    assert g[("claude-code", FB)].reason == "agent_working_in_this_project"
    assert g[("claude-code", FB)].evidence[0]["pid"] == p.pid
    assert {k for k, v in g.items() if not v.proven} == {("claude-code", FB)}
    v = next(x for x in rep.verdicts if x.session_id == FB)
    assert v.eligible is False and v.blocked_by == "live"


LAUNCHES = [  # command lines as /proc shows them for each way the client is started (HAND-MADE
    # argv lists: the launchers are not installed here; the forms are npm's, npx's, bun's and
    # the native installer's, each asserted one by one)
    (["/home/u/.local/share/claude/versions/2.1.258", "-p", "x"], True),  # native installer
    (["claude", "--resume"], True),
    (["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"], True),
    (["/usr/bin/node", "--no-warnings", "--max-old-space-size", "4096", "/x/node_modules/.bin/claude"], True),
    (["node", "/usr/bin/npx", "-y", "@anthropic-ai/claude-code@latest", "-p", "hi"], True),
    (["npx", "@anthropic-ai/claude-code"], True),
    (["node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "exec", "--", "@anthropic-ai/claude-code"], True),
    (["pnpm", "dlx", "@anthropic-ai/claude-code"], True),
    (["bunx", "@anthropic-ai/claude-code"], True),
    (["bun", "x", "@anthropic-ai/claude-code"], True),
    (["bun", "run", "/p/node_modules/@anthropic-ai/claude-code/cli.js"], True),
    (["timeout", "600", "claude", "-p", "x"], True),
    (["env", "FOO=1", "node", "/opt/@anthropic-ai/claude-code/cli.js"], True),
    (["nice", "-n", "5", "claude"], True),
    (["bash", "/home/u/bin/claude"], True),
    (["node", "/srv/app/server.js"], False),
    (["node"], False),
    (["node", "-e", "require('/x/@anthropic-ai/claude-code/cli.js')"], False),
    (["vim", "claude-notes.md"], False),
    (["less", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"], False),
    (["grep", "-r", "claude", "."], False),
    (["npx", "prettier", "claude.md"], False),
    (["npx", "@github/copilot-language-server"], False),  # another package of Copilot's scope
    (["vim", "copilot-notes.md"], False),
    (["less", "/usr/lib/node_modules/@kilocode/cli/bin/kilo"], False),
]


def test_every_launch_form_of_the_client_is_recognised_and_no_other_program_is():
    from sessionsift.providers import get

    cc = get("claude-code")
    got = [(argv, cc.is_client_argv(argv)) for argv, _ in LAUNCHES]
    assert got == LAUNCHES


def test_a_recognition_that_raises_blocks_every_session_of_that_provider(world, tmp_path, mine_only, monkeypatch):
    """Before: clean/activity.py turned a reader's exception into "not that client" (fail-open in
    a destructive command): the Gemini session of the project the process works in was proven
    idle."""
    from sessionsift.providers.gemini import GeminiCli

    home, work, _cw = world
    p = fake_process(tmp_path, "gemini", work)

    def broken(cls, argv):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(GeminiCli, "is_client_argv", classmethod(broken))
    try:
        g, _ = _gates(home)
        more = [fake_process(tmp_path, "gemini", work) for _ in range(5)]  # six processes: five named
        try:
            g6, _ = _gates(home)
        finally:
            _stop(*more)
    finally:
        _stop(p)
    ev6 = g6[("gemini-cli", GEM)].evidence
    assert len(ev6) == 5 and {e["pid"] for e in ev6} < {p.pid, *(m.pid for m in more)}
    gem = {k: v for k, v in g.items() if k[0] == "gemini-cli"}
    assert gem and {v.reason for v in gem.values()} == {"client_recognition_failed"}
    assert not any(v.proven for v in gem.values())
    assert "RuntimeError: reader bug" in g[("gemini-cli", GEM)].detail
    assert _full(g[("gemini-cli", GEM)]) == (
        "activity", False, "client_recognition_failed",
        f"Gemini CLI's recognition of pid {p.pid} raised (RuntimeError: reader bug): any process may be its client",
        [{"pid": p.pid, "cwd": os.path.realpath(work), "argv0": str(tmp_path / "bin" / "gemini"),
          "this_commands_caller": False, "note": "RuntimeError: reader bug"}])
    assert all(v.proven for k, v in g.items() if k[0] != "gemini-cli")


def test_a_project_test_that_raises_blocks(world, tmp_path, mine_only, monkeypatch):
    """A reader's `works_in` that raises cannot say the process works elsewhere: it blocks
    (before: `_encodes_to`'s exception read as "not this project")."""
    from sessionsift.providers.claude import ClaudeCode

    home, _work, _cw = world
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = fake_process(tmp_path, "claude", elsewhere)

    def broken(self, ref, cwd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(ClaudeCode, "works_in", broken)
    try:
        g, _ = _gates(home)
    finally:
        _stop(p)
    cl = {k: v for k, v in g.items() if k[0] == "claude-code"}
    assert cl and not any(v.proven for v in cl.values())
    assert g[("claude-code", FB)].evidence[0]["note"] == (
        "whether it works in this project cannot be told (OSError: [Errno 5] Input/output error)")


def test_a_gemini_session_in_two_project_folders_is_checked_against_both(tmp_path, mine_only):
    """Session 84c1eab7 (gem-legacy-migrated, written by the real client) has files in its
    short-name dir and in the older hash-named dir. RELOCATED: the short-name dir's owner is a
    temp dir A and the hash dir is renamed to the sha256 of another temp dir B (projects.json
    names both), bytes untouched - one id in two projects. A client working in B may be writing
    the hash dir's copy. Before: only the chosen file's project (A) was checked: proven idle."""
    import hashlib

    home = corpus(tmp_path / "h", (".gemini",))
    a, b = tmp_path / "work" / "a", tmp_path / "work" / "b"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    g = home / ".gemini"
    pj = g / "projects.json"
    d = json.loads(pj.read_text())
    old = next(k for k, v in d["projects"].items() if v == "gem-legacy-migrated")
    del d["projects"][old]
    d["projects"][str(a)] = "gem-legacy-migrated"
    d["projects"][str(b)] = "gem-legacy-moved"
    pj.write_text(json.dumps(d))
    (g / "tmp" / "gem-legacy-migrated" / ".project_root").write_text(str(a))
    os.rename(g / "tmp" / hashlib.sha256(old.encode()).hexdigest(), g / "tmp" / hashlib.sha256(str(b).encode()).hexdigest())
    sid = "84c1eab7-c1c5-42eb-82aa-6a1201d038b2"
    sv = survey(RootRequest(home=str(home)))
    ref = next(r for e in sv.entries if e.name == "gemini-cli" for r in e.sessions if r.session_id == sid)
    assert ref.project == str(a) and str(b) in {o["project"] for o in ref.extra["other_files"]}
    gates, _ = _gates(home)
    assert gates[("gemini-cli", sid)].proven
    p = fake_process(tmp_path, "gemini", b)
    try:
        gates, _ = _gates(home)
    finally:
        _stop(p)
    assert gates[("gemini-cli", sid)].reason == "agent_working_in_this_project"
    assert gates[("gemini-cli", sid)].evidence[0]["pid"] == p.pid


OTHER_LAUNCHES = {  # HAND-MADE argv lists in the forms each client's own launcher produces (npm bin
    # links and package scripts; the native binaries; package runners); the reader's own measured
    # forms are asserted in its realclient tests
    "codex": [["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js", "exec", "x"],
              ["/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex", "exec"],
              ["npx", "-y", "@openai/codex", "exec", "x"]],
    "gemini-cli": [["node", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js", "-p", "x"],
                   ["node", "--max-old-space-size=8192", "/x/node_modules/.bin/gemini"],
                   ["npx", "@google/gemini-cli"]],
    "pi": [["node", "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"], ["pi", "-p", "x"],
           ["bunx", "@mariozechner/pi-coding-agent"]],
    "qwen-code": [["node", "/usr/lib/node_modules/@qwen-code/qwen-code/cli.js"], ["npx", "@qwen-code/qwen-code"]],
    "opencode": [["/home/u/.opencode/bin/opencode", "run", "x"], ["npx", "opencode-ai", "run"]],
    "crush": [["/usr/local/bin/crush", "run", "x"], ["timeout", "60", "crush"]],
    # Copilot CLI 1.0.102 as npm installs it (the harness's cache): @github/copilot's bin is
    # {"copilot": "npm-loader.js"} (a node script that spawnSyncs the platform package's binary);
    # @github/copilot-linux-x64's bin is {"copilot-linux-x64": "copilot"} (the native executable)
    "copilot-cli": [["/c/node_modules/@github/copilot-linux-x64/copilot", "-p", "x"],
                    ["/c/node_modules/.bin/copilot-linux-x64"],
                    ["node", "/usr/lib/node_modules/@github/copilot/npm-loader.js", "-p", "x"],
                    ["node", "/x/node_modules/.bin/copilot"],
                    ["npx", "-y", "@github/copilot@1.0.102", "-p", "x"], ["bunx", "@github/copilot"],
                    ["timeout", "600", "copilot", "-p", "x"]],
    # Kilo Code 7.7.7: @kilocode/cli's bin is {"kilo": "./bin/kilo", "kilocode": "./bin/kilo"} (a node
    # wrapper running the platform binary, which its postinstall copies beside it as bin/.kilo; npm
    # view); the binary is @kilocode/cli-linux-x64/bin/kilo (the harness's cache)
    "kilo-code": [["/k/node_modules/@kilocode/cli-linux-x64/bin/kilo", "run", "x"],
                  ["/usr/lib/node_modules/@kilocode/cli/bin/.kilo", "run"],
                  ["node", "/usr/lib/node_modules/@kilocode/cli/bin/kilo", "run", "x"],
                  ["node", "/x/node_modules/.bin/kilocode"],
                  ["npx", "-y", "@kilocode/cli@7.7.7", "run", "x"], ["bunx", "@kilocode/cli"],
                  ["nice", "-n", "5", "kilo"]],
}


@pytest.mark.parametrize("name", sorted(OTHER_LAUNCHES))
def test_every_client_is_recognised_however_it_is_launched_and_only_by_itself(name):
    from sessionsift.providers import get

    for argv in OTHER_LAUNCHES[name]:
        assert get(name).is_client_argv(argv), (name, argv)
        others = [o for o in OTHER_LAUNCHES if o != name and get(o).is_client_argv(argv)]
        assert others == [], (argv, others)
        assert not get("claude-code").is_client_argv(argv), argv
    for argv, _ in LAUNCHES:  # Claude Code's forms, and programs that are no client
        assert not get(name).is_client_argv(argv), (name, argv)


# --- in-process twins and the branches the tests above did not reach (mutation testing:
# benchmarks/mutation.py clean_gates over all 542 mutants of clean/activity.py, 441 killed; mutmut
# counts only what runs in this process, so the subprocess test above held none of the caller walk)


def _orphan(tmp_path: Path, name: str, cwd: Path) -> int:
    """A real process named like the client (fake_process's symlink to sleep), the child of a shell
    whose own parent exited: the kernel hands the shell to init (or the nearest subreaper), so the
    walk up from the client passes the shell and reaches the top of the real process table.
    Returns the client's pid (killing it ends the shell)."""
    fake_process(tmp_path, name, cwd, seconds=0).wait()  # makes <tmp>/bin/<name>
    pidfile = tmp_path / f"{name}.pid"
    subprocess.run(["sh", "-c", '( "$0" 120 </dev/null >/dev/null 2>&1 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; wait ) '
                    '</dev/null >/dev/null 2>&1 &', str(tmp_path / "bin" / name), str(pidfile)],
                   cwd=str(cwd), check=True, timeout=30)
    for _ in range(3000):
        if pidfile.exists():
            return int(pidfile.read_text())
        time.sleep(0.01)
    raise AssertionError("the shell never started the client")


def _up(pid: int) -> list[int]:
    """The ancestors of ``pid`` read from /proc here (not through the code under test), init left out."""
    out = []
    while pid > 1:
        out.append(pid)
        pid = int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
    return out


def test_a_client_process_calling_this_command_is_walked_up_to_init_and_named(world, tmp_path, monkeypatch):
    """The in-process twin of test_this_commands_caller_is_named_and_blocks_what_it_covers: this
    command's parent is a real process named claude working in files_basic's project (its parent
    gone, so the walk runs up the real table to init). HAND-MADE: os.getppid answers that process
    (pytest cannot be started by it)."""
    home, _work, cw = world
    pid = _orphan(tmp_path, "claude", cw)
    try:
        monkeypatch.setattr(A.os, "getppid", lambda: pid)
        g, rep = _gates(home)
        chain = _up(pid)
        assert rep.world.ancestors == chain and chain[0] == pid and len(chain) >= 2 and 1 not in chain
        me = [a for a in rep.world.self_json()["agent_ancestors"] if a["pid"] == pid]
        assert me == [{"pid": pid, "providers": ["claude-code"], "cwd": str(cw)}]
        ev = {"pid": pid, "cwd": str(cw), "argv0": str(tmp_path / "bin" / "claude"), "this_commands_caller": True}
        assert _full(g[("claude-code", FB)]) == (
            "activity", False, "agent_working_in_this_project",
            f"Claude Code pid {pid} works in this project and no listing row names the session it writes "
            "(this command's own caller)", [{**ev, "note": None}])
        # its environment names INTER: the caller is INTER, files_basic is not blocked by it
        g, _ = _gates(home, env={"CLAUDE_CODE_SESSION_ID": INTER})
        assert _full(g[("claude-code", FB)]) == (
            "activity", True, "no_agent_working_in_this_project",
            "no Claude Code process works in this project (claude-code registry absent: proven at project level only)",
            [{**ev, "is_session": INTER, "blocks": "only that session"}])
    finally:
        os.kill(pid, 9)


def test_a_held_codex_thread_lock_makes_its_session_live(world, tmp_path, mine_only):
    """Codex CLI's listing of running sessions is the flock its process holds on
    thread-writer-locks/<thread id>.lock (measured with the real client in test_clean_realclient.py).
    HAND-MADE holder: a process named codex (python behind the name) holding that lock on a real
    sample thread's id; no client holds a chosen lock in this process's test offline."""
    home, work, _cw = world
    tid = "01a230e8-b40a-72c2-ab04-5c68941a624d"
    locks = home / ".codex" / "thread-writer-locks"
    locks.mkdir()
    lock = locks / f"{tid}.lock"
    exe = tmp_path / "bin" / "codex"
    exe.parent.mkdir()
    exe.symlink_to(sys.executable)
    p = subprocess.Popen([str(exe), "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                          "fcntl.flock(f, fcntl.LOCK_EX); print('ready', flush=True); time.sleep(120)", str(lock)],
                         cwd=str(work), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"ready\n"
        g, _ = _gates(home)
    finally:
        _stop(p)
    assert _full(g[("codex", tid)]) == (
        "activity", False, "session_is_live", f"live codex thread locks row {tid}.lock (pid {p.pid})",
        [{"source": "codex thread locks", "path": str(lock), "pid": p.pid, "pids": [p.pid], "probe": "held",
          "guard": None, "detail": f"thread-writer lock held by pid(s) [{p.pid}]", "this_commands_caller": False}])
    other = [v.reason for k, v in g.items() if k[0] == "codex" and k[1] != tid]
    assert other and set(other) == {"provider_is_running"}


def _blind(pid: int, monkeypatch):
    """The snapshot with ``pid``'s cwd unreadable, as /proc shows another user's process to a
    reader that is not root. HAND-MADE: these tests run as root, which reads every cwd."""
    real = P.snapshot

    def snap():
        t = real()
        t.procs = [P.Proc(p.pid, p.ppid, p.start_ticks, None if p.pid == pid else p.cwd, p.argv)
                   for p in t.procs if p.ppid == os.getpid()]
        return t

    monkeypatch.setattr(A.P, "snapshot", snap)


def _first_two(tmp_path: Path, name: str, cwd: Path) -> tuple[subprocess.Popen, subprocess.Popen]:
    """Two processes named ``name`` in ``cwd``, in the order the process table lists them."""
    a, b = fake_process(tmp_path, name, cwd), fake_process(tmp_path, name, cwd)
    order = [p.pid for p in P.snapshot().procs if p.pid in (a.pid, b.pid)]
    return (a, b) if order == [a.pid, b.pid] else (b, a)


def test_a_client_process_whose_cwd_cannot_be_read_blocks_every_session_it_could_write(world, tmp_path, monkeypatch):
    """Two client processes each, the first one the table lists blind: the second is still looked
    at (mutation testing: stopping at the blind one passed)."""
    home, work, cw = world
    (c, c2), (gm, gm2) = _first_two(tmp_path, "claude", cw), _first_two(tmp_path, "gemini", work)
    try:
        _blind(c.pid, monkeypatch)
        g, _ = _gates(home)
        _blind(gm.pid, monkeypatch)
        g2, _ = _gates(home)
    finally:
        _stop(c, c2, gm, gm2)
    ev = {"cwd": None, "argv0": str(tmp_path / "bin" / "claude"), "this_commands_caller": False}
    assert _full(g[("claude-code", FB)]) == (
        "activity", False, "provider_is_running", "a Claude Code process whose cwd could not be read",
        [{"pid": c.pid, **ev, "note": "cwd unreadable"}, {"pid": c2.pid, **ev, "cwd": str(cw), "note": None}])
    cl = [_full(v) for k, v in g.items() if k[0] == "claude-code" and k[1] != FB]
    assert cl and cl == [("activity", False, "provider_is_running", "a Claude Code process whose cwd could not be read",
                          [{"pid": c.pid, **ev, "note": "cwd unreadable"}])] * len(cl)
    gev = {"cwd": None, "argv0": str(tmp_path / "bin" / "gemini"), "this_commands_caller": False}
    assert _full(g2[("gemini-cli", GEM)]) == (
        "activity", False, "agent_working_in_this_project", f"Gemini CLI pid {gm2.pid} works in this project",
        [{"pid": gm2.pid, **gev, "cwd": os.path.realpath(work)}])
    gem = [_full(v) for k, v in g2.items() if k[0] == "gemini-cli" and k[1] != GEM]
    assert gem and gem == [("activity", False, "provider_is_running",
                            f"Gemini CLI pid {gm.pid} is running and its cwd could not be read",
                            [{"pid": gm.pid, **gev}])] * len(gem)


def test_a_gemini_project_test_that_raises_blocks_and_says_why(world, tmp_path, mine_only, monkeypatch):
    from sessionsift.providers.gemini import GeminiCli

    home, work, _cw = world
    p = fake_process(tmp_path, "gemini", work)

    def broken(self, ref, cwd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(GeminiCli, "works_in", broken)
    try:
        g, _ = _gates(home)
    finally:
        _stop(p)
    gem = [_full(v) for k, v in g.items() if k[0] == "gemini-cli"]
    assert gem and gem == [(
        "activity", False, "agent_working_in_this_project", f"Gemini CLI pid {p.pid} works in this project",
        [{"pid": p.pid, "cwd": os.path.realpath(work), "argv0": str(tmp_path / "bin" / "gemini"),
          "this_commands_caller": False,
          "note": "whether it works in this project cannot be told (OSError: [Errno 5] Input/output error)"}])] * len(gem)


def test_a_session_whose_project_is_unknown_is_blocked_by_any_client_process(tmp_path, mine_only):
    """A Gemini home whose project registry (projects.json) and gem-resumed's .project_root are
    gone (a home copied without them): that session records no project, so any Gemini CLI process
    may be writing it. The sample's bytes are otherwise the real client's."""
    home = corpus(tmp_path / "h", (".gemini",))
    (home / ".gemini" / "projects.json").unlink()
    (home / ".gemini/tmp/gem-resumed/.project_root").unlink()
    sv = survey(RootRequest(home=str(home)))
    e = next(x for x in sv.entries if x.name == "gemini-cli")
    ref = next(r for r in e.sessions if r.session_id == GEM)
    assert e.provider.projects_of(ref) == []
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = fake_process(tmp_path, "gemini", elsewhere)
    try:
        g, _ = _gates(home)
    finally:
        _stop(p)
    assert _full(g[("gemini-cli", GEM)]) == (
        "activity", False, "provider_is_running", f"Gemini CLI pid {p.pid} is running and this session records no project",
        [{"pid": p.pid, "cwd": str(elsewhere), "argv0": str(tmp_path / "bin" / "gemini"), "this_commands_caller": False}])


def test_the_callers_are_read_from_this_processs_environment_and_a_shell_tool_names_none(world, monkeypatch):
    """observe() without env reads os.environ; Gemini CLI's shell tool exports GEMINI_CLI=1 and no
    session id (gemini/live.py): no caller is recorded for it."""
    from sessionsift.providers import get

    home, _work, _cw = world
    provs = {n: get(n) for n in ("claude-code", "gemini-cli")}
    roots = [("claude-code", str(home / ".claude"))]
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", INTER)
    monkeypatch.setenv("GEMINI_CLI", "1")
    monkeypatch.delenv("GEMINI_SESSION_ID", raising=False)
    w = A.observe(provs, roots)
    assert (w.callers, w.caller_errors) == ({"claude-code": (INTER, "CLAUDE_CODE_SESSION_ID")}, {})
    assert w.self_json()["sessions"] == [{"provider": "claude-code", "session_id": INTER,
                                          "source": "CLAUDE_CODE_SESSION_ID"}]


def test_a_session_of_a_root_not_scanned_is_proven_at_project_level_only(world, mine_only):
    from sessionsift.providers import get

    home, _work, _cw = world
    cc = get("claude-code")
    sv = survey(RootRequest(home=str(home)))
    ref = next(r for e in sv.entries if e.name == "claude-code" for r in e.sessions if r.session_id == FB)
    w = A.observe({"claude-code": cc}, [], env={})
    assert _full(A.gate(w, cc, ref, None)) == (
        "activity", True, "no_agent_working_in_this_project",
        "no Claude Code process works in this project (listing not scanned: proven at project level only)", [])


def test_held_open_names_the_holder_and_proves_nothing_where_it_cannot_look(tmp_path):
    """HAND-MADE holder (a python process opening a file and waiting), as test_clean_held_open."""
    f = tmp_path / "t.jsonl"
    f.write_text("{}\n")
    assert A.held_open(None, []) is None and A.held_open(P.OpenFiles(available=False, error="x"), []) is None
    assert _full(A.held_open(None, [str(f)])) == (
        "activity", False, "open_files_not_observable",
        "which processes hold the session's files open cannot be read (not taken)", [])
    assert _full(A.held_open(P.OpenFiles(available=False, error="/proc unreadable: x"), [str(f)])) == (
        "activity", False, "open_files_not_observable",
        "which processes hold the session's files open cannot be read (/proc unreadable: x)", [])
    hs = [subprocess.Popen([sys.executable, "-c", "import sys, time; f = open(sys.argv[1], 'a'); "
                            "print('ready', flush=True); time.sleep(120)", str(f)], stdout=subprocess.PIPE)
          for _ in range(4)]
    try:
        assert [h.stdout.readline() for h in hs] == [b"ready\n"] * 4
        of = P.open_files()
        g1 = A.held_open(of, [str(f)])
        pids = [pid for pid, _path in of.holders([str(f)])]
        _stop(*hs[1:])
        g = A.held_open(P.open_files(), [str(f)])
    finally:
        _stop(*hs)
    h = hs[0]
    assert _full(g) == ("activity", False, "file_held_open",
                        f"pid {h.pid} ({sys.executable}) holds {f} open: a writer would lose what it writes after an unlink",
                        [{"source": "/proc/<pid>/fd", "pid": h.pid, "argv0": sys.executable, "path": str(f)}])
    # four holders: every one is evidence, the first three named, 'hold' (mutation testing: the
    # one-holder test held neither the join, the cap nor the plural)
    assert sorted(pids) == sorted(x.pid for x in hs)
    assert _full(g1) == ("activity", False, "file_held_open",
                         ", ".join(f"pid {pid} ({sys.executable})" for pid in pids[:3])
                         + f" hold {f} open: a writer would lose what it writes after an unlink",
                         [{"source": "/proc/<pid>/fd", "pid": pid, "argv0": sys.executable, "path": str(f)}
                          for pid in pids])
