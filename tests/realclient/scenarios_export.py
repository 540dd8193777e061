"""Real-client scenario for `audit secrets` and the exports (issue 17): the real Claude Code client
runs shell commands whose OUTPUT carries fake credentials and hostile HTML, so the transcript lines
that hold them are written by the client itself, never typed by us.

  P1  (prompt text holds `<script>` / `onerror=` payloads, typed as a person would paste them)
      thinking; Bash `cat deploy.env id_rsa_demo`: an AWS-shaped access key, a GitHub-shaped token,
      a password in a database URL, a secret in an environment assignment and a PEM private-key
      block reach the tool_result (and Claude Code's toolUseResult copy); then a reply
  P2  Bash `cat page.html`: an HTML page with a script and an onerror handler in a tool output;
      Read of a 4x4 PNG (an inline image in a tool_result); a reply

The credentials are fake, generated deterministically here (nothing in this file is a literal
token), and exist only in setup files of the scenario's temp work dir.

`python -m tests.realclient.scenarios_export [--root R]` runs it from a shell.
"""
from __future__ import annotations

import hashlib
import string
import sys
from pathlib import Path

from . import runner
from .mock_api import Turn, text, thinking, tool
from .scenarios import Prompt, Scenario, W, register, tiny_png

MODULE = "tests.realclient.scenarios_export"
NAME = "export_secrets"


def _fake(prefix: str, n: int, alphabet: str, salt: str) -> str:
    out = []
    h = hashlib.sha256(salt.encode()).digest()
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        out += [alphabet[b % len(alphabet)] for b in h]
    return prefix + "".join(out[:n])


AWS_KEY = _fake("AKIA", 16, string.ascii_uppercase + "234567", "aws")
GITHUB_TOKEN = _fake("ghp_", 36, string.ascii_letters + string.digits, "github")
DB_PASSWORD = _fake("", 18, string.ascii_letters + string.digits, "db")
APP_SECRET = _fake("", 24, string.ascii_letters + string.digits, "app")
PEM_BODY = _fake("", 64, string.ascii_letters + string.digits + "+/", "pem")
DEPLOY_ENV = (f"AWS_ACCESS_KEY_ID={AWS_KEY}\n"
              f"GITHUB_TOKEN={GITHUB_TOKEN}\n"
              f"DATABASE_URL=postgres://app:{DB_PASSWORD}@127.0.0.1:5432/app\n"
              f"APP_SECRET={APP_SECRET}\n")
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"
XSS_PROMPT = ("Show deploy.env. Also keep this snippet verbatim: <script>document.title='PWNED-PROMPT'</script>"
              "<img src=x onerror=\"document.title='PWNED-IMG'\"> & done.")
PAGE_HTML = ("<html><body><script>document.title='PWNED-TOOL';document.body.innerHTML='PWNED-TOOL'</script>"
             "<img src=nope onerror=\"document.title='PWNED-ONERROR'\"><a href=\"javascript:alert(1)\">x</a>"
             "</body></html>\n")
SECRETS = {"AWS Access Key": AWS_KEY, "GitHub Token": GITHUB_TOKEN, "Basic Auth Credentials": DB_PASSWORD,
           "Private Key": "BEGIN RSA PRIVATE KEY"}

EXPORT_SECRETS = Scenario(
    name=NAME,
    mode="print",
    notes="cat of setup files holding fake credentials (AWS-shaped key, GitHub-shaped token, password in a URL, "
          "secret assignment, PEM block); a prompt with <script>/onerror payloads; cat of an HTML page with a "
          "script; Read of a PNG.",
    setup_files={"deploy.env": DEPLOY_ENV.encode(), "id_rsa_demo": PEM.encode(), "page.html": PAGE_HTML.encode(),
                 "pixel.png": tiny_png()},
    prompts=[
        Prompt(XSS_PROMPT, turns=[
            Turn([thinking("The user wants the file shown; cat it."),
                  tool("Bash", command="cat deploy.env id_rsa_demo", description="Show the deploy files")]),
            Turn([text("Shown deploy.env and the key file. The snippet is kept as given.")]),
        ]),
        Prompt("Show page.html and look at pixel.png.", how="continue", turns=[
            Turn([tool("Bash", command="cat page.html", description="Show the page")]),
            Turn([tool("Read", file_path=f"{W}/pixel.png")]),
            Turn([text("The page has a script; the image is a 4x4 checkerboard.")]),
        ]),
    ],
)

register(EXPORT_SECRETS)
ALL = {EXPORT_SECRETS.name: EXPORT_SECRETS}


def run_export_scenario(root: Path | None = None, timeout: float = 300) -> dict:
    """Run the scenario inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(NAME, root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE, scenario=NAME))
