"""`audit size` on the committed real-client corpora of every provider (examples/home links Claude
Code 2.1.258, Codex CLI, Gemini CLI, opencode and Crush; examples/newest-client holds Claude Code
2.1.332 with its `api-request*` dumps). Every expectation is taken independently from the raw
bytes (json.loads of each line, os.stat), never from the library under test."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sessionsift.audit import size as SZ
from sessionsift.export.source import pairs
from sessionsift.providers.scope import RootRequest, select, survey

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"
HOME = EX / "home"
NEWEST = EX / "newest-client" / "2.1.332" / "claude-home"


def _pairs(home=None, roots=None):
    sv = survey(RootRequest(roots=roots or {}, home=home), light=frozenset({"claude-code"}))
    return pairs(select(sv, []))


def _run(*args):
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True)
    return p, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def _key(ss):
    return (ss.ref.provider, ss.ref.session_id)


def _view(ss):
    return (ss.bytes, ss.lines, sorted(ss.kinds.items()), sorted(ss.payloads.items()), sorted(ss.attachments.items()),
            ss.footprint_bytes, ss.capture_bytes, ss.top)


@pytest.mark.parametrize("where", ["home", "newest"])
def test_byte_path_equals_parse_path(where):
    """A line measured on its bytes (never parsed whole) gives exactly what a parsed line gives:
    forced for every line (big_line=0) against the default, on every session of the corpus."""
    kw = {"home": str(HOME)} if where == "home" else {"roots": {"claude-code": str(NEWEST)}}
    parsed = SZ.size_audit(_pairs(**kw), big_line=1 << 40)
    on_bytes = SZ.size_audit(_pairs(**kw), big_line=0)
    assert len(parsed.sessions) == len(on_bytes.sessions) > 4
    assert sum(s.big_lines for s in on_bytes.sessions) > 100 and all(s.big_lines == 0 for s in parsed.sessions)
    for a, b in zip(parsed.sessions, on_bytes.sessions):
        assert _key(a) == _key(b)
        assert _view(a) == _view(b), _key(a)
    assert {d.sha256: d.count for d in parsed.dups.values()} == {d.sha256: d.count for d in on_bytes.dups.values()}


def _raw_lines(p: Path):
    data = p.read_bytes()
    return [ln for ln in data.split(b"\n")[:-1]], data


def test_line_bytes_and_kinds_match_the_files():
    """Every line-based session: the bytes attributed to kinds are the files' bytes, line by line,
    and the records per kind are the `type` of each line as json.loads reads it."""
    res = SZ.size_audit(_pairs(home=str(HOME)))
    seen = Counter()
    for ss in res.sessions:
        if ss.measured != "bytes on disk":
            continue
        seen[ss.ref.provider] += 1
        want_bytes = 0
        want = Counter()
        for p in ss.ref.paths:
            if p.suffix == ".json":  # Gemini CLI's legacy whole-file session: one document
                want_bytes += p.stat().st_size
                want["(json document)"] += 1
                continue
            lines, data = _raw_lines(p)
            assert data.endswith(b"\n")  # complete files: no torn tail to hold back
            want_bytes += len(data)
            for ln in lines:
                o = json.loads(ln)
                t = o.get("type")
                if isinstance(t, str):
                    sub = next((o[k]["type"] for k in ("payload", "attachment")
                                if isinstance(o.get(k), dict) and isinstance(o[k].get("type"), str)), None)
                    want[f"{t}/{sub}" if sub else (f"{t}/{o['subtype']}" if isinstance(o.get("subtype"), str) else t)] += 1
                elif "sessionId" in o and "projectHash" in o:
                    want["header"] += 1
                else:
                    want[next(iter(o))] += 1
        assert ss.bytes == want_bytes, _key(ss)
        assert {k: v[0] for k, v in ss.kinds.items()} == dict(want), _key(ss)
        assert sum(b for _, b in ss.kinds.values()) == want_bytes
    assert seen["claude-code"] == 8 and seen["codex"] >= 6 and seen["gemini-cli"] >= 10


def test_inline_image_measured_and_hashed():
    """files_basic Read a 4x4 PNG: the tool_result carries it as base64. The audit counts one
    image/png whose bytes are the base64 string's and whose SHA-256 is that string's."""
    res = SZ.size_audit(_pairs(home=str(HOME)))
    ss = next(s for s in res.sessions if s.ref.session_id == "8414eb07-cca2-5cca-9059-e9baedac31e1")
    b64 = []
    for ln in ss.ref.paths[0].read_bytes().splitlines():
        o = json.loads(ln)
        for b in (o.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                b64 += [c["source"]["data"] for c in b["content"] if c.get("type") == "image"]
    assert len(b64) == 1 and base64.b64decode(b64[0]).startswith(b"\x89PNG")
    assert ss.attachments == {"image/png": [1, len(b64[0])]}
    assert ss.payloads["image"] == [1, len(b64[0])]


def test_request_dumps_of_the_newer_client():
    """2.1.332 writes api-request / api-request-shape / api-request-blob records: each is a
    request dump payload of its whole line."""
    res = SZ.size_audit(_pairs(roots={"claude-code": str(NEWEST)}))
    assert res.sessions
    for ss in res.sessions:
        want = [len(ln) for p in ss.ref.paths for ln in p.read_bytes().splitlines()
                if json.loads(ln).get("type", "").startswith("api-request")]
        assert want, ss.ref.session_id
        assert ss.payloads["request_dump"] == [len(want), sum(want)]
        assert ss.kinds["api-request-shape"][0] >= 1


def test_duplicates_and_reclaim(tmp_path):
    """The same real session stored twice under a second project dir (as a copied store holds it):
    every payload of 1 KiB or more is a duplicate, and the reclaim is (copies-1) x size."""
    src = next((HOME / ".claude" / "projects").glob("-tmp-ssift-rc-files-basic-work"))
    home = tmp_path / "claude"
    for name in ("-a", "-b"):
        d = home / "projects" / name
        d.mkdir(parents=True)
        for f in src.glob("*.jsonl"):
            shutil.copy(f, d / f.name.replace("8414eb07", "8414eb0" + name[-1]))
    res = SZ.size_audit(_pairs(roots={"claude-code": str(home)}))
    assert len(res.sessions) == 2
    alone = tmp_path / "alone"
    shutil.copytree(src, alone / "projects" / src.name)
    one = SZ.size_audit(_pairs(roots={"claude-code": str(alone)}))
    single = one.dups
    assert single
    for h, d in single.items():
        assert res.dups[h].count == 2 * d.count
    assert res.dedup_reclaim() == sum((2 * d.count - 1) * d.size for d in single.values())
    # independent: the long strings of the file, hashed by their JSON-escaped bytes
    strings = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            enc = json.dumps(v, ensure_ascii=False)[1:-1].encode()
            if len(enc) >= SZ.DUP_MIN:
                strings.append(hashlib.sha256(enc).hexdigest())

    for ln in next(src.glob("*.jsonl")).read_bytes().splitlines():
        walk(json.loads(ln))
    assert set(strings) == set(single)


def test_capture_is_zstd_of_the_footprint():
    import zstandard

    res = SZ.size_audit(_pairs(home=str(HOME)))
    ss = next(s for s in res.sessions if s.ref.provider == "gemini-cli" and s.side_files)
    files = [Path(p) for p in ss.ref.paths] + []
    total = 0
    comp = 0
    from sessionsift.providers import get

    for p in get("gemini-cli").footprint(ss.ref):
        p = Path(p)
        for f in ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())):
            data = f.read_bytes()
            total += len(data)
            c = zstandard.ZstdCompressor(level=3).compressobj()
            comp += len(c.compress(data)) + len(c.flush())
    assert files and ss.footprint_bytes == total and ss.capture_bytes == comp
    db = [s for s in res.sessions if s.ref.provider in ("opencode", "crush")]
    assert db and all(s.footprint_bytes is None and s.capture_bytes is None and s.capture_note for s in db)
    assert all(s.measured == "row json" for s in db)


def test_cli_json_every_provider():
    p, rows = _run("audit", "size", "--home", str(HOME), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert rows[0]["kind"] == "header" and rows[0]["audit"] == "size"
    sess = [r for r in rows if r["kind"] == "session"]
    summ = rows[-1]
    assert summ["kind"] == "summary"
    assert {r["provider"] for r in sess} == {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
                                             "kilo-code"}
    # rows: another provider's child session (subagent or helper) is one; `sessions` top-level only
    assert summ["sessions"] + summ["child_sessions"] == len(sess) == sum(
        c["sessions"] + (c["subagents"] + c["helper_sessions"] if c["provider"] != "claude-code" else 0)
        for c in summ["coverage"])
    assert summ["sessions"] == sum(c["sessions"] for c in summ["coverage"]) == rows[0]["sessions"]
    assert summ["bytes"] == sum(r["bytes"] for r in sess)
    assert summ["dedup_reclaim_bytes"] == sum(r["reclaim_bytes"] for r in rows if r["kind"] == "duplicate") > 0
    assert summ["capture_unknown_sessions"] == sum(1 for r in sess if r["capture_bytes"] is None) > 0
    for r in sess:
        if r["provider"] in ("opencode", "crush"):
            assert r["footprint_bytes"] is None and r["capture_reclaim_bytes"] is None  # unknown, not 0
    p, _ = _run("audit", "size", "--home", str(HOME))
    assert p.returncode == 0 and "coverage: Claude Code 8 sessions" in p.stdout
    assert "deduplication would reclaim" in p.stdout


def test_hostile_session_path_is_one_escaped_line(tmp_path):
    """A project dir whose name holds ESC and a newline prints as escaped text, one line each."""
    src = next((HOME / ".claude" / "projects").glob("-tmp-ssift-rc-todos-work"))
    home = tmp_path / "c"
    d = home / "projects" / "-evil\x1b[2J\nfake"
    d.mkdir(parents=True)
    for f in src.glob("*.jsonl"):
        shutil.copy(f, d / f.name)
    p, _ = _run("audit", "size", "--claude-home", str(home))
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout and "\nfake" not in p.stdout


def test_text_names_providers_by_display_name_and_counts_in_the_singular():
    """The review saw `1 sessions` and `(codex)` (the internal name) in the text; every session
    line now names its provider as the coverage line does, and one of anything is singular."""
    p, rows = _run("audit", "size", "--home", str(HOME), "--top", "100", "--format", "json")
    display = {c["provider"]: c["display"] for c in rows[-1]["coverage"]}
    want = {r["session_id"]: display[r["provider"]] for r in rows if r["kind"] == "session"}
    assert len(set(want.values())) == 9
    p, _ = _run("audit", "size", "--home", str(HOME), "--top", "100")
    seen = {}
    for line in p.stdout.splitlines():
        sid, _, rest = line.partition(" (")
        if sid in want:
            seen[sid] = rest.split(") ", 1)[0]
    assert seen == want
    assert "(codex)" not in p.stdout and "(claude-code)" not in p.stdout
    sid = "8414eb07-cca2-5cca-9059-e9baedac31e1"
    p, rows = _run("audit", "size", sid, "--claude-home", str(EX / "claude-home"))
    assert p.returncode == 0, p.stderr
    assert "\n1 session, " in p.stdout and "1 sessions" not in p.stdout
    p, _ = _run("audit", "size", "--home", str(HOME), "--top", str(len(want) - 1))  # one not shown
    assert "... 1 smaller session not shown" in p.stdout


def test_an_unreadable_part_of_the_footprint_makes_the_size_a_lower_bound_and_says_so(monkeypatch):
    """HAND-MADE fault (these tests run as root, which reads every file): one file of a real
    session's footprint cannot be stat'ed, injected into the audit's lstat. Before: the file was
    skipped in silence (a smaller footprint, no note, no problem, a capture size of part of it)."""
    res = SZ.size_audit(_pairs(home=str(HOME)))
    whole = next(s for s in res.sessions if s.ref.provider == "claude-code" and s.side_files)
    assert whole.footprint_note is None and whole.capture_bytes is not None
    from sessionsift.providers import get

    fp = [Path(p) for p in get("claude-code").footprint(whole.ref)]
    side = next(f for p in fp if p.is_dir() for f in sorted(p.rglob("*")) if f.is_file())
    real = os.lstat

    def lstat(p, *a, **k):
        if os.fspath(p) == str(side):
            raise PermissionError(13, "Permission denied", str(side))
        return real(p, *a, **k)

    monkeypatch.setattr(SZ.os, "lstat", lstat)
    got = next(s for s in SZ.size_audit(_pairs(home=str(HOME))).sessions if _key(s) == _key(whole))
    assert got.footprint_bytes == whole.footprint_bytes - side.stat().st_size
    assert got.footprint_note == f"lower bound: 1 entry of the footprint could not be read ({side}: Permission denied)"
    assert [(p.path, p.why) for p in got.report.problems] == [(str(side), "footprint entry unreadable: Permission denied")]
    assert got.capture_bytes is None and got.capture_note == "capture size unknown: part of the footprint could not be read"


def test_a_claude_session_whose_lane_cannot_be_stated_has_no_size(monkeypatch):
    """HAND-MADE fault: a lane file that exists and cannot be stat'ed. Before: its bytes were left
    out of the session's size (a smaller size, nothing said)."""
    from sessionsift.providers import get
    from sessionsift.providers.claude import discover as D

    prov = get("claude-code")
    root = HOME / ".claude"
    s = next(x for x in D.all_sessions(root, [])[0] if len(x.lanes()) > 1)
    lane = s.lanes()[1].path
    assert prov.ref(s, root).size == sum(ln.path.stat().st_size for ln in s.lanes())
    real = Path.stat

    def stat(self, *a, **k):
        if self == lane:
            raise PermissionError(13, "Permission denied")
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "stat", stat)
    ref = prov.ref(s, root, facts=False)
    assert ref.size is None
    assert ref.extra["size_note"] == f"size unknown: {lane} could not be stat'ed (Permission denied)"
