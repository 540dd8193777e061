"""`sessionsift serve`'s pages over the real-client sample corpora (examples/home), read as HTML
through a real HTTP client (the browser tests are tests/test_serve.py): what the issue-28 audit
(notes: issue28-audit.md) found no test holding.

- every in-page link of every session page names an anchor on that page.
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
