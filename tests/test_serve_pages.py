"""`sessionsift serve`'s pages over the real-client sample corpora (examples/home), read as HTML
through a real HTTP client (the browser tests are tests/test_serve.py): what the issue-28 audit
(notes: issue28-audit.md) found no test holding.

- every in-page link of every session page names an anchor on that page;
- a file whose rebuild stopped (`recover`'s STALE, exit 6) says what its content is as of and
  which change could not be applied, as `recover` says it;
- the sessions page's filters (agent, project, date, text), sorts and counts answer for the
  sessions `list --format json` gives, each sort in `list --sort`'s order (the page sorted on its
  own before, a database provider's sessions last by size: their summary has no size);
- the search page takes the CLI's options (-i, -F, -t, -T, --no-subagents) and answers with the
  hits `sessionsift search` prints with them (each option changing the CLI's answer);
- the usage page's open billing window, burn rate and cost per hour are `usage blocks --active`'s;
- the live page's reasons, evidence and invisible surfaces are `status`'s;
- by default the server listens on 127.0.0.1 only; the event stream needs the token too;
- every tool call `show` gives is drawn folded with the result `show` pairs it with;
- the diff view's patches, applied to what the raw transcript's Write created, give `recover`'s file;
- each search hit sits in its turn's section, under the turn's prompt;
- each child session is nested under its own parent;
- a files page declares each gap with its cause as `recover` does, and a deleted file shows no content.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from urllib.parse import quote

import httpx
import pytest

from tests.serve_harness import REPO, env_for, serving

HOME = REPO / "examples" / "home"

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("serve-pages"), "--home", str(HOME)) as s:
        yield s


def _get(s, path: str) -> str:
    r = httpx.get(s.base + path, cookies={f"sessionsift_token_{s.port}": s.token}, timeout=120)
    assert r.status_code == 200, (path, r.status_code)
    return r.text


def _cli(tmp_path, *args: str) -> tuple[int, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--home", str(HOME), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, env=env_for(tmp_path), timeout=300)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines()]


def _listing(tmp_path) -> list[dict]:
    return [r for r in _cli(tmp_path, "list")[1] if r["kind"] == "session"]


def test_every_in_page_link_of_every_session_page_names_an_anchor(served, tmp_path):
    """A session with no turn (Crush's title helper session) linked '#turns' to a table of
    contents it does not have (failed before on crush/title-592afbcf-...)."""
    rows = _listing(tmp_path)
    assert len(rows) >= 60
    dead = []
    for r in rows:
        path = f"/session/{quote(r['provider'], safe='')}/{quote(r['session_id'], safe='')}"
        page = _get(served, path)
        ids = {html.unescape(i) for i in re.findall(r' id="([^"]+)"', page)}
        for a in set(re.findall(r'href="#([^"]*)"', page)):
            if html.unescape(a) not in ids:
                dead.append((path, a))
    assert dead == []


@pytest.mark.parametrize("provider,sid,path", [
    # pi's edit records no diff: the rebuild stops at it, the content is the write's (L6)
    ("pi", "01a233fc-716f-7205-87e7-86c23cd6ff54", "/tmp/ssift-pi-sample/edit_continue/work/notes.md"),
    # Copilot's later diff does not apply to the created content
    ("copilot-cli", "471eb997-9f92-4eb9-8d12-504f84a45b59", "/tmp/ssift-copilot-sample/files_shell/work/hello.py")])
def test_a_stale_file_says_what_its_content_is_as_of(served, tmp_path, provider, sid, path):
    """`recover` prints 'STALE: content as of L6; <why>' and exits 6; the page showed the content
    under a bare 'Content' heading, as if it were the file's last (failed before: no #content-as-of)."""
    rc, rows = _cli(tmp_path, "recover", sid, "--file", path)
    summ = rows[-1]
    assert rc == 6 and summ["status"] == "stale"
    page = _get(served, f"/session/{provider}/{sid}/files?path={quote(path, safe='')}")
    m = re.search(r'<h2 id="content-as-of">(.*?)</h2><pre id="content">(.*?)</pre>', page, re.S)
    assert m, page[-2000:]
    head = html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))
    assert head.startswith(f"Content as of {summ['as_of']['locator']}; the change at "
                           f"{summ['stopped_at']['locator']} could not be applied: {summ['stopped_at']['why']}")
    assert html.unescape(m.group(2)) == summ["content"]


def test_a_complete_rebuild_says_the_change_it_is_as_of(served, tmp_path):
    sid, path = "01a230e8-b40a-72c2-ab04-5c68941a624d", "/tmp/ssift-codex/shell_and_patch/work/hello.py"
    rc, rows = _cli(tmp_path, "recover", sid, "--file", path)
    assert rc == 0 and rows[-1]["status"] == "rebuilt"
    page = _get(served, f"/session/codex/{sid}/files?path={quote(path, safe='')}")
    assert f'<h2 id="content-as-of">Content as of {rows[-1]["as_of"]["locator"]}</h2>' in page


def _shown(page: str) -> list[tuple[str, str]]:
    return [(html.unescape(p), html.unescape(s)) for p, s in
            re.findall(r'<tr class="depth-\d" data-provider="([^"]*)" data-session="([^"]*)">', page)]


def test_the_sessions_filters_sort_and_counts_answer_for_the_listing(served, tmp_path):
    rows = _listing(tmp_path)
    key = {(r["provider"], r["session_id"]): r for r in rows}

    def project(r):
        return r.get("project") or ""

    def day(r):
        return (r.get("last_at") or {}).get("utc") or ""

    assert all(day(r) for r in rows), [k for k, r in key.items() if not day(r)][:3]
    # by agent: that agent's sessions, every one
    for prov in ("codex", "crush", "gemini-cli"):
        got = _shown(_get(served, f"/?agent={prov}"))
        assert sorted(got) == sorted(k for k in key if k[0] == prov), prov
    # by project: a part of the project's path, case folded
    got = _shown(_get(served, "/?project=FILES_BASIC"))
    want = sorted(k for k, r in key.items() if "files_basic" in project(r).lower())
    assert want and sorted(got) == want
    # by date: the last activity's day, both ends included
    days = sorted({day(r)[:10] for r in rows})
    assert len(days) >= 2, days
    lo = hi = days[0]  # one day: both ends included
    got = _shown(_get(served, f"/?since={lo}&until={hi}"))
    want = sorted(k for k, r in key.items() if lo <= day(r)[:10] <= hi)
    assert want and len(want) < len(rows) and sorted(got) == want
    # by text: the session's id, title or prompts
    got = _shown(_get(served, "/?q=SUBAGENT"))
    assert ("qwen-code", "a3fa2856-5d6a-4b0b-92c9-7bbdb9b454ac") in got and len(got) < len(rows)
    # sorted: the top-level rows in the order `list --sort KEY` gives them, for every KEY it takes
    from sessionsift.listing import SORTS

    for k in SORTS:
        page = _get(served, f"/?sort={k}")
        top = [x for x, d in zip(_shown(page), re.findall(r'<tr class="depth-(\d)"', page)) if d == "0"]
        cli = [(r["provider"], r["session_id"]) for r in _cli(tmp_path, "list", "--sort", k)[1]
               if r["kind"] == "session" and not r.get("parent_session_id")]
        assert top == cli, k
    # counts: per agent, its sessions and child sessions, as the listing has them
    facets = dict(re.findall(r'href="/\?agent=([^&"]+)[^"]*">[^<]*</a> <span class="meta">([^<]*)</span>',
                             _get(served, "/")))
    for prov in {k[0] for k in key}:
        main = sum(1 for k, r in key.items() if k[0] == prov and not r.get("parent_session_id"))
        kids = sum(1 for k, r in key.items() if k[0] == prov and r.get("parent_session_id"))
        assert facets[quote(prov)] == f"{main}" + (f" + {kids} child" if kids else ""), prov


@pytest.mark.parametrize("query,args", [
    ("q=subagent-a&i=1", ["subagent-a", "-i"]),
    ("q=print%28&F=1", ["print(", "-F"]),  # without -F an RE2 syntax error
    ("q=sub.txt&t=prompt", ["sub.txt", "-t", "prompt"]),
    ("q=sub.txt&T=prompt", ["sub.txt", "-T", "prompt"]),
    ("q=SUBAGENT-A&nosub=1", ["SUBAGENT-A", "--no-subagents"])])
def test_the_search_page_takes_the_cli_options(served, tmp_path, query, args):
    _, rows = _cli(tmp_path, "search", *args)
    want = {(r["provider"], r["session_id"], r["line"], r.get("locator") or "") for r in rows if r["kind"] == "hit"}
    assert want and rows[-1]["hits"] == len(want)
    # each option changes the answer: without it the CLI gives other hits (none where it refuses the pattern)
    bare = [a for a in args[1:] if a not in ("-i", "-F", "--no-subagents", "-t", "-T", "prompt")]
    _, rows0 = _cli(tmp_path, "search", args[0], *bare)
    assert {(r["provider"], r["session_id"], r["line"], r.get("locator") or "") for r in rows0
            if r["kind"] == "hit"} != want
    page = _get(served, "/search?" + query)
    got = set()
    for sec in re.findall(r'<section class="hitturn" (.*?)</section>', page, re.S):
        p, s = re.match(r'data-provider="([^"]*)" data-session="([^"]*)"', sec).groups()
        for line, loc in re.findall(r'<div class="hit" data-line="([^"]*)" data-locator="([^"]*)"', sec):
            got.add((html.unescape(p), html.unescape(s), None if line in ("", "None") else int(line),
                     html.unescape(loc)))
    assert got == want


def test_the_usage_page_shows_the_open_windows_burn_rate_as_usage_blocks_does(tmp_path):
    """examples/home's responses are days old: no window is open, so the burn rate was never drawn
    in a test. A REAL Claude Code transcript (files_basic, examples/claude-home) copied with every
    timestamp moved by one offset so its first response is 5 s old (hand-shifted: a client cannot
    be made to write at a chosen instant offline; the records are otherwise the client's): the
    page's current window, its burn rate and cost per hour are what `usage blocks --active` gives.
    Both read within the window's first minute, where the rate is taken over 60 s (blocks.windows),
    so the two agree to the token."""
    import datetime as D

    name = "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    src = REPO / "examples" / "claude-home" / "projects" / "-tmp-ssift-rc-files-basic-work" / name
    text = src.read_text()
    stamps = [D.datetime.fromisoformat(x.replace("Z", "+00:00")) for x in re.findall(r'"timestamp":"([^"]+)"', text)]
    shift = D.datetime.now(D.timezone.utc) - D.timedelta(seconds=5) - min(stamps)

    def moved(m):
        t = D.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")) + shift
        return f'"timestamp":"{t.strftime("%Y-%m-%dT%H:%M:%S")}.{t.microsecond // 1000:03d}Z"'

    home = tmp_path / "claude"
    (home / "projects" / src.parent.name).mkdir(parents=True)
    (home / "projects" / src.parent.name / name).write_text(re.sub(r'"timestamp":"([^"]+)"', moved, text))
    with serving(tmp_path / "srv", "--claude-home", str(home)) as s:
        page = _get(s, "/usage")
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "blocks", "--active", "--claude-home", str(home),
                        "--format", "json"], capture_output=True, text=True, cwd=REPO, env=env_for(tmp_path / "cli"),
                       timeout=120)
    w = next(r for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "window")
    assert w["active"] and w["burn_rate"]["over_seconds"] == 60.0  # the page, read before, took the same 60 s
    burn = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<p class="counts" id="burn">(.*?)</p>', page).group(1)))
    assert burn.startswith("Current window since ") and " (a lower bound)" not in burn
    assert f": {w['burn_rate']['tokens_per_minute']:,.0f} tokens/minute, ${w['burn_rate']['cost_usd_per_hour']:,.2f}/hour;" \
        in burn, burn
    now_row = re.findall(r"<tr class=active><td>[^<]*\(now\)</td><td class=n>([\d,]+)</td>", page)
    assert [int(x.replace(",", "")) for x in now_row] == [w["total_tokens"]]


def test_the_live_page_shows_each_sessions_reason_and_evidence_as_status_does(served, tmp_path):
    """The browser test holds each row's verdict; here each row's reason and its evidence (every
    surface with what it showed, in order) and what its provider cannot show are `status`'s."""
    _, rows = _cli(tmp_path, "status")
    want = {}
    for r in rows:
        if r["kind"] == "session":
            want[r["session_id"]] = (r["reason"], [(x["surface"], "" if x.get("value") is None else str(x["value"]))
                                                   for x in r["evidence"]], list(r.get("invisible") or []))
    page = _get(served, "/live")
    got = {}
    for tr in re.findall(r'<tr id="live-[0-9a-f]+">(.*?)</tr>', page, re.S):
        sid = html.unescape(re.search(r'<td class="who"><a href="[^"]*">([^<]*)</a>', tr).group(1))
        reason = html.unescape(re.search(r'<div class="reason meta">([^<]*)</div>', tr).group(1))
        ev = [(html.unescape(s), html.unescape(v)) for s, v in re.findall(r"<li><b>([^<]*)</b>: ([^<]*)</li>", tr)]
        inv = [html.unescape(x) for x in re.findall(r"<li>invisible: ([^<]*)</li>", tr)]
        got[sid] = (reason, ev, inv)
    assert len(got) == len(want) >= 60
    assert all(ev for _, ev, _ in got.values())  # every verdict carries its evidence
    assert got == want


def test_by_default_it_listens_on_loopback_only_and_the_event_stream_needs_the_token(served):
    """The printed address is 127.0.0.1's, and the kernel's table of listening sockets
    (/proc/net/tcp, tcp6) has the port on 127.0.0.1 alone; the live page's event stream is
    refused without the token like every page, and streams with it."""
    assert served.url.startswith(f"http://127.0.0.1:{served.port}/?token=")
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) == served.port:
                listening.append(addr)
    assert listening == ["0100007F"]  # 127.0.0.1, nothing on 0.0.0.0 or ::
    r = httpx.get(served.base + "/live/events", timeout=30)
    assert r.status_code == 403 and "no token" in r.text
    with httpx.stream("GET", served.base + "/live/events", cookies={f"sessionsift_token_{served.port}": served.token},
                      timeout=60) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert "default-src 'none'" in r.headers["content-security-policy"]
        got = ""
        for chunk in r.iter_text():
            got += chunk
            if "event: state" in got:
                break
        assert got.startswith("retry: 1000\n\n") and "event: state\ndata: {" in got


_TOOL = re.compile(r'<details class="tool item[^"]*" data-locator="([^"]*)"><summary>.*?</summary><b>Input</b><pre>.*?'
                   r'</pre>(?:<p class="meta">No result on disk\.</p>|<details class="result[^"]*"><summary>Result.*?'
                   r'<span class="label"[^>]*>([^<]*)</span></summary>)', re.S)


def test_every_tool_call_is_folded_with_the_result_show_gives_it(served, tmp_path):
    """Each session page (child sessions' turns included) draws every tool call `show` gives, each
    folded (a details element) with the result `show` pairs it with, or 'No result on disk'."""
    from collections import Counter
    from concurrent.futures import ThreadPoolExecutor

    rows = _listing(tmp_path)

    def shown(r):
        _, out = _cli(tmp_path, "show", r["session_id"], "--provider", r["provider"])
        return Counter((i["locator"], (i.get("result") or {}).get("locator") or "")
                       for t in out if t["kind"] == "turn" for i in t["items"] if i["kind"] == "tool")

    with ThreadPoolExecutor(2) as ex:
        want = list(ex.map(shown, rows))
    calls = paired = 0
    for r, w in zip(rows, want):
        page = _get(served, f"/session/{quote(r['provider'], safe='')}/{quote(r['session_id'], safe='')}")
        got = Counter((html.unescape(a), html.unescape(b)) for a, b in _TOOL.findall(page))
        assert page.count('<details class="tool item') == sum(got.values()), r["session_id"]
        assert got == w, (r["provider"], r["session_id"])
        calls += sum(w.values())
        paired += sum(n for (_, res), n in w.items() if res)
    print(f"\n{calls} tool calls, {paired} with their result")
    assert calls >= 100 and paired >= calls * 0.9


def test_the_diff_view_patches_the_written_file_into_what_recover_rebuilds(served, tmp_path):
    """Claude Code files_basic's hello.py: created by a Write, then two Edits. The steps' diffs on
    the file's page, applied in turn (whatthepatch, hunk context checked) to the content the
    Write's input holds in the raw transcript, give what `recover` writes, each making the change
    its Edit's old_string -> new_string asks for."""
    from sessionsift.files.rebuild import apply_diff

    sid, path = "8414eb07-cca2-5cca-9059-e9baedac31e1", "/tmp/ssift-rc/files_basic/work/hello.py"
    raw = REPO / "examples" / "claude-home" / "projects" / "-tmp-ssift-rc-files-basic-work" / f"{sid}.jsonl"
    calls = [c for o in map(json.loads, raw.read_text().splitlines()) if o.get("type") == "assistant"
             for c in o["message"]["content"] if c.get("type") == "tool_use" and c["input"].get("file_path") == path]
    assert [c["name"] for c in calls] == ["Write", "Edit", "Read", "Edit"]
    page = _get(served, f"/session/claude-code/{sid}/files?path={quote(path, safe='')}")
    diffs = [html.unescape(re.sub(r"<[^>]+>", "", d)) for d in re.findall(r'<pre class="diff">(.*?)</pre>', page, re.S)]
    assert len(diffs) == 2
    text = calls[0]["input"]["content"]
    for d, edit in zip(diffs, [c for c in calls if c["name"] == "Edit"]):
        after = apply_diff(text, d)
        # the step's diff makes the change the Edit asked for (its own old_string -> new_string)
        assert after != text and after == text.replace(edit["input"]["old_string"], edit["input"]["new_string"],
                                                       -1 if edit["input"].get("replace_all") else 1)
        text = after
    r = subprocess.run([sys.executable, "-m", "sessionsift", "recover", sid, "--file", path, "--home", str(HOME)],
                       capture_output=True, text=True, cwd=REPO, env=env_for(tmp_path), timeout=120)
    assert r.returncode == 5 and text == r.stdout  # 5: complete, a later Python run could have changed it


@pytest.mark.parametrize("pattern", ["sub\\.txt", "hello"])
def test_search_hits_sit_in_their_whole_turn_under_its_prompt(served, tmp_path, pattern):
    """Each hit `search` prints is on the page in the section of its turn (the CLI's `turn`), and
    that section shows the turn's opening prompt (the CLI's turn_context.opener) above the hits:
    as its Prompt, or, where the prompt matched too, as the section's first hit."""
    _, rows = _cli(tmp_path, "search", pattern)
    hits = [r for r in rows if r["kind"] == "hit"]
    page = _get(served, "/search?q=" + quote(pattern))
    where = {}
    for sec in re.findall(r'<section class="hitturn" (.*?)</section>', page, re.S):
        p, s = (html.unescape(x) for x in re.match(r'data-provider="([^"]*)" data-session="([^"]*)"', sec).groups())
        head = html.unescape(re.sub(r"<[^>]+>", "", re.search(r"<h2>(.*?)</h2>", sec, re.S).group(1)))
        turn = re.search(r" · (turn \d+|before the first prompt)", head).group(1)
        m = re.search(r'<div class="prompt"><b>Prompt</b><pre>(.*?)</pre></div>', sec, re.S)
        opener = html.unescape(m.group(1)) if m else None
        found = re.findall(r'<div class="hit" data-line="([^"]*)" data-locator="([^"]*)"', sec)
        locs = [(None if line in ("", "None") else int(line), html.unescape(loc)) for line, loc in found]
        for line, loc in found:
            where[(p, s, None if line in ("", "None") else int(line), html.unescape(loc))] = (turn, opener, locs)
    with_opener = 0
    for h in hits:
        turn, opener, locs = where[(h["provider"], h["session_id"], h["line"], h.get("locator") or "")]
        assert turn == (f"turn {h['turn']}" if h["turn"] is not None else "before the first prompt"), h["line"]
        ctx = (h.get("turn_context") or {}).get("opener")
        if ctx:
            with_opener += 1
            first = (ctx.get("line"), ctx.get("locator") or "")
            if first in locs:  # the prompt matched too: it opens the section, as its first hit
                assert locs[0] == first and opener is None, (h["session_id"], h["line"])
            else:
                assert opener == ctx["text"][:4000], (h["session_id"], h["line"])
    assert len(where) == len(hits) and with_opener >= 10


def test_each_child_session_is_nested_under_the_session_that_spawned_it(served, tmp_path):
    """The browser test counts the nested rows; here each one is under its own parent (the
    listing's parent_session_id): the nearest row above it one level up."""
    rows = _listing(tmp_path)
    parent = {(r["provider"], r["session_id"]): r.get("parent_session_id") for r in rows}
    page = _get(served, "/")
    shown = list(zip(_shown(page), (int(d) for d in re.findall(r'<tr class="depth-(\d)"', page))))
    assert sorted(k for k, _ in shown) == sorted(parent)
    nested = 0
    for i, (k, depth) in enumerate(shown):
        if parent[k] is None or (k[0], parent[k]) not in parent:
            assert depth == 0, k  # a session, or a child whose parent is not in the selection
            continue
        above = next(a for a, d in reversed(shown[:i]) if d == depth - 1)
        assert depth >= 1 and above == (k[0], parent[k]), k
        nested += 1
    assert nested == sum(1 for k, p in parent.items() if p is not None and (k[0], p) in parent) >= 4


CAPTURED = REPO / "examples" / "captured" / "reply-before-prompt"
"""A real Claude Code session captured with its rewinds (examples/captured/README.md)."""


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("serve-captured"), "--claude-home", str(CAPTURED)) as s:
        yield s


@pytest.mark.parametrize("name,status,exit_status", [("a.txt", "none", 7), ("b.txt", "deleted", 8)])
def test_a_files_page_declares_each_gap_and_a_deleted_file_as_recover_does(captured, tmp_path, name, status,
                                                                            exit_status):
    """The captured session's a.txt: restored from a file-history backup the client pruned, so
    its one range is a gap with that cause and no line is known; b.txt: deleted at the end. The
    page's ranges are recover's (kind, start, end, cause) and a deleted file shows no content
    (it showed an empty 'Content', as if the file were empty: failed before on b.txt)."""
    sid = "43d862be-7c57-5677-87e1-3657469384d9"
    path = f"/var/tmp/lead-rr/robust-rc0/robust_rewind_fork/work/{name}"
    p = subprocess.run([sys.executable, "-m", "sessionsift", "recover", sid, "--file", path, "--claude-home",
                        str(CAPTURED), "--format", "json"], capture_output=True, text=True, cwd=REPO,
                       env=env_for(tmp_path), timeout=120)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == exit_status and rows[-1]["status"] == status
    want = [(r["range_kind"], r["start"], r["end"], r["cause"]) for r in rows if r["kind"] == "range"]
    page = _get(captured, f"/session/claude-code/{sid}/files?path={quote(path, safe='')}")
    got = []
    for kind, lo, hi, cause in re.findall(r'<tr class="[^"]*"><td>([^<]*)</td><td>(.*?)–(.*?) \(.*?\)</td>'
                                          r"<td>([^<]*)</td></tr>", page):
        def n(v):
            return None if "unknown" in v else int(v.replace(",", ""))
        got.append((kind, n(lo), n(hi), html.unescape(cause)))
    assert got == want
    assert f"status <b>{status}</b>" in page
    assert '<pre id="content">' not in page and page.count('id="content-none"') == 1
    if status == "none":
        assert want and want[0][0] == "gap" and "prunes its store" in want[0][3]


def test_the_usage_pages_windows_count_the_messages_that_recorded_no_usage_as_usage_blocks_does(tmp_path):
    """Kilo Code's sample holds one assistant message with no usage (the real client's turn killed
    mid-stream) inside the window its paid responses opened: `usage blocks` counts it there
    (45a7ba3), and the page's window row says so too (before: the page built its windows without
    those messages, the row read as if every response were priced)."""
    kilo = REPO / "examples" / "kilo-home"
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "blocks", "--kilo-home", str(kilo), "--provider", "kilo-code",
                        "--format", "json"], capture_output=True, text=True, cwd=REPO, env=env_for(tmp_path / "cli"),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    ws = [r for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "window"]
    assert [w["messages_without_usage"] for w in ws] == [1]
    with serving(tmp_path / "srv", "--kilo-home", str(kilo)) as s:
        page = _get(s, "/usage")
    table = re.search(r'<table class="grid" id="blocks">(.*?)</table>', page, re.S).group(1)
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td class=n>(.*?)</td>", table)]
    assert cells[1] == f"{ws[0]['messages']:,} (+1 without usage)", cells
