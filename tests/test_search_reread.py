"""A second read of a transcript that fails is unknown, never empty.

`search` reads a transcript again after its scan for what the scan does not keep: the tool
results a `--count-by pairing` row needs, the tool names of result carriers and, for a mapped
file with hits, whether it holds zero-filled lines. The transcripts are the real client's
(examples/claude-home, Claude Code 2.1.258). The failure itself is injected: no client makes a
file unreadable between two reads of ours (a disk error, or the file removed meanwhile), so the
second read is made to raise EIO/ENOENT here, and the test says what the answer must then be."""

from __future__ import annotations

import errno
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from sessionsift.cli import main
from sessionsift.read import lines as L
from sessionsift.providers.claude.search import scan as api

HOME = Path(__file__).resolve().parent.parent / "examples" / "claude-home"


def run(args: list[str]) -> tuple[int, list[dict]]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, [json.loads(x) for x in buf.getvalue().splitlines() if x.strip()]


def _fail_second_reads(monkeypatch) -> None:
    def broken(path, *a, **k):
        raise OSError(errno.EIO, "Input/output error", str(path))
    monkeypatch.setattr(api, "open_map", broken)


def test_pairing_whose_results_cannot_be_read_again_is_unknown_not_unreturned(monkeypatch):
    code, rows = run(["search", "Write", "--claude-home", str(HOME), "--count-by", "pairing", "--no-index",
                      "--format", "json"])
    assert code == 0
    write = next(r for r in rows if r.get("kind") == "count" and r["key"] == "Write")
    assert (write["count"], write["returned"], write["unreturned"]) == (8, 8, 0)

    _fail_second_reads(monkeypatch)
    code, rows = run(["search", "Write", "--claude-home", str(HOME), "--count-by", "pairing", "--no-index",
                      "--format", "json"])
    write = next(r for r in rows if r.get("kind") == "count" and r["key"] == "Write")
    assert (write["count"], write["returned"], write["unreturned"]) == (8, None, None)
    summary = rows[-1]
    assert any("read again for tool results" in u["why"] for u in summary["unreadable"])
    assert code == 3  # incomplete: what rests on the failed read is not known


def test_zero_fill_check_that_cannot_read_again_is_unknown_not_none(monkeypatch):
    monkeypatch.setattr(L, "SCAN_WHOLE", 0)  # every file mapped: the NUL check reads it again
    code, rows = run(["search", "Write", "--claude-home", str(HOME), "--count-by", "session", "--no-index",
                      "--format", "json"])
    assert code == 0
    b = rows[-1]["bridges"]
    assert (b["unchained_transcripts"], b["unchained_unknown"]) == (0, 0)

    real_open = open

    def failing_open(path, *a, **k):
        if str(path).endswith(".jsonl"):
            raise OSError(errno.ENOENT, "No such file or directory", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(api, "open", failing_open, raising=False)
    code, rows = run(["search", "Write", "--claude-home", str(HOME), "--count-by", "session", "--no-index",
                      "--format", "json"])
    summary = rows[-1]
    with_hits = summary["sessions_with_hits"]
    assert with_hits > 0
    assert summary["bridges"]["unchained_unknown"] == with_hits
    assert sum("read again for zero-filled lines" in u["why"] for u in summary["unreadable"]) == with_hits
    assert code == 3
