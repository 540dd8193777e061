"""One option set for every command (cli/invocation.py): every command takes the targeting options,
they narrow the real-client sample home (examples/home) by the documented rule, a command that
cannot honour one refuses it, and nothing of one command line leaks into the next (no global)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
HOME = str(ROOT / "examples" / "home")
SHARED = ("--home", "--claude-home", "--codex-home", "--gemini-home", "--opencode-home", "--crush-home", "--root",
          "--provider", "--since", "--until", "--project", "--sessions-from", "--format", "--no-index")


def _commands():
    from sessionsift.cli import COMMANDS
    from sessionsift.cli.app import cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            for sub in cmd.list_commands(ctx):
                yield f"{name} {sub}", cmd.get_command(ctx, sub)
        else:
            yield name, cmd


COMMAND_PATHS = [n for n, _c in _commands()]


@pytest.mark.parametrize("path", COMMAND_PATHS)
def test_every_command_takes_the_shared_option_set(path):
    cmd = dict(_commands())[path]
    opts = {o for p in cmd.params for o in getattr(p, "opts", []) if o.startswith("--")}
    missing = [o for o in SHARED if o not in opts]
    assert missing == [], (path, missing)


def run(*args: str, env_home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(env_home), XDG_CACHE_HOME=str(env_home / "cache"),
               XDG_DATA_HOME=str(env_home / "data"))
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def _rows(p, kind="session"):
    return [r for r in map(json.loads, p.stdout.splitlines()) if r.get("kind") == kind]


def _header(p):
    return json.loads(p.stdout.splitlines()[0])


@pytest.fixture(scope="module")
def every_session(tmp_path_factory):
    """`list` over the whole sample home: the answer each narrowing is checked against."""
    p = run("list", "--home", HOME, "--format", "json", env_home=tmp_path_factory.mktemp("h"))
    assert p.returncode == 0, p.stderr
    rows = [r for r in _rows(p) if r["parent_session_id"] is None]
    assert len(rows) == _header(p)["sessions"] and len(rows) >= 36  # every sample provider's sessions
    return rows


def _when(r, key):
    v = r[key]
    return None if v is None else datetime.fromisoformat(v["utc"].replace("Z", "+00:00"))


def test_limit_keeps_the_most_recently_active_sessions(tmp_path, every_session):
    p = run("list", "--home", HOME, "--provider", "codex", "-n", "2", "--format", "json", env_home=tmp_path)
    assert p.returncode == 0, p.stderr
    top = [r for r in _rows(p) if r["parent_session_id"] is None]
    codex = sorted((r for r in every_session if r["provider"] == "codex"), key=lambda r: _when(r, "last_at"),
                   reverse=True)
    assert [r["session_id"] for r in top] == [r["session_id"] for r in codex[:2]]
    nar = _header(p)["narrowed"]
    assert (nar["sessions_kept"], nar["sessions_left_out"]) == (2, len(codex) - 2)
    assert nar["filters"] == ["--limit 2"]


def test_project_by_name_selects_the_sessions_that_recorded_it(tmp_path, every_session):
    want = sorted(r["session_id"] for r in every_session if r["project"] and os.path.basename(r["project"]) == "app")
    assert len(want) == 5  # Crush's sample: five top-level sessions in projects/app
    p = run("list", "--home", HOME, "--project", "app", "--format", "json", env_home=tmp_path)
    assert p.returncode == 0, p.stderr
    got = sorted(r["session_id"] for r in _rows(p) if r["parent_session_id"] is None)
    assert got == want
    assert _header(p)["narrowed"]["sessions_kept"] == 5


def test_project_by_path_takes_the_directory_and_what_lies_under_it(tmp_path, every_session):
    proj = next(r["project"] for r in every_session if r["provider"] == "opencode" and r["project"].endswith("/killed/work"))
    parent = os.path.dirname(os.path.dirname(proj))  # .../ssift-oc-sample: every opencode sample under it
    want = sorted(r["session_id"] for r in every_session if r["project"] and r["project"].startswith(parent + "/"))
    p = run("list", "--home", HOME, "--project", parent, "--format", "json", env_home=tmp_path)
    got = sorted(r["session_id"] for r in _rows(p) if r["parent_session_id"] is None)
    assert got == want and len(want) == 6


def test_a_window_before_every_session_keeps_none_and_says_what_it_left_out(tmp_path, every_session):
    p = run("list", "--home", HOME, "--until", "2001-01-01", "--format", "json", env_home=tmp_path)
    assert p.returncode == 0, p.stderr
    assert _rows(p) == []
    nar = _header(p)["narrowed"]
    assert (nar["sessions_kept"], nar["sessions_left_out"], nar["left_out_undated"]) == (0, len(every_session), 0)


def test_since_keeps_exactly_the_sessions_active_after_the_bound(tmp_path, every_session):
    # between the Claude Code samples (2026-11-30) and every other provider's (2026-12-01)
    bound = "2026-12-01T00:00:00+00:00"
    cut = datetime.fromisoformat(bound)
    want = sorted(r["session_id"] for r in every_session if _when(r, "last_at") >= cut)
    assert 0 < len(want) < len(every_session)
    p = run("list", "--home", HOME, "--since", bound, "--format", "json", env_home=tmp_path)
    got = sorted(r["session_id"] for r in _rows(p) if r["parent_session_id"] is None)
    assert got == want


def test_status_takes_the_same_narrowing(tmp_path, every_session):
    p = run("status", "--home", HOME, "-n", "1", "--format", "json", env_home=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = _rows(p)
    # status answers for every agent now: -n 1 keeps the most recently active session of any of them
    dated = [r for r in every_session if r["last_at"] is not None]
    newest = max(dated, key=lambda r: _when(r, "last_at"))
    assert sum(1 for r in dated if _when(r, "last_at") == _when(newest, "last_at")) == 1  # no tie to break
    assert [r["session_id"] for r in rows] == [newest["session_id"]]


def test_an_option_a_command_cannot_honour_is_refused_not_ignored(tmp_path):
    p = run("clean", "list", "--home", HOME, env_home=tmp_path)
    assert p.returncode == 2
    assert "`clean list` reads the archive of --data-dir, whatever the roots: --home cannot narrow it" in p.stderr
    p = run("clean", "scan", "--home", HOME, "--since", "2d", env_home=tmp_path)
    assert p.returncode == 2
    assert "--since cannot narrow it" in p.stderr


def test_an_empty_window_is_a_usage_error(tmp_path):
    p = run("list", "--home", HOME, "--since", "2026-12-01", "--until", "2026-11-01", env_home=tmp_path)
    assert p.returncode == 2
    assert "the window is empty" in p.stderr


def test_wait_takes_its_condition_as_for(tmp_path):
    p = run("wait", "8414eb07", "--home", HOME, "--for", "bogus", "--timeout", "1", env_home=tmp_path)
    assert p.returncode == 2
    assert "bogus" in p.stderr


def test_one_command_lines_no_index_does_not_reach_the_next(tmp_path, monkeypatch):
    """`--no-index` used to flip a process-wide switch: an in-process caller's next command then
    scanned too. Now the decision travels with the scope of the one command line."""
    from sessionsift.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    claude = str(ROOT / "examples" / "claude-home")

    def stats(*extra):
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), pytest.raises(SystemExit) as ex:
            main(["stats", "--claude-home", claude, "--format", "json", *extra])
        assert ex.value.code == 0
        return json.loads(buf.getvalue().splitlines()[-1])["index"]

    off = stats("--no-index")
    assert (off["enabled"], off["off_reason"]) == (False, "--no-index")
    on = stats()
    assert (on["enabled"], on["off_reason"]) == (True, None)
    # and a library call after the command line: it used to inherit the switch the CLI left off
    main_run = None
    try:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit):
            main(["stats", "--claude-home", claude, "--no-index"])
    finally:
        from sessionsift.index.report import IndexReport

        main_run = IndexReport.for_root(Path(claude))
    assert main_run.on


def test_parse_bound_reads_dates_durations_and_instants():
    from sessionsift.timefmt import parse_bound

    now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    assert parse_bound("2h", now=now) == datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
    start = parse_bound("20261130")
    end = parse_bound("2026-11-30", end=True)
    assert start.date().isoformat() == "2026-11-30" and (start.hour, start.minute) == (0, 0)
    assert (end - start).total_seconds() == 86400 - 1e-6
    assert parse_bound("2026-11-30T10:00:00Z") == datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)


def test_clean_and_worktrees_honour_provider_and_refuse_the_session_filters(tmp_path):
    """clean's scan, capture and protect narrow by --provider (the roots looked at) and say so in
    the same counts; every session filter they cannot honour is refused; worktrees refuses every
    session option (it lists worktrees, not sessions)."""
    from sessionsift.providers.scope import RootRequest, survey

    gem = sorted(r.session_id for e in survey(RootRequest(home=HOME)).entries if e.name == "gemini-cli"
                 for r in e.sessions)
    assert len(gem) > 1
    for sub in ("scan", "capture", "protect"):
        p = run("clean", sub, "--home", HOME, "--provider", "gemini-cli", "--older-than", "1m",
                "--data-dir", str(tmp_path / "d"), "--format", "json", env_home=tmp_path)
        assert p.returncode == 0, (sub, p.stderr)
        rows = [r for r in map(json.loads, p.stdout.splitlines()) if r.get("session_id")]
        assert {r.get("provider") for r in rows} == {"gemini-cli"}, sub
        assert sorted({r["session_id"] for r in rows}) == gem, sub
        for opt, val in (("--since", "2d"), ("--until", "2d"), ("--project", "x"), ("--sessions-from", "-")):
            q = run("clean", sub, "--home", HOME, opt, val, env_home=tmp_path)
            assert q.returncode == 2 and f"{opt} cannot narrow it" in q.stderr, (sub, opt, q.stderr)
    for sub in ("scan", "sweep"):
        for opt, val in (("--provider", "codex"), ("--since", "2d"), ("--project", "x"), ("--sessions-from", "-")):
            q = run("worktrees", sub, opt, val, env_home=tmp_path)
            assert q.returncode == 2 and f"{opt} cannot narrow it" in q.stderr, (sub, opt, q.stderr)


@pytest.mark.parametrize("argv,status", [
    (["files", "--by", "summary"], 0),
    # every line known, a command since the last anchor may have changed it (docs/cli.md: 5)
    (["recover", "--file", "/tmp/ssift-rc/files_basic/work/hello.py"], 5)])
def test_files_and_recover_with_no_index_say_so_and_take_no_census(tmp_path, monkeypatch, argv, status):
    """`--no-index` travels with the scope (above): `files`/`recover` used to build their index
    report without it, so their answer said the index was on ("scanned" for "a torn final line"),
    and each lane was scanned once for a census it threw away before it was read for its events."""
    import contextlib
    import io

    from sessionsift.cli import main
    from sessionsift.providers.claude.cache import lanes as IL

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []
    real = IL.lane_stats
    monkeypatch.setattr(IL, "lane_stats", lambda *a, **k: calls.append(a) or real(*a, **k))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit) as ex:
        main([*argv, "--claude-home", str(ROOT / "examples" / "claude-home"), "--format", "json", "--no-index"])
    assert ex.value.code == status
    idx = json.loads(buf.getvalue().splitlines()[-1])["index"]
    assert (idx["enabled"], idx["off_reason"]) == (False, "--no-index")
    assert set(idx["scanned_why"]) == {"index off"}
    assert calls == []
    assert not (tmp_path / "cache").exists()
