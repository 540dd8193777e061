"""`files` and `recover` from the index (providers/claude/files/events.py `lane_events_indexed`: only the records
that carry file events are parsed; cwd, turns and survival come from the index) answer exactly
what they answer from a scan, on the real-client corpora (2.1.258, 2.1.332), the crash artefacts
and a grown copy; every file the corpora touch is recovered both ways, at every cut-off kind."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main

ROOT = Path(__file__).resolve().parent.parent
HOMES = [ROOT / "examples" / "claude-home", ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home"]


def run(args: list[str]) -> tuple[int, list[dict]]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as ex:
        main([*args, "--format", "json"])
    return int(ex.value.code or 0), [json.loads(x) for x in out.getvalue().splitlines() if x.strip()]


def both(args: list[str]) -> dict:
    """Scan, then from the index (built by the first indexed run), then again; all equal."""
    ref = run([*args, "--no-index"])
    a = run(args)
    b = run(args)
    strip = lambda r: (r[0], [{k: v for k, v in x.items() if k != "index"} for x in r[1]])  # noqa: E731
    assert strip(a) == strip(ref) == strip(b), args
    return {"ref": ref, "index": b[1][-1].get("index")}


def _home_with_crash(tmp_path: Path) -> Path:
    home = tmp_path / "crash-home"
    proj = home / "projects" / "-crash"
    proj.mkdir(parents=True)
    for i, f in enumerate(sorted((ROOT / "examples" / "crash").glob("*.jsonl"))):
        shutil.copy(f, proj / f"{i:08d}-0000-4000-8000-000000000000.jsonl")
    return home


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_files_and_recover_from_the_index(home):
    H = ["--claude-home", str(home)]
    for by in ("summary", "timeline", "file", "dir"):
        r = both(["files", "--by", by, *H])
    assert r["index"]["from_index"] > 0 and not r["index"]["scanned"]
    files = [x["file"] for x in both(["files", "--by", "file", *H])["ref"][1] if x.get("kind") == "file"]
    assert files
    for f in files:
        both(["recover", "--file", f, *H])  # the content view: json carries the content
        both(["recover", "--file", f, "--coverage", *H])
        both(["recover", "--file", f, "--patches", *H])
        both(["recover", "--file", f, "--at", "turn1", *H])
        both(["recover", "--file", f, "--at", "L20", *H])
        both(["recover", "--file", f, "--list-backups", *H])


def _every_answer(H: list[str], pick=None) -> list[str]:
    """`files` in every grouping and `recover` of every file it lists (`pick`: of those it
    keeps), each equal with and without the index; the files."""
    for by in ("summary", "timeline", "file", "dir"):
        both(["files", "--by", by, *H])
    files = [x["file"] for x in run(["files", "--by", "file", *H, "--no-index"])[1] if x.get("kind") == "file"]
    for f in (files if pick is None else pick(files)):
        both(["recover", "--file", f, *H])
        both(["recover", "--file", f, "--coverage", *H])
    return files


def test_crash_artefacts(tmp_path):
    home = _home_with_crash(tmp_path)
    _every_answer(["--claude-home", str(home)])


def test_the_multi_provider_home():
    """examples/home: Claude Code's transcripts beside the other providers' sessions (recovered:
    the files Claude Code's transcripts touch, and three only the others' sessions touch)."""
    claude = {x["file"] for x in run(["files", "--by", "file", "--claude-home", str(HOMES[0]), "--no-index"])[1]
              if x.get("kind") == "file"}
    files = _every_answer(["--home", str(ROOT / "examples" / "home")],
                          lambda fs: [f for f in fs if f in claude] + [f for f in fs if f not in claude][:3])
    assert claude <= set(files) and len(files) > len(claude)


def test_a_grown_and_a_rewritten_copy(tmp_path):
    home = tmp_path / "claude"
    shutil.copytree(HOMES[1], home)
    H = ["--claude-home", str(home)]
    _every_answer(H)
    main_lane = max((home / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    data = main_lane.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) // 2) + 1
    main_lane.write_bytes(data[:cut])
    _every_answer(H)
    with open(main_lane, "ab") as f:
        f.write(data[cut:])
    _every_answer(H)
    r = both(["files", "--by", "timeline", *H])
    assert r["index"]["from_index"] > 0
    # rewritten in place, same size: every path the lane names changes case; the facts kept for
    # the old bytes are not used (the answers name the new paths)
    assert b"app.py" in data
    main_lane.write_bytes(data.replace(b"app.py", b"APP.py"))
    files = _every_answer(H)
    assert any(f.endswith("/APP.py") for f in files) and not any(f.endswith("/app.py") for f in files)


REAL = sorted(p for h in HOMES for p in (h / "projects").rglob("*.jsonl"))


def _facts(le) -> list[tuple]:
    return [(x.no, x.turn, x.timestamp) for x in le.index.entries]


def _call(c) -> tuple:
    return (c.tool, c.tool_use_id, c.line, c.timestamp, c.turn, c.cwd, c.input, c.result_line, c.result_ts,
            c.is_error, c.result_text, c.echo, c.survival, c.path, c.shell)


def _events(le) -> list:
    """Everything of a lane's events, their content too (whole events only)."""
    return ([_call(c) for c in le.calls]
            + [(a.kind, a.line, a.timestamp, a.turn, a.payload, a.cwd) for a in le.attachments]
            + [(b.line, b.kind, b.timestamp, b.path, b.version, b.backup_file) for b in le.backups]
            + [le.snapshot_lines, le.first_cwd, le.index.stats.omissions()])


def _light(le) -> list:
    """What files and recover read of events that do not name their file: the facts (light events
    made from the index have these and no content)."""
    from sessionsift.providers.claude.files import facts as F

    sh = lambda s: None if s is None else (s.parse_error, s.command[:200] if s.parse_error else None,  # noqa: E731
                                           s.markers, [(m.raw, m.path, m.resolution, m.op, m.verb,
                                                        m.heredoc is not None) for m in s.mutations], s.read)
    return ([(c.tool, c.tool_use_id, c.line, c.timestamp, c.turn, c.cwd, c.result_line, c.result_ts, c.is_error,
              c.survival, c.path, c.raw_path, c.touch, tuple(c.hint), sh(c.shell), c.pos, c.ok) for c in le.calls]
            + [(a.kind, a.line, a.timestamp, a.turn, a.payload.get("filename"), a.cwd, a.slug) for a in le.attachments]
            + [(b.line, b.kind, b.timestamp, b.path, b.tracked_as, b.version, b.backup_file, b.backup_time)
               for b in le.backups]
            + [le.snapshot_lines, le.first_cwd, le.index.stats.omissions(), F.encode(le)])


def _hydrated(le) -> list:
    """Every light event of `le` read whole from its records (providers/claude/files/facts.py `hydrate`)."""
    from sessionsift.providers.claude.files import facts as F

    got = F.hydrate(le, list(le.calls) + list(le.attachments))
    assert len(got) == len(le.calls) + len(le.attachments)
    return ([_call(got[id(c)]) for c in le.calls]
            + [(a.kind, a.line, a.timestamp, a.turn, a.payload, a.cwd) for a in (got[id(x)] for x in le.attachments)])


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name[-16:]}/{p.name[:12]}")
def test_file_slots_and_lazy_facts_equal_the_lane_view(path, tmp_path, monkeypatch):
    """The ``fev`` section (index/fileslots.py) is derived once and then read alone; the events
    from it (light: their facts, providers/claude/files/facts.py) and the per-record facts (loaded lazily from the
    index, or from the lane when the index changed meanwhile) equal the lane view's, record by
    record, and each event read whole again from its records equals the lane view's whole."""
    from sessionsift.files.shell import GRAMMAR
    from sessionsift.providers.claude.discover import Lane
    from sessionsift.providers.claude.files import events as E
    from sessionsift.index import store
    from sessionsift.providers.claude.cache import lanes as IL

    dest = tmp_path / path.name
    dest.write_bytes(path.read_bytes())
    lane = Lane(dest, dest.stem, "main", "main")
    ref = E.lane_events(lane, keep_view=False, grammar=GRAMMAR)
    IL.lane_stats(lane)
    idx = store.index_path(IL.KIND, dest)
    assert not store.IndexFile.open(idx, IL.KIND, str(dest)).has("fev")
    first = E.lane_events_indexed(lane, None, GRAMMAR)
    f = store.IndexFile.open(idx, IL.KIND, str(dest))
    assert f.has("fev") and f.has("turns.2")
    again = E.lane_events_indexed(lane, None, GRAMMAR)  # from the stored section
    assert all(c.light for c in first.calls + again.calls) and all(a.light for a in first.attachments)
    assert _light(first) == _light(again) == _light(ref)
    whole = _events(ref)[:len(ref.calls) + len(ref.attachments)]
    with monkeypatch.context() as m:  # each from its own records, not from a reading of the lane
        m.setattr(E, "lane_events", lambda *a, **k: pytest.fail("read the whole lane"))
        assert _hydrated(first) == _hydrated(again) == whole
    assert _facts(first) == _facts(ref)
    # a section derived for another choice of tools is derived again, not used
    o = f.section("fev")
    o["tools"] = ["Read"]
    f.with_section("fev", o, IL.KIND, str(dest))
    assert _light(E.lane_events_indexed(lane, None, GRAMMAR)) == _light(ref)
    assert store.IndexFile.open(idx, IL.KIND, str(dest)).section("fev")["tools"] != ["Read"]
    # facts asked for after the index was replaced: read from the lane, still equal
    late = E.lane_events_indexed(lane, None, GRAMMAR)
    idx.unlink()
    assert _facts(late) == _facts(ref)
    # the transcript rewritten (same bytes, a new identity): its events read whole from the lane
    dest.write_bytes(path.read_bytes())
    assert _hydrated(again) == whole


@pytest.mark.parametrize("xs", [[], [""], [None], ["a", None, ""], ["\x01"], ["a\x00b", "c"], [None, "\x01x"]])
def test_packed_string_lists_come_back_exactly(xs):
    """fileslots packs string lists into one string; a value holding a separator (JSON can carry
    \\u0000) keeps the list form. Hand-made values: no client writes these into a timestamp."""
    from sessionsift.providers.claude.cache import fileslots as FS

    assert FS._unpack(FS._pack(xs), len(xs)) == xs
    rows = [[x or "" for x in xs if x is not None]] + [[]] + [[y for y in (xs[:1] if xs and xs[0] else [])]]
    assert FS._unpack_ids(FS._pack_ids(rows), len(rows)) == [tuple(r) for r in rows]


def test_the_files_summary_answers_alone_and_only_while_files_are_unchanged(tmp_path, monkeypatch):
    """After one warm `files` the data root's file-events summary (index/filesummary.py) answers
    the next with a stat per transcript (the per-transcript index files gone: not read); a
    transcript that changed is not taken from it; recover --at, which needs every record's turn,
    reads them from the lane when its index is gone - and every answer equals the scan's."""
    from sessionsift.index import store
    from sessionsift.providers.claude.cache import lanes as IL

    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "index"))
    home = tmp_path / "claude"
    shutil.copytree(HOMES[1], home)
    H = ["--claude-home", str(home)]
    both(["files", "--by", "timeline", *H])
    from sessionsift.providers.claude.cache import filesummary

    assert (store.root_dir() / filesummary.KIND).is_dir()
    ref = run(["files", "--by", "timeline", *H, "--no-index"])
    files = [x["file"] for x in run(["files", "--by", "file", *H, "--no-index"])[1] if x.get("kind") == "file"]
    at_ref = run(["recover", "--file", files[0], "--at", "turn1", *H, "--no-index"])
    for p in (store.root_dir() / IL.KIND).rglob("*.idx"):
        p.unlink()  # only the root summaries are left
    from sessionsift.providers.claude.model import lineage

    heads_read: list = []
    real_head = lineage.read_head
    monkeypatch.setattr(lineage, "read_head", lambda p: heads_read.append(p) or real_head(p))
    got = run(["files", "--by", "timeline", *H])
    assert got[1][-1]["index"]["from_index"] == got[1][-1]["transcripts"] > 0
    assert not list((store.root_dir() / IL.KIND).rglob("*.idx"))  # answered without a lane index
    assert heads_read == []  # fork detection took every head from the summary
    strip = lambda r: (r[0], [{k: v for k, v in x.items() if k != "index"} for x in r[1]])  # noqa: E731
    assert strip(got) == strip(ref)
    at = run(["recover", "--file", files[0], "--at", "turn1", *H])
    assert strip(at) == strip(at_ref)
    lane = max((home / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    data = lane.read_bytes()
    lane.write_bytes(data[: data.rfind(b"\n", 0, len(data) // 2) + 1])  # truncated: not from the summary
    got = run(["files", "--by", "timeline", *H])
    assert got[1][-1]["index"]["built"] >= 1
    assert strip(got) == strip(run(["files", "--by", "timeline", *H, "--no-index"]))


def test_warm_files_parses_no_record_and_recover_only_the_records_naming_its_file(tmp_path, monkeypatch):
    """After the facts are kept (providers/claude/files/facts.py), a warm `files` parses no record at all, and a
    warm `recover --file X` parses exactly the records of the events that name X (a call's
    tool_use and tool_result records, an attachment's), none else; facts kept under other rules
    (another version of the code that derives them) are derived again, not used. Every answer
    equals the scan's."""
    from sessionsift.providers.claude.files import facts as F, replay as R
    from sessionsift.read import lines

    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "index"))
    H = ["--claude-home", str(HOMES[1])]
    strip = lambda r: (r[0], [{k: v for k, v in x.items() if k != "index"} for x in r[1]])  # noqa: E731
    refs = {by: run(["files", "--by", by, *H, "--no-index"]) for by in ("summary", "timeline", "file", "dir")}
    files = [x["file"] for x in refs["file"][1] if x.get("kind") == "file"]
    rrefs = {f: run(["recover", "--file", f, "--patches", *H, "--no-index"]) for f in files}
    parsed: list[int] = []
    real = lines._parse
    monkeypatch.setattr(lines, "_parse", lambda raw, stats: parsed.append(1) or real(raw, stats))
    assert strip(run(["files", "--by", "timeline", *H])) == strip(refs["timeline"])  # derives the facts
    assert parsed
    for by, ref in refs.items():
        parsed.clear()
        assert strip(run(["files", "--by", by, *H])) == strip(ref)
        assert parsed == [], by
    want: list[int] = []
    real_recover = R.recover

    def recover(scope, file, at=None, subagents=True, lane_evs=None, problems=None):
        assert all(getattr(c, "light", False) for le in lane_evs for c in le.calls)
        want.append(sum((1 + (x.result_line is not None)) if kind == "call" else 1
                        for _t, _a, _p, kind, x, _li in R._ordered(lane_evs)
                        if kind != "bk" and R._mentions(x, kind, R.norm(file))))
        return real_recover(scope, file, at, subagents, lane_evs, problems)

    monkeypatch.setattr(R, "recover", recover)
    for f in files:
        parsed.clear()
        want.clear()
        assert strip(run(["recover", "--file", f, "--patches", *H])) == strip(rrefs[f])
        assert want and len(parsed) == want[0] > 0, f  # the records naming f, and no other
    # facts kept under other rules are not used: derived again (records parsed), still equal
    monkeypatch.setattr(F, "rules", lambda grammar: "facts.0:another-version")
    parsed.clear()
    assert strip(run(["files", "--by", "timeline", *H])) == strip(refs["timeline"])
    assert parsed
    parsed.clear()
    assert strip(run(["files", "--by", "timeline", *H])) == strip(refs["timeline"])
    assert parsed == []


@pytest.mark.parametrize("home", HOMES + [ROOT / "examples" / "home" / ".claude"], ids=["2.1.258", "2.1.332", "home"])
def test_the_replay_leaves_out_only_events_that_do_nothing(home, tmp_path, monkeypatch):
    """recover replays only the events that can add a step for its file (recover.py `_may_step`:
    a store's tens of thousands of others are not sorted or read whole); replaying every event
    gives the same recovery, step by step, for every file the transcripts name, at every cut-off
    kind - on the scan's events and on the index's (light) ones."""
    from dataclasses import asdict

    from sessionsift.files.recover import parse_at
    from sessionsift.files.shell import GRAMMAR
    from sessionsift.providers.claude.discover import resolve_targets
    from sessionsift.providers.claude.files import collect as C, replay as R

    crash = _home_with_crash(tmp_path)
    for h in (home, crash):
        scope = resolve_targets([], str(h))
        scanned = C.collect(scope, grammar=GRAMMAR)
        light = C.collect(scope, True, True, grammar=GRAMMAR)
        assert any(c.light for le in light[0] for c in le.calls)
        files = sorted({c.path for le in scanned[0] for c in le.calls if c.path}
                       | {m.path for le in scanned[0] for c in le.calls if c.shell for m in c.shell.mutations if m.path}
                       | {b.path for le in scanned[0] for b in le.backups})
        assert files
        for lane_evs, problems in (scanned, light):
            for f in files:
                for at in (None, "turn1", "L20"):
                    cut = parse_at(at)
                    kept = R.recover(scope, f, cut, True, lane_evs, problems)
                    with monkeypatch.context() as m:
                        m.setattr(R, "_may_step", lambda *a: True)
                        every = R.recover(scope, f, cut, True, lane_evs, problems)
                    assert [asdict(s) for s in kept.steps] == [asdict(s) for s in every.steps], (h, f, at)
                    assert (kept.state, kept.exists, kept.status, kept.shell_writes, kept.boundaries) == (
                        every.state, every.exists, every.status, every.shell_writes, every.boundaries)
