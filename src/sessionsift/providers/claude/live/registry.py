"""The harness session registry (`<home>/sessions/<pid>.json`) and the owner-pid probe.

Facts this module relies on (catalog area live-registry):
- One row per live TOP-LEVEL session, keyed on disk by pid; the session is named by the row's
  `sessionId`, not by the file name (REG-001, REG-006). Only `.json` entries are rows: the
  `<pid>.<hex>.key` companions and the `.fleetview-heartbeat` dotfile are excluded by extension
  before any read (REG-016); a `.json` without `sessionId` is rejected on content.
- The row is written with a plain truncating writeFile, so a reader can catch it half-written
  (REG-017): such a row is retried once and then REPORTED as unreadable, never silently skipped.
- `status` is an open set seen as busy|shell|idle|waiting (REG-002); `shell` means idle with a
  background shell open (REG-003); `statusUpdatedAt` is transition-written, never a heartbeat
  (REG-004), so its age is shown but never used for liveness.
- A row outlives a SIGKILLed owner (REG-013): only the pid probe retires it.
- `procStart`: the catalog's asctime string in UTC (REG-010, 2 s tolerance, two `ps` date orders
  REG-012), or - as the 2.1.258 Linux client writes it - a bare number: the start time in clock
  ticks since boot (`/proc/<pid>/stat` field 22) next to `pidDomain` =
  `linux:<machine-id>:pid:[<pid-namespace inode>]`. A row from another domain cannot be probed.
- `ps -o lstart=` is not universal (busybox, REG-011): /proc answers liveness on Linux.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import orjson

RETRY_DELAY = 0.05
PS_TOLERANCE_S = 2.0


@dataclass
class RegistryRow:
    path: str
    data: dict

    @property
    def pid(self) -> int | None:
        p = self.data.get("pid")
        if isinstance(p, int):
            return p
        stem = Path(self.path).stem
        return int(stem) if stem.isdigit() else None

    @property
    def status(self) -> str | None:
        s = self.data.get("status")
        return s if isinstance(s, str) else None


@dataclass
class RegistryLookup:
    """What a scan of `<home>/sessions/` found for one session id."""

    directory: str
    dir_state: str
    """"present" | "absent" | "unreadable: <why>"."""
    rows: list[RegistryRow] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    """Rows that could not be read or parsed (maybe caught mid-write): (path, why)."""
    scanned: int = 0


def _read_row(path: str) -> tuple[dict | None, str | None]:
    last = "unreadable"
    for attempt in range(2):
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return None, "vanished while scanning"
        except OSError as exc:
            last = f"unreadable: {exc.strerror}"
        else:
            try:
                obj = orjson.loads(raw)
                if isinstance(obj, dict):
                    return obj, None
                last = "not a JSON object"
            except orjson.JSONDecodeError:
                last = ("empty (caught mid-write?)" if not raw.strip()
                        else f"not JSON ({len(raw)} bytes; caught mid-write?)")
        if attempt == 0:
            time.sleep(RETRY_DELAY)
    return None, last


def find_rows(home: Path, session_id: str) -> RegistryLookup:
    """Scan `<home>/sessions/*.json` for rows naming `session_id`."""
    return _scan_rows(home, lambda obj: obj.get("sessionId") == session_id)


def all_rows(home: Path) -> RegistryLookup:
    """Every readable row of `<home>/sessions/*.json` (the harness's listing of its live
    sessions); rows that could not be read are in `unreadable`, never dropped."""
    return _scan_rows(home, lambda obj: True)


def _scan_rows(home: Path, want) -> RegistryLookup:
    d = Path(home) / "sessions"
    out = RegistryLookup(str(d), "present")
    try:
        names = sorted(e.name for e in os.scandir(d))
    except FileNotFoundError:
        out.dir_state = "absent"
        return out
    except OSError as exc:
        out.dir_state = f"unreadable: {exc.strerror}"
        return out
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        p = str(d / name)
        out.scanned += 1
        obj, why = _read_row(p)
        if obj is None:
            if why != "vanished while scanning":
                out.unreadable.append((p, why or "unreadable"))
            continue
        if want(obj):
            out.rows.append(RegistryRow(p, obj))
    return out


# --- pid probe ---------------------------------------------------------------------------


@dataclass
class PidProbe:
    pid: int | None
    state: str
    """"alive" | "dead" | "reused" | "unprobeable" | "unknown"."""
    guard: str
    """"matched" | "mismatched" | "skipped: <why>" | "not applicable"."""
    detail: str

    @property
    def gone(self) -> bool:
        return self.state in ("dead", "reused")


def local_pid_domain() -> str | None:
    """`linux:<machine-id>:pid:[<inode>]` for this reader, as the client writes it; None if unknown."""
    try:
        mid = Path("/etc/machine-id").read_text().strip()
    except OSError:
        try:
            mid = Path("/var/lib/dbus/machine-id").read_text().strip()
        except OSError:
            return None
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    return f"linux:{mid}:{ns}"


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, starttime ticks) from /proc/<pid>/stat; None if absent/unreadable."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    r = raw.rfind(b")")
    fields = raw[r + 2:].split()
    try:
        return fields[0].decode(), int(fields[19])
    except (IndexError, ValueError):
        return None


ASCTIME_FORMATS = ("%a %b %d %H:%M:%S %Y", "%a %d %b %H:%M:%S %Y")


def parse_asctime(s: str, utc: bool) -> datetime | None:
    """Parse an lstart/asctime string in either field order (REG-012); UTC or local zone."""
    norm = " ".join(s.split())
    for fmt in ASCTIME_FORMATS:
        try:
            dt = datetime.strptime(norm, fmt)
        except ValueError:
            continue
        if utc:
            return dt.replace(tzinfo=timezone.utc)
        return dt.astimezone()  # naive -> local zone
    return None


def _ps_lstart(pid: int) -> str | None:
    try:
        r = subprocess.run(["ps", "-p", str(pid), "-o", "lstart="], capture_output=True, text=True,
                           timeout=2)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = r.stdout.strip()
    return out if r.returncode == 0 and out else None


def _alive_by_signal(pid: int) -> bool | None:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return None


def probe_pid(pid: int | None, proc_start: object, pid_domain: object) -> PidProbe:
    """Is the row's owner process still the process that wrote the row?"""
    if not isinstance(pid, int) or pid <= 0:
        return PidProbe(None, "unknown", "skipped: row carries no usable pid", "no pid in the row")
    here = local_pid_domain()
    if isinstance(pid_domain, str) and pid_domain:
        if here is None:
            return PidProbe(pid, "unprobeable", "skipped: this reader cannot name its own pid domain",
                            f"row's pid domain {pid_domain!r}; ours unknown: the pid cannot be probed")
        if pid_domain != here:
            return PidProbe(pid, "unprobeable", "skipped: another pid domain",
                            f"row's pid domain {pid_domain!r} is not ours ({here!r}): the pid names a "
                            "process in another pid namespace or host and cannot be probed from here")
    st = _proc_stat(pid) if os.path.isdir("/proc") else None
    if os.path.isdir("/proc/self"):
        if st is None and not os.path.exists(f"/proc/{pid}"):
            return PidProbe(pid, "dead", "not applicable", f"no /proc/{pid}: no such process")
        if st is not None and st[0] in ("Z", "X"):
            return PidProbe(pid, "dead", "not applicable", f"/proc/{pid} is a zombie (state {st[0]}): exited")
        alive = True
    else:
        a = _alive_by_signal(pid)
        if a is False:
            return PidProbe(pid, "dead", "not applicable", "kill(pid, 0): no such process")
        if a is None:
            return PidProbe(pid, "unknown", "skipped: liveness probe failed", "kill(pid, 0) failed")
        alive = True
    # the reuse guard, in the form the row carries
    if isinstance(proc_start, str) and proc_start.strip().isdigit():
        ticks = int(proc_start.strip())
        if st is None:
            return PidProbe(pid, "alive", "skipped: /proc/<pid>/stat unreadable",
                            "alive (pid only; reuse guard skipped: start ticks could not be read)")
        hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        if abs(st[1] - ticks) <= PS_TOLERANCE_S * hz:
            return PidProbe(pid, "alive", "matched",
                            f"alive (start-time guard matched: {ticks} ticks since boot)")
        return PidProbe(pid, "reused", "mismatched",
                        f"pid {pid} is alive but started at {st[1]} ticks, the row says {ticks}: "
                        "the pid was reused by another process")
    if isinstance(proc_start, str) and proc_start.strip():
        reg = parse_asctime(proc_start, utc=True)
        if reg is None:
            return PidProbe(pid, "alive", "skipped: procStart unparseable",
                            f"alive (pid only; reuse guard skipped: procStart {proc_start!r} not understood)")
        ps = _ps_lstart(pid)
        seen = parse_asctime(ps, utc=False) if ps else None
        if seen is None and st is not None:
            try:
                btime = next(int(l.split()[1]) for l in Path("/proc/stat").read_text().splitlines()
                             if l.startswith("btime "))
                seen = datetime.fromtimestamp(btime + st[1] / os.sysconf("SC_CLK_TCK"), timezone.utc)
            except (OSError, StopIteration, ValueError):
                seen = None
        if seen is None:
            return PidProbe(pid, "alive", "skipped: `ps -o lstart=` unavailable",
                            "alive (pid only; reuse guard skipped: the process start time could not be read)")
        if abs((seen - reg).total_seconds()) <= PS_TOLERANCE_S:
            return PidProbe(pid, "alive", "matched", "alive (start-time guard matched)")
        return PidProbe(pid, "reused", "mismatched",
                        f"pid {pid} is alive but started {seen.isoformat()}, the row says "
                        f"{reg.isoformat()}: the pid was reused")
    return PidProbe(pid, "alive" if alive else "unknown", "skipped: row carries no procStart",
                    "alive (pid only; reuse guard skipped: no procStart in the row)")
