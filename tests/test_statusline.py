"""`sessionsift statusline` on what the REAL Claude Code client hands its statusLine hook
(tests/realclient/scenarios_statusline.py: the interactive 2.1.258 client, offline, with a
statusLine command that saves each JSON object it is given) and on that client's transcripts.

The figures are held equal to `usage` over the same transcripts (its session row, its daily row,
its active window); the warm path is held to reading no transcript and importing neither click nor
msgspec. How fast it is: benchmarks/statusline.py (no timed test here)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main
from tests.realclient import scenarios_statusline as SL
from tests.realclient.common.host import prereq

CLI = [sys.executable, "-m", "sessionsift"]


@pytest.fixture(scope="module")
def sl_rc(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("statusline-rc")
    gt = prereq(SL.run, root)
    cfg = Path(gt["config_dir"])
    saved = sorted((cfg / SL.SAVED).glob("*.json"))
    assert saved, "the client ran no statusLine command"
    return {"gt": gt, "config": cfg, "hooks": [json.loads(p.read_text()) for p in saved]}


def _copy(sl_rc, tmp_path) -> tuple[Path, dict]:
    """The scenario's data root copied (so a test may change it), and the last hook object with its
    transcript_path moved along."""
    cfg = tmp_path / "config"
    shutil.copytree(sl_rc["config"], cfg)
    hook = dict(sl_rc["hooks"][-1])
    hook["transcript_path"] = hook["transcript_path"].replace(str(sl_rc["config"]), str(cfg))
    return cfg, hook


def statusline(hook: dict | bytes, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    data = hook if isinstance(hook, bytes) else json.dumps(hook).encode()
    e = dict(os.environ if env is None else env)
    return subprocess.run(CLI + ["statusline", *args], input=data, capture_output=True, env=e)


def summary(p: subprocess.CompletedProcess) -> dict:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary"
    return rows[-1]


def usage_rows(*args: str) -> list[dict]:
    buf = io.StringIO()
    with redirect_stdout(buf), pytest.raises(SystemExit) as ex:
        main(["usage", *args, "--format", "json"])
    assert ex.value.code == 0
    return [json.loads(x) for x in buf.getvalue().splitlines()]


def test_the_hook_object_is_the_one_the_client_documents(sl_rc):
    """What statusline reads is in what the real client hands it."""
    h = sl_rc["hooks"][-1]
    assert h["session_id"] == sl_rc["gt"]["session_id"]
    assert Path(h["transcript_path"]).is_file() and Path(h["transcript_path"]).stem == h["session_id"]
    assert isinstance(h["model"]["display_name"], str) and isinstance(h["cost"]["total_cost_usd"], float)


def test_figures_are_usages_figures(sl_rc, tmp_path):
    cfg, hook = _copy(sl_rc, tmp_path)
    p = statusline(hook, "--format", "json")
    assert p.returncode == 0, p.stderr
    s = summary(p)
    sess = [r for r in usage_rows("session", "--claude-home", str(cfg)) if r["kind"] == "session"]
    assert [r["session_id"] for r in sess] == [hook["session_id"]]
    assert s["session"]["cost_usd"] == pytest.approx(sess[0]["cost_usd"], abs=1e-9)
    assert (s["session"]["messages"], s["session"]["total_tokens"]) == (sess[0]["messages"], sess[0]["total_tokens"])
    assert s["session"]["client_cost_usd"] == hook["cost"]["total_cost_usd"]
    day = [r for r in usage_rows("daily", "--claude-home", str(cfg)) if r["kind"] == "period"
           and r["period"] == s["today"]["day"]]
    assert len(day) == 1 and s["today"]["cost_usd"] == pytest.approx(day[0]["cost_usd"], abs=1e-9)
    win = [r for r in usage_rows("blocks", "--claude-home", str(cfg), "--active") if r["kind"] == "window"]
    assert len(win) == 1 and s["block"]["active"] is True and s["block"]["source"] == "transcripts"
    assert s["block"]["end"] == pytest.approx(
        __import__("datetime").datetime.fromisoformat(win[0]["end"]["utc"].replace("Z", "+00:00")).timestamp(), abs=0.001)
    assert s["block"]["total_tokens"] == win[0]["total_tokens"]
    # the line a person sees
    text = statusline(hook)
    assert text.returncode == 0
    line = text.stdout.decode().strip()
    assert line.startswith(hook["model"]["display_name"] + " · ")
    assert f"${sess[0]['cost_usd']:,.2f} session" in line and f"${day[0]['cost_usd']:,.2f} today" in line
    assert " left, $" in line and "tok/min)" in line


def test_warm_reads_no_transcript_and_a_grown_one_only_from_where_it_stopped(sl_rc, tmp_path):
    cfg, hook = _copy(sl_rc, tmp_path)
    env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"))
    t = Path(hook["transcript_path"])
    full = t.read_bytes()
    cut = full.rfind(b"\n", 0, len(full) // 2) + 1  # a line boundary: the client appends whole lines
    t.write_bytes(full[:cut])
    first = summary(statusline(hook, "--format", "json", env=env))
    assert (first["cache"], first["files_read"]) == ("cold", 1)
    again = summary(statusline(hook, "--format", "json", env=env))
    assert (again["cache"], again["files_read"]) == ("warm", 0)
    assert again["session"] == first["session"]
    with open(t, "ab") as f:  # the rest of what the client wrote
        f.write(full[cut:])
    grown = summary(statusline(hook, "--format", "json", env=env))
    fresh = summary(statusline(hook, "--format", "json", "--no-cache", env=env))
    assert (grown["cache"], grown["files_read"], fresh["cache"]) == ("warm", 1, "off")
    for k in ("session", "today"):
        assert grown[k] == fresh[k], k
    assert grown["session"]["messages"] > first["session"]["messages"]


def test_the_warm_path_imports_neither_click_nor_msgspec(sl_rc, tmp_path):
    cfg, hook = _copy(sl_rc, tmp_path)
    env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"))
    assert statusline(hook, env=env).returncode == 0  # fills the cache
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "sessionsift", "statusline"],
                       input=json.dumps(hook).encode(), capture_output=True, env=env)
    assert p.returncode == 0
    mods = {ln.split("|")[-1].strip() for ln in p.stderr.decode().splitlines() if ln.startswith("import time:")}
    assert "sessionsift.usage.statusline" in mods
    assert not {"click", "msgspec", "orjson", "sessionsift.providers.claude.usage", "sessionsift.usage.prices"} & mods


def test_after_a_turn_the_statusline_imports_no_providers_layer(sl_rc, tmp_path):
    """A transcript that grew (what every turn does) is read by the light scan alone: the package
    imports of providers/ and providers/claude/ are lazy, so neither the shared shapes (base.py:
    its dataclasses, pathlib, the line reader with orjson) nor the reader class come with it, and
    the usage records it builds (FileScan, Event) are plain classes: no dataclasses either
    (benchmarks/README.md "statusline": 58.8 -> 37.6 -> 28.1 ms CPU). The appended line is one of
    the client's own records again (a model the cache has a quote for: a new model would bring
    the price table)."""
    cfg, hook = _copy(sl_rc, tmp_path)
    env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"))
    t = Path(hook["transcript_path"])
    assert statusline(hook, env=env).returncode == 0  # fills the cache
    rec = next(ln for ln in t.read_bytes().splitlines() if b'"type":"assistant"' in ln and b'"usage"' in ln)
    with open(t, "ab") as f:
        f.write(rec + b"\n")
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "sessionsift", "statusline"],
                       input=json.dumps(hook).encode(), capture_output=True, env=env)
    assert p.returncode == 0 and b" session" in p.stdout
    after = summary(statusline(hook, "--format", "json", env=env))
    assert (after["cache"], after["files_read"]) == ("warm", 0)  # the run above read what was appended
    mods = {ln.split("|")[-1].strip() for ln in p.stderr.decode().splitlines() if ln.startswith("import time:")}
    assert "sessionsift.providers.claude.usage" in mods
    assert {"sessionsift.providers.base", "sessionsift.providers.claude.provider", "sessionsift.read",
            "sessionsift.usage.prices", "orjson", "msgspec", "stringzilla", "click", "dataclasses", "inspect",
            "pathlib", "typing"} & mods == set()


def test_server_window_and_hostile_values(sl_rc, tmp_path):
    """HAND-MADE additions to the real hook object: `rate_limits` as the client builds it for a
    subscriber (its statusLine code: five_hour.used_percentage, resets_at in epoch seconds; the
    offline mock has no subscription, so the real client gives none here), and a display name with
    an ESC and a bidi override (a hostile value the client would not write)."""
    import time

    cfg, hook = _copy(sl_rc, tmp_path)
    resets = int(time.time()) + 2 * 3600 + 30 * 60
    hook["rate_limits"] = {"five_hour": {"used_percentage": 23.5, "resets_at": resets}}
    hook["model"] = {"id": "x", "display_name": "Opus\x1b[31m\u202e"}
    s = summary(statusline(hook, "--format", "json"))
    assert (s["block"]["source"], s["block"]["end"], s["block"]["server_used_percent"]) == ("server", resets, 23.5)
    line = statusline(hook).stdout.decode()
    assert "\x1b" not in line and "\u202e" not in line and line.startswith("Opus\\e[31m\\u202e · ")
    assert " 2h29m left" in line or " 2h30m left" in line  # the seconds between the two clocks


def test_no_transcript_of_the_session_is_not_zero(tmp_path):
    home = tmp_path / "claude"
    (home / "projects").mkdir(parents=True)
    hook = {"session_id": "nope", "transcript_path": str(home / "projects" / "p" / "nope.jsonl"),
            "model": {"display_name": "M"}}
    s = summary(statusline(hook, "--format", "json"))
    assert s["session"]["cost_usd"] is None and s["session"]["transcripts"] == 0
    assert "$? session" in statusline(hook).stdout.decode()
    bad = statusline(b"not json")
    assert bad.returncode == 2 and b"statusLine JSON on stdin" in bad.stderr


def test_the_light_scan_reads_what_the_full_scan_reads():
    """providers.claude.usage.scan_file(light=True) (every candidate line by the generic parse with the stdlib's
    json, bytes.find: the statusline's reading of appended lines) gives the same records, counts
    and offsets as the full scan on every Claude Code transcript in examples/ (real clients), from
    the start and from each line boundary a tenth of the way through, and on the crash artefacts
    (examples/crash: NUL runs, invalid UTF-8, a torn final line)."""
    from sessionsift.providers.claude import usage as C

    repo = Path(__file__).resolve().parent.parent
    files = sorted(p for p in (repo / "examples").rglob("*.jsonl") if "projects" in p.parts)
    assert len(files) >= 15
    files += sorted((repo / "examples" / "crash").glob("*.jsonl"))
    fields = ("records", "assistant_without_usage", "no_usage_ts", "echoes", "malformed", "odd_values", "end",
              "no_timestamp", "from_iterations", "torn_tail_bytes", "candidates")
    for f in files:
        data = f.read_bytes()
        for start in {0, data.rfind(b"\n", 0, len(data) // 10) + 1}:
            a, b = C.scan_file(f, start), C.scan_file(f, start, light=True)
            assert [getattr(a, k) for k in fields] == [getattr(b, k) for k in fields], (f, start)
            assert (a.client is None) == (b.client is None) and (a.client is None or a.client.cost_usd == b.client.cost_usd)
