"""`recover [TARGET...] PATH`: the file may be the last positional as well as `--file PATH`
(before, `recover PATH` was the usage error "--file PATH is required"). Data: examples/claude-home,
written by the real Claude Code client (files_basic: hello.py written, edited, read)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "claude-home"
GT = json.loads((REPO / "examples" / "ground-truth" / "files_basic.json").read_text())
HELLO = f"{GT['cwd']}/hello.py"
SID = "8414eb07"


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", "recover", "--claude-home", str(HOME), *args],
                          capture_output=True, timeout=300, cwd=cwd)


def test_positional_file_is_the_file_as_with_dash_dash_file():
    flag = cli(SID, "--file", HELLO)
    # the rebuilt file, complete but at risk (5): `python3 hello.py` ran after the last anchor
    assert flag.returncode == 5 and flag.stdout, flag.stderr
    for args in ((SID, HELLO), (HELLO,), (SID, HELLO, "--file", HELLO)):
        got = cli(*args)
        assert (got.returncode, got.stdout) == (flag.returncode, flag.stdout), (args, got.stderr)
    assert got.stdout.decode().startswith("def hello")


def test_json_header_names_the_positional_file():
    got = cli(SID, HELLO, "--format", "json")
    head = json.loads(got.stdout.splitlines()[0])
    assert head["file"] == HELLO and head["file_given"] == HELLO


def test_two_different_files_are_a_usage_error_naming_both(tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("x\n")
    for second in (str(other), "gone.txt"):  # an existing file, and one that is not there (recover's case)
        got = cli(SID, second, "--file", HELLO)
        err = got.stderr.decode()
        assert got.returncode == 2 and "two files given" in err and HELLO in err and second in err, err


def test_a_lone_session_id_is_not_taken_for_the_file(tmp_path):
    got = cli(SID, cwd=tmp_path)
    err = got.stderr.decode()
    assert got.returncode == 2 and "names a session, not a file" in err, err
    got = cli(cwd=tmp_path)
    assert got.returncode == 2 and "give the file" in got.stderr.decode()
