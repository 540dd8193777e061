"""`export html|markdown`, checked in a real browser: headless Chromium (Debian's package) opens the
exported pages; the test reads what it rendered -- a screenshot (non-blank) and the DOM (every
prompt present; the `<script>`/`onerror=` payloads that the REAL client wrote into the transcript,
tests/realclient/scenarios_export.py, never ran: the title they would set is not the title, the
body they would wipe is intact, no script element exists).

Chromium: Debian's `chromium`; the `chromium` fixture installs it with apt-get when it is missing
and apt-get is there (as root). Without it these tests skip naming why; under CI=true they fail."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.base import ReadReport
from sessionsift.providers.scope import RootRequest, select, survey
from sessionsift.export.source import pairs
from tests.realclient import scenarios_export as SX

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAYLOAD_TITLES = ("PWNED-PROMPT", "PWNED-IMG", "PWNED-TOOL", "PWNED-ONERROR")


def _find() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _install() -> str:
    """Install Debian's chromium when it is missing and apt-get is there (as root), under a lock
    so parallel runs do not race; returns what went wrong, '' on success."""
    apt = shutil.which("apt-get")
    if apt is None:
        return "apt-get is not available"
    if os.geteuid() != 0:
        return "not root (apt-get install needs it)"
    import fcntl

    with open("/tmp/.sessionsift-chromium-install.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if _find():
            return ""
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        p = subprocess.run([apt, "install", "-y", "-qq", "chromium"], capture_output=True, text=True, env=env,
                           timeout=900)
        if p.returncode != 0:  # the package lists may be missing on a fresh machine
            subprocess.run([apt, "update", "-qq"], capture_output=True, text=True, env=env, timeout=600)
            p = subprocess.run([apt, "install", "-y", "-qq", "chromium"], capture_output=True, text=True, env=env,
                               timeout=900)
        return "" if p.returncode == 0 else f"apt-get install chromium failed: {p.stderr.strip()[-300:]}"


@pytest.fixture(scope="session")
def chromium():
    exe = _find()
    if exe is None:
        why = _install()
        exe = _find()
        if exe is None:
            why = f"headless Chromium is not installed and could not be: {why or 'not found after install'}"
            if os.environ.get("CI") == "true":
                pytest.fail(why)
            pytest.skip(why)
    return exe


def _browser(exe: str, tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    prof = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={prof}", "--virtual-time-budget=3000", *extra, url],
                          capture_output=True, text=True, timeout=120)


def dom(exe: str, tmp: Path, page: Path) -> str:
    p = _browser(exe, tmp, page.as_uri(), "--dump-dom")
    assert p.returncode == 0 and "<html" in p.stdout, p.stderr[-2000:]
    return p.stdout


def _run(*args, env):
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, env=env)
    return p, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def _prompts(**kw) -> dict[tuple[str, str], list[str]]:
    out = {}
    for prov, ref in pairs(select(survey(RootRequest(**kw)), [])):
        out[(ref.provider, ref.session_id)] = [r.text for r in prov.read(ref, ReadReport())
                                               if r.kind == "prompt" and r.copy_of is None and r.text]
    return out


def _title(d: str) -> str:
    m = re.search(r"<title>(.*?)</title>", d, re.S)
    return html.unescape(m.group(1)) if m else ""


def test_hostile_session_renders_and_runs_nothing(chromium, export_rc, tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    home = Path(export_rc["config_dir"])
    out = tmp_path / "out"
    p, rows = _run("export", "html", "--claude-home", str(home), "--out", str(out), "--redact", "--format", "json",
                   env=env)
    assert p.returncode == 0, p.stderr
    assert rows[-1]["secrets_found"] >= 5 and rows[-1]["redacted"] is True
    assert [r["kind"] for r in rows].index("secret") < [r["kind"] for r in rows].index("export")  # shown first
    page = Path(next(r for r in rows if r["kind"] == "export")["path"])
    src = page.read_text()
    assert 'http-equiv="Content-Security-Policy"' in src and "default-src 'none'" in src
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", src)  # nothing remote
    for v in (SX.AWS_KEY, SX.GITHUB_TOKEN, SX.DB_PASSWORD, SX.APP_SECRET, SX.PEM_BODY):
        assert v not in src  # --redact masked every credential the client printed

    d = dom(chromium, tmp_path, page)
    assert _title(d).startswith("[export_secrets P1] Show deploy.env")
    assert _title(d) not in PAYLOAD_TITLES and "PWNED-TOOL</body>" not in d
    assert not re.search(r"<script", d, re.I), "a script element exists in the rendered DOM"
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", d, re.I), "an event handler attribute exists"
    assert not re.search(r"""<a\b[^>]*href=["']?javascript:""", d, re.I)
    text = html.unescape(d)
    for t in _prompts(roots={"claude-code": str(home)})[("claude-code", export_rc["session_id"])]:
        assert t in text, t[:80]
    assert SX.PAGE_HTML.strip() in text  # the tool's HTML output is there, as text
    assert "data:image/png;base64," in d  # the PNG the client read, inline

    shot = tmp_path / "page.png"
    p = _browser(chromium, tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1000,1400")
    assert p.returncode == 0 and shot.is_file(), p.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.shape[1] >= 900
    rgb = img[..., :3]
    ink = (rgb.min(axis=2) < 0.8).mean()
    colors = len(np.unique((rgb[::4, ::4] * 255).astype(int).reshape(-1, 3), axis=0))
    assert ink > 0.01 and colors > 20, (ink, colors)  # text and coloured blocks, not a blank page


def test_every_provider_in_the_browser(chromium, tmp_path):
    """examples/home (real-client sessions of all seven providers): one page per session, every
    prompt present in what Chromium rendered; the index links every session."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    out = tmp_path / "out"
    p, rows = _run("export", "html", "--home", str(HOME), "--out", str(out), "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    ex = [r for r in rows if r["kind"] == "export"]
    assert len(ex) == 68
    prompts = _prompts(home=str(HOME))
    picked: dict[str, dict] = {}
    for r in ex:
        if prompts[(r["provider"], r["session_id"])]:
            picked.setdefault(r["provider"], r)
    assert set(picked) == {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
                           "kilo-code"}
    for prov, r in picked.items():
        d = html.unescape(dom(chromium, tmp_path, Path(r["path"])))
        for t in prompts[(prov, r["session_id"])]:
            assert t in d, (prov, t[:80])
    idx = Path(rows[-1]["index"])
    d = dom(chromium, tmp_path, idx)
    for r in ex:
        assert r["session_id"] in d
    # the stable names the index links to are the current versions, with their navigation in place
    # of the mark the version keeps (export/share.py)
    from sessionsift.export.html import NAV_MARK

    for r in ex:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in r["session_id"])  # '$$' in Crush ids
        stable = out / r["provider"] / (safe + ".html")
        got = re.sub(rb'<nav class="pager".*?</nav>', NAV_MARK.encode(), stable.read_bytes(), count=1, flags=re.S)
        assert got == Path(r["path"]).read_bytes()


def test_structure_subagents_compaction_thinking_images(tmp_path):
    """What the pages hold, on the real sessions that have each shape (no browser needed)."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    out = tmp_path / "out"
    p, rows = _run("export", "html", "--claude-home", str(HOME / ".claude"), "--out", str(out), "--format", "json",
                   env=env)
    assert p.returncode == 0, p.stderr
    page = {r["session_id"]: Path(r["path"]).read_text() for r in rows if r["kind"] == "export"}
    sub = page["23ad8bf1-66ec-5135-af96-82f74ddb4db0"]  # two Agent calls, each with its lane
    lanes = re.findall(r'<details class="subagent" open><summary>Subagent (agent-[0-9a-f]+)</summary>', sub)
    assert len(lanes) == 2
    # each lane sits inside the Agent call that spawned it (after the call's own fold closes)
    for m in re.finditer(r'tool call Agent', sub):
        assert "Subagent agent-" in sub[m.start():m.start() + 20000]
    assert "Compaction boundary" in page["dd7270d6-d04e-5744-ab2f-2e9ad4fab464"]  # /compact
    fb = page["8414eb07-cca2-5cca-9059-e9baedac31e1"]
    assert 'details class="thinking"' in fb and "data:image/png;base64,iVBOR" in fb
    assert fb.count('<details class="tool">') == 9  # files_basic's nine tool calls, each folded
    assert fb.count('<details class="result') >= 9  # ... with its result inside


def test_markdown_never_interprets_transcript_text(export_rc, tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    out = tmp_path / "out"
    p, rows = _run("export", "markdown", "--claude-home", export_rc["config_dir"], "--out", str(out),
                   "--format", "json", env=env)
    assert p.returncode == 9, p.stderr  # written unmasked: the findings say so, and the status
    page = Path(next(r for r in rows if r["kind"] == "export")["path"]).read_text()
    outside = re.sub(r"^(`{3,})text\n.*?\n\1$|^(`{3,})json\n.*?\n\2$", "", page, flags=re.S | re.M)
    assert "<script" not in outside and "onerror=" not in outside
    assert "<script>document.title='PWNED-PROMPT'</script>" in page  # inside a fence, verbatim
    assert page.count("<details><summary>🔧") == 3 and "💭 Thinking" in page
    assert "data:image/png;base64," in page
    assert SX.AWS_KEY in page  # not redacted: exactly what exit 9 warns about
