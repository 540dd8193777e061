#!/usr/bin/env python3
"""SessionStart(compact) hook: re-inject, verbatim, the turns a compaction summary clipped.

Register it N times on one SessionStart matcher group (`"matcher": "compact"`), as
`--slot 1 --slots N` ... `--slot N --slots N` (see hooks/README.md and settings.snippet.json).
Each run is one slot; together they inject `sessionsift verbatim --slices` in slice order:

- Claude Code runs same-event hooks CONCURRENTLY and concatenates their outputs in COMPLETION
  order (MISC-013), so slot K does not print until slot K-1 has printed AND exited (its pid is
  gone, i.e. the client has reaped it) plus a short gap;
- the reconstruction is computed ONCE per compaction event (the first slot to create the spool
  directory does it; the others wait for it), so every slot cuts from the same text and nothing
  is lost or repeated between slices even if the transcript grows meanwhile;
- each slice stays under the 10,000-character SessionStart threshold (ELI-025, MISC-012) and the
  budget is capped so the text never needs more than N slices;
- stdout is `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":...}}`,
  the only shape the client injects (ELI-021); `.source` is re-checked from the stdin payload
  (MISC-027), so a mis-registered matcher injects nothing.

Stdlib only. sessionsift is run as `<this python> -m sessionsift` unless --sessionsift names an
executable (an absolute path).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THRESHOLD = 10_000  # SessionStart additionalContext persist threshold (UTF-16 units)
MIN_FILL = 0.8  # must equal sessionsift.verbatim.slices.MIN_FILL (tests check it)
WAIT_READY = 75.0  # seconds a slot waits for the reconstruction
WAIT_PREV = 30.0  # seconds a slot waits for its predecessor before printing anyway (with a note)
GAP = 0.6  # seconds between the predecessor's exit and our print (headroom for a busy client event loop)
STALE = 300.0  # a spool directory older than this is left over from a crashed run
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "busybox", "env", "timeout"}


def u16len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def budget_for_slots(slots: int, window: int) -> int:
    """Same rule as sessionsift.verbatim.slices.budget_for_slots."""
    floor = max(1, min(int(window * MIN_FILL), window - 1))
    return slots * floor if slots > 0 else 0


def client_pid() -> int:
    """The Claude Code process that ran us: the first ancestor that is not a shell wrapper."""
    pid = os.getppid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            return pid
        comm = stat[stat.index("(") + 1: stat.rindex(")")]
        if comm not in SHELLS:
            return pid
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid <= 1:
            return pid
        pid = ppid
    return pid


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_atomic(path: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(data)
    os.replace(tmp, path)


def wait_for(path: Path, timeout: float) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if path.exists():
            return True
        time.sleep(0.05)
    return path.exists()


class UnsafeSpool(Exception):
    """The spool directory is not ours alone: another local user could read or plant slices."""


def _private(d: Path) -> bool:
    try:
        st = os.lstat(d)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def spool_root(explicit: str | None) -> Path:
    """A directory only we can enter: `--spool DIR`, else `$XDG_RUNTIME_DIR` (private by its
    spec) when it is ours, else `$TMPDIR` or /tmp; under it `sessionsift-verbatim-<uid>`, created
    0700 and then checked: a real directory (not a symlink), owned by us, no group/other access.
    In a shared /tmp another user can pre-create that name; then we refuse (UnsafeSpool)."""
    if explicit:
        base = Path(explicit)
    else:
        run = os.environ.get("XDG_RUNTIME_DIR")
        base = Path(run) if run and _private(Path(run)) else Path(os.environ.get("TMPDIR") or "/tmp")
    root = base / f"sessionsift-verbatim-{os.getuid()}"
    try:
        os.makedirs(base, exist_ok=True)
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnsafeSpool(f"cannot create the spool directory {root}: {exc.strerror}")
    if not _private(root):
        raise UnsafeSpool(f"the spool directory {root} is not a private directory of uid {os.getuid()} "
                          "(another user may have created it, or it is a symlink / group- or world-accessible); "
                          "remove it or pass --spool DIR")
    return root


def claim(ns: Path) -> bool:
    """True if this slot created the spool (and so computes the reconstruction)."""
    for _ in range(5):
        try:
            ns.mkdir(mode=0o700)
            return True
        except FileExistsError:
            try:
                age = time.time() - ns.stat().st_mtime
            except FileNotFoundError:
                continue
            if age < STALE:
                return False
            aside = ns.with_name(f"{ns.name}.stale.{os.getpid()}")
            try:
                os.rename(ns, aside)
                shutil.rmtree(aside, ignore_errors=True)
            except OSError:
                pass
    return False


def produce(ns: Path, payload: dict, a: argparse.Namespace) -> None:
    tp = payload.get("transcript_path") or ""
    cmd = ([a.sessionsift] if a.sessionsift else [sys.executable, "-m", "sessionsift"]) + [
        "verbatim", tp, "--slices", "--format", "json", "--pending-compaction", "--window", str(a.window),
        "--budget", str(min(a.budget, budget_for_slots(a.slots, a.window)))]
    home = Path(tp).parents[2] if tp and len(Path(tp).parents) > 2 else None
    if home is not None:
        cmd += ["--claude-home", str(home)]
    slices: list[str] = []
    error = None
    summary: dict = {}
    # The client fires SessionStart(compact) BEFORE it appends the new boundary and summary
    # (observed at 2.1.258: the hook's wait delays the boundary's write), so the reconstruction is
    # told a compaction is pending: every turn in the file predates it.
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        rows = []
        for line in r.stdout.splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
        summary = next((x for x in rows if x.get("kind") == "summary"), {})
        slices = [x["text"] for x in sorted((x for x in rows if x.get("kind") == "slice"), key=lambda x: x["index"])]
        if r.returncode not in (0, 1, 3) or not summary:
            error = f"sessionsift exited {r.returncode}: {r.stderr.strip()[-300:]}"
            slices = []
    except (OSError, subprocess.TimeoutExpired) as exc:
        error = f"could not run sessionsift: {exc}"
    sys.stderr.write(f"verbatim hook: reconstruction after {time.monotonic() - t0:.2f}s: "
                     f"{len(slices)} slices, "
                     f"{summary.get('boundaries_spanned')} of {summary.get('boundaries_total')} boundaries\n")
    for i, s in enumerate(slices, 1):
        write_atomic(ns / f"slice.{i}", s)
    write_atomic(ns / "ready", json.dumps({"count": len(slices), "error": error,
                                           "boundaries_spanned": summary.get("boundaries_spanned"),
                                           "chars_used": summary.get("chars_used")}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slot", type=int, required=True, help="this hook's slot, 1..N")
    ap.add_argument("--slots", type=int, required=True, help="N: how many slots are registered")
    ap.add_argument("--window", type=int, default=9000, help="slice size (UTF-16 units; < 10,000)")
    ap.add_argument("--budget", type=int, default=40000, help="verbatim budget (capped to what N slots carry)")
    ap.add_argument("--sessionsift", default=None, help="absolute path of the sessionsift executable")
    ap.add_argument("--spool", default=None,
                    help="spool root (default: $XDG_RUNTIME_DIR if private, else $TMPDIR or /tmp)")
    a = ap.parse_args(argv)
    if not (1 <= a.slot <= a.slots) or a.window >= THRESHOLD or a.window < 100:
        sys.stderr.write("verbatim hook: need 1 <= --slot <= --slots and 100 <= --window < 10000\n")
        return 0
    try:
        payload = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return 0
    if payload.get("hook_event_name", "SessionStart") != "SessionStart" or payload.get("source") != "compact":
        return 0  # matcher `compact` should have filtered; re-checked here (MISC-027)
    sid = str(payload.get("session_id") or "unknown").replace("/", "_")
    try:
        root = spool_root(a.spool)
    except UnsafeSpool as exc:
        sys.stderr.write(f"verbatim hook: {exc}\n")
        if a.slot == 1:  # say so in the context once, rather than inject nothing quietly
            sys.stdout.write(json.dumps({"hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": f"[sessionsift verbatim hook: not run: {exc}]\n"}}, ensure_ascii=False))
        return 0
    ns = root / f"{sid}-{client_pid()}"
    if claim(ns):
        try:
            produce(ns, payload, a)
        except Exception as exc:  # never leave the other slots waiting
            write_atomic(ns / "ready", json.dumps({"count": 0, "error": f"hook failed: {exc!r}"}))
    ready = wait_for(ns / "ready", WAIT_READY)
    info = json.loads((ns / "ready").read_text()) if ready else {"count": 0, "error": "reconstruction timed out"}
    count = info.get("count")
    if not isinstance(count, int):  # no slice count on record: say so rather than inject nothing quietly
        info.setdefault("error", "the reconstruction recorded no slice count")
        count = 0
    note = ""
    if a.slot > 1:
        prev = ns / f"done.{a.slot - 1}"
        t0 = time.monotonic()
        ok = wait_for(prev, WAIT_PREV)
        if ok:
            try:
                pid = int(prev.read_text() or "0")
            except (OSError, ValueError):
                pid = 0
            while pid and alive(pid) and time.monotonic() - t0 < WAIT_PREV:
                time.sleep(0.02)
            time.sleep(GAP)
        else:
            note = (f"\n[sessionsift verbatim: slot {a.slot - 1} did not finish within {WAIT_PREV:.0f}s; "
                    f"this is slice {a.slot} of {count} and may arrive out of order]\n")
    text = ""
    if a.slot <= count:
        text = (ns / f"slice.{a.slot}").read_text(encoding="utf-8")
    if a.slot == 1 and info.get("error"):
        text = f"[sessionsift verbatim hook: could not reconstruct the clipped turns: {info['error']}]\n" + text
    if a.slot == a.slots and count > a.slots:
        text += (f"\n[sessionsift verbatim: {count - a.slots} more slice(s) were not injected; run "
                 f"`sessionsift verbatim {payload.get('transcript_path')} --slice K` for K = {a.slots + 1}..{count}]\n")
    if note and text:
        text = note + text
    if text:
        sys.stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                            "additionalContext": text}}, ensure_ascii=False))
        sys.stdout.flush()
    write_atomic(ns / f"done.{a.slot}", str(os.getpid()))
    if a.slot == a.slots and all((ns / f"done.{k}").exists() for k in range(1, a.slots)):
        shutil.rmtree(ns, ignore_errors=True)  # else a stalled slot still needs it; STALE clears it later
    return 0


if __name__ == "__main__":
    sys.exit(main())
