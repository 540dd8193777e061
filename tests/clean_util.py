"""Helpers for the clean tests. Deliberately independent of sessionsift's own model: a corpus is a
COPY of the committed real-client samples (examples/), and "nothing lost" is checked against a
snapshot of every file under the copy taken before the run (path -> sha256), never against the
code's idea of a session's footprint."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

EX = Path(__file__).resolve().parent.parent / "examples"
HOMES = {".claude": "claude-home", ".codex": "codex-home", ".gemini": "gemini-home",
         ".local/share/opencode": "opencode-home", ".local/share/crush": "crush-home"}


def corpus(dst: Path, which=tuple(HOMES)) -> Path:
    """A home dir holding copies of the sample corpora (every client's default layout)."""
    for rel in which:
        t = dst / rel
        t.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(EX / HOMES[rel], t, symlinks=True)
    return dst


def snapshot(root: Path) -> dict[str, str]:
    """Every regular file under root (symlinks not followed) -> sha256 of its bytes."""
    out = {}
    for d, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _name(v) -> str:
    """A manifest path: a str, or (a name that is not UTF-8, docs/json.md) {"bytes": base64}."""
    if isinstance(v, dict):
        import base64

        return os.fsdecode(base64.b64decode(v["bytes"]))
    return v


def archived(data: Path) -> dict[str, set[str]]:
    """path -> sha256s held in the archive by an AUTHENTICATED manifest entry whose object
    decompresses to those bytes (read with zstandard here, not through sessionsift)."""
    import hmac

    import orjson
    import zstandard

    arch = data / "archive"
    try:
        key = (arch / "key").read_bytes()
        lines = (arch / "manifest.jsonl").read_bytes().split(b"\n")
    except FileNotFoundError:
        return {}
    out: dict[str, set[str]] = {}
    prev = ""
    for line in lines:
        if not line.strip():
            continue
        try:
            e = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a torn last line
        body = orjson.dumps({k: v for k, v in e.items() if k != "hmac"}, option=orjson.OPT_SORT_KEYS)
        if not hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), e.get("hmac", "")):
            continue
        if e.get("prev", "") != prev:
            continue
        prev = e["hmac"]
        for it in e.get("items", []):
            if it.get("type") != "file":
                continue
            obj = arch / "objects" / it["sha256"][:2] / f"{it['sha256']}.zst"
            try:
                raw = zstandard.ZstdDecompressor().decompressobj().decompress(obj.read_bytes())
            except (OSError, zstandard.ZstdError):
                continue
            if hashlib.sha256(raw).hexdigest() == it["sha256"]:
                out.setdefault(_name(it["path"]), set()).add(it["sha256"])
    return out


def losses(before: dict[str, str], root: Path, data: Path) -> list[str]:
    """Files of ``before`` that are neither at their path with their bytes nor in the archive."""
    now = snapshot(root)
    arch = archived(data)
    lost = []
    for p, h in before.items():
        if now.get(p) == h:
            continue
        if h in arch.get(p, set()):
            continue
        lost.append(p)
    return lost


NO_AGENTS = """
import sys
from sessionsift.worktrees import procs as P
P.snapshot = lambda: P.ProcTable()  # an empty process table: no agent of this machine is seen
from sessionsift.cli import main
main(sys.argv[1:])
"""


def cli(*args: str, env: dict | None = None, cwd=None, agents: bool = True) -> subprocess.CompletedProcess:
    """Run sessionsift. ``agents=False``: the activity gate sees an empty process table, for tests
    of the archive, not of the gate (another engineer's real client running in /tmp/ssift-rc/...
    on this machine works in the sample sessions' recorded projects and would block them)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    argv = [sys.executable, "-m", "sessionsift"] if agents else [sys.executable, "-c", NO_AGENTS]
    return subprocess.run([*argv, *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=300)


def fake_process(tmp: Path, name: str, cwd: Path, seconds: int = 120) -> subprocess.Popen:
    """A real process whose argv[0] is ``<tmp>/bin/<name>`` (a symlink to sleep), working in ``cwd``.
    The activity gate sees it in /proc exactly as it would see that client."""
    b = tmp / "bin"
    b.mkdir(exist_ok=True)
    exe = b / name
    if not exe.exists():
        exe.symlink_to(shutil.which("sleep"))
    return subprocess.Popen([str(exe), str(seconds)], cwd=str(cwd), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
