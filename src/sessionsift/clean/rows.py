"""Capture of a session that is rows in a shared database (opencode's ``opencode.db``, Crush's
``crush.db``): its records, as the reader yields them with their raw rows, written as JSON Lines
into the archive. sessionsift never writes to a client's database, so such a session is never
deleted (``delete_unsupported_for_this_provider``); this module deletes nothing.

This is the only capture path that reads a session's content, and it can remove nothing: the
deleting component (capture.py) stays blind.
"""

from __future__ import annotations

import os
import secrets

import orjson

from .. import __version__, ledger
from ..providers.base import ReadReport
from .archive import CODEC, Archive
from .capture import Result, step


def rows_lines(prov, ref, rep: ReadReport):
    """The export's lines: one JSON object per record, {locator, native, instant, raw}."""
    for r in prov.read(ref, rep, raw=True):
        yield orjson.dumps({"locator": r.locator, "native": r.native, "instant": r.instant, "raw": r.raw},
                           default=str) + b"\n"


def _rows_bytes(prov, ref) -> bytes:
    return b"".join(rows_lines(prov, ref, ReadReport()))


def run(arch: Archive, prov, ref, plan) -> Result:
    res = Result(plan.provider, plan.session_id, "failed")
    tmp = arch.root / "tmp" / f"rows-{os.getpid()}-{secrets.token_hex(6)}"
    rep = ReadReport()
    n = 0
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        for line in rows_lines(prov, ref, rep):
            f.write(line)
            n += 1
        f.flush()
        os.fsync(f.fileno())
    step("rows_written")
    if rep.problems:
        os.unlink(tmp)
        res.status, res.reason = "aborted", f"the session could not be read whole: {rep.problems[0].why}"
        return res
    fp = ledger.fingerprint_rows(prov.read(ref, ReadReport(), raw=True))
    if fp != plan.fingerprint:
        os.unlink(tmp)
        res.status, res.reason = "aborted", "the session's rows changed during capture (the client is writing)"
        return res
    info = arch.put(str(tmp), step)
    os.unlink(tmp)
    ok, why = arch.check(info["sha256"], info["size"])
    if not ok:
        res.status, res.reason = "aborted", why
        return res
    step("verified")
    instant = ledger.now_iso()
    from .capture import capture_id

    cid = capture_id(plan, instant)
    arch.append({"v": 1, "type": "capture", "id": cid, "action": "capture" if plan.delete else "protect",
                 "provider": plan.provider, "session_id": plan.session_id, "scan_root": plan.scan_root,
                 "fingerprint": plan.fingerprint, "instant": instant, "delete": False,
                 "delete_note": "delete_unsupported_for_this_provider", "waived_kept": plan.waived_kept,
                 "gates": plan.gates, "last_at": plan.last_at, "codec": CODEC, "reader_version": __version__,
                 "top": [], "items": [],
                 "rows": {"sha256": info["sha256"], "size": info["size"], "stored_size": info["stored_size"],
                          "records": n, "format": "jsonl: {locator, native, instant, raw}",
                          "db_path": ref.extra.get("db_path") if isinstance(ref.extra, dict) else None}})
    step("manifest")
    ledger.record(kind="capture", provider=plan.provider, session_id=plan.session_id, fingerprint=plan.fingerprint,
                  path=str(arch.object_path(info["sha256"])), format="zst-archive-rows",
                  extra={"capture_id": cid, "records": n}, root=arch.root.parent)
    res.status, res.capture_id = "captured", cid
    res.reason = "delete_unsupported_for_this_provider: rows exported, the database left untouched"
    res.files, res.bytes, res.stored = 1, info["size"], info["stored_size"]
    return res
