"""A long first build of the index shows progress on a terminal (index/progress.py) - from every
command that builds it: `stats`, `index update`, `files`, `recover` - and never in a pipe; and
every command that answers from the index says, in its text output, which transcripts it read
without it and why."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main
from sessionsift.index import progress as P

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_shows_on_a_terminal_only(monkeypatch):
    monkeypatch.setattr(P, "DELAY", 0.0)
    monkeypatch.delenv("SESSIONSIFT_PROGRESS_DELAY")  # the suite's conftest holds every progress line back
    tty, pipe = _Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = P.Progress(3, 3_000_000, stream=stream)
        for _ in range(3):
            p.last = 0.0  # no rate limit between the steps of this test
            p.step(1_000_000, True)
        p.done()
    assert "indexing: 3/3 transcripts, 3 MB of 3 MB (3 indexed now)" in tty.getvalue()
    assert tty.getvalue().endswith("\r\x1b[K")  # the line is cleared when done
    assert pipe.getvalue() == ""


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as ex:
        main(args)
    return int(ex.value.code or 0), out.getvalue(), err.getvalue()


@pytest.mark.parametrize("cmd", [["stats"], ["index", "update"], ["files", "--by", "summary"],
                                 ["recover", "--file", "/nonexistent/never-touched.py"]])
def test_every_building_command_reports_progress(cmd, tmp_path, monkeypatch):
    home = tmp_path / "claude"
    shutil.copytree(HOME, home)
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "index"))
    steps: list[tuple[int, bool]] = []

    class Recorder(P.Progress):
        def step(self, nbytes, indexed):
            steps.append((nbytes, bool(indexed)))
            super().step(nbytes, indexed)

    monkeypatch.setattr(P, "Progress", Recorder)
    lanes = sorted((home / "projects").rglob("*.jsonl"))
    _code, _out, err = _run([*cmd, "--claude-home", str(home)])
    assert len(steps) == len(lanes) and all(ix for _n, ix in steps), steps  # first run: each built now
    assert sum(n for n, _ix in steps) == sum(p.stat().st_size for p in lanes)
    assert "indexing:" not in err  # stderr is no terminal here
    steps.clear()
    _run([*cmd, "--claude-home", str(home)])
    assert len(steps) == len(lanes) and not any(ix for _n, ix in steps)  # second: from the index


def _crash_home(tmp_path: Path) -> Path:
    home = tmp_path / "crash-home"
    proj = home / "projects" / "-crash"
    proj.mkdir(parents=True)
    for i, f in enumerate(sorted((ROOT / "examples" / "crash").glob("*.jsonl"))):
        shutil.copy(f, proj / f"{i:08d}-0000-4000-8000-000000000000.jsonl")
    return home


@pytest.mark.parametrize("cmd", [["stats", "--strict"], ["files", "--by", "summary"], ["search", "", "-c"],
                                 ["recover", "--file", "/nonexistent/never-touched.py", "--coverage"]])
def test_a_fallback_to_scanning_is_said(cmd, tmp_path, monkeypatch):
    """The crash artefacts hold a torn final line: files, recover and a search census read that
    transcript without the index (stats answers its covered bytes from the index and reads the
    held tail; with --strict it scans every transcript); the text says so and the JSON summary's
    `index.scanned` counts it."""
    if "--strict" in cmd:  # strict stops at a damaged line: the real corpus, every transcript scanned
        home = tmp_path / "claude"
        shutil.copytree(HOME, home)
    else:
        home = _crash_home(tmp_path)
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "index"))
    args = [*cmd, "--claude-home", str(home)]
    _run(args)  # builds what can be indexed
    _code, out, err = _run(args)
    text = out + err
    _c, js, _e = _run([*args, "--format", "json"])
    summary = [json.loads(x) for x in js.splitlines() if x.strip()][-1]
    assert summary["index"]["scanned"] >= 1, summary["index"]
    assert "scanned without it" in text, text
