"""`audit reinjection` on transcripts written by the REAL client (2.1.258, offline).

The live scenario (tests/realclient/scenarios_audit.py) writes track.txt and reread.txt, reads seed.txt,
changes all three with `sed -i` between prompts, does unrelated work, changes track.txt again in
another region, edits it with the session's Edit tool, and changes it once more after that Edit.

What 2.1.258 did (asserted below, recorded in docs/audit.md): each shell change of a file the session
WROTE is delivered ONCE, at the next flush; it is NOT re-sent at later flushes. A second shell change of
the same file is not delivered at all until the session writes the file with its own tool again; after
the Edit, the next shell change is delivered once more. The Read-only seed.txt is never delivered. So
on this client no byte-identical repeat occurs: the audit must report 0 repeat bytes, and its counts
must equal the counts taken independently from the raw attachment lines. The waste arithmetic on
repeats is tested on hand-made transcripts (tests/test_audit_reinjection.py).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude.reinjection import reinjection
from sessionsift.providers.claude.discover import resolve_targets
from tests.realclient import client as claude_client
from tests.realclient import scenarios_audit as SA
from tests.realclient.fixtures import require_realclient


@pytest.fixture(scope="session")
def audit_rc(tmp_path_factory):
    require_realclient()   # skips naming the missing prerequisite; fails under CI=true
    return SA.run_audit_scenario(SA.REINJECTION.name, tmp_path_factory.mktemp("audit-rc"))


def _raw_deliveries(transcript: Path) -> list[dict]:
    """Independent of the library: every edited_text_file record, straight from the lines."""
    out = []
    for no, raw in enumerate(transcript.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        o = json.loads(raw)
        a = o.get("attachment") or {}
        if o.get("type") == "attachment" and a.get("type") == "edited_text_file":
            out.append({"line": no, "filename": a["filename"], "snippet": a["snippet"], "keys": sorted(a)})
    return out


def _records(transcript: Path) -> list[dict]:
    return [json.loads(x) for x in transcript.read_bytes().split(b"\n") if x.strip()]


def _prompt_lines(transcript: Path, marker_prefix: str) -> dict[int, int]:
    """prompt number -> line of its prompt record."""
    out = {}
    for no, o in enumerate(_records(transcript), 1):
        m = o.get("message") or {}
        if o.get("type") == "user" and isinstance(m.get("content"), str) and m["content"].startswith(marker_prefix):
            n = int(m["content"][len(marker_prefix):].split("]")[0])
            out[n] = no
    return out


def _tool_use_line(transcript: Path, name: str, path: str) -> list[int]:
    out = []
    for no, o in enumerate(_records(transcript), 1):
        if o.get("type") != "assistant":
            continue
        for b in (o.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == name \
                    and (b.get("input") or {}).get("file_path") == path:
                out.append(no)
    return out


def test_real_client_deliveries_match_the_raw_lines(audit_rc):
    gt = audit_rc
    cfg = Path(gt["config_dir"])
    tr = cfg / gt["transcripts"][0] if gt.get("transcripts") else None
    tr = tr if tr and tr.exists() else cfg / gt["project_dir"] / f"{gt['session_id']}.jsonl"
    assert gt["client_version"].startswith(claude_client.PINNED_VERSION), gt["client_version"]
    raw = _raw_deliveries(tr)
    # FH-033 / REC-054; 2.1.332 adds rereadEntry, the read state from before the change (docs/providers.md)
    keys = ["filename", "rereadEntry", "snippet", "type"] if gt["client_version"].startswith("2.1.332") \
        else ["filename", "snippet", "type"]
    assert raw and all(r["keys"] == keys for r in raw), raw
    res = reinjection(resolve_targets([gt["session_id"]], str(cfg)))
    (lr,) = res.with_deliveries
    assert lr.lane.session_id == gt["session_id"] and not lr.lane.is_subagent
    by_file: dict[str, list[dict]] = {}
    for r in raw:
        by_file.setdefault(r["filename"], []).append(r)
    assert {f.filename for f in lr.files} == set(by_file)
    for f in lr.files:
        rs = by_file[f.filename]
        assert f.lines == [r["line"] for r in rs]
        assert f.bytes_total == sum(len(r["snippet"].encode()) for r in rs)
        # byte-identical repeats, computed from the raw lines (previous delivery of the same file)
        rep = sum(len(b["snippet"].encode()) for a, b in zip(rs, rs[1:]) if a["snippet"] == b["snippet"])
        assert f.repeat_bytes == rep
    assert lr.deliveries == len(raw)
    assert lr.repeat_bytes == 0 and lr.duplicated_share == 0.0   # what 2.1.258 did: no repeats

    work = gt["cwd"]
    track, reread, seed = f"{work}/track.txt", f"{work}/reread.txt", f"{work}/seed.txt"
    P = _prompt_lines(tr, f"[{SA.REINJECTION.name} P")
    files = {f.filename: f for f in lr.files}
    # seed.txt was only Read: never delivered (FH-046; tests/realclient/README.md)
    assert seed not in files
    # reread.txt: delivered once, at the P2 flush; the P4 Read does not bring it back; no Edit -> pending
    rr = files[reread]
    assert len(rr.lines) == 1 and P[2] < rr.lines[0] < P[3]
    assert rr.left_by is None
    # track.txt: once after the first sed (P2 flush); NOT re-sent at P3..P8 although a second sed ran
    # before P6; the Edit in P8 ends the episode; the sed after the Edit is delivered at the P9 flush
    tk = files[track]
    assert len(tk.lines) == 2
    assert P[2] < tk.lines[0] < P[3] and P[9] < tk.lines[1] < P[10]
    edit_lines = _tool_use_line(tr, "Edit", track)
    assert len(edit_lines) == 1 and [x.line for x in tk.exits] == edit_lines
    assert tk.exits[0].is_error is False and tk.episodes == 2 and tk.left_by is None
    assert [d.repeat for d in tk.deliveries] == [False, False]
    # the first delivery covers the first region only (line 3 +/- 8 lines of context)
    s0 = raw[[r["line"] for r in raw].index(tk.lines[0])]["snippet"]
    assert "LINE03" in s0 and "line28" not in s0.lower() and tk.deliveries[0].regions == 1
    # both changed files of the P2 flush are in ONE flush
    assert len({d.flush_line for f in (rr, tk) for d in f.deliveries[:1]}) == 1
    assert len(lr.flushes) == 2


def test_real_client_cli_rows(audit_rc):
    gt = audit_rc
    cfg = gt["config_dir"]
    p = subprocess.run([sys.executable, "-m", "sessionsift", "audit", "reinjection", gt["session_id"],
                        "--claude-home", cfg, "--format", "json", "--flushes"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    re_rows = [r for r in rows if r["kind"] == "reinjection"]
    assert len(re_rows) == 2
    for r in re_rows:
        assert r["session_id"] == gt["session_id"] and r["is_subagent"] is False and r["parent_session_id"] is None
        assert len(r["refetch"]) == len(r["lines"]) and r["waste_share"] == 0.0
    # every refetch shows the delivery it names
    for r in re_rows:
        for line, cmd in zip(r["lines"], r["refetch"]):
            s = subprocess.run([sys.executable, "-m", "sessionsift", *cmd.split()[1:], "--format", "json"],
                               capture_output=True, text=True, timeout=60)
            rec = [json.loads(x) for x in s.stdout.splitlines() if json.loads(x)["kind"] == "record"]
            assert rec[0]["line"] == line and rec[0]["record"]["attachment"]["filename"] == r["filename"]
    t = subprocess.run([sys.executable, "-m", "sessionsift", "audit", "reinjection", gt["session_id"],
                        "--claude-home", cfg], capture_output=True, text=True, timeout=60)
    assert "still pending at end of transcript" in t.stdout and "re-entered at L" in t.stdout


def test_committed_examples(realclient_examples):
    """The committed 2.1.258 corpus: files_basic (sed while a turn is served) and interactive (sed between
    prompts) each deliver one file once, and the session's next Edit of it is the exit."""
    ex = realclient_examples
    res = reinjection(resolve_targets([], str(ex["files_basic"].config_dir)))
    got = {lr.lane.session_id: lr for lr in res.with_deliveries}
    for name, fn in (("files_basic", "notes.md"), ("interactive", "app.py")):
        run = ex[name]
        lr = got[run.session_id]
        raw = _raw_deliveries(run.transcript)
        (f,) = lr.files
        assert f.filename.endswith("/" + fn) and f.lines == [r["line"] for r in raw]
        assert f.bytes_total == len(raw[0]["snippet"].encode()) and f.repeat_bytes == 0
        edits = _tool_use_line(run.transcript, "Edit", f.filename)
        assert f.left_by is not None and f.left_by.line == min(e for e in edits if e > f.lines[-1])
    assert set(got) == {ex["files_basic"].session_id, ex["interactive"].session_id}
