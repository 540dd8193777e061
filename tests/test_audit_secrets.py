"""`audit secrets` on transcripts the REAL Claude Code client wrote (tests/realclient/scenarios_export.py:
its Bash tool printed fake credentials from setup files), and on the committed real-client corpora
of every provider (which hold none: every finding there would be a false positive)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.audit import secrets as SE
from sessionsift.export.source import pairs
from sessionsift.providers.scope import RootRequest, select, survey
from tests.realclient import scenarios_export as SX

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"


def _home(gt) -> Path:
    return Path(gt["config_dir"])


def _transcript(gt) -> Path:
    return _home(gt) / gt["project_dir"] / f"{gt['session_id']}.jsonl"


def _run(*args, env=None):
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, env=env)
    return p, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def _lines(gt):
    return [json.loads(x) for x in _transcript(gt).read_bytes().splitlines()]


def test_finds_every_planted_credential_where_the_client_wrote_it(export_rc):
    p, rows = _run("audit", "secrets", "--claude-home", str(_home(export_rc)), "--format", "json")
    assert p.returncode == 9, p.stderr  # found
    finds = [r for r in rows if r["kind"] == "finding"]
    # independent: the lines of the transcript that hold each secret, as json.loads reads them
    recs = _lines(export_rc)
    holders = {n for n, o in enumerate(recs, 1) if SX.AWS_KEY in json.dumps(o)}
    result_lines = {n for n, o in enumerate(recs, 1)
                    if any(isinstance(b, dict) and b.get("type") == "tool_result"
                           for b in ((o.get("message") or {}).get("content") or []) if isinstance(b, dict))}
    assert holders and holders <= result_lines  # only the tool result carries it, not the command
    by_type = {}
    for f in finds:
        by_type.setdefault(f["secret_type"], set()).add((f["line"], f["field"]))
    for typ, value in SX.SECRETS.items():
        assert typ in by_type, (typ, sorted(by_type))
        lines = {ln for ln, _ in by_type[typ]}
        assert lines == holders, typ
        fields = {fld for _, fld in by_type[typ]}
        assert "toolUseResult.stdout" in fields and any(fl.startswith("message.content[") for fl in fields)
    assert "Secret Keyword" in by_type  # APP_SECRET=... as an environment assignment
    for f in finds:
        assert f["locator"] == f"L{f['line']}" and f["provider"] == "claude-code"
    aws = next(f for f in finds if f["secret_type"] == "AWS Access Key")
    assert aws["hashed_secret"] == hashlib.sha1(SX.AWS_KEY.encode()).hexdigest()
    gh = next(f for f in finds if f["secret_type"] == "GitHub Token")
    assert gh["hashed_secret"] == hashlib.sha1(SX.GITHUB_TOKEN.encode()).hexdigest()
    # never the secret itself, in JSON or in text
    t, _ = _run("audit", "secrets", "--claude-home", str(_home(export_rc)))
    for value in (SX.AWS_KEY, SX.GITHUB_TOKEN, SX.DB_PASSWORD, SX.APP_SECRET, SX.PEM_BODY):
        assert value not in p.stdout and value not in t.stdout
        assert value[:8] not in p.stdout and value[:8] not in t.stdout
    assert t.returncode == 9 and "GitHub Token ghp_…(40 chars)" in t.stdout


def test_allowlist_of_known_false_positives(export_rc, tmp_path):
    p, rows = _run("audit", "secrets", "--claude-home", str(_home(export_rc)), "--format", "json")
    finds = [r for r in rows if r["kind"] == "finding"]
    hashes = sorted({f["hashed_secret"] for f in finds})
    gh = hashlib.sha1(SX.GITHUB_TOKEN.encode()).hexdigest()
    allow = tmp_path / "allow.txt"
    allow.write_text(f"# the demo token\n{gh}  # not a real one\n")
    p2, rows2 = _run("audit", "secrets", "--claude-home", str(_home(export_rc)), "--format", "json",
                     "--allowlist", str(allow))
    left = [r for r in rows2 if r["kind"] == "finding"]
    assert all(f["secret_type"] != "GitHub Token" for f in left) and len(left) == len(finds) - 2
    assert rows2[-1]["allowlisted"] == 2 and p2.returncode == 9
    # every hash listed in the default place (XDG_CONFIG_HOME, a temp dir here): nothing left, exit 0
    import os

    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "sessionsift"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "secrets-allowlist.txt").write_text("\n".join(hashes) + "\n")
    p3, rows3 = _run("audit", "secrets", "--claude-home", str(_home(export_rc)), "--format", "json")
    assert p3.returncode == 0 and rows3[-1]["findings"] == 0 and rows3[-1]["allowlisted"] == len(finds)
    assert rows3[0]["allowlist"]["state"] == "ok" and rows3[0]["allowlist"]["entries"] == len(hashes)


def test_prefilter_loses_nothing(export_rc):
    """The RE2 prefilter only skips strings none of the detectors could match: with it disabled,
    the same findings on the real-client transcript and on every sample corpus."""
    def scan(pre: bool, **kw):
        det = SE.detector(False)  # the instance scan_sessions uses
        saved = det._pre
        if not pre:
            det._pre = None
        try:
            sv = survey(RootRequest(**kw), light=frozenset({"claude-code"}))
            res = SE.scan_sessions(pairs(select(sv, [])))
        finally:
            det._pre = saved
        return sorted((f.session_id, f.locator, f.field, f.type, f.hashed_secret) for f in res.findings), res

    a, ra = scan(True, roots={"claude-code": str(_home(export_rc))})
    b, rb = scan(False, roots={"claude-code": str(_home(export_rc))})
    assert a == b and len(a) == 10 and ra.candidates < rb.candidates
    c, rc = scan(True, home=str(HOME))
    d, rd = scan(False, home=str(HOME))
    assert c == d and rc.candidates < rd.candidates / 5


def test_sample_corpora_hold_no_credentials():
    """68 real-client sessions of nine providers with no credential in them: no finding, exit 0."""
    p, rows = _run("audit", "secrets", "--home", str(HOME), "--format", "json")
    assert p.returncode == 0, p.stdout[-2000:]
    s = rows[-1]
    assert s["findings"] == 0 and (s["sessions"], s["child_sessions"]) == (60, 8) and s["strings_scanned"] > 1000
    assert {c["provider"]: c["state"] for c in s["coverage"]} == dict.fromkeys(
        ["claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli", "kilo-code"], "ok")


def test_redact_masks_every_secret(export_rc):
    recs = _lines(export_rc)
    out = next(o["toolUseResult"]["stdout"] for o in recs
               if isinstance(o.get("toolUseResult"), dict) and SX.AWS_KEY in str(o["toolUseResult"].get("stdout")))
    red, hits = SE.redact(out)
    for value in (SX.AWS_KEY, SX.GITHUB_TOKEN, SX.DB_PASSWORD, SX.APP_SECRET):
        assert value in out and value not in red
    assert "[REDACTED AWS Access Key AKIA…(20 chars)]" in red and len(hits) == 5
