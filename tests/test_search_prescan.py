"""search/prescan.py: the byte scan started before discovery on the fast path gives the answer
the plain scan gives -- stdout, stderr and exit status byte for byte -- on the real-client
stores of examples/ and the crash artefacts, for -c, --count-by and censuses, in text and JSON;
and a transcript appended to, replaced or removed between the workers' read and the search's
own stat is scanned again (or reported unreadable) exactly as the plain scan does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sessionsift.cli import fastsearch
from sessionsift.search import api as A
from sessionsift.search import prescan as PS

ROOT = Path(__file__).resolve().parent.parent
H = ROOT / "examples" / "claude-home"
NEWEST = ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home"

SHAPES = [
    ["Bash", "-c"],
    ["Bash", "-c", "--format", "json"],
    ["the", "-c"],
    ["zqx-nowhere-4417", "-c", "--format", "json"],
    ["ENOENT", "-c"],
    ["Read|Edit", "--count"],
    ["Bash", "--count-by", "tool", "--format", "json"],
    ["the", "--count-by", "session"],
    ["Bash", "-t", "agent.tool.use", "-c"],
    ["", "-t", "user.message", "-c"],
    ["a(", "-c"],
    ["hello", "--format", "json"],
    ["ENOENT", "--count-by", "tool"],
    ["zqx-nowhere-4417", "--count-by", "session", "--format", "json"],
    ["ENOENT", "-t", "user", "-c", "--format", "json"],
    ["hello", "-c"],
    ["zqxsaved", "-c"],  # in a saved tool output only (_saved_home)
    ["zqxsaved", "-c", "--format", "json"],
]
RARE = ("zqx-nowhere-4417", "ENOENT", "hello", "zqxsaved")


def _crash_home(tmp_path: Path) -> Path:
    """examples/crash (real transcripts damaged as a crash damages them) laid out as a home."""
    dest = tmp_path / "crash" / "projects" / "-crash"
    dest.mkdir(parents=True)
    for i, f in enumerate(sorted((ROOT / "examples" / "crash").glob("*.jsonl"))):
        (dest / f"{i:08d}-1111-4111-8111-111111111111.jsonl").write_bytes(f.read_bytes())
    return tmp_path / "crash"


def _saved_home(tmp_path: Path) -> Path:
    """examples/claude-home with a saved tool output holding the needle beside a session that
    has a sidecar (a prescan report of such a lane must not stand for its outcome)."""
    home = tmp_path / "saved"
    shutil.copytree(H, home)
    side = next(p for p in (home / "projects").glob("*/*") if p.is_dir() and (p / "subagents").is_dir())
    (side / "tool-results").mkdir(exist_ok=True)
    (side / "tool-results" / "toolu_01zqxsaved.txt").write_text("Bash zqxsaved output\n")
    return home


def _persisted_home(tmp_path: Path) -> Path:
    """A session whose tool result points to a saved output holding the needle where its
    preview does not (the left-out count of persisted outputs: a prescan report of that lane must
    not stand for its outcome). Hand-made pointer on a real record, as in tests/test_search.py
    (the client writes it only for outputs over its size limit, which no recorded session has)."""
    import json

    obj = None
    for f in sorted((H / "projects").rglob("*.jsonl")):
        for line in f.read_bytes().splitlines():
            o = json.loads(line)
            c = (o.get("message") or {}).get("content") if o.get("type") == "user" else None
            if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c):
                obj = o
                break
        if obj:
            break
    assert obj is not None
    home = tmp_path / "persisted"
    shutil.copytree(H, home)
    dest = home / "projects" / "-p"
    sid = "22222222-2222-4222-8222-222222222222"
    saved = dest / sid / "tool-results" / "toolu_saved.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("the external payload says zqxsaved\n")
    blk = next(b for b in obj["message"]["content"] if b.get("type") == "tool_result")
    blk["content"] = (f"<persisted-output>\nOutput too large (40KB). Full output saved to: {saved}\n\n"
                      f"Preview (first 2KB):\nhead\n</persisted-output>")
    obj["toolUseResult"] = {"stdout": "", "stderr": "", "persistedOutputPath": str(saved)}
    (dest / f"{sid}.jsonl").write_text(json.dumps(obj, separators=(",", ":")) + "\n")
    return home


def _answer(capsys, argv: list[str], mode: str, taken: list | None = None):
    """(exit status, stdout, stderr) of the fast path; `mode`: "plain" (no prescan), "inline"
    (the workers' scan run here, deterministic) or "forked" (as the command runs it)."""
    orig_start, orig_take = PS.start, A.SearchRun._take_prescan
    if mode == "plain":
        PS.start = lambda p, home: None
    elif mode == "inline":
        PS.start = lambda p, home: PS.Prescan(p, os.path.join(os.path.abspath(home), "projects"), forked=False) \
            if PS.eligible(p) else None

    def take(self, stats):
        got = orig_take(self, stats)
        if taken is not None:
            taken.append(len(got))
        return got

    A.SearchRun._take_prescan = take
    try:
        run = fastsearch.parse(["search", *argv])
        assert run is not None
        capsys.readouterr()
        try:
            rc = run()
        except Exception as exc:  # (a usage error: main prints it; both paths must raise the same)
            rc = (type(exc).__name__, str(exc))
        out, err = capsys.readouterr()
    finally:
        PS.start, A.SearchRun._take_prescan = orig_start, orig_take
    return rc, out, err


@pytest.fixture(autouse=True)
def _index_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "index"))


@pytest.mark.parametrize("shape", SHAPES, ids=[" ".join(s) for s in SHAPES])
def test_prescan_answers_as_the_plain_scan(shape, tmp_path, capsys):
    used = 0
    for home in (H, NEWEST, _crash_home(tmp_path), _saved_home(tmp_path), _persisted_home(tmp_path)):
        argv = [*shape, "--claude-home", str(home), "--no-index"]
        want = _answer(capsys, argv, "plain")
        for mode in ("inline", "forked"):
            taken: list = []
            assert _answer(capsys, argv, mode, taken) == want, (home, mode)
            used += sum(taken)
    if shape[0] in RARE:
        assert used > 0  # the reports stood for some lanes (not a vacuous comparison)


def _one_lane_search(home: Path, pattern: str):
    """The pieces of the fast path for `pattern -c` over `home` without the index, with the
    prescan run inline: (the prescan, a function giving the summary and counts of a search
    that uses it, or of one that does not)."""
    from sessionsift.cli.options import claude_scope, make_selection
    from sessionsift.index import config
    from sessionsift.search import Query, search

    config.disable()
    q = Query(patterns=(pattern,), ignore_case=False, fixed=False, include=(), exclude=(), attachments=False,
              additional_context=False, since=None, until=None, max_count=None, subagents=True, context=True,
              count_by="total", sessions_only=False, resolve_persisted=False, count_lines=False)
    ps = PS.Prescan(A.plan(q), os.path.join(str(home), "projects"), forked=False)

    def answer(use: bool):
        from sessionsift.cli import options

        options.set_fast_meta({"claude-code": str(home), "command": "search"})
        try:
            sel = make_selection((), None, subagents=True)
            run = search(q, claude_scope(sel, empty=False))
            run.prescan = ps if use else None
            counts = run.census()
        finally:
            options.set_fast_meta(None)
        sm = run.summary
        return counts, {k: v for k, v in vars(sm).items()}, run.workers

    return ps, answer


@pytest.mark.parametrize("change", ["append", "replace", "same-size", "remove"])
def test_a_file_changed_after_the_workers_read_is_scanned_again(change, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(H, home)
    ps, answer = _one_lane_search(home, "zqxlate4417")
    files = sorted((home / "projects").rglob("*.jsonl"))
    got = ps.results()
    rel = os.path.relpath(files[0], home / "projects")
    assert rel in got and len(got) == len(files)  # the workers saw every transcript, none holds it
    f = files[0]
    data = f.read_bytes()
    line = data.splitlines(keepends=True)[0]
    if change == "append":
        with open(f, "ab") as fh:
            fh.write(line[:-1] + b" zqxlate4417\n")  # a damaged line holding the needle
    elif change == "replace":
        tmp = f.with_suffix(".tmp")
        tmp.write_bytes(data.replace(data[10:21], b"zqxlate4417"))
        os.replace(tmp, f)
    elif change == "same-size":  # rewritten in place, same size: the stat's time or inode differs
        st = os.stat(f)
        with open(f, "r+b") as fh:
            fh.seek(10)
            fh.write(b"zqxlate4417")
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the old mtime: ctime moved
    else:
        f.unlink()
    with_prescan = answer(True)
    assert with_prescan == answer(False)
    counts, sm, _w = with_prescan
    if change == "remove":
        assert sm["files"] == len(files) - 1
    else:
        assert sm["files"] == len(files)


def ps_results(home: Path) -> dict:
    return _one_lane_search(home, "zqxlate4417")[0].results()


def test_files_discovery_does_not_list_are_ignored(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(H, home)
    stray = home / "projects" / "-stray" / "notes" / "subagents"
    stray.mkdir(parents=True)
    (stray / "agent-x.jsonl").write_bytes(b"{}\n")
    assert "-stray/notes/subagents/agent-x.jsonl".replace("/", os.sep) in ps_results(home)
    ps, answer = _one_lane_search(home, "zqxlate4417")
    assert answer(True) == answer(False)
