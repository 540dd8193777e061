"""Coverage is computed, never written out, and never says 0 for what it did not read.

States on real Claude Code data (the committed 2.1.258 corpus) and on empty / unreadable temp
roots: `absent` (looked, found none: a true 0), `unreadable` (a root with mode 000, read by a
user without root's permission override), `not_looked` (a root was named for another provider
only, or --provider narrowed the answer), `no_adapter` (an entry point whose module does not
exist). The outside reader used for the layer's plumbing is tests/plumbing_provider.py:
HAND-MADE PLUMBING, registered through a real entry point, and no evidence about any client.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plumbing_provider import register, write_session

REPO = Path(__file__).resolve().parents[1]
CLAUDE = REPO / "examples" / "claude-home"
FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"  # files_basic, in examples/claude-home


def run(args: list[str], extra_env: dict | None = None, prefix: list[str] | None = None):
    env = dict(os.environ)
    env.update(extra_env or {})
    cmd = (prefix or []) + [sys.executable, "-m", "sessionsift", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


def cov(p) -> dict[str, dict]:
    return {c["provider"]: c for c in jrows(p)[-1]["coverage"]}


@pytest.fixture
def plumb(tmp_path):
    """The plumbing reader registered as an outside package."""
    return register(tmp_path / "site")


def test_empty_home_is_absent_everywhere_a_reader_exists(tmp_path):
    home = tmp_path / "empty"
    home.mkdir()
    p = run(["list", "--home", str(home), "--format", "json"])
    assert p.returncode == 0, p.stderr
    c = cov(p)
    assert c["claude-code"]["state"] == "absent" and c["claude-code"]["sessions"] == 0
    assert c["claude-code"]["reason"] == f"no {home / '.claude'}" and c["claude-code"]["root_source"] == "--home"
    for name in ("codex", "gemini-cli", "opencode", "crush"):
        assert c[name]["state"] in ("absent", "no_adapter"), c[name]
        assert (c[name]["sessions"] == 0) == (c[name]["state"] == "absent")
    t = run(["list", "--home", str(home)])
    last = t.stdout.strip().splitlines()[-1]
    assert last.startswith("coverage: Claude Code absent (no ") and " · Crush " in last


def test_a_named_root_leaves_the_others_not_looked_never_zero(tmp_path, plumb):
    proot = tmp_path / "plumb"
    write_session(proot, "p1", [{"kind": "prompt", "role": "user", "text": "hi"}])
    # the plumbing reader's own variable points at real data: with --claude-home named it is still not read
    p = run(["list", "--claude-home", str(CLAUDE), "--format", "json"], {**plumb, "PLUMB_HOME": str(proot)})
    assert p.returncode == 0, p.stderr
    c = cov(p)
    assert c["claude-code"]["state"] == "ok" and c["claude-code"]["sessions"] == 8
    assert c["plumb"]["state"] == "not_looked" and c["plumb"]["sessions"] is None
    assert c["plumb"]["reason"] == "pass --root plumb=DIR or --home DIR"
    assert not any(r.get("provider") == "plumb" for r in jrows(p))
    # no root named at all: every provider resolves flag > env var > default
    p = run(["list", "--format", "json"], {**plumb, "PLUMB_HOME": str(proot), "CLAUDE_CONFIG_DIR": str(CLAUDE)})
    c = cov(p)
    assert (c["plumb"]["state"], c["plumb"]["sessions"], c["plumb"]["root_source"]) == ("ok", 1, "PLUMB_HOME")
    assert (c["claude-code"]["sessions"], c["claude-code"]["root_source"]) == (8, "CLAUDE_CONFIG_DIR")


def test_provider_narrows_and_says_so(tmp_path, plumb):
    home = tmp_path / "h"
    write_session(home / ".plumb", "p1", [{"kind": "prompt", "role": "user", "text": "hi"}])
    shutil.copytree(CLAUDE, home / ".claude", symlinks=True)
    p = run(["list", "--home", str(home), "--provider", "plumb", "--format", "json"], plumb)
    c = cov(p)
    assert c["claude-code"]["state"] == "not_looked" and c["claude-code"]["reason"] == "not in --provider"
    assert c["plumb"]["sessions"] == 1
    sess = [r for r in jrows(p) if r["kind"] == "session"]
    assert [(r["provider"], r["session_id"]) for r in sess] == [("plumb", "p1")]
    p = run(["list", "--home", str(home), "--provider", "nosuch"], plumb)
    assert p.returncode == 2 and "unknown provider 'nosuch'" in p.stderr


def test_missing_module_is_no_adapter_and_a_broken_reader_is_unreadable(tmp_path):
    plumb = register(tmp_path / "site", missing=True, broken=True)
    home = tmp_path / "h"
    home.mkdir()
    p = run(["list", "--home", str(home), "--format", "json"], plumb)
    c = cov(p)
    assert c["acme"]["state"] == "no_adapter" and c["acme"]["sessions"] is None
    assert "ssift_no_such_module_acme" in c["acme"]["reason"]
    assert c["broken"]["state"] == "unreadable" and c["broken"]["sessions"] is None
    assert c["broken"]["reason"] == "reader failed: RuntimeError: boom"
    assert p.returncode == 3  # something in scope could not be read: counts are lower bounds
    t = run(["list", "--home", str(home)], plumb)
    assert "acme no adapter" in t.stdout and "Broken (test) unreadable (reader failed: RuntimeError: boom)" in t.stdout


def _without_dac_override() -> list[str] | None:
    """A prefix that runs a command without root's file-permission override, or None."""
    if os.geteuid() != 0:
        return []
    capsh = shutil.which("capsh")
    if capsh is None:
        return None
    return [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--"]


def test_a_root_with_mode_000_is_unreadable_not_zero(tmp_path):
    prefix = _without_dac_override()
    if prefix is None:
        pytest.skip("running as root without capsh: mode 000 cannot be enforced (root overrides file permissions)")
    root = tmp_path / "locked"
    shutil.copytree(CLAUDE, root, symlinks=True)
    (root / "projects").chmod(0)
    try:
        cmd = prefix + (["-c", " ".join([sys.executable, "-m", "sessionsift", "list", "--claude-home", str(root),
                                         "--format", "json"])] if prefix else [])
        if prefix:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)
        else:
            p = run(["list", "--claude-home", str(root), "--format", "json"])
    finally:
        (root / "projects").chmod(0o755)
    c = cov(p)
    assert c["claude-code"]["state"] == "unreadable" and c["claude-code"]["sessions"] is None, c
    assert "Permission denied" in c["claude-code"]["reason"]
    assert p.returncode == 3


def test_a_home_with_no_claude_data_but_another_provider_works(tmp_path, plumb):
    home = tmp_path / "h"
    write_session(home / ".plumb", "p-only", [
        {"kind": "prompt", "role": "user", "text": "fix the bug", "ts": "2026-01-02T03:04:05Z", "cwd": "/w"},
        {"kind": "message", "role": "assistant", "text": "fixed", "ts": "2026-01-02T03:04:09Z"}])
    p = run(["list", "--home", str(home), "--format", "json"], plumb)
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    s = [r for r in rows if r["kind"] == "session"]
    assert len(s) == 1 and s[0]["first_prompt"] == "fix the bug" and s[0]["last_agent_message"] == "fixed"
    assert s[0]["last_at"]["utc"] == "2026-01-02T03:04:09.000Z" and s[0]["is_subagent"] is False
    assert cov(p)["claude-code"]["state"] == "absent"
    t = run(["list", "--home", str(home)], plumb)
    assert "Plumbing (test) 1 session" in t.stdout.splitlines()[-1]


def test_a_session_prefix_resolves_across_providers_and_ambiguity_names_them(tmp_path, plumb):
    proot = tmp_path / "plumb"
    write_session(proot, FB[:8] + "-plumb", [{"kind": "prompt", "role": "user", "text": "x"}])
    write_session(proot, "zz-plumb-only", [{"kind": "prompt", "role": "user", "text": "y"}])
    roots = ["--claude-home", str(CLAUDE), "--root", f"plumb={proot}"]
    p = run(["list", FB[:8], *roots], plumb)
    assert p.returncode == 2
    assert p.stderr.startswith("sessionsift: error: session prefix '8414eb07' is ambiguous: ")
    assert f"{FB} (Claude Code)" in p.stderr and "8414eb07-plumb (Plumbing (test))" in p.stderr
    p = run(["list", "zz-p", *roots, "--format", "json"], plumb)
    assert p.returncode == 0, p.stderr
    assert [r["session_id"] for r in jrows(p) if r["kind"] == "session"] == ["zz-plumb-only"]
    # an exact id wins over a longer id it prefixes
    p = run(["list", FB, *roots, "--format", "json"], plumb)
    assert [r["session_id"] for r in jrows(p) if r["kind"] == "session"] == [FB]


@pytest.mark.parametrize("cmd", ["plan", "image"])
def test_plan_and_image_answer_another_providers_session_with_why_its_reader_reads_none(tmp_path, plumb, cmd):
    """Before: `plan`/`image` refused any session but Claude Code's (exit 2, "reads Claude Code's own
    surfaces"). Now they ask the session's provider; a reader that reads no plan (no image) is named
    with why, and the answer is empty (exit 1), never a refusal."""
    proot = tmp_path / "plumb"
    write_session(proot, "zz-plumb-only", [{"kind": "prompt", "role": "user", "text": "y"}])
    p = run([cmd, "zz-plumb", "--claude-home", str(CLAUDE), "--root", f"plumb={proot}", "--format", "json"], plumb)
    assert p.returncode == 1, (p.stdout, p.stderr)
    rows = jrows(p)
    assert [r["kind"] for r in rows] == ["header", "summary"]
    assert list(rows[-1]["lacks"]) == ["Plumbing (test)"]
    assert "reads no" in rows[-1]["lacks"]["Plumbing (test)"]


def test_the_live_questions_answer_for_a_reader_without_live_state_with_why(tmp_path, plumb):
    """status and wait ask every session's reader for its live state: the plumbing reader offers
    none, so its session is `unknown` with that said (no refusal); a wait for it runs to its
    timeout with that state at exit (exit 124)."""
    proot = tmp_path / "plumb"
    write_session(proot, "zz-plumb-only", [{"kind": "prompt", "role": "user", "text": "y"}])
    p = run(["status", "zz-plumb", "--claude-home", str(CLAUDE), "--root", f"plumb={proot}", "--format", "json"], plumb)
    assert p.returncode == 0, (p.stdout, p.stderr)
    row = next(r for r in jrows(p) if r["kind"] == "session")
    assert (row["provider"], row["session_id"], row["verdict"]) == ("plumb", "zz-plumb-only", "unknown")
    assert row["reason"] == "its reader offers no live-state surfaces"
    assert jrows(p)[-1]["no_live_state"] == [{"provider": "plumb", "why": row["reason"]}]
    p = run(["wait", "zz-plumb", "--for", "stop", "--timeout", "1", "--claude-home", str(CLAUDE),
             "--root", f"plumb={proot}", "--format", "json"], plumb)
    assert p.returncode == 124, (p.stdout, p.stderr)
    assert next(r for r in jrows(p) if r["kind"] == "session")["verdict"] == "unknown"


def test_verbatim_answers_another_providers_session_with_why_its_reader_reads_no_compaction(tmp_path, plumb):
    """Before: `verbatim` refused any session but Claude Code's (exit 2, "reads Claude Code's own
    surfaces"). Now it asks the session's provider for its compactions; a reader that names none
    is answered with why (exit 1, no unit), never a refusal."""
    proot = tmp_path / "plumb"
    write_session(proot, "zz-plumb-only", [{"kind": "prompt", "role": "user", "text": "y"}])
    p = run(["verbatim", "zz-plumb", "--claude-home", str(CLAUDE), "--root", f"plumb={proot}", "--format", "json"],
            plumb)
    assert p.returncode == 1, (p.stdout, p.stderr)
    rows = jrows(p)
    assert [r["kind"] for r in rows] == ["header", "summary"]
    assert rows[0]["lane"]["provider"] == "plumb" and rows[0]["lane"]["session_id"] == "zz-plumb-only"
    s = rows[-1]
    assert s["stopped_by"] == "lacks" and "names no compaction record" in s["lacks"], s
    t = run(["verbatim", "zz-plumb", "--claude-home", str(CLAUDE), "--root", f"plumb={proot}"], plumb)
    assert t.returncode == 1 and "(Plumbing (test)): no compaction read: its reader names no compaction" in t.stdout


def test_the_coverage_line_names_every_state_and_never_prints_a_null_as_0():
    from sessionsift.cli.options import coverage_line
    from sessionsift.providers.base import Coverage

    covs = [Coverage("claude-code", "Claude Code", "ok", 8), Coverage("codex", "Codex CLI", "ok", 3),
            Coverage("gemini-cli", "Gemini CLI", "absent", 0, "no /x/.gemini"),
            Coverage("opencode", "opencode", "unknown_format", None, "schema not known: missing session.title"),
            Coverage("crush", "Crush", "not_looked", None, "pass --crush-home or --home DIR"),
            Coverage("acme", "Acme\x1b[31m", "no_adapter", None, "cannot load acme: ImportError"),
            Coverage("x", "X", "unreadable", None, "locked: database is locked")]
    assert coverage_line(covs) == (
        "coverage: Claude Code 8 sessions · Codex CLI 3 · Gemini CLI absent (no /x/.gemini) · opencode unknown "
        "format (schema not known: missing session.title) · Crush not looked (pass --crush-home or --home DIR) · "
        "Acme\\e[31m no adapter · X unreadable (locked: database is locked)")
    with pytest.raises(ValueError):
        Coverage("x", "X", "unreadable", 0, "a null state cannot carry a count")
