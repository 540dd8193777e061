"""`export html` as a person reads it, in the headless Chromium the export tests use
(tests/test_export_html.py): where the files go, the index of everything exported into a directory,
each page's navigation (the index, previous and next, the turns), replies rendered from their
Markdown without letting anything in them run or load, terminal escapes, one banner per compaction,
headings that say what a record is, and what each turn took.

Data: examples/ (real clients) and tests/realclient/scenarios_pages.py (the real Claude Code client
writing a Markdown reply with hostile parts and a command's ANSI colour output)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realclient import scenarios_pages as SP
from tests.realclient.fixtures import require_realclient
from tests.test_export_html import chromium, dom  # noqa: F401 - the browser fixture

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"
CLAUDE = EX / "claude-home"
INTERACTIVE = "dd7270d6-d04e-5744-ab2f-2e9ad4fab464"  # /compact, and an ESC in a command's output


def run(*args: str, env: dict) -> tuple[int, list[dict], str]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--format", "json"], capture_output=True,
                       text=True, env=env)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")], p.stderr


def env_for(tmp_path: Path) -> dict:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}


@pytest.fixture(scope="module")
def pages_rc(tmp_path_factory) -> dict:
    require_realclient()
    return SP.run_pages_scenario(tmp_path_factory.mktemp("pages-rc"))


@pytest.fixture(scope="module")
def claude_out(tmp_path_factory) -> tuple[Path, list[dict], dict]:
    tmp = tmp_path_factory.mktemp("claude-out")
    env = env_for(tmp)
    out = tmp / "out"
    code, rows, err = run("export", "html", "--claude-home", str(CLAUDE), "--out", str(out), env=env)
    assert code == 0, err
    return out, rows, env


def _stable(out: Path, r: dict) -> Path:
    return out / r["provider"] / (r["session_id"] + ".html")


def test_files_go_where_asked_once_each_and_the_index_lists_every_export(claude_out):
    out, rows, env = claude_out
    ex = [r for r in rows if r["kind"] == "export"]
    assert len(ex) == 8 and rows[-1]["index"] == str(out / "index.html")
    assert not (out / "html").exists()
    assert sorted(p.name for p in (out / "claude-code").iterdir()) == sorted(r["session_id"] + ".html" for r in ex)
    for r in ex:  # the version the ledger records is apart, under versions/
        assert Path(r["path"]).parent == out / "versions" / "claude-code"
    # exporting one session again keeps the index listing every session exported into DIR
    code, again, err = run("export", "html", ex[0]["session_id"], "--claude-home", str(CLAUDE), "--out", str(out),
                           "--force", env=env)
    assert code == 0, err
    idx = (out / "index.html").read_text()
    assert [r["kind"] for r in again].count("export") == 1
    for r in ex:
        assert f'href="claude-code/{r["session_id"]}.html"' in idx
    assert "8 sessions exported into this directory" in idx


def test_navigation_in_the_browser(chromium, claude_out, tmp_path):  # noqa: F811
    out, rows, _env = claude_out
    idx = dom(chromium, tmp_path, out / "index.html")
    order = re.findall(r'<li><a href="claude-code/([^"]+)\.html"', idx)
    assert len(order) == 8
    for i, sid in enumerate(order):
        d = dom(chromium, tmp_path, out / "claude-code" / f"{sid}.html")
        nav = re.search(r'<nav class="pager".*?</nav>', d, re.S).group(0)
        assert '<a href="../index.html">' in nav
        prev = re.search(r'rel="prev" href="\.\./claude-code/([^"]+)\.html"', nav)
        nxt = re.search(r'rel="next" href="\.\./claude-code/([^"]+)\.html"', nav)
        assert (prev.group(1) if prev else None) == (order[i - 1] if i else None)
        assert (nxt.group(1) if nxt else None) == (order[i + 1] if i + 1 < len(order) else None)
        # the table of contents links to the turn headings on the page, one entry each
        toc = re.search(r'<details class="toc" id="turns".*?</details>', d, re.S).group(0)
        links = re.findall(r'href="#(t-main-[^"]+)"', toc)
        heads = re.findall(r'<h2 id="(t-main-[^"]+)"', d)
        assert links and links == heads, sid


def test_a_markdown_reply_is_rendered_and_nothing_in_it_runs_or_loads(chromium, pages_rc, tmp_path):  # noqa: F811
    env = env_for(tmp_path)
    out = tmp_path / "out"
    code, rows, err = run("export", "html", "--claude-home", pages_rc["config_dir"], "--out", str(out), env=env)
    assert code == 0, err
    page = Path(next(r for r in rows if r["kind"] == "export")["path"])  # wherever the layout puts it
    src = page.read_text()
    d = dom(chromium, tmp_path, page)
    # rendered: a heading, an ordered list, a table, code
    assert re.search(r"<h2>Plan MDHEAD</h2>", d) and "<ol>" in d and "<table>" in d and "<td>app.py</td>" in d
    assert re.search(r"<code[^>]*>print\('MDCODE'\)", d)
    # nothing runs, links or loads: no script element, no handler, no remote or javascript: address in
    # an attribute; the hostile text is there as text
    title = html.unescape(re.search(r"<title>(.*?)</title>", d, re.S).group(1))
    assert title.startswith("[export_pages P1]") and "PWNED" not in title
    assert not re.search(r"<script", d, re.I) and not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", d, re.I)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//|javascript:)""", src, re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", d))  # what the page shows
    assert "<script>document.title='PWNED-MD'</script>" in text
    assert "the docs (https://example.com/docs)" in text and "[image: remote (https://example.com/track.png)]" in text


def test_terminal_escapes_do_not_reach_the_page(pages_rc, tmp_path):
    """The real client wrote the command's ESC bytes into the transcript (JSON \\u001b)."""
    t = next(Path(pages_rc["config_dir"]).glob(f"projects/*/{pages_rc['session_id']}.jsonl"))
    assert "\\u001b[31mRED-TEXT" in t.read_text()
    env = env_for(tmp_path)
    out = tmp_path / "out"
    code, rows, err = run("export", "html", "--claude-home", pages_rc["config_dir"], "--out", str(out), env=env)
    assert code == 0, err
    src = Path(next(r for r in rows if r["kind"] == "export")["path"]).read_text()
    assert "\x1b" not in src and "\x07" not in src
    assert "RED-TEXT plain  done" in src and "PWNED-TITLE" not in src.split("tool call Bash", 1)[1].split("Result", 1)[1]


@pytest.fixture(scope="module")
def home_pages(tmp_path_factory) -> dict[str, Path]:
    """examples/home (every provider) exported: session id -> its page (the version file)."""
    tmp = tmp_path_factory.mktemp("home-out")
    code, rows, err = run("export", "html", "--home", str(EX / "home"), "--out", str(tmp / "out"), env=env_for(tmp))
    assert code == 0, err
    return {r["session_id"]: Path(r["path"]) for r in rows if r["kind"] == "export"}


def test_one_compaction_one_banner(home_pages):
    inter = home_pages[INTERACTIVE].read_text()
    banners = re.findall(r'<div class="compaction"><b>Compaction boundary</b>.*?<span class="label">([^<]*)</span>',
                         inter)
    assert banners == ["L36, L37 · harness.compaction.boundary, harness.compaction.summary"]
    assert "\x1b" not in inter and "Compacted (ctrl+o to see full summary)" in inter


def test_headings_say_what_a_record_is_not_its_wrapper(home_pages):
    heads: set[str] = set()
    for p in home_pages.values():
        s = p.read_text()
        assert not re.search(r"<b>user \(", s), p  # a wrapper's native type is not a heading
        heads |= set(re.findall(r'<div class="user"><b>([^<]*)</b>', s))
    assert heads == {"Client record", "User message"}
    # the native type is still there, small, beside the locator
    assert any('response_item/message' in p.read_text() for p in home_pages.values())


def _usage_totals(env: dict) -> dict[str, int]:
    code, rows, err = run("usage", "session", "--claude-home", str(CLAUDE), env=env)
    assert code == 0, err
    return {r["session_id"]: r["total_tokens"] for r in rows if r["kind"] == "session"}


def test_each_turn_says_when_it_began_and_what_it_took(claude_out):
    out, rows, env = claude_out
    want = _usage_totals(env)
    for r in (r for r in rows if r["kind"] == "export"):
        s = Path(r["path"]).read_text()
        heads = re.findall(r'<h2 id="t-[^"]+">(Turn \d+|Before the first prompt)[^<]*(?: <span class="when">([^<]+)'
                           r"</span>)?</h2>", s)
        feet = re.findall(r'<p class="turnfoot">([^:<]+): ([^<]+)</p>', s)
        assert heads and [h for h, _w in heads] == [f for f, _t in feet], r["session_id"]
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ", w) for _h, w in heads)
        # every response's tokens once, over the session's turns (subagent lanes included): usage's total
        tokens = sum(int(m.replace(",", "")) for _f, t in feet for m in re.findall(r"([\d,]+) tokens", t))
        assert tokens == want[r["session_id"]], r["session_id"]


def test_every_agents_compaction_has_its_one_banner_in_the_browser(chromium, home_pages, tmp_path):  # noqa: F811
    """Each compaction a provider names (its `compactions` capability: Claude Code's boundary, Codex
    CLI's compacted, opencode's and Kilo Code's summary part, pi's compaction entry, Qwen Code's
    chat_compression, Copilot CLI's compaction_complete) is one banner on its session's page, holding
    the summary. Before, only the first four were: pi's, Qwen Code's and Copilot CLI's summaries were
    read as bookkeeping and left off the page, no banner at all."""
    from sessionsift.export.source import pairs
    from sessionsift.providers.scope import RootRequest, select, survey

    want = {}
    for prov, ref in pairs(select(survey(RootRequest(home=str(EX / "home")), env={"HOME": str(tmp_path)}), [])):
        h = prov.compactions(ref)
        if h is not None:
            want[ref.session_id] = [c.text for c in h.compactions]
    assert sum(1 for v in want.values() if v) == 7  # one compacted session per agent that compacts here
    for sid, page in home_pages.items():
        banners = re.findall(r'<div class="compaction"><b>Compaction boundary</b>.*?<pre>(.*?)</pre>',
                             page.read_text(), re.S)
        assert len(banners) == len(want.get(sid, [])), sid
        for got, summary in zip(banners, want.get(sid, [])):
            assert summary.strip()[:40] in html.unescape(got), sid
    pi = "01a233fd-02cf-72d6-959e-77d948b85d01"
    d = dom(chromium, tmp_path, home_pages[pi])
    shown = html.unescape(re.sub(r"<[^>]+>", "", d))
    assert "Compaction boundary: earlier context was summarised here" in shown
    # where the client compacted: after turn 1's reply (L7), before turn 2's prompt (L9)
    assert d.index("L7#0 · message") < d.index('<div class="compaction">') < d.index("L9 · prompt")


def _markdown_page(md: Path, tmp: Path) -> Path:
    """A Markdown export as a viewer shows it: rendered as CommonMark with tables (markdown-it-py,
    the renderer the HTML export uses; GitHub's cmark-gfm follows the same spec) with its HTML
    blocks passed through (the export folds tool calls in <details>; html=True is stricter than
    GitHub's sanitiser: any raw HTML the file held would be live here), in a page whose CSP runs
    and loads nothing."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(md.read_text(encoding="utf-8"))
    page = tmp / (md.stem + ".rendered.html")
    page.write_text('<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" '
                    "content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\"></head><body>"
                    + body + "</body></html>", encoding="utf-8")
    return page


def _shown_text(d: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", d))


def test_the_markdown_export_reads_in_the_browser(chromium, pages_rc, tmp_path):  # noqa: F811
    """`export markdown` of sessions the REAL Claude Code client wrote (examples/claude-home's /compact
    session, whose command output holds the client's own ESC bytes; scenarios_pages: a hostile
    Markdown reply and a command's ANSI colours), rendered and opened in headless Chromium: no
    terminal escape reaches the page (no ESC, no leftover '[31m'), one compaction is one banner,
    user-role text is headed by what it is (not 'user (user)'), the hostile reply is text (nothing
    runs or loads), tool calls fold."""
    env = env_for(tmp_path)
    out = tmp_path / "md"
    code, rows, err = run("export", "markdown", "--claude-home", str(CLAUDE), "--out", str(out), env=env)
    assert code == 0, err
    raw = (out / "claude-code" / f"{INTERACTIVE}.md").read_text(encoding="utf-8")
    t = next(CLAUDE.glob(f"projects/*/{INTERACTIVE}.jsonl")).read_text()
    assert "\\u001b[2mCompacted" in t  # the client wrote the ESC (JSON \u001b) ...
    assert "\x1b" not in raw  # ... and the file does not hold it (a terminal printing it would obey it)
    d = dom(chromium, tmp_path, _markdown_page(out / "claude-code" / f"{INTERACTIVE}.md", tmp_path))
    shown = _shown_text(d)
    assert shown.count("Compaction boundary") == 1
    assert "Compacted (ctrl+o to see full summary)" in shown and "[2m" not in shown and "\x1b" not in shown
    assert "\ufffd" not in shown and "user (user)" not in shown and "Client record" in shown
    assert d.count("<details") >= 3 and "<h2>Turn 1</h2>" in d

    out2 = tmp_path / "md-rc"
    code, rows, err = run("export", "markdown", "--claude-home", pages_rc["config_dir"], "--out", str(out2), env=env)
    assert code == 0, err
    md = Path(next(r for r in rows if r["kind"] == "export")["path"])
    assert "\x1b" not in md.read_text(encoding="utf-8")
    d = dom(chromium, tmp_path, _markdown_page(md, tmp_path))
    shown = _shown_text(d)
    res = shown.split("Result", 1)[1].split("Reply", 1)[0]  # the command's output (its input is the printf)
    assert "RED-TEXT plain  done" in res and "[31m" not in res and "PWNED-TITLE" not in res and "\x1b" not in shown
    # the reply is shown as the text it is: its script is text, nothing runs, links or loads
    assert "<script>document.title='PWNED-MD'</script>" in shown
    assert not re.search(r"<script", d, re.I) and not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", d, re.I)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//|javascript:)""", d, re.I)
