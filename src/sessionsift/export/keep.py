"""Export versions in the ledger (``sessionsift.ledger``, owned by ``clean``).

Every file an export writes is recorded there with the reading's **fingerprint** (the session's
bytes: ``ledger.fingerprint(footprint)``, or ``ledger.fingerprint_rows`` for database rows) and a
**reader version**: ``<sessionsift version>+<provider>.<rules digest>+<format>.<schema>``, where
the rules digest is a SHA-256 of the reader's source files, the shared reading rules and the
export format's own module. So a reading changes when the transcript grew (the fingerprint) OR
when a reader rule or the export format changed (the reader version), and either makes a new
export version; an unchanged reading whose export is still on disk, byte for byte, is ``current``
and is not written again. ``ledger.current`` then names the newest version; older versions stay
where they were written (the ledger says which is current).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from .. import __version__
from ..providers.base import Provider, SessionRef


@lru_cache(maxsize=64)
def _digest_files(paths: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for p in paths:
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(b"?" + p.encode())
    return h.hexdigest()[:12]


def _module_files(obj) -> list[str]:
    """The source files of a reader: its whole package (``providers/codex/*.py``), or its module
    and the modules named after it (``opencode.py``, ``opencode_json.py``, ``opencode_records.py``)."""
    try:
        f = inspect.getsourcefile(obj)
    except TypeError:
        return []
    if not f:
        return []
    p = Path(f)
    if p.name == "__init__.py":
        return sorted(str(x) for x in p.parent.glob("*.py"))
    return sorted(str(x) for x in p.parent.glob(f"{p.stem}*.py"))


def reader_version(prov: Provider, fmt: str, schema: int, fmt_module: str) -> str:
    """``0.1.0+codex.<12 hex>+chunks.1``: sessionsift, the reader's rules, the export format."""
    from ..read import lines as shared_rules

    files = _module_files(type(prov)) + [shared_rules.__file__, fmt_module]
    return f"{__version__}+{prov.name}.{_digest_files(tuple(files))}+{fmt}.{schema}"


def session_fingerprint(prov: Provider, ref: SessionRef) -> tuple[str | None, str]:
    """(fingerprint, how) before reading; None for a session with no files of its own (its rows
    are fingerprinted from the same reading, :func:`rows_fingerprint`)."""
    from .. import ledger

    fp = prov.footprint(ref)
    if not fp:
        return None, "rows_v1"
    return ledger.fingerprint(fp), "fingerprint_v1"


def rows_fingerprint(prov: Provider, ref: SessionRef) -> str:
    from .. import ledger
    from ..providers.base import ReadReport

    return ledger.fingerprint_rows(prov.read(ref, ReadReport(), raw=True))


@dataclass
class Kept:
    status: str
    """``written`` (a new version), ``current`` (this reading was exported already and the file is
    intact: not written again)."""
    path: Path
    entry: dict | None
    version: int
    supersedes: str | None = None


def up_to_date(provider: str, session_id: str, fmt: str, fingerprint: str, rv: str, out_dir: Path) -> dict | None:
    """The ledger entry of an export of exactly this reading under ``out_dir`` whose file is intact."""
    from .. import ledger

    root = os.path.abspath(out_dir)
    for e in reversed(ledger.entries(provider, session_id)):
        if e.get("kind") != "export" or e.get("format") != fmt:
            continue
        if not str(e.get("path", "")).startswith(root + os.sep):
            continue
        if e.get("fingerprint") == fingerprint and e.get("reader_version") == rv:
            ok, _why = ledger.check_written(e)
            if ok:
                return e
    return None


def prior_versions(provider: str, session_id: str, fmt: str, out_dir: Path) -> list[dict]:
    from .. import ledger

    root = os.path.abspath(out_dir)
    return [e for e in ledger.entries(provider, session_id)
            if e.get("kind") == "export" and e.get("format") == fmt
            and str(e.get("path", "")).startswith(root + os.sep)]


def version_name(session_id: str, fingerprint: str, rv: str, suffix: str) -> str:
    """``<session>.<fingerprint 12>-<reader version 8>.<suffix>``: one name per reading."""
    rh = hashlib.sha256(rv.encode()).hexdigest()[:8]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    return f"{safe}.{fingerprint.split(':', 1)[-1][:12]}-{rh}.{suffix}"


def write_atomic(path: Path, write: Callable[[object], None], binary: bool = False) -> None:
    """Write through a temp file in the same directory, fsync, then rename into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def record_version(prov: Provider, ref: SessionRef, fmt: str, fingerprint: str, rv: str, path: Path,
                   out_dir: Path, extra: dict) -> Kept:
    from .. import ledger

    prior = prior_versions(ref.provider, ref.session_id, fmt, out_dir)
    sup = prior[-1]["path"] if prior else None
    n = len({e.get("path") for e in prior} | {os.path.abspath(path)})
    e = ledger.record(kind="export", provider=ref.provider, session_id=ref.session_id, fingerprint=fingerprint,
                      path=path, format=fmt, reader_version=rv,
                      extra={**extra, "version": n, "supersedes": sup if sup != os.path.abspath(path) else None})
    return Kept("written", path, e, n, sup)
