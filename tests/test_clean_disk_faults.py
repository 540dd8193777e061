"""A disk that fills up or fails under the data dir loses nothing (issue 24, item 1's fault
injection widened): ENOSPC and EIO at EVERY write and fsync into the data dir of a capture of the
small corpus (copies of the real-client samples), once (space freed or the error gone right
after) and for good (the disk stays full); and a real small tmpfs as the data dir, at every size
from one page to what the capture needs, then space freed (the tmpfs grown) and a re-run. After
each fault every file of the corpus is at its path with its bytes or verified in the archive
(tests/clean_util.losses, judged against a snapshot taken before), and a re-run with space
finishes the job."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.clean import activity as A
from sessionsift.worktrees import procs as P
from tests.clean_util import corpus, losses, snapshot
from tests.test_clean_faults import SMALL, FILES, _capture, _finished, _leftovers, _rel

REPO = Path(__file__).resolve().parents[1]
FIG = {"runs": 0, "faults": 0, "enospc": 0, "eio": 0, "short": 0, "freed_mid_run": 0, "tmpfs_sizes": 0, "tmpfs_full": 0, "sessions": 0, "losses": 0}


@pytest.fixture(autouse=True)
def _no_foreign_agents(monkeypatch):
    monkeypatch.setattr(A.P, "snapshot", lambda: P.ProcTable())


def _into_data(fd: int, data: Path) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith(str(data))
    except OSError:
        return False


WINDOW = 5  # "full-then-freed": the disk stays full for this many calls, then space comes back mid-run


def _inject(monkeypatch, data: Path, k: int, err: int, stays: bool, seen: dict, mode: str = "error") -> None:
    """The k-th os.write or os.fsync on a file under ``data`` fails with ``err`` (and every later
    one too when ``stays``). ``mode``: "error" as said; "window": calls k .. k+WINDOW-1 fail with
    ENOSPC and then space is freed (between steps of the same run); "short-full" / "short-freed":
    the k-th os.write (writes only are counted) writes half its bytes and returns that count, as a
    disk filling up mid-write does, and then every later write and fsync fails with ENOSPC / all
    succeed again."""
    real_w, real_f = os.write, os.fsync

    def hit(fd, is_write: bool) -> bool:
        if not _into_data(fd, data):
            return False
        seen["calls"] += 1
        seen["writes"] += is_write
        if mode == "window":
            if k <= seen["calls"] < k + WINDOW:
                seen["faults"] += 1
                return True
            return False
        if mode in ("short-full", "short-freed"):
            if seen["short"] and mode == "short-full":
                seen["faults"] += 1
                seen["enospc_after"] += 1
                return True
            return False
        if seen["calls"] == k or (stays and seen["calls"] > k):
            seen["faults"] += 1
            return True
        return False

    def write(fd, b):
        if hit(fd, True):
            raise OSError(err, os.strerror(err))
        if mode in ("short-full", "short-freed") and not seen["short"] and _into_data(fd, data) \
                and seen["writes"] == k:
            seen["short"] = 1
            seen["faults"] += 1
            if len(b) < 2:  # nothing fits: a full disk says so
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_w(fd, bytes(b)[: len(b) // 2])
        return real_w(fd, b)

    def fsync(fd):
        if hit(fd, False):
            raise OSError(err, os.strerror(err))
        return real_f(fd)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)


def _seen() -> dict:
    return {"calls": 0, "writes": 0, "faults": 0, "short": 0, "enospc_after": 0}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The small corpus captured once with no fault: how many writes and fsyncs reach the data
    dir, and what survives."""
    t = tmp_path_factory.mktemp("ref")
    home = corpus(t / "h", FILES)
    seen = _seen()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A.P, "snapshot", lambda: P.ProcTable())
        _inject(mp, t / "d", 10 ** 9, errno.EIO, False, seen)
        oc = _capture(home, t / "d", SMALL)
    assert [r.status for r in oc.results] == ["removed"] * 3
    return seen["calls"], _rel(home), seen["writes"]


@pytest.mark.parametrize("err,stays", [(errno.ENOSPC, True), (errno.EIO, False)], ids=["enospc-stays", "eio-once"])
def test_a_failing_write_or_fsync_at_every_call_loses_nothing(tmp_path, monkeypatch, reference, err, stays):
    calls, ref, _writes = reference
    assert calls > 10
    for k in range(1, calls + 1):
        t = tmp_path / f"k{k}"
        home = corpus(t / "h", FILES)
        data = t / "d"
        before = snapshot(home)
        seen = _seen()
        with pytest.MonkeyPatch.context() as mp:
            _inject(mp, data, k, err, stays, seen)
            try:
                _capture(home, data, SMALL)
            except Exception:  # noqa: BLE001 - a run may stop on the fault; what it leaves is judged below
                pass
        assert seen["faults"] >= 1, k
        FIG["runs"] += 1
        FIG["faults"] += seen["faults"]
        FIG["enospc" if err == errno.ENOSPC else "eio"] += seen["faults"]
        FIG["sessions"] += len(SMALL)
        lost = losses(before, home, data)
        FIG["losses"] += len(lost)
        assert lost == [], (k, lost)
        _capture(home, data, SMALL)  # the disk is well again: the re-run finishes the job
        assert losses(before, home, data) == [], k
        _finished(home, data, ref)


@pytest.mark.parametrize("mode", ["short-full", "short-freed", "window"])
def test_a_short_write_or_a_full_spell_at_every_call_loses_nothing(tmp_path, reference, mode):
    """An injected SHORT write at every os.write into the data dir (half the bytes written and that
    count returned, as a disk filling up mid-write gives it; item 1 ignored the count), then the
    disk stays full (every later write/fsync ENOSPC) or space is freed at once; and ENOSPC at
    every call k for WINDOW calls, then space freed between steps of the same run. After each:
    nothing lost, and a re-run with space finishes the job."""
    calls, ref, writes = reference
    assert writes > 10
    n = calls if mode == "window" else writes
    for k in range(1, n + 1):
        t = tmp_path / f"k{k}"
        home = corpus(t / "h", FILES)
        data = t / "d"
        before = snapshot(home)
        seen = _seen()
        with pytest.MonkeyPatch.context() as mp:
            _inject(mp, data, k, errno.ENOSPC, False, seen, mode)
            try:
                _capture(home, data, SMALL)
            except Exception:  # noqa: BLE001 - a run may stop on the fault; what it leaves is judged below
                pass
        assert seen["faults"] >= 1, k
        if mode != "window":
            assert seen["short"] == 1, k
        FIG["runs"] += 1
        FIG["faults"] += seen["faults"]
        if mode == "window":
            FIG["enospc"] += seen["faults"]
            FIG["freed_mid_run"] += 1
        else:
            FIG["short"] += 1
            FIG["enospc"] += seen["enospc_after"]
        FIG["sessions"] += len(SMALL)
        lost = losses(before, home, data)
        FIG["losses"] += len(lost)
        assert lost == [], (mode, k, lost)
        _capture(home, data, SMALL)
        assert losses(before, home, data) == [], (mode, k)
        _finished(home, data, ref)


HELPER = r"""
import json, os, subprocess, sys
from pathlib import Path
sys.path.insert(0, os.environ["REPO"])
from sessionsift.clean import activity as A
from sessionsift.worktrees import procs as P
A.P.snapshot = lambda: P.ProcTable()
from tests.clean_util import corpus, losses, snapshot
from tests.test_clean_faults import SMALL, FILES, _capture, _leftovers

base = Path(os.environ["BASE"])
out = []
for kib in [int(x) for x in os.environ["SIZES"].split(",")]:
    t = base / f"s{kib}"
    home = corpus(t / "h", FILES)
    data = t / "d"
    data.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(data)], check=True)
    before = snapshot(home)
    err = None
    try:
        oc = _capture(home, data, SMALL)
        statuses = [r.status for r in oc.results]
    except Exception as exc:
        statuses, err = [], f"{type(exc).__name__}: {exc}"
    full = os.statvfs(data).f_bfree == 0 or err is not None or statuses != ["removed"] * 3
    lost = losses(before, home, data)
    subprocess.run(["mount", "-o", "remount,size=64m", str(data)], check=True)  # space freed
    _capture(home, data, SMALL)
    lost_after = losses(before, home, data)
    out.append({"kib": kib, "statuses": statuses, "error": err, "full": full, "lost": lost,
                "lost_after": lost_after, "leftovers": _leftovers(home)})
    subprocess.run(["umount", str(data)], check=True)
print(json.dumps(out))
"""


def test_a_small_tmpfs_data_dir_at_every_size_loses_nothing_and_a_rerun_with_space_finishes(tmp_path):
    """A REAL full disk: the data dir is a tmpfs (in a mount namespace of its own) of each size
    from 4 KiB up by 8 KiB to past what the capture needs, so ENOSPC comes wherever the kernel
    gives it (objects, manifest, ledger, key, directories); then the tmpfs is grown and the
    capture re-run. Needs root to mount: where unshare is refused the case cannot be made."""
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode(errors='replace')}")
    sizes = list(range(4, 200, 8))
    env = dict(os.environ, REPO=str(REPO), BASE=str(tmp_path), SIZES=",".join(map(str, sizes)))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", HELPER],
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout.splitlines()[-1])
    assert [r["kib"] for r in rows] == sizes
    assert all(r["lost"] == [] and r["lost_after"] == [] and r["leftovers"] == [] for r in rows), \
        [r for r in rows if r["lost"] or r["lost_after"] or r["leftovers"]]
    full = [r for r in rows if r["full"]]
    assert len(full) >= 5 and not rows[-1]["full"], [(r["kib"], r["statuses"], r["error"]) for r in rows]
    FIG["tmpfs_sizes"] += len(rows)
    FIG["tmpfs_full"] += len(full)
    FIG["sessions"] += len(rows) * len(SMALL)


def test_figures(capsys):
    with capsys.disabled():
        print(f"\nclean disk faults: {FIG['faults']} injected ({FIG['enospc']} ENOSPC, {FIG['eio']} EIO, "
              f"{FIG['short']} short writes; {FIG['freed_mid_run']} runs with space freed mid-run) over "
              f"{FIG['runs']} runs; a real tmpfs data dir at {FIG['tmpfs_sizes']} sizes, {FIG['tmpfs_full']} of them "
              f"full mid-capture; {FIG['sessions']} session captures; {FIG['losses']} files lost")
    assert FIG["losses"] == 0
