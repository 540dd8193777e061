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
    assert g[("claude-code", INTER)].reason == "session_is_live"
    assert "the session running this command" in g[("claude-code", INTER)].detail
    assert {k for k, v in g.items() if not v.proven} == {("claude-code", INTER)}
    assert rep.world.self_json()["claude_code_session_id"] == INTER
    assert rep.world.self_json()["sessions"] == [{"provider": "claude-code", "session_id": INTER, "source": "CLAUDE_CODE_SESSION_ID"}]


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
    finally:
        _stop(p)
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
    assert "cannot be told" in g[("claude-code", FB)].evidence[0]["note"]


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
