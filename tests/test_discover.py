"""Project-directory encoding (the client's sanitize: PATH-003) and data-root precedence (an empty
CLAUDE_CONFIG_DIR counts as unset: PATH-011)."""

from __future__ import annotations

import os
import unicodedata

import pytest

from sessionsift.providers.claude.discover import _js_hash36, claude_home, resolve_targets, sanitize
from sessionsift.errors import TargetError


def test_every_non_alnum_utf16_unit_becomes_one_dash():
    assert sanitize("/tmp/probe/work") == "-tmp-probe-work"
    assert sanitize("/a b/c_d.e") == "-a-b-c-d-e"
    assert sanitize("/x--y") == "-x--y"  # no collapsing
    assert sanitize("C:\\Users\\x") == "C--Users-x"  # PATH-003
    assert sanitize("/p/\U0001F600") == "-p---"  # astral = two UTF-16 units = two dashes
    nfd = unicodedata.normalize("NFD", "/café")
    assert sanitize(nfd) == "-caf-"  # recomposed to one unit


def test_long_paths_get_prefix_and_hash():
    cwd = "/" + "/".join(["segment%02d" % i for i in range(30)])
    enc = sanitize(cwd)
    assert enc.startswith(sanitize(cwd[:201])[:200])
    assert enc[200] == "-" and len(enc) > 201
    assert enc[201:] == _js_hash36(cwd)


def test_js_hash_matches_node_reference_values():
    # Reference values printed by Node.js running the client's algorithm:
    #   let x=0; for (c of UTF-16 units) x=((x<<5)-x+c)|0; Math.abs(x).toString(36)
    ref = {"": "0", "a": "2p", "/tmp/x": "o2wb75", "/" + "z" * 400: "1o8up", "/p/\U0001F600/caf\u00e9": "yqz80v"}
    for s, want in ref.items():
        assert _js_hash36(s) == want, s


def test_home_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert claude_home(str(tmp_path / "x")).source == "--claude-home"
    assert claude_home().path == tmp_path / "cfg"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")  # empty counts as unset
    assert claude_home().source == "~/.claude"
    from pathlib import Path

    assert claude_home().path == Path(os.environ["HOME"]) / ".claude"


def test_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(TargetError) as ei:
        resolve_targets([], tmp_path / "nope")
    assert "does not exist" in str(ei.value)


def test_empty_projects_dir_is_zero_sessions_not_error(tmp_path):
    (tmp_path / "projects").mkdir()
    scope = resolve_targets([], tmp_path)
    assert scope.sessions == [] and scope.problems == []


def test_unreadable_project_dir_is_reported_and_rest_continue(tmp_path, monkeypatch):
    # As root, permission bits do not stop reads, so simulate EACCES on one directory.
    import sessionsift.providers.claude.discover as D

    bad = tmp_path / "projects" / "-bad"
    good = tmp_path / "projects" / "-good"
    bad.mkdir(parents=True)
    good.mkdir(parents=True)
    (good / "s1.jsonl").write_text("{}\n")
    real = os.scandir

    def fake(path="."):
        if os.fspath(path) == str(bad):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(D.os, "scandir", fake)
    scope = resolve_targets([], tmp_path)
    assert [s.session_id for s in scope.sessions] == ["s1"]
    assert len(scope.problems) == 1 and "permission denied" in scope.problems[0].why


def _real_homes():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples"
    return [p for p in (root / "claude-home", root / "newest-client" / "2.1.332" / "claude-home") if (p / "projects").is_dir()]


def test_listed_paths_are_the_paths_the_filesystem_names():
    """Discovery builds each transcript's Path from its directory's (pathlib's child builder, no
    re-parse): the paths must be the ones a walk of the data root gives, as parsed Paths."""
    from pathlib import Path

    from sessionsift.providers.claude.search.lanes import lanes_of

    n = 0
    for home in _real_homes():
        scope = resolve_targets([], home)
        lanes = lanes_of(scope, True)
        walked = {os.path.join(d, f) for d, _ds, fs in os.walk(home / "projects") for f in fs
                  if f.endswith(".jsonl") and f != "journal.jsonl"}
        assert {os.fspath(ln.path) for ln in lanes} == walked
        for ln in lanes:
            fresh = Path(os.fspath(ln.path))
            assert ln.path == fresh and ln.path.parts == fresh.parts and hash(ln.path) == hash(fresh)
            assert ln.path.parent == fresh.parent and ln.path.name == fresh.name
            n += 1
    assert n > 10


def test_a_session_copied_to_another_problems_list_keeps_every_field():
    import dataclasses

    from sessionsift.providers.claude.discover import Session, _with_problems

    home = _real_homes()[0]
    s = resolve_targets([], home).sessions[0]
    other: list = []
    c = _with_problems(s, other)
    assert c.problems is other
    for f in dataclasses.fields(Session):
        if f.name != "problems":
            assert getattr(c, f.name) == getattr(s, f.name), f.name


def test_selected_sessions_report_into_their_scopes_problems():
    from sessionsift.providers.scope import RootRequest, select, survey

    for home in _real_homes():
        for targets in ([], [resolve_targets([], home).sessions[0].session_id]):
            sv = survey(RootRequest(roots={"claude-code": str(home)}, home=None, only=()),
                        light=frozenset({"claude-code"}))
            sc = select(sv, targets).claude
            assert sc.sessions and all(s.problems is sc.problems for s in sc.sessions)
            assert [s.session_id for s in sc.sessions] == [s.session_id for s in resolve_targets(targets, home).sessions]


def test_a_cwd_is_found_by_its_realpath_in_nfc(tmp_path):
    # PATH-002: the client names a project dir from the cwd's realpath in NFC; the cwd given
    # here is a symlink to it, or its NFD spelling (a macOS-made name on this filesystem)
    from sessionsift.providers.claude.discover import canonical_cwd, project_dirs_for_cwd, sanitize

    nfd = unicodedata.normalize("NFD", "café")
    real = tmp_path / nfd  # on disk in NFD: its realpath in NFC names no file, but the project dir
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    home = tmp_path / "home"
    proj = home / "projects" / sanitize(unicodedata.normalize("NFC", os.path.realpath(real)))
    proj.mkdir(parents=True)
    (proj / "11111111-1111-4111-8111-111111111111.jsonl").write_text("{}\n")
    assert canonical_cwd(tmp_path / "link") == unicodedata.normalize("NFC", str(real.resolve())) != str(real.resolve())
    assert project_dirs_for_cwd(home, str(tmp_path / "link")) == [proj]
    assert project_dirs_for_cwd(home, str(real)) == [proj]
