"""Make the README's screenshots of `sessionsift serve --home examples/home` (the real-client
sample corpora) in headless Chromium (Debian's, driven by Playwright: no browser download).

    .venv/bin/python docs/img/screenshots.py      # writes docs/img/serve-*.png (each < 150 KB)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
SIZE = {"width": 1000, "height": 620}


def main() -> None:
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as td:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX", "GEMINI", "OPENCODE"))}
        env.update(HOME=td, XDG_DATA_HOME=f"{td}/d", XDG_CACHE_HOME=f"{td}/c", XDG_CONFIG_HOME=f"{td}/cfg",
                   PYTHONPATH=str(REPO / "src"), BROWSER="true")
        p = subprocess.Popen([sys.executable, "-m", "sessionsift", "serve", "--home", "examples/home", "--port", "0",
                              "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env=env, cwd=REPO)
        try:
            url = p.stdout.readline().split(": ", 1)[1].strip()
            base = re.match(r"(http://[^/]+)/", url).group(1)
            with sync_playwright() as pw:
                b = pw.chromium.launch(executable_path=exe, headless=True,
                                       args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                page = b.new_context(viewport=SIZE, device_scale_factor=1).new_page()
                page.goto(url)
                page.screenshot(path=str(OUT / "serve-sessions.png"))
                sid = page.eval_on_selector_all("a[href^='/session/claude-code/']",
                                                "as => as.map(a => a.getAttribute('href'))")
                page.goto(base + sid[0])
                page.click("nav a:has-text('Turn 1'), ol a:has-text('Turn 1')")  # the first prompt at the top
                page.screenshot(path=str(OUT / "serve-session.png"))
                page.goto(base + "/usage?period=daily&by=model")
                page.screenshot(path=str(OUT / "serve-usage.png"))
                b.close()
        finally:
            p.terminate()
            p.wait(timeout=10)
    for f in sorted(OUT.glob("serve-*.png")):
        print(f"{f.relative_to(REPO)}: {f.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
