"""Start `sessionsift serve` as a real process on a free port, and open its pages in headless
Chromium (Debian's, driven by Playwright's protocol client: no browser download), collecting every
console error, page error, failed request and request to another origin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def env_for(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX", "GEMINI", "OPENCODE"))}
    env.update(HOME=str(tmp / "home"), XDG_DATA_HOME=str(tmp / "data"), XDG_CACHE_HOME=str(tmp / "cache"),
               XDG_CONFIG_HOME=str(tmp / "config"), PYTHONPATH=str(REPO / "src"), BROWSER="true")
    (tmp / "home").mkdir(parents=True, exist_ok=True)
    return env


class Served:
    def __init__(self, proc: subprocess.Popen, url: str) -> None:
        self.proc = proc
        self.url = url
        m = re.match(r"(http://[^/]+)/\?token=(.+)$", url)
        assert m, url
        self.base, self.token = m.group(1), m.group(2)
        self.port = int(self.base.rsplit(":", 1)[1])


@contextmanager
def serving(tmp: Path, *args: str):
    """`sessionsift serve ARGS --port 0 --no-browser`, until the block ends (then stopped by pid)."""
    proc = subprocess.Popen([sys.executable, "-m", "sessionsift", "serve", *args, "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(tmp), cwd=REPO)
    try:
        line = proc.stdout.readline()  # blocks until the socket is bound and the address printed
        assert line.startswith("sessionsift serve: http://"), (line, proc.stderr.read() if proc.poll() is not None else "")
        yield Served(proc, line.split(": ", 1)[1].strip())
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class Browser:
    """One Chromium for a test module; `visit` opens a page and records what went wrong on it."""

    def __init__(self, exe: str) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=exe, args=BROWSER_ARGS, headless=True)
        self.ctx = self.browser.new_context()
        self.problems: list[str] = []
        self.dialogs: list[str] = []

    def attach(self, page, base: str) -> None:
        def console(m):
            if m.type in ("error", "warning"):
                self.problems.append(f"console {m.type}: {m.text} ({page.url})")

        page.on("console", console)
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc} ({page.url})"))
        page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url} {r.failure}"))
        page.on("request", lambda r: None if r.url.startswith((base, "data:", "about:")) else
                self.problems.append(f"request to another origin: {r.url}"))
        page.on("response", lambda r: self.problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

        def dialog(d):
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)

    def page(self, base: str):
        p = self.ctx.new_page()
        self.problems = []  # each test reads what went wrong on its own page, not an earlier test's
        self.dialogs = []
        self.attach(p, base)
        return p

    def close(self) -> None:
        self.ctx.close()
        self.browser.close()
        self._pw.stop()
