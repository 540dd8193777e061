"""The CLI contract, for every command in `sessionsift.cli.COMMANDS`, on transcripts written by the
real Claude Code client (the committed 2.1.332 corpus, examples/newest-client/2.1.332):

- `--format json` is JSON Lines: one header first, one summary last (also on an empty scope);
- a row that names a session carries `session_id`, `is_subagent`, `parent_session_id`;
- a row that addresses a transcript line carries `refetch`, and running it shows that record;
- instants are `{utc, local}`;
- `--help` works without a data root and never touches one;
- a bad target exits 2 with `sessionsift: error:`;
- human output carries no raw control characters, on a MUTATED COPY of a real transcript.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"
FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"   # files_basic
INT = "dd7270d6-d04e-5744-ab2f-2e9ad4fab464"  # interactive (compacted, file-history)
PM = "ec27c29c-095c-5e46-ad22-2abf8d79741a"   # plan_mode
HELLO = "/tmp/ssift-rc-2.1.332/files_basic/work/hello.py"
APP = "/tmp/ssift-rc-2.1.332/interactive/work/app.py"
import atexit  # noqa: E402
import tempfile  # noqa: E402

EXPORT_OUT = tempfile.mkdtemp(prefix="ssift-contract-export-")  # fresh per run (the ledger: conftest.py)


def _remove_export_out(pid: int = os.getpid()) -> None:
    if os.getpid() == pid:  # not from a forked child's exit
        shutil.rmtree(EXPORT_OUT, ignore_errors=True)


atexit.register(_remove_export_out)

# every command, with invocations that produce rows (no --claude-home / --format: added below)
INVOCATIONS: dict[str, list[list[str]]] = {
    "list": [["list"]],
    "show": [["show", FB, "--turn", "1"], ["show", INT, "--branch-points"]],
    "stats": [["stats"]],
    "search": [["search", "P1"], ["search", "", "-t", "agent.tool.use"]],
    "status": [["status"]],
    "wait": [["wait", FB, "--until", "stop", "--timeout", "5"]],
    "whoami": [["whoami"]],
    "agents": [["agents"]],
    "files": [["files"], ["files", "--by", "timeline"]],
    "recover": [["recover", FB, "--file", HELLO, "--coverage"], ["recover", INT, "--file", APP, "--list-backups"]],
    "plan": [["plan", "--audit"]],
    "image": [["image"]],
    "verbatim": [["verbatim", INT]],
    "audit": [["audit", "reinjection", "--flushes"]],
    "export": [["export", "chunks", "--out", EXPORT_OUT]],
    # not session-scoped: git worktrees (tests/test_worktrees*.py); here only the JSON Lines contract
    "worktrees": [["worktrees", "scan"], ["worktrees", "sweep"]],
    "index": [["index", "status"], ["index", "update"]],
    "clean": [["clean", "scan"]],  # list/verify read our archive, not a data root: tests/test_clean*.py
    "usage": [["usage", "daily"], ["usage", "session"], ["usage", "blocks"], ["usage", "weekly", "--by", "model"]],
    "sync": [["sync", "--to", f"{EXPORT_OUT}/dataset", "--adopt"]],  # each test has a HOME (a machine id) of its own
    # reads the dataset `sync` wrote above, no data root (cli() adds no --claude-home to it)
    "query": [["query", "SELECT provider, session_id, is_subagent, parent_session_id FROM sessions",
               "--dataset", f"{EXPORT_OUT}/dataset"]],
    "statusline": [["statusline"]],  # reads the statusLine hook's JSON on stdin (hook_input below)
}
# the ONE exit status each invocation must give on this corpus (docs/cli.md "Exit codes"); 0 unless named
STATUS: dict[tuple[str, ...], int] = {
    ("whoami",): 1,  # run outside any agent: it cannot tell
    # a complete rebuild at risk: an interpreter ran (python3 hello.py) after the last anchor
    ("recover", FB, "--file", HELLO, "--coverage"): 5,
    # with only --claude-home, the Codex listing of running sessions is not looked at: incomplete
    ("worktrees", "scan"): 3, ("worktrees", "sweep"): 3,
}
# an empty scope: 1 where "nothing matched" is meaningful (docs/cli.md), else 0 (a definitive zero)
EMPTY_STATUS = {"list": 0, "stats": 0, "search": 1, "status": 1, "agents": 1, "files": 0, "recover": 1, "plan": 1,
                "image": 1, "audit": 1, "usage": 0, "export": 1, "index": 0, "sync": 0}
# commands with a multi-session scope: an empty --sessions-from list is an empty scope
SCOPED = ("list", "stats", "search", "status", "agents", "files", "recover", "plan", "image", "audit", "usage",
          "export", "index", "sync")
SINGLE_TARGET = ("show", "wait", "verbatim")
SESSION_KEYS = ("session_id", "is_subagent", "parent_session_id")


def hook_input(home: Path, sid: str = FB) -> str:
    """What Claude Code hands `statusline` on stdin (the fields it reads; tests/test_statusline.py
    runs it on the real client's own objects)."""
    t = next((home / "projects").glob(f"*/{sid}.jsonl"))
    return json.dumps({"session_id": sid, "transcript_path": str(t), "model": {"display_name": "Opus"},
                       "cost": {"total_cost_usd": 0.1}})


def cli(args: list[str], env: dict | None = None, json_fmt: bool = True, home: Path | None = HOME):
    cmd = [sys.executable, "-m", "sessionsift", *args]
    if home is not None and args[0] != "query":
        cmd += ["--claude-home", str(home)]
    if json_fmt:
        cmd += ["--format", "json"]
    stdin = hook_input(home or HOME) if args[:1] == ["statusline"] and args[1:2] != ["--help"] else None
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, input=stdin)


def parse(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows, p.stderr
    return rows


def test_every_command_is_covered():
    # serve answers with pages, not JSON Lines, until stopped: tests/test_serve.py (refusals, pages, search)
    assert set(INVOCATIONS) | {"serve"} == set(COMMANDS)
    assert set(SCOPED) | set(SINGLE_TARGET) | {"whoami", "worktrees", "clean", "query", "statusline", "serve"} == set(COMMANDS)


def _check_instants(v, where: str) -> None:
    if isinstance(v, dict):
        if "utc" in v:
            assert set(v) == {"utc", "local"}, where
            assert isinstance(v["utc"], str) and v["utc"].endswith("Z") and isinstance(v["local"], str), where
        for k, x in v.items():
            if k in ("record", "raw"):
                continue  # the transcript's own record, as written
            if k == "timestamp" or k.endswith("_at") or k in ("first", "last"):
                assert x is None or (isinstance(x, dict) and set(x) == {"utc", "local"}), (where, k, x)
            _check_instants(x, f"{where}.{k}")
    elif isinstance(v, list):
        for x in v:
            _check_instants(x, where)


def _addressed(row: dict) -> list[dict]:
    """The row itself and nested dicts naming a session (e.g. `file` rows' touches)."""
    out = [row]
    for x in row.values():
        if isinstance(x, list):
            out += [d for d in x if isinstance(d, dict) and "session_id" in d]
    return out


@pytest.fixture(scope="module")
def outputs():
    out = {}
    for name, invs in INVOCATIONS.items():
        for args in invs:
            p = cli(args)
            assert p.returncode == STATUS.get(tuple(args), 0), (args, p.returncode, p.stderr)
            out[tuple(args)] = parse(p)
    return out


def test_json_lines_header_first_summary_last(outputs):
    for args, rows in outputs.items():
        kinds = [r["kind"] for r in rows]
        assert kinds[0] == "header" and kinds[-1] == "summary", args
        assert kinds.count("header") == 1 and kinds.count("summary") == 1, args
        assert rows[0]["command"] == rows[-1]["command"] == args[0]
        assert all(isinstance(k, str) and k for k in kinds)
    # the invocations do produce rows, so the checks below look at something
    assert sum(len(r) - 2 for r in outputs.values()) > 150


def test_rows_naming_a_session_carry_the_three_session_keys(outputs):
    checked = 0
    for args, rows in outputs.items():
        for r in rows[1:-1]:
            for d in _addressed(r):
                if any(k in d for k in SESSION_KEYS + ("lane",)):
                    checked += 1
                    missing = [k for k in SESSION_KEYS if k not in d]
                    assert not missing, (args, r["kind"], missing)
                    assert isinstance(d["is_subagent"], bool)
                    assert (d["parent_session_id"] is None) != d["is_subagent"], (args, r["kind"])
    assert checked > 150


def test_record_rows_carry_line_and_a_working_refetch(outputs):
    todo: dict[str, tuple[int, str]] = {}
    for args, rows in outputs.items():
        for r in rows[1:-1]:
            for d in _addressed(r):
                if isinstance(d.get("line"), int):
                    assert isinstance(d.get("refetch"), str), (args, r["kind"])
                    todo.setdefault(f"{args[0]}/{r['kind']}", (d["line"], d["refetch"]))
                elif "line" in d and d["line"] is None:
                    assert d.get("refetch") is None, (args, r["kind"])
    assert len(todo) >= 10, sorted(todo)
    for what, (line, cmd) in sorted(todo.items()):
        argv = shlex.split(cmd)
        assert argv[:2] == ["sessionsift", "show"], cmd
        p = cli(argv[1:], home=None)
        assert p.returncode == 0, (what, cmd, p.stderr)
        recs = [r for r in parse(p) if r["kind"] == "record"]
        assert [r["line"] for r in recs] == [line], (what, cmd)
        assert isinstance(recs[0]["record"], dict)


def test_instants_are_utc_and_local(outputs):
    for args, rows in outputs.items():
        for r in rows:
            _check_instants(r, f"{args[0]}/{r['kind']}")


@pytest.mark.parametrize("name", SCOPED)
def test_empty_scope_still_has_header_and_summary(tmp_path, name):
    empty = tmp_path / "none.txt"
    empty.write_text("")
    args = list(INVOCATIONS[name][0]) + ["--sessions-from", str(empty)]
    p = cli(args)
    assert p.returncode == EMPTY_STATUS[name], (args, p.returncode, p.stderr)
    rows = parse(p)
    assert [r["kind"] for r in rows] == ["header", "summary"], args


def _empty_home_env(tmp_path: Path) -> tuple[dict, Path]:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env["HOME"] = str(home)
    return env, home


def test_help_needs_no_data_root_and_touches_none(tmp_path):
    env, home = _empty_home_env(tmp_path)
    p = cli(["--help"], env=env, json_fmt=False, home=None)
    assert p.returncode == 0 and all(n in p.stdout for n in COMMANDS), p.stderr
    for name in COMMANDS:
        p = cli([name, "--help"], env=env, json_fmt=False, home=None)
        assert p.returncode == 0, (name, p.stderr)
        assert p.stdout.startswith(f"Usage: sessionsift {name}") and "Example:" in p.stdout, name
    assert list(home.iterdir()) == [], "--help created something under HOME"


# clean scans every session of every provider (no target argument: its --provider and roots narrow)
@pytest.mark.parametrize("name", sorted(set(COMMANDS) - {"whoami", "statusline"}))  # neither takes a target
def test_bad_target_exits_2_with_an_error_line(name):
    bad = "0000dead-no-such-session"
    args = {"search": ["search", "x", bad], "wait": ["wait", bad, "--until", "stop", "--timeout", "1"],
            "recover": ["recover", bad, "--file", HELLO], "audit": ["audit", "reinjection", bad],
            "export": ["export", "chunks", bad, "--out", f"{EXPORT_OUT}/never"],
            "worktrees": ["worktrees", "scan", f"/nonexistent/{bad}"],
            "index": ["index", "status", bad], "clean": ["clean", "capture", bad],
            "sync": ["sync", bad, "--to", f"{EXPORT_OUT}/never"],
            "query": ["query", "SELECT 1", "--dataset", f"/nonexistent/{bad}"]}.get(name, [name, bad])
    p = cli(args, json_fmt=False)
    assert p.returncode == 2, (args, p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith("sessionsift: error:"), p.stderr


# -- hostile text ---------------------------------------------------------------------------

HOSTILE = "\x1b[31mRED\x1b[0m\rOVERWRITE\nFORGED-LINE \u202eevil\x07\x00"
_RAW_CTRL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory) -> Path:
    """A MUTATED COPY of the real 2.1.332 files_basic session: the prompt, the agent's messages
    and a written file's path get ESC, CR, a newline, BEL, NUL and a bidi override (the client
    would write these bytes JSON-escaped exactly so; no hand-made records are added)."""
    root = tmp_path_factory.mktemp("hostile") / "claude-home"
    src = HOME / "projects" / "-tmp-ssift-rc-2-1-332-files-basic-work"
    dst = root / "projects" / src.name
    shutil.copytree(src, dst)
    f = dst / f"{FB}.jsonl"
    out = []
    for raw in f.read_bytes().splitlines():
        o = json.loads(raw)
        m = o.get("message") if isinstance(o.get("message"), dict) else None
        if o.get("type") == "user" and m and isinstance(m.get("content"), str):
            m["content"] += " " + HOSTILE
        if o.get("type") == "assistant" and m:
            for b in m.get("content") or []:
                if b.get("type") == "text":
                    b["text"] += " " + HOSTILE
                if b.get("type") == "tool_use" and isinstance((b.get("input") or {}).get("file_path"), str):
                    b["input"]["file_path"] = b["input"]["file_path"].replace("hello.py", "he\x1b]0;pwn\x07\nllo.py")
        if o.get("type") == "last-prompt" and isinstance(o.get("lastPrompt"), str):
            o["lastPrompt"] += " " + HOSTILE
        out.append(json.dumps(o))
    f.write_text("\n".join(out) + "\n")
    return root


def test_human_output_has_no_raw_control_characters(hostile_home):
    runs = [["list"], ["show", FB, "--turn", "1"], ["show", FB, "--line", "3", "--raw"], ["stats"],
            ["search", "RED"], ["search", "P1", "--no-context"], ["status"], ["agents"], ["files"],
            ["files", "--by", "timeline"], ["recover", FB, "--file", "/tmp/ssift-rc-2.1.332/files_basic/work/he\x1b]0;pwn\x07\nllo.py", "--coverage"],
            ["plan"], ["image"], ["verbatim", FB], ["audit", "reinjection"], ["worktrees", "scan"],
            ["export", "chunks", "--out", EXPORT_OUT], ["audit", "size"], ["audit", "secrets"],
            ["usage", "session", "--breakdown"], ["index", "update"], ["index", "status"], ["clean", "scan"],
            ["sync", "--to", f"{EXPORT_OUT}/hostile-dataset", "--adopt"],
            ["query", "SELECT text FROM records WHERE text LIKE '%RED%'", "--dataset", f"{EXPORT_OUT}/hostile-dataset"],
            ["statusline"]]
    assert {r[0] for r in runs} >= set(COMMANDS) - {"wait", "whoami", "serve"}  # serve: tests/test_serve.py
    # the one status each must give: recover's rebuild is at risk (5, as on the clean copy), the
    # files_basic session has no compaction for verbatim (1), worktrees as above (3); the rest 0
    status = {"recover": 5, "verbatim": 1, "worktrees": 3}
    seen_escaped = 0
    for args in runs:
        p = cli(args, json_fmt=False, home=hostile_home)
        assert p.returncode == status.get(args[0], 0), (args, p.returncode, p.stderr)
        for stream in (p.stdout, p.stderr):
            bad = _RAW_CTRL.findall(stream)
            assert not bad, (args, bad[:5])
            assert "\nFORGED-LINE" not in stream, args
        seen_escaped += "\\e[31mRED" in p.stdout or "\\e]0;pwn" in p.stdout
    assert seen_escaped >= 4


# -- the documented shapes, as types written HERE (docs/json.md), never the code's own ------------

import msgspec  # noqa: E402
from typing import Literal, Optional, Union  # noqa: E402


class Instant(msgspec.Struct, forbid_unknown_fields=True):
    utc: str
    local: str


class Header(msgspec.Struct):
    kind: Literal["header"]
    command: str
    sessionsift_version: str


class CoverageRow(msgspec.Struct, forbid_unknown_fields=False):
    provider: str
    display: str
    state: Literal["ok", "absent", "unreadable", "unknown_format", "no_adapter", "not_looked"]
    sessions: Optional[int]
    subagents: Optional[int] = None


class ProblemRow(msgspec.Struct, forbid_unknown_fields=True):
    path: Union[str, dict]
    why: str


class Summary(msgspec.Struct):
    kind: Literal["summary"]
    command: str
    coverage: Optional[list[CoverageRow]] = None
    problems: Optional[list[ProblemRow]] = None


class SessionKeys(msgspec.Struct):
    session_id: str
    is_subagent: bool
    parent_session_id: Optional[str]


class WhoamiKeys(SessionKeys):
    session_id: Optional[str]  # docs/live.md: null when $CLAUDE_CODE_SESSION_ID is unset


class RecordKeys(msgspec.Struct):
    line: Optional[int]
    refetch: Optional[str]


class Labelled(msgspec.Struct):
    labels: list[str]


def _decode(t, d: dict, where):
    try:
        return msgspec.convert(d, t)
    except msgspec.ValidationError as exc:
        raise AssertionError(f"{where}: {exc}") from None


def test_rows_decode_with_the_documented_types(outputs):
    """Every header, summary, coverage entry, problem, session-naming row, record row and label list
    of every command decodes with the types above (docs/json.md): a field emitted with another
    type (a string for a list, a count as text, an instant as a bare string) fails here even when
    a test reading it with `in` or a truthiness check would pass."""
    seen = {"header": 0, "summary": 0, "coverage": 0, "session": 0, "record": 0, "labels": 0, "instant": 0}
    for args, rows in outputs.items():
        where = " ".join(args[:2])
        _decode(Header, rows[0], where)
        seen["header"] += 1
        sm = _decode(Summary, rows[-1], where)
        seen["summary"] += 1
        for c in sm.coverage or ():
            seen["coverage"] += 1
            # a count is taken only for ok (0 = none matched) and absent (0); every other state is null
            assert (c.sessions is None) == (c.state not in ("ok", "absent")), (where, c)
            if c.state == "absent":
                assert c.sessions == 0, (where, c)
        for r in rows[1:-1]:
            for d in _addressed(r):
                if "session_id" in d:
                    _decode(WhoamiKeys if r["kind"] == "whoami" else SessionKeys, d, (where, r["kind"]))
                    seen["session"] += 1
                if "line" in d and "refetch" in d:
                    _decode(RecordKeys, d, (where, r["kind"]))
                    seen["record"] += 1
                if "labels" in d and "line" in d:  # a record's labels (a census's are counts)
                    _decode(Labelled, d, (where, r["kind"]))
                    seen["labels"] += 1
                for k, v in d.items():
                    if (k == "timestamp" or k.endswith("_at")) and v is not None and k not in ("record", "raw"):
                        _decode(Instant, v, (where, r["kind"], k))
                        seen["instant"] += 1
    assert min(seen.values()) > 10, seen
