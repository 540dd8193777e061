"""`sessionsift serve` over the real-client sample corpora (examples/home), as a real server
process, looked at with a real HTTP client and in headless Chromium (tests/serve_harness.py).

- the door: no token, a wrong token, a foreign Host, a foreign Origin, a POST are each refused
  with their one status; the right token sets a cookie and redirects to the address without it;
  every answer carries the CSP;
- every page (the sessions list, each session of every provider, a search) renders in Chromium
  with no console error, no failed request and no request to another origin;
- search answers with the hits `sessionsift search PATTERN --format json` prints;
- a session whose prompt and tool output the REAL client wrote with `<script>` and `onerror=`
  payloads (tests/realclient/scenarios_export.py) runs none of them in the page.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.serve_harness import REPO, Browser, env_for, serving
from tests.test_export_html import PAYLOAD_TITLES, chromium  # noqa: F401 - the browser fixture
from tests.test_hostile_render import hostile  # noqa: F401 - the control-character corpus

HOME = REPO / "examples" / "home"

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("serve"), "--home", str(HOME)) as s:
        yield s


@pytest.fixture(scope="module")
def browser(chromium):  # noqa: F811
    pytest.importorskip("playwright")
    b = Browser(chromium)
    yield b
    b.close()


def _get(s, path: str, **kw) -> httpx.Response:
    return httpx.get(s.base + path, follow_redirects=False, timeout=60, **kw)


def _cookie(s) -> dict:
    return {f"sessionsift_token_{s.port}": s.token}


def test_without_the_token_every_path_is_refused(served):
    for path in ("/", "/search?q=x", "/static/app.js", "/session/codex/x", "/nope"):
        r = _get(served, path)
        assert r.status_code == 403, (path, r.status_code)
        assert "no token" in r.text
    assert _get(served, "/?token=wrong").status_code == 403
    assert _get(served, "/", cookies={f"sessionsift_token_{served.port}": "wrong"}).status_code == 403


def test_the_token_sets_a_cookie_and_leaves_the_address(served):
    r = _get(served, "/?agent=codex&token=" + served.token)
    assert r.status_code == 303
    assert r.headers["location"] == "/?agent=codex"
    c = r.headers["set-cookie"]
    assert c.startswith(f"sessionsift_token_{served.port}={served.token};") and "HttpOnly" in c and "SameSite=Strict" in c
    r = _get(served, "/", cookies=_cookie(served))
    assert r.status_code == 200
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"


def test_a_foreign_host_or_origin_or_a_write_is_refused(served):
    ck = _cookie(served)
    assert _get(served, "/", cookies=ck, headers={"Host": f"attacker.example:{served.port}"}).status_code == 400
    assert _get(served, "/", cookies=ck, headers={"Host": "127.0.0.1:1"}).status_code == 400
    assert _get(served, "/", cookies=ck, headers={"Origin": "http://attacker.example"}).status_code == 403
    assert _get(served, "/", cookies=ck, headers={"Origin": served.base}).status_code == 200
    assert _get(served, "/", cookies=ck, headers={"Host": f"localhost:{served.port}"}).status_code == 200
    for m in ("POST", "PUT", "DELETE", "PATCH"):
        r = httpx.request(m, served.base + "/", cookies=ck, timeout=30)
        assert r.status_code == 405, m


def test_it_binds_loopback_and_refuses_another_host_without_the_flag(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sessionsift", "serve", "--home", str(HOME), "--host", "0.0.0.0",
                        "--no-browser"], capture_output=True, text=True, env=env_for(tmp_path), cwd=REPO, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "--allow-remote" in r.stderr


def _listing() -> list[dict]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", "list", "--home", str(HOME), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    return [json.loads(x) for x in p.stdout.splitlines() if '"kind": "session"' in x or '"kind":"session"' in x]


def _show_turns(provider: str, sid: str) -> int:
    p = subprocess.run([sys.executable, "-m", "sessionsift", "show", sid, "--home", str(HOME), "--provider", provider,
                        "--format", "json"], capture_output=True, text=True, cwd=REPO, timeout=120)
    return json.loads(p.stdout.splitlines()[-1])["turns"]


def test_every_page_renders_in_the_browser_without_an_error(served, browser):
    page = browser.page(served.base)
    page.goto(served.url)  # the printed address: token, cookie, redirect
    assert page.url == served.base + "/"
    rows = [tuple(r) for r in page.eval_on_selector_all(
        "#sessions tbody tr", "rs => rs.map(r => [r.dataset.provider, r.dataset.session])")]
    cli = {(r["provider"], r["session_id"]) for r in _listing()}
    assert len(cli) >= 40
    assert len(rows) == len(cli) and set(rows) == cli  # every session of every provider, once
    assert len({p for p, _ in rows}) >= 7  # every provider examples/home holds
    # nesting: a child session is listed right under its parent
    kids = page.eval_on_selector_all("#sessions tbody tr.depth-1", "rs => rs.length")
    assert kids >= 4
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as ex:
        turns = dict(zip(rows, ex.map(lambda r: _show_turns(*r), rows)))
    for prov, sid in rows:
        page.goto(f"{served.base}/session/{quote(prov, safe='')}/{quote(sid, safe='')}")
        assert page.locator("h1").count() == 1, (prov, sid)
        # the turns `show SESSION` counts, each one a section (child sessions' turns too)
        assert page.locator("section.turn").count() == turns[(prov, sid)], (prov, sid)
        assert page.locator("#empty").count() == (1 if turns[(prov, sid)] == 0 else 0)
        ids = page.eval_on_selector_all("[id]", "es => es.map(e => e.id)")
        assert len(ids) == len(set(ids)), (prov, sid)  # every anchor names one place
    for prov, sid in rows[::3]:  # the files pages of every third session, each file's page
        page.goto(f"{served.base}/session/{quote(prov, safe='')}/{quote(sid, safe='')}")
        with page.expect_navigation(wait_until="load"):  # the files page, loaded, before it is read
            page.click("nav.pager >> text=Files changed")
        assert page.url.endswith("/files"), (prov, sid, page.url)
        assert page.locator("#counts").count() == 1, (prov, sid)
        for href in page.eval_on_selector_all("#files a", "as => as.map(a => a.getAttribute('href'))")[:3]:
            page.goto(served.base + href)
            assert page.locator("#status").count() == 1, href
    for path in ("/search", "/search?q=sub.txt", "/?agent=codex", "/?q=subagent&sort=size", "/usage", "/clean",
                 "/worktrees", "/live"):
        page.goto(served.base + path)
    # the live page: a verdict for every session `status` answers, connected to its event stream
    page.wait_for_function("() => document.getElementById('live-status').dataset.connected === '1'")
    st = subprocess.run([sys.executable, "-m", "sessionsift", "status", "--home", str(HOME), "--format", "json"],
                        capture_output=True, text=True, cwd=REPO, timeout=120)
    verdicts = sorted(r["verdict"] for r in map(json.loads, st.stdout.splitlines()) if r["kind"] == "session")
    assert sorted(page.eval_on_selector_all("#live tbody .verdict", "vs => vs.map(v => v.textContent)")) == verdicts
    assert browser.problems == [], browser.problems
    page.close()


@pytest.mark.parametrize("provider,sid,path,status", [
    # complete, a Python run after the last write could have changed it (recover's exit 5)
    ("claude-code", "8414eb07-cca2-5cca-9059-e9baedac31e1", "/tmp/ssift-rc/files_basic/work/hello.py", 5),
    ("codex", "01a230e8-b40a-72c2-ab04-5c68941a624d", "/tmp/ssift-codex/shell_and_patch/work/hello.py", 0)])
def test_a_files_page_lists_what_files_lists_and_shows_what_recover_rebuilds(served, browser, provider, sid, path,
                                                                               status):
    p = subprocess.run([sys.executable, "-m", "sessionsift", "files", sid, "--home", str(HOME), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    want = {r["file"] for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "file"}
    page = browser.page(served.base)
    page.goto(served.url)
    page.goto(f"{served.base}/session/{provider}/{sid}/files")
    got = set(page.eval_on_selector_all("#files tbody tr", "rs => rs.map(r => r.dataset.path)"))
    assert got == want and path in got
    with page.expect_navigation(wait_until="load"):
        page.click(f"#files tr[data-path='{path}'] a")
    r = subprocess.run([sys.executable, "-m", "sessionsift", "recover", sid, "--file", path, "--home", str(HOME)],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == status and r.stdout, r.stderr
    assert page.text_content("#content") == r.stdout  # the file recover writes, byte for byte
    assert browser.problems == [], browser.problems
    page.close()


def _cli_hits(pattern: str) -> tuple[set, dict]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", "search", pattern, "--home", str(HOME), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    hits = {(r["provider"], r["session_id"], r["line"], r.get("locator") or "") for r in rows if r["kind"] == "hit"}
    return hits, rows[-1]


@pytest.mark.parametrize("pattern", ["SUBAGENT-A", "sub\\.txt", "summary", "Done\\."])
def test_search_returns_the_hits_the_cli_returns(served, browser, pattern):
    want, summary = _cli_hits(pattern)
    assert want and summary["hits"] == len(want)
    page = browser.page(served.base)
    page.goto(served.url)
    with page.expect_navigation(wait_until="load"):  # the list page has a text filter too: fill the search page's
        page.click("header.top a[href='/search']")
    assert page.url.startswith(served.base + "/search"), page.url
    page.fill("input[name=q]", pattern)
    with page.expect_navigation(wait_until="load"):
        page.click("form.filters button")
    page.wait_for_selector("#counts")
    got = page.eval_on_selector_all(
        "section.hitturn .hit",
        "hs => hs.map(h => [h.closest('section').dataset.provider, h.closest('section').dataset.session,"
        " h.dataset.line, h.dataset.locator])")
    got = {(p, s, int(line) if line not in ("", "None") else None, loc) for p, s, line, loc in got}
    assert got == want
    assert page.text_content("#counts").startswith(f"{summary['hits']:,} hits")
    marks = page.eval_on_selector_all("section.hitturn mark", "ms => ms.length")
    assert marks == len(want)  # every hit's match is marked
    # every hit links into its session at its record
    links = page.eval_on_selector_all("section.hitturn .hit a", "as => as.map(a => a.getAttribute('href'))")
    assert len(links) == len(want)
    for link in links:
        assert link.startswith("/session/") and "#r-" in link
        page.goto(served.base + link)
        anchor = link.split("#", 1)[1]
        assert page.locator(f"[id='{anchor}']").count() == 1, link
    assert browser.problems == [], browser.problems
    page.close()


@pytest.fixture(scope="module")
def hostile_served(export_rc, tmp_path_factory):
    with serving(tmp_path_factory.mktemp("serve-hostile"), "--claude-home", str(export_rc["config_dir"])) as s:
        yield s, export_rc


def test_a_hostile_transcript_runs_nothing(hostile_served, browser):
    from tests.realclient import scenarios_export as SX

    s, rc = hostile_served
    page = browser.page(s.base)
    page.goto(s.url)
    page.goto(f"{s.base}/session/claude-code/{rc['session_id']}")
    title = page.title()
    assert title.startswith("[export_secrets P1] Show deploy.env") and title not in PAYLOAD_TITLES
    html = page.content()
    # the payloads are on the page, as text
    assert "&lt;script&gt;document.title='PWNED-PROMPT'&lt;/script&gt;" in html
    text = page.text_content("main")  # folded tool results included
    assert "PWNED-TOOL" in text and SX.PAGE_HTML.strip() in text
    scripts = page.eval_on_selector_all("script", "ss => ss.map(s => s.getAttribute('src'))")
    assert scripts == ["/static/app.js"]  # the app's own script, nothing else
    handlers = page.evaluate("""() => [...document.querySelectorAll('*')].flatMap(e =>
        [...e.attributes].filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))""")
    assert handlers == []
    assert page.evaluate("() => document.querySelectorAll('img:not([src^=\"data:\"])').length") == 0
    page.goto(f"{s.base}/search?q=PWNED")
    assert page.title().startswith("Search PWNED")
    p = subprocess.run([sys.executable, "-m", "sessionsift", "search", "PWNED", "--claude-home", str(rc["config_dir"]),
                        "--format", "json"], capture_output=True, text=True, cwd=REPO, timeout=120,
                       env=env_for(Path(rc["config_dir"]).parent / "cli-env"))
    hits = json.loads(p.stdout.splitlines()[-1])["hits"]
    assert hits >= 2 and page.locator("section.hitturn mark").count() == hits
    page.goto(s.base + "/")
    assert browser.dialogs == []
    assert [p for p in browser.problems if "PWNED" in p or "Content Security" in p] == []
    assert browser.problems == [], browser.problems
    page.close()


def test_control_characters_from_disk_do_not_reach_a_page(hostile, tmp_path):
    """tests/test_hostile_render.py's corpus (file names and fields carrying ESC, BEL, CR, a
    newline, a bidi override): no page holds a raw control character."""
    import re

    from tests.test_hostile_render import _RAW

    with serving(tmp_path, "--claude-home", str(hostile)) as s:
        ck = _cookie(s)
        r = _get(s, "/", cookies=ck)
        assert r.status_code == 200
        links = sorted(set(re.findall(r'href="(/session/claude-code/[^"#]+)"', r.text)))
        assert len(links) >= 8
        pages = [r.text] + [_get(s, "/search?q=Z", cookies=ck).text]
        for link in links:
            p = _get(s, link, cookies=ck)
            assert p.status_code == 200, link
            pages.append(p.text)
        for text in pages:
            assert _RAW.findall(text) == []
        assert any("\\u001b" in text for text in pages)  # the ESC is shown, as its escape


def test_without_the_extra_it_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['starlette'] = None; sys.argv[0] = 'sessionsift'; "
            "from sessionsift.cli import main; main(['serve', '--home', sys.argv[1], '--no-browser'])")
    p = subprocess.run([sys.executable, "-c", code, str(HOME)], capture_output=True, text=True,
                       env=env_for(tmp_path), cwd=REPO, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "pip install 'sessionsift[serve]'" in p.stderr and "starlette" in p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("period,by", [("daily", "provider"), ("weekly", "model"), ("monthly", "provider")])
def test_usage_page_has_the_rows_and_totals_usage_prints(served, browser, period, by):
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", period, "--by", by, "--home", str(HOME),
                        "--format", "json"], capture_output=True, text=True, cwd=REPO, timeout=300)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    want = [(r["period"], r["group"], r["total_tokens"]) for r in rows if r["kind"] == "period"]
    assert want
    page = browser.page(served.base)
    page.goto(served.url)
    page.goto(f"{served.base}/usage?period={period}&by={by}")
    got = page.eval_on_selector_all("#usage tbody tr", "rs => rs.map(r => [r.dataset.period, r.dataset.group, r.dataset.total])")
    assert [(a, b, int(c) if c else None) for a, b, c in got] == want
    # a row whose tokens nobody recorded (Crush's sample writes none) is unknown, not 0, and has no bar
    unknown = [w for w in want if w[2] is None]
    assert page.locator("#usage tbody td .unknown").count() >= len(unknown)
    bars = page.eval_on_selector_all("#chart rect.bar", "rs => rs.map(r => [r.dataset.period, r.dataset.group, +r.dataset.tokens])")
    assert sorted(map(tuple, bars)) == sorted((a, b, c) for a, b, c in want if c)
    assert page.text_content("#usage-total").replace(",", "") == str(rows[-1]["total_tokens"])
    assert page.locator("#burn").count() == 1 and page.locator("#blocks tbody tr").count() >= 1
    assert browser.problems == [], browser.problems
    page.close()


def test_a_session_file_name_that_is_not_utf8_is_shown_escaped_on_every_page(browser, tmp_path):
    """A REAL Claude Code transcript (examples/) copied under a file name holding the byte 0xFF,
    which is not UTF-8 (hand-made name: no client writes one; a file copied from another system
    can be named so). Its session id is that name decoded with surrogateescape; every page holding
    it answered HTTP 500 (a lone surrogate cannot be URL-quoted or encoded) and the server dropped
    the connection. Now every page renders in Chromium without an error, shows the byte as
    ``\\xff``, and the session's link opens its page."""
    import os
    import shutil

    src = REPO / "examples" / "claude-home" / "projects"
    proj = sorted(p for p in src.iterdir() if p.is_dir() and list(p.glob("*.jsonl")))[0]
    transcript = sorted(proj.glob("*.jsonl"))[0]
    dest = tmp_path / "h" / ".claude" / "projects" / proj.name
    dest.mkdir(parents=True)
    name = os.fsencode(dest) + b"/caf\xff-" + transcript.name.encode()
    shutil.copyfile(transcript, name)
    with serving(tmp_path / "srv", "--claude-home", str(tmp_path / "h" / ".claude")) as s:
        page = browser.page(s.base)
        page.goto(s.url)
        link = page.locator("a[href^='/session/claude-code/caf%FF-']").first
        with page.expect_navigation(wait_until="load"):
            link.click()
        assert page.url.startswith(s.base + "/session/claude-code/caf%FF-")
        assert "caf\\xff-" in page.text_content("body")
        for path in ("/?sort=size", "/search?q=the", "/clean", "/usage", "/live"):
            page.goto(s.base + path)
        assert browser.problems == [], browser.problems
        page.close()
