"""Running a client offline: the outer process re-runs a harness module under ``unshare -n`` (a
fresh network namespace), the inner one brings up loopback only and starts each client under
``env -i`` with only the variables named; afterwards, what the client left running in the
scenario's dir is ended by pid, and a process group the caller started is ended by its id."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


# ============================================================================ outer

def inner_command(module: str, name: str, root: Path, exe: Path | str, *extra: str,
                  env: dict | None = None) -> tuple[list[str], dict]:
    """The command and environment that re-run ``python -m module --inside NAME --root ROOT --exe EXE
    EXTRA...`` in a new network namespace (``root`` is made first). The environment holds only PATH,
    PYTHONPATH (the clone), LANG, ``SSIFT_MOCK_DUMP`` when it is set, and ``env``."""
    Path(root).mkdir(parents=True, exist_ok=True)
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"}
    if os.environ.get("SSIFT_MOCK_DUMP"):
        base["SSIFT_MOCK_DUMP"] = "1"
    cmd = ["unshare", "-n", sys.executable, "-m", module, "--inside", name, "--root", str(root), "--exe", str(exe),
           *extra]
    return cmd, base | (env or {})


def run_inner(cmd: list[str], env: dict, log: Path, timeout: float, what: str) -> None:
    """Run an :func:`inner_command` to its end; its stdout and stderr go to ``log``. A non-zero exit
    raises RuntimeError naming ``what`` with the end of its stderr."""
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    Path(log).write_text(r.stdout + "\n--- stderr ---\n" + r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed (rc={r.returncode}):\n{r.stderr[-3000:]}")


def start_inner(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    """Start an :func:`inner_command` without waiting: output to ``log``, its own process group."""
    out = open(log, "w")
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_group(p: subprocess.Popen, timeout: float = 20) -> None:
    """End a process started with ``start_new_session=True``: SIGTERM to its own group (by id), then
    SIGKILL if it has not ended within ``timeout`` seconds; reap it."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


# ============================================================================ inner

def loopback_up() -> None:
    """Inside the new namespace: bring up loopback, the only interface the client will have."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def env_i(env: dict) -> list[str]:
    """``env -i K=V ...``: the prefix that starts a client with only the variables in ``env``."""
    return ["env", "-i", *[f"{k}={v}" for k, v in env.items()]]


def kill_leftovers(s_dir: Path) -> list[str]:
    """End processes the client left running (e.g. a background ``sleep 600``), found by their cwd.

    Only processes whose working directory is inside this scenario's dir (that very directory, not
    another mount namespace's at the same path) are ended, by pid; returns
    their command lines (the first 120 characters), sorted."""
    killed = []
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            cwd = os.readlink(d / "cwd")
            cmdline = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if cwd == str(s_dir) or cwd.startswith(str(s_dir) + "/"):
            # the same path may be another run's own directory (make_examples runs at the fixed root
            # in a private mount namespace, common/isolate.py): only the directory we see is ours
            try:
                a, b = os.stat(d / "cwd"), os.stat(cwd)
            except OSError:
                continue
            if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
                continue
            try:
                os.kill(int(d.name), signal.SIGKILL)
                killed.append(cmdline[:120])
            except OSError:
                pass
    return sorted(killed)


def finish(s_dir: Path, gt: dict, name: str = "ground-truth.json") -> None:
    """End what the client left running (``gt["leftover_processes_killed"]``) and write ``gt``."""
    gt["leftover_processes_killed"] = kill_leftovers(s_dir)
    (s_dir / name).write_text(json.dumps(gt, indent=2, sort_keys=True) + "\n")
