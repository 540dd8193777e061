"""A client launched EACH way blocks its sessions, and only its own (issue 24, item 5's fault
injection widened from two real node launches to every launch form): for every command line a
client's launcher makes (native binary, node script, a local node_modules/.bin link, npx, npm
exec, pnpm dlx, bunx, bun x/run, a shell running a script, timeout/env/nice wrappers) a REAL
process is started with exactly that argv, working in the RECORDED project of one of that
client's sessions in the copied real-client samples (examples/, unmodified), and `clean`'s scan
is run with it alive. Its provider's sessions in that project (every Codex session: Codex
records no project per session) are blocked with the pid as evidence; no session of another
provider is; programs that only mention the client (an editor, grep, a pager, another npx
package) block nothing.

HAND-MADE: the argv lists (tests/test_clean_activity.py LAUNCHES / OTHER_LAUNCHES: the launchers
are not installed here); the process is a compiled waiter exec'ed under that argv, so /proc shows
what it shows for the client. The samples' projects are under /tmp/ssift-*: the matrix runs in a
mount namespace of its own with a fresh tmpfs on /tmp, where those directories are made (needs
root to mount: where unshare is refused the case cannot be made, and the test says so)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIG: dict[str, int] = {}

WAITER = r"""
#include <stdio.h>
#include <unistd.h>
int main(void) { puts("ready"); fflush(stdout); for (;;) pause(); }
"""

HOMES_ALL = {".claude": "claude-home", ".codex": "codex-home", ".gemini": "gemini-home",
             ".local/share/opencode": "opencode-home", ".local/share/crush": "crush-home",
             ".pi/agent": "pi-home", ".qwen": "qwen-home",
             ".copilot": "copilot-home", ".local/share/kilo": "kilo-home"}


def _forms() -> list[tuple[str, list[str], bool]]:
    """(provider, argv, is that client) for every launch form the recognition tests list."""
    from tests.test_clean_activity import LAUNCHES, OTHER_LAUNCHES

    out = [("claude-code", argv, yes) for argv, yes in LAUNCHES]
    for name, forms in sorted(OTHER_LAUNCHES.items()):
        out += [(name, argv, True) for argv in forms]
    return out


def run_matrix(base: Path) -> dict:
    """Inside the private /tmp: copy the samples, make the recorded projects, and for each launch
    form start the waiter there and take the scan's activity gates."""
    from sessionsift.clean import activity as A
    from sessionsift.clean.scan import scan
    from sessionsift.providers.scope import RootRequest, survey
    from sessionsift.worktrees import procs as P
    from tests.clean_util import EX

    real = P.snapshot

    def mine():  # only the processes this run started: the machine's other agents decide nothing
        t = real()
        t.procs = [p for p in t.procs if p.ppid == os.getpid()]
        return t

    A.P.snapshot = mine
    home = base / "h"
    for rel, src in HOMES_ALL.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(EX / src, home / rel, symlinks=True)
    waiter = base / "waiter"
    (base / "waiter.c").write_text(WAITER)
    subprocess.run(["cc", "-o", str(waiter), str(base / "waiter.c")], check=True)
    sv = survey(RootRequest(home=str(home)))
    refs = {e.name: list(e.sessions) for e in sv.entries if e.sessions}
    project = {}
    for name, rs in refs.items():  # the first session with a recorded project, per provider
        r = next(r for r in rs if r.project)
        project[name] = r.project
        os.makedirs(r.project, exist_ok=True)

    def gates():
        rep = scan(survey(RootRequest(home=str(home))), older_than="1m", data=base / "data", env={})
        return {(v.provider, v.session_id): (v.gates["activity"], v.eligible) for v in rep.verdicts}

    idle = gates()
    rows = []
    for name, argv, client in _forms():
        cwd = project[name]
        p = subprocess.Popen(argv, executable=str(waiter), cwd=cwd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert p.stdout is not None and p.stdout.readline() == b"ready\n"
            shown = Path(f"/proc/{p.pid}/cmdline").read_bytes().split(b"\0")[:-1]
            g = gates()
        finally:
            p.kill()
            p.wait()
        blocked = {k: (gt.reason, [e.get("pid") for e in gt.evidence], el) for k, (gt, el) in g.items()
                   if not gt.proven}
        rows.append({"provider": name, "argv": argv, "client": client, "cwd": cwd, "pid": p.pid,
                     "shown": [os.fsdecode(a) for a in shown],
                     "blocked": [[k[0], k[1], *v] for k, v in sorted(blocked.items())]})
    sessions = {f"{k[0]}/{k[1]}": {"project": r.project} for k in idle for r in refs.get(k[0], [])
                if r.session_id == k[1]}
    return {"idle_blocked": sorted(f"{k[0]}/{k[1]}" for k, (gt, _el) in idle.items() if not gt.proven),
            "project": project, "sessions": sessions, "rows": rows}


HELPER = """
import json, os, subprocess, sys
from pathlib import Path
repo = os.environ["REPO"]
sys.path.insert(0, repo)
# A checkout (and its venv) that itself lives under /tmp -- a fresh clone does -- would vanish under the
# new tmpfs: only its top directory is bound back from the old /tmp (held open), nothing else of it.
keep = sorted({p.split("/")[2] for p in (repo, sys.prefix) if p.startswith("/tmp/")})
old = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/tmp"], check=True)
for c in keep:
    os.makedirs("/tmp/" + c)
    subprocess.run(["mount", "--no-canonicalize", "--bind", f"/proc/{os.getpid()}/fd/{old}/{c}", "/tmp/" + c],
                   check=True)  # no-canonicalize: the path through the held fd, not its name
os.makedirs("/tmp/launch-matrix")
from tests.test_clean_launches import run_matrix
print(json.dumps(run_matrix(Path("/tmp/launch-matrix"))))
"""


def test_every_launch_form_of_every_client_blocks_its_sessions_and_nothing_else():
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode(errors='replace')}")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the waiter process")
    env = dict(os.environ, REPO=str(REPO))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", HELPER],
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=1500)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.splitlines()[-1])
    assert out["idle_blocked"] == [], out["idle_blocked"]  # nothing running: every session proven idle
    assert set(out["project"]) >= {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code",
                                  "copilot-cli", "kilo-code"}
    sessions = out["sessions"]
    fig = {"forms": 0, "client_forms": 0, "other_programs": 0, "scans": 0, "sessions_blocked": 0,
           "missed": 0, "wrongly_blocked": 0}
    bad = []
    for r in out["rows"]:
        fig["forms"] += 1
        fig["scans"] += 1
        assert r["shown"] == r["argv"], r  # /proc shows the launcher's command line exactly
        name = r["provider"]
        if r["client"]:
            fig["client_forms"] += 1
            want = {k for k, s in sessions.items() if k.split("/", 1)[0] == name
                    and (name == "codex" or r["cwd"] == s["project"])}
        else:
            fig["other_programs"] += 1
            want = set()
        got = {f"{b[0]}/{b[1]}" for b in r["blocked"]}
        fig["sessions_blocked"] += len(got & want)
        fig["missed"] += len(want - got)
        fig["wrongly_blocked"] += len(got - want)
        for b in r["blocked"]:
            reason, pids, eligible = b[2], b[3], b[4]
            ok = reason in ("agent_working_in_this_project", "provider_is_running") and r["pid"] in pids \
                and eligible is False
            if not ok or r["client"] is False:
                bad.append((r["argv"], b))
        if want != got:
            bad.append((r["argv"], sorted(want ^ got)))
    assert bad == [], (f"{len({tuple(x[0]) for x in bad})} of {fig['forms']} forms wrong, {fig['missed']} gates "
                       f"missed, {fig['wrongly_blocked']} wrongly blocked", bad[:10])
    assert fig["client_forms"] >= 30 and fig["other_programs"] >= 7 and fig["sessions_blocked"] >= fig["client_forms"]
    FIG.update(fig)


def test_figures(capsys):
    with capsys.disabled():
        print(f"\nclean launch matrix: {FIG.get('client_forms')} client launch forms over 9 clients and "
              f"{FIG.get('other_programs')} other programs run as real processes in a session's recorded project, "
              f"{FIG.get('scans')} scans; {FIG.get('sessions_blocked')} session gates blocked, "
              f"{FIG.get('missed')} missed, {FIG.get('wrongly_blocked')} wrongly blocked")
    assert FIG.get("missed") == 0 and FIG.get("wrongly_blocked") == 0
