"""Every string from disk is escaped in human output, on every command.

The corpus is a MUTATED COPY of the real-client sample corpus (examples/claude-home, written by
Claude Code 2.1.258 offline): the records stay the client's own, but file names (a session
transcript, a subagent lane, a project dir) and field values the client copies verbatim from its
environment or from the model (`version`, `gitBranch`, `cwd`, `sessionId`, `uuid`/`parentUuid`
consistently, `slug`, `message.model`, `message.id`, a system `subtype`, an attachment `type`,
agent meta `agentType`/`description`, task `subject`/`status`/`id`, `planFilePath`, a record
`type`) carry ESC, BEL, CR, a newline, a bidi override and a line separator. No client writes these
offline; a hostile repository, branch or model output can put them there.

Human output (stdout and stderr of every command) must then hold no raw control character: one
record field is one escaped line. The rendering path escapes whole lines (sessionsift.render), so
a command cannot forget; a static check keeps cli/ from writing to the terminal any other way.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "examples" / "claude-home"
EVIL = "\x1b[31mX\x1b[0m\x07\rY\nZ\u202eW\u2028V"
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"    # files_basic (image, recover)
SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"   # subagents
INT = "dd7270d6-d04e-5744-ab2f-2e9ad4fab464"   # interactive (compaction, file-history, reinjection)
PM = "ec27c29c-095c-5e46-ad22-2abf8d79741a"    # plan_mode
TASKS = "8a2b4883-a16f-5667-848e-18629d1e62ce"  # tasks


def _evil_record(o: dict, n: int) -> dict:
    for k in ("version", "gitBranch", "cwd", "slug", "sessionId"):
        if isinstance(o.get(k), str):
            o[k] = o[k] + EVIL
    for k in ("uuid", "parentUuid", "logicalParentUuid"):
        if isinstance(o.get(k), str) and o[k]:
            o[k] = o[k] + EVIL  # consistently: the chain stays intact
    m = o.get("message")
    if isinstance(m, dict):
        for k in ("model", "id"):
            if isinstance(m.get(k), str):
                m[k] = m[k] + EVIL
    if o.get("type") == "system" and isinstance(o.get("subtype"), str) and n % 3 == 0:
        o["subtype"] = o["subtype"] + EVIL
    a = o.get("attachment")
    if isinstance(a, dict):
        if isinstance(a.get("planFilePath"), str):
            a["planFilePath"] = a["planFilePath"].replace(".md", EVIL + ".md")
        if a.get("type") in ("skill_listing", "deferred_tools_delta", "todo_reminder") or n % 7 == 0:
            a["type"] = str(a.get("type")) + EVIL
    return o


HELLO = "/tmp/ssift-rc/files_basic/work/hello.py"
EVIL_HELLO = HELLO.replace("hello.py", f"hel{EVIL}lo.py")


def _rename_file(v):
    """Every mention of hello.py (tool inputs, echoes, commands) names a hostile file instead."""
    if isinstance(v, str):
        return v.replace("hello.py", f"hel{EVIL}lo.py")
    if isinstance(v, dict):
        return {k: _rename_file(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_rename_file(x) for x in v]
    return v


def _mutate_jsonl(p: Path) -> None:
    out = []
    for n, raw in enumerate(p.read_bytes().splitlines()):
        try:
            o = json.loads(raw)
        except ValueError:
            out.append(raw)
            continue
        out.append(json.dumps(_rename_file(_evil_record(o, n))).encode())
    # one record of a type no client writes, named with control characters
    out.append(json.dumps({"type": "odd" + EVIL, "sessionId": "s" + EVIL}).encode())
    p.write_bytes(b"\n".join(out) + b"\n")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("hostile") / "claude-home"
    shutil.copytree(SRC, home)
    for p in sorted(home.rglob("*.jsonl")):
        if p.name != "history.jsonl":
            _mutate_jsonl(p)
    for p in (home / "projects").rglob("*.meta.json"):
        d = json.loads(p.read_text())
        d = {k: (v + EVIL if isinstance(v, str) and k in ("agentType", "description") else v) for k, v in d.items()}
        p.write_text(json.dumps(d))
    for p in (home / "tasks").rglob("*.json"):
        d = json.loads(p.read_text())
        for k in ("subject", "status", "id", "activeForm"):
            if isinstance(d.get(k), str):
                d[k] = d[k] + EVIL
        p.write_text(json.dumps(d))
    # file names: a session transcript, a subagent lane (and its meta), a project directory
    proj = home / "projects" / "-tmp-ssift-rc-files-basic-work"
    os.rename(proj / f"{FB}.jsonl", proj / f"{FB}{EVIL}.jsonl")
    subs = home / "projects" / "-tmp-ssift-rc-subagents-work" / SUB / "subagents"
    for lane in sorted(subs.glob("agent-*.jsonl"))[:1]:
        stem = lane.name[: -len(".jsonl")]
        os.rename(lane, subs / f"{stem}{EVIL}.jsonl")
        meta = subs / f"{stem}.meta.json"
        if meta.exists():
            os.rename(meta, subs / f"{stem}{EVIL}.meta.json")
    os.rename(home / "projects" / "-tmp-ssift-rc-interactive-work", home / "projects" / f"-tmp-ssift{EVIL}")
    return home


def _fb(home: Path) -> str:
    return str(home / "projects" / "-tmp-ssift-rc-files-basic-work" / f"{FB}{EVIL}.jsonl")


def _runs(home: Path) -> list[list[str]]:
    fb = _fb(home)
    hello = EVIL_HELLO
    return [
        ["list"], ["stats"], ["search", "P1"], ["search", "", "--count-by", "model"],
        ["search", "", "--count-by", "session"], ["search", "", "--count-by", "attachment"], ["search", "-l", ""],
        ["status"], ["agents", "--tree", "--with-files"], ["agents", SUB],
        ["files"], ["files", "--by", "timeline"], ["files", "--by", "dir"],
        ["recover", fb, "--file", hello, "--coverage"], ["recover", fb, "--file", hello, "--patches"],
        ["recover", INT, "--file", "/tmp/ssift-rc/interactive/work/app.py", "--list-backups"],
        ["plan", "--audit"], ["image"], ["verbatim", INT],
        ["audit", "reinjection", "--flushes"], ["audit", "size"], ["audit", "secrets"],
        ["export", "chunks", "--out", str(home.parent / "x-chunks")],
        ["export", "markdown", "--out", str(home.parent / "x-md")], ["export", "html", "--out", str(home.parent / "x-html")],
        ["export", "parquet", "--out", str(home.parent / "x-pq")],
        ["show", fb, "--turn", "1"], ["show", fb, "--line", "1..", "--raw"], ["show", INT, "--branch-points"],
        ["show", SUB, "--line", "1.."],
        ["wait", fb, "--until", "stop", "--timeout", "1"], ["whoami"],
        ["worktrees", "scan"], ["worktrees", "sweep"],
        ["usage", "daily"], ["usage", "session"], ["usage", "blocks"],
        ["clean", "scan", "-v", "--older-than", "1m"], ["clean", "capture", "--waive-kept", "--older-than", "1m"],
        ["index", "status"], ["index", "update"],
        ["statusline"],  # stdin: the hook's object (statusline_input below)
        # the hostile copy synced into a dataset, then its records' text read back by SQL
        ["sync", "--to", str(home.parent / "dataset"), "--adopt"],
        ["query", "SELECT session_id, text FROM records WHERE text LIKE '%X%'", "--dataset", str(home.parent / "dataset")],
    ]


def statusline_input(home: Path) -> str:
    """What Claude Code hands the statusLine command (tests/test_statusline.py reads the real client's),
    for the hostile files_basic session, with a hostile model name (a value the client would not write)."""
    return json.dumps({"session_id": f"{FB}{EVIL}", "transcript_path": _fb(home),
                       "model": {"display_name": f"Opus{EVIL}"}})


# the commands whose output must show an escaped hostile value (so the check looks at something)
MUST_SHOW = {"list", "stats", "search", "status", "agents", "files", "recover", "plan", "verbatim", "audit",
             "show", "wait", "whoami", "clean", "index", "export", "statusline", "query"}


def _status(args: list[str]) -> int:
    """The ONE exit status each run gives on the hostile copy (docs/cli.md "Exit codes"):
    files_basic's hello.py is rebuilt complete but at risk (5: `python3 hello.py` ran after its
    last anchor); worktrees with only --claude-home have not looked at Codex's listing of running
    sessions (3); everything else answers (0)."""
    if args[0] == "recover" and FB in args[1]:
        return 5
    if args[0] == "worktrees":
        return 3
    return 0


def test_every_command_escapes_hostile_names_and_fields(hostile):
    from sessionsift.cli import COMMANDS

    runs = _runs(hostile)
    # serve's output is pages: tests/test_serve.py serves this corpus and checks them
    assert {r[0] for r in runs} | {"serve"} == set(COMMANDS)
    env = dict(os.environ, NO_COLOR="1", CLAUDE_CODE_SESSION_ID=f"{PM}{EVIL}")
    shown: set[str] = set()
    bad = []
    for args in runs:
        root = [] if args[0] == "query" else ["--claude-home", str(hostile)]  # query reads a dataset, no root
        p = subprocess.run([sys.executable, "-m", "sessionsift", *args, *root],
                           capture_output=True, text=True, env=env, timeout=120,
                           input=statusline_input(hostile) if args[0] == "statusline" else None)
        want = _status(args)
        if p.returncode != want or "internal error" in p.stderr:
            bad.append(f"{args}: exit {p.returncode} (expected {want}): {p.stderr[-300:]}")
        for name, stream in (("stdout", p.stdout), ("stderr", p.stderr)):
            raw = _RAW.findall(stream)
            if raw:
                bad.append(f"{args} {name}: raw control characters {raw[:6]!r}")
            if "\nZ" in stream or "\nY" in stream:
                bad.append(f"{args} {name}: a newline from disk started a forged line")
        if "\\e[31mX" in p.stdout + p.stderr:
            shown.add(args[0])
    assert not bad, "\n".join(bad)
    assert MUST_SHOW <= shown, sorted(MUST_SHOW - shown)


def test_cli_writes_to_the_terminal_only_through_the_rendering_path():
    """No command module writes to stdout/stderr by itself (print, sys.stdout/sys.stderr.write,
    click.echo, a rich Console on a real stream): every human line goes through `Out`, which
    escapes it. The library (below cli/) does not import cli/ for it either."""
    offenders = []
    for p in sorted((REPO / "src" / "sessionsift" / "cli").glob("*.py")):
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = ast.unparse(f)
                if name in ("print", "click.echo", "click.secho") or name.endswith(("stdout.write", "stderr.write")):
                    offenders.append(f"{p.name}:{node.lineno}: {name}")
                if name == "Console" and not any(k.arg == "file" and ast.unparse(k.value) == "buf" for k in node.keywords):
                    offenders.append(f"{p.name}:{node.lineno}: rich Console not rendering into a buffer")
    assert not offenders, offenders
    for p in (REPO / "src" / "sessionsift").rglob("*.py"):
        if "cli" in p.relative_to(REPO / "src" / "sessionsift").parts or p.name == "__main__.py":
            continue
        text = p.read_text()
        assert not re.search(r"from \.+cli\b|import sessionsift\.cli|from sessionsift\.cli", text), p


def test_render_escapes_whole_lines_idempotently():
    import io

    from sessionsift.render import Out, esc

    s = io.StringIO()
    out = Out("text", "t", stream=s)
    out.text(f"a {EVIL} b")
    out.text(f"a {esc(EVIL)} b")
    lines = s.getvalue().split("\n")
    assert lines[0] == lines[1] and len(lines) == 3 and not _RAW.search(s.getvalue())
    assert esc(esc(EVIL)) == esc(EVIL)
