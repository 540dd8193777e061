"""Unknown is not zero, everywhere: what could not be read surfaces as a problem or a null with its
reason, and the exit status (3) says the answer is a lower bound.

Each case is a COPY of the real-client sample corpus (examples/claude-home, Claude Code 2.1.258)
with one thing made unreadable or odd on the file system: a permission bit, a dangling symlink, a
FIFO or a directory where a transcript is expected. Those are not record shapes (no client writes
them; a user, a backup tool or a crash does). The commands run as a user WITHOUT root's override of
file permissions (`setpriv` drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), so a mode-000
directory really cannot be read. Two cases are mutated records, each saying why below.
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
SRC = REPO / "examples" / "claude-home"
SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"
SUB_PROJ = "-tmp-ssift-rc-subagents-work"
TASKS = "8a2b4883-a16f-5667-848e-18629d1e62ce"
FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"
FB_PROJ = "-tmp-ssift-rc-files-basic-work"


def _unprivileged() -> list[str]:
    """The command prefix that runs without root's file-permission override ([] when not root)."""
    if os.getuid() != 0:
        return []
    exe = shutil.which("setpriv")
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("setpriv (util-linux) is needed to drop CAP_DAC_OVERRIDE under CI")
        pytest.skip("setpriv (util-linux) not found: cannot drop CAP_DAC_OVERRIDE, permission errors would not be real")
    caps = "-dac_override,-dac_read_search"
    return [exe, f"--inh-caps={caps}", f"--bounding-set={caps}", "--"]


def run(home: Path, *args: str) -> tuple[int, list[dict], str]:
    p = subprocess.run([*_unprivileged(), sys.executable, "-m", "sessionsift", *args, "--claude-home", str(home),
                        "--format", "json"], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines() if x.strip()], p.stderr


def text(home: Path, *args: str) -> tuple[int, str]:
    p = subprocess.run([*_unprivileged(), sys.executable, "-m", "sessionsift", *args, "--claude-home", str(home)],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture()
def home(tmp_path) -> Path:
    h = tmp_path / "claude-home"
    shutil.copytree(SRC, h, symlinks=True)
    yield h
    for d, dirs, files in os.walk(h):  # let pytest clean up
        for x in dirs + files:
            if not os.path.islink(os.path.join(d, x)):
                os.chmod(os.path.join(d, x), 0o700)


def test_the_checks_run_without_the_permission_override(tmp_path):
    d = tmp_path / "locked"
    d.mkdir()
    os.chmod(d, 0)
    p = subprocess.run([*_unprivileged(), sys.executable, "-c", f"import os; os.listdir({str(d)!r})"],
                       capture_output=True, text=True)
    os.chmod(d, 0o700)
    assert p.returncode == 1 and "PermissionError" in p.stderr  # the uncaught exception


@pytest.mark.parametrize("which", ["session-dir", "tasks-root"])
def test_unreadable_tasks_directory_is_unknown_not_zero(home, which):
    """Was `[tasks] 0 open, 0 completed` (the session dir unlistable) or `no task directory`
    (tasks/ itself unsearchable), exit 0."""
    os.chmod(home / "tasks" / TASKS if which == "session-dir" else home / "tasks", 0)
    rc, rows, _ = run(home, "status", TASKS)
    v = next(r for r in rows if r["kind"] == "session")
    assert rc == 3
    assert v["tasks"] is None and v["tasks_completed"] is None
    ev = next(e for e in v["evidence"] if e["surface"] == "tasks")
    assert ev["value"].startswith("could not be read") and ev["unreadable"]
    assert any(u["surface"] == "tasks" for u in v["unreadable"])
    rc, out = text(home, "status", TASKS)
    assert "[tasks] could not be read" in out and "0 open, 0 completed" not in out


def test_unreadable_subagents_directory_is_unknown_not_zero(home):
    """Was `"subagents": 0` in list and `no subagent lanes` (exit 1) in agents."""
    os.chmod(home / "projects" / SUB_PROJ / SUB / "subagents", 0)
    rc, rows, _ = run(home, "list", SUB)
    row = next(r for r in rows if r["kind"] == "session")
    assert rc == 3 and row["subagents"] is None and any("subagents" in n for n in row["notes"])
    assert any(p["path"].endswith("/subagents") for p in rows[-1]["problems"])
    rc, rows, _ = run(home, "agents", SUB)
    assert rc == 3 and rows[-1]["problems"]
    rc, out = text(home, "agents", SUB)
    assert "lower bound" in out
    for cmd in (["stats", SUB], ["files", SUB], ["status", SUB], ["audit", "reinjection", SUB]):
        rc, rows, _ = run(home, *cmd)
        assert rc == 3, cmd
    rc, rows, _ = run(home, "status", SUB)
    ch = next(e for e in rows[1]["evidence"] if e["surface"] == "children")
    assert "could not be read" in ch["value"] and ch["unreadable"]


def test_dangling_symlink_lane_and_odd_files_named_jsonl_are_problems(home):
    """A dangling-symlink subagent lane was dropped, a FIFO or a directory named *.jsonl skipped
    without a word (top level and in subagents/)."""
    sub = home / "projects" / SUB_PROJ / SUB / "subagents"
    (sub / "agent-gone.jsonl").symlink_to(sub / "agent-nowhere.jsonl")
    os.mkfifo(sub / "agent-fifo.jsonl")
    os.mkfifo(home / "projects" / FB_PROJ / "11111111-2222-3333-4444-555555555555.jsonl")
    (home / "projects" / FB_PROJ / "22222222-2222-3333-4444-555555555555.jsonl").mkdir()
    rc, rows, _ = run(home, "stats")
    why = {Path(p["path"]).name: p["why"] for p in rows[-1]["problems"]}
    assert rc == 3
    assert "dangling symlink" in why["agent-gone.jsonl"]
    assert "FIFO" in why["agent-fifo.jsonl"] and "FIFO" in why["11111111-2222-3333-4444-555555555555.jsonl"]
    assert "directory" in why["22222222-2222-3333-4444-555555555555.jsonl"]
    rc, rows, _ = run(home, "list", SUB)
    row = next(r for r in rows if r["kind"] == "session")
    real = len(list(SRC.joinpath("projects", SUB_PROJ, SUB, "subagents").glob("agent-*.jsonl")))
    assert rc == 3 and row["subagents"] == real and any("lower bound" in n for n in row["notes"])
    for cmd in (["agents", SUB], ["files", SUB], ["search", "x", SUB]):
        rc, rows, _ = run(home, *cmd)
        assert rc == 3, cmd


def test_unreadable_workflow_journal_is_unknown_not_zero(home):
    """Was `0 of 0 journals` (the unreadable journal skipped). The run directory and journal sit
    where the client writes them (subagents/workflows/wf_<run>/journal.jsonl, SUB-008); its bytes
    are never read (that is the point), so it holds a copy of a real lane."""
    wf = home / "projects" / SUB_PROJ / SUB / "subagents" / "workflows" / "wf_0123abcd"
    wf.mkdir(parents=True)
    lane = next((home / "projects" / SUB_PROJ / SUB / "subagents").glob("agent-*.jsonl"))
    shutil.copy(lane, wf / "journal.jsonl")
    os.chmod(wf / "journal.jsonl", 0)
    rc, rows, _ = run(home, "status", SUB)
    ev = next(e for e in rows[1]["evidence"] if e["surface"] == "workflows")
    assert rc == 3 and "1 unreadable" in ev["value"]
    assert ev["journals"][0]["started"] is None and ev["journals"][0]["why"].startswith("unreadable")
    rc, rows, _ = run(home, "agents", SUB)
    assert rc == 3 and any(p["path"].endswith("journal.jsonl") for p in rows[-1]["problems"])


def _mutate(home: Path, proj: str, sid: str, fn) -> None:
    p = home / "projects" / proj / f"{sid}.jsonl"
    out = []
    for i, raw in enumerate(p.read_bytes().splitlines()):
        o = json.loads(raw)
        out.append(json.dumps(fn(i, o)).encode())
    p.write_bytes(b"\n".join(out) + b"\n")


def test_a_command_the_shell_parser_fails_on_is_surfaced(home):
    """`parse_error` was set and never read: `files` said 0 unresolved. MUTATED COPY of a real Bash
    tool_use: its command replaced by one tree-sitter-bash cannot parse (the failure is our parser's,
    so no client run can be made to produce it on purpose)."""
    bad = "echo $(( 1 + "

    def fn(i, o):
        m = o.get("message") if isinstance(o.get("message"), dict) else {}
        for b in m.get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Bash":
                b["input"]["command"] = bad
        return o
    _mutate(home, FB_PROJ, FB, fn)
    from sessionsift.files.shell import analyze

    assert analyze(bad, "/w").parse_error
    rc, rows, _ = run(home, "files", FB)
    sm = rows[-1]
    assert rc == 3 and sm["unparsed_commands"] >= 1 and sm["unresolved"] >= 1
    un = [r for r in rows if r["kind"] == "unresolved" and r["op"] == "shell:unparsed"]
    assert un and un[0]["marker"] == "parse-error"
    rc, rows, _ = run(home, "recover", FB, "--file", "/tmp/ssift-rc/files_basic/work/hello.py", "--coverage")
    assert rows[-1]["status"] == "complete_at_risk" and rc == 5
    assert any("could not read this command" in r["detail"] for r in rows[-1]["risks_since_anchor"])


def test_token_totals_over_messages_lacking_the_field_are_lower_bounds(home):
    """Was `output_tokens=73 over 10 API messages` when 9 of them lacked the field. MUTATED COPY of
    a real transcript: `output_tokens` dropped from every assistant record's usage but one (no
    offline run of the pinned client writes usage without it; damaged or foreign writers can)."""
    kept = []

    def fn(i, o):
        m = o.get("message") if isinstance(o.get("message"), dict) else {}
        u = m.get("usage")
        if o.get("type") == "assistant" and isinstance(u, dict):
            if kept:
                u.pop("output_tokens", None)
            else:
                kept.append(u.get("output_tokens"))
        return o
    _mutate(home, FB_PROJ, FB, fn)
    rc, rows, _ = run(home, "stats", FB)
    lane = next(r for r in rows if r["kind"] == "lane")
    (model,) = lane["tokens_by_model"]
    assert rc == 3
    assert lane["tokens_by_model"][model]["output_tokens"] is None
    assert lane["tokens_lower_bound_by_model"][model]["output_tokens"] == kept[0]
    n = lane["api_messages_by_model"][model]
    assert n > 1 and lane["tokens_missing_by_model"][model] == {"output_tokens": n - 1}
    assert isinstance(lane["tokens_by_model"][model]["input_tokens"], int)
    assert rows[-1]["tokens_by_model"][model]["output_tokens"] is None
    rc, out = text(home, "stats", FB, "--verbose")
    assert f"output_tokens>={kept[0]} ({n - 1} of {n} API messages lack it)" in out and "lower bounds" in out
    rc, out = text(home, "stats", FB)  # the short answer: its tokens a lower bound, and why
    row = next(ln for ln in out.splitlines() if ln.startswith(FB))
    assert row.split()[-1].startswith("≥") and "token totals are lower bounds" in out
