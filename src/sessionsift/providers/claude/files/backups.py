"""`recover --list-backups`: Claude Code's file-history checkpoints of one file (FH-023)."""

from __future__ import annotations

import hashlib

from ..discover import Scope
from .collect import _ts, collect
from .events import Backup, LaneEvents, norm

def list_backups(scope: Scope, file: str, lane_evs: list[LaneEvents] | None = None, grammar=None) -> list[dict]:
    """The client's checkpoint store for this file (``file-history/<sid>/``, FH-023). Listing only (a backup's content
    enters a reconstruction only as a `checkpoint-restore` anchor: Replayer.restored_at_checkpoint)."""
    path = norm(file)
    h = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    if lane_evs is None:
        lane_evs, _ = collect(scope, True, grammar=grammar)
    marks: dict[tuple[str, str], list[Backup]] = {}
    for le in lane_evs:
        for b in le.backups:
            if b.path == path and b.backup_file:
                marks.setdefault((b.lane.session_id, b.backup_file), []).append(b)
    rows = []
    for s in scope.sessions:
        d = scope.home.path / "file-history" / s.session_id
        names = set()
        try:
            names = {p.name for p in d.iterdir() if p.name.startswith(h + "@v")}
        except OSError:
            pass
        names |= {n for (sid, n) in marks if sid == s.session_id}
        for n in sorted(names, key=lambda x: (len(x), x)):
            p = d / n
            ms = marks.get((s.session_id, n), [])
            try:
                st = p.stat()
                data = p.read_bytes()
                size, mtime, sha = st.st_size, st.st_mtime, hashlib.sha256(data).hexdigest()
                nlink = st.st_nlink
            except OSError:
                size = mtime = sha = nlink = None
            times = sorted({b.backup_time for b in ms if b.backup_time})
            match = None
            if mtime is not None and times:
                match = [t for t in times if (_ts(t) is not None and abs(_ts(t) - mtime) <= 5)]
            notes = ["tool-layer writes only: shell and manual edits never land in the store (FH-024)"]
            if size is None:
                notes.append("named by the transcript but missing from the store (pruned: FH-024)")
            if len(times) > 1:
                notes.append(f"name reused by {len(times)} generations; the blob belongs to at most one (FH-025)")
            if nlink and nlink > 1:
                notes.append("hard-linked from another session's store (session restore: FH-025)")
            if times and match == []:
                notes.append("blob mtime matches no recorded backupTime: generation unproven")
            rows.append({"session_id": s.session_id, "name": n, "store_path": str(p), "exists": size is not None,
                         "size": size, "sha256": sha, "mtime": mtime,
                         "version": int(n.rsplit("@v", 1)[1]) if n.rsplit("@v", 1)[-1].isdigit() else None,
                         "recorded_backup_times": times, "generation_matches": match,
                         "transcript_lines": sorted({b.line for b in ms}), "notes": notes})
    return rows
