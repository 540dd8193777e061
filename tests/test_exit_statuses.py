"""Exit statuses and pipes (docs/cli.md "Exit codes"), on the committed real-client corpus and on
crash artefacts made from it:

- an error has its own status (4), distinct from "nothing matched" (1): `stats --strict` on a
  malformed line exited 1;
- a reader that closes the pipe ends the command quietly with 0 (`ssift search '' | head -1` exited 1
  through click's broken-pipe handling);
- under `--format json` an error still closes the stream with a summary naming it (`show --turn 9`
  printed a header and nothing else);
- `recover` writes the file's raw bytes into a pipe and the escaped text on a terminal.
"""
from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "claude-home"
CRASH = REPO / "examples" / "crash"
FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"
FB_PROJ = "-tmp-ssift-rc-files-basic-work"
CLI = [sys.executable, "-m", "sessionsift"]


def _home_with(tmp_path: Path, data: bytes) -> Path:
    h = tmp_path / "h"
    (h / "projects" / FB_PROJ).mkdir(parents=True)
    (h / "projects" / FB_PROJ / f"{FB}.jsonl").write_bytes(data)
    return h


def test_strict_malformed_line_is_an_error_not_no_match(tmp_path):
    h = _home_with(tmp_path, (CRASH / "nul_run_inside_line.jsonl").read_bytes())
    p = subprocess.run(CLI + ["stats", "--strict", "--claude-home", str(h)], capture_output=True, text=True)
    assert p.returncode == 4 and p.stderr.startswith("sessionsift: error: malformed transcript line:")
    p = subprocess.run(CLI + ["stats", "--strict", "--claude-home", str(h), "--format", "json"],
                       capture_output=True, text=True)
    last = json.loads(p.stdout.splitlines()[-1])
    assert p.returncode == 4 and last["kind"] == "summary" and last["error"]["kind"] == "malformed_line"
    # and "nothing matched" is still 1
    p = subprocess.run(CLI + ["search", "no-such-needle-anywhere-42", "-F", "--claude-home", str(HOME)],
                       capture_output=True, text=True)
    assert p.returncode == 1


def test_a_closed_pipe_leaves_quietly(tmp_path):
    for argv in (["search", ""], ["stats"], ["show", FB, "--line", "1.."]):
        proc = subprocess.Popen(CLI + argv + ["--claude-home", str(HOME)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        first = proc.stdout.readline()
        proc.stdout.close()  # `| head -1`
        err = proc.stderr.read()
        rc = proc.wait(60)
        assert first and rc == 0, (argv, rc, err)
        assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Exception ignored" not in err, err


def test_json_errors_close_with_a_summary():
    for argv, kind, status in ((["show", FB, "--turn", "9"], "no_such_record", 2),
                               (["recover", FB], "usage", 2),
                               (["show", "0000dead-no-such"], "target", 2),
                               (["wait", FB, "--timeout", "1"], "usage", 2)):
        p = subprocess.run(CLI + argv + ["--claude-home", str(HOME), "--format", "json"], capture_output=True,
                           text=True)
        rows = [json.loads(x) for x in p.stdout.splitlines()]
        assert p.returncode == status, (argv, p.returncode, p.stderr)
        assert rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", (argv, rows)
        assert rows[-1]["error"]["kind"] == kind and rows[-1]["exit_status"] == status, (argv, rows[-1])


def _hostile_hello(tmp_path: Path) -> tuple[Path, str]:
    """A MUTATED COPY of the real files_basic transcript: hello.py's Write content carries ESC and a
    bidi override (a file's own bytes may hold them)."""
    out = []
    for raw in (HOME / "projects" / FB_PROJ / f"{FB}.jsonl").read_bytes().splitlines():
        o = json.loads(raw)
        m = o.get("message") if isinstance(o.get("message"), dict) else {}
        for b in m.get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Write" \
                    and b["input"].get("file_path", "").endswith("/notes.md"):
                b["input"]["content"] = "\x1b[31mred\x1b[0m \u202eevil\n\tindented\n"
        out.append(json.dumps(o).encode())
    h = _home_with(tmp_path, b"\n".join(out) + b"\n")
    return h, "/tmp/ssift-rc/files_basic/work/notes.md"


def test_recover_raw_into_a_pipe_escaped_on_a_terminal(tmp_path):
    h, f = _hostile_hello(tmp_path)
    args = CLI + ["recover", FB, "--file", f, "--at", "L12", "--claude-home", str(h)]
    p = subprocess.run(args, capture_output=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "\x1b[31mred\x1b[0m \u202eevil\n\tindented\n".encode()  # the file, byte for byte
    assert b": complete;" in p.stderr and b"--" not in p.stdout
    master, slave = pty.openpty()
    try:
        q = subprocess.run(args, stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    assert q.returncode == 0
    text = shown.decode()
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\e[31mred\\e[0m \\u202eevil" in text and "\tindented" in text
    assert b": complete;" in q.stderr
