"""`export markdown|html`: readable files for people, written after the secrets audit ran.

Layout: ``DIR/<fmt>/<provider>/<session>.<fp12>-<rv8>.<ext>`` (the version the ledger records),
``DIR/<fmt>/<provider>/<session>.<ext>`` (the current version under a stable name, rewritten each
run: what links and the index point to) and ``DIR/<fmt>/index.<ext>`` (every session exported,
child sessions nested under their parents).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable
from urllib.parse import quote

from ..providers.base import Provider, SessionRef
from . import keep
from .run import Outcome, export_each

EXT = {"markdown": "md", "html": "html"}


@dataclass
class ShareResult:
    outcomes: list[Outcome] = field(default_factory=list)
    findings: list = field(default_factory=list)
    index: Path | None = None


def _stable(ref: SessionRef, ext: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in ref.session_id)
    return f"{safe}.{ext}"


def export_documents(pairs: Iterable[tuple[Provider, SessionRef]], fmt: str, out_dir: Path, *,
                     redact: bool = False, force: bool = False, on_outcome=None, on_findings=None) -> ShareResult:
    from ..audit.secrets import allowlist_path, detector, load_allowlist, redact as redact_text, scan_sessions
    from . import html as H
    from . import markdown as M
    from .stream import write_document

    mod = H if fmt == "html" else M
    ext = EXT[fmt]
    pairs = list(pairs)
    allow, _ = load_allowlist(allowlist_path())
    res = ShareResult()
    sec = scan_sessions(pairs, allow=allow)  # before anything is written for sharing
    res.findings = sec.findings
    if on_findings is not None:
        on_findings(sec.findings)  # shown before anything is written
    per_session: dict[tuple[str, str], int] = {}
    for f in sec.findings:
        per_session[(f.provider, f.session_id)] = per_session.get((f.provider, f.session_id), 0) + 1
    det = detector(False)

    def red(text: str) -> tuple[str, int]:
        t, hits = redact_text(text, det, allow)
        return t, len(hits)

    children: dict[tuple[str, str], list[SessionRef]] = {}
    for _p, ref in pairs:
        if ref.parent_session_id:
            children.setdefault((ref.provider, ref.parent_session_id), []).append(ref)
    base = Path(out_dir) / fmt

    def write(prov: Provider, ref: SessionRef, dest: Path, reading: dict) -> dict:
        kids = [(c, f"../{quote(c.provider)}/{quote(_stable(c, ext))}") for c in children.get((ref.provider, ref.session_id), [])]
        found = 0 if redact else per_session.get((ref.provider, ref.session_id), 0)
        # rendered and written as it is read (export/stream.py): memory does not follow the session
        doc, title = write_document(mod, prov, ref, dest, redact=red if redact else None, children=kids, secrets=found)
        return {"title": title, "redacted": redact,
                "secrets_redacted": doc.redacted, "secrets_found_not_redacted": found,
                "images": doc.images_shown, "omissions": doc.report.omissions(), "lanes": list(doc.lanes)}

    rows: dict[tuple[str, str], dict] = {}
    for o in export_each(pairs, fmt=fmt, schema=mod.SCHEMA_VERSION, module_file=mod.__file__, out_dir=Path(out_dir),
                         suffix=ext, write=write, force=force):
        res.outcomes.append(o)
        if o.path is not None and o.path.is_file():
            stable = base / o.ref.provider / _stable(o.ref, ext)
            with open(o.path, "rb") as src:
                keep.write_atomic(stable, lambda f: shutil.copyfileobj(src, f, 1 << 20), binary=True)
            title = o.facts.get("title") or (o.entry or {}).get("extra", {}).get("title") or o.ref.title or o.ref.session_id
            rows[(o.ref.provider, o.ref.session_id)] = {
                "ref": o.ref, "title": title, "href": f"{quote(o.ref.provider)}/{quote(_stable(o.ref, ext))}",
                "children": []}
        if on_outcome is not None:
            on_outcome(o)
    top = []
    for key, r in rows.items():
        ref = r["ref"]
        parent = rows.get((ref.provider, ref.parent_session_id)) if ref.parent_session_id else None
        (parent["children"] if parent is not None else top).append(r)
    if rows:
        res.index = base / f"index.{ext}"
        idx = mod.index(top)
        keep.write_atomic(res.index, lambda f: f.write(idx))
    return res
