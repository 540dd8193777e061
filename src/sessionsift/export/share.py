"""`export markdown|html`: readable files for people, written after the secrets audit ran.

Layout (``DIR`` is ``--out``): ``DIR/index.<ext>`` (every session ever exported into DIR, from the
ledger, child sessions nested under their parents), ``DIR/<provider>/<session>.<ext>`` (the current
version under a stable name: what links and the index point to; an HTML page with its navigation:
back to the index, previous and next session) and ``DIR/versions/<provider>/<session>.<fp12>-<rv8>.<ext>``
(each version the ledger records, never overwritten; the HTML keeps a mark where the navigation
goes, since its bytes are checked by the ledger and the neighbours change as sessions are added).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Iterable
from urllib.parse import quote

from ..providers.base import Provider, SessionRef
from . import keep
from .run import Outcome, export_each

EXT = {"markdown": "md", "html": "html"}
VERSIONS = "versions"
"""The subdirectory of DIR the ledger's versions are written to."""


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
    base = Path(out_dir)

    def write(prov: Provider, ref: SessionRef, dest: Path, reading: dict) -> dict:
        kids = [(c, f"../{quote(c.provider)}/{quote(_stable(c, ext))}") for c in children.get((ref.provider, ref.session_id), [])]
        found = 0 if redact else per_session.get((ref.provider, ref.session_id), 0)
        # rendered and written as it is read (export/stream.py): memory does not follow the session
        doc, title = write_document(mod, prov, ref, dest, redact=red if redact else None, children=kids, secrets=found)
        return {"title": title, "redacted": redact,
                "secrets_redacted": doc.redacted, "secrets_found_not_redacted": found,
                "images": doc.images_shown, "omissions": doc.report.omissions(), "lanes": list(doc.lanes),
                "parent_session_id": ref.parent_session_id, "project": ref.project, "last_at": ref.last_at}

    wrote: set[tuple[str, str]] = set()
    for o in export_each(pairs, fmt=fmt, schema=mod.SCHEMA_VERSION, module_file=mod.__file__, out_dir=base,
                         suffix=ext, write=write, force=force, subdir=VERSIONS):
        res.outcomes.append(o)
        if o.path is not None and o.path.is_file():
            wrote.add((o.ref.provider, o.ref.session_id))
        if on_outcome is not None:
            on_outcome(o)
    rows = exported(fmt, base)
    if rows:
        order = _order(rows)
        for i, r in enumerate(order):
            key = (r["ref"].provider, r["ref"].session_id)
            nav = _nav(mod, r, order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None)
            stable = base / r["href"]
            if key in wrote or _nav_of(stable, mod) != nav:
                _copy_with_nav(Path(r["version"]), stable, mod, nav)
        res.index = base / f"index.{ext}"
        idx = mod.index(_tree(rows))
        keep.write_atomic(res.index, lambda f: f.write(idx))
    return res


def exported(fmt: str, base: Path) -> list[dict]:
    """Every session exported in format `fmt` into `base` whose newest version is still there, from
    the ledger (not only this run's): its title, stable href, version file, parent, project and last
    activity as recorded when it was written."""
    from .. import ledger

    root = os.path.abspath(base) + os.sep
    newest: dict[tuple[str, str], dict] = {}
    for e in ledger.read_all().rows:
        if e.get("kind") == "export" and e.get("format") == fmt and str(e.get("path", "")).startswith(root):
            newest[(e.get("provider"), e.get("session_id"))] = e
    ext = EXT[fmt]
    out = []
    for (prov, sid), e in newest.items():
        if not os.path.isfile(e["path"]):
            continue
        x = e.get("extra") or {}
        ref = SimpleNamespace(provider=prov, session_id=sid, project=x.get("project"), last_at=x.get("last_at"),
                              parent_session_id=x.get("parent_session_id"))
        out.append({"ref": ref, "title": x.get("title") or sid, "version": e["path"], "children": [],
                    "href": f"{quote(prov)}/{quote(_stable(SimpleNamespace(session_id=sid), ext))}"})
    return out


def _tree(rows: list[dict]) -> list[dict]:
    """Top-level rows (by provider in KNOWN order, newest activity first), children under parents."""
    from ..providers import KNOWN

    rank = {p: i for i, p in enumerate(KNOWN)}
    by = {(r["ref"].provider, r["ref"].session_id): dict(r, children=[]) for r in rows}
    top = []
    for r in sorted(by.values(), key=lambda r: (rank.get(r["ref"].provider, len(rank)), r["ref"].provider,
                                                 _neg(r["ref"].last_at), r["ref"].session_id)):
        ref = r["ref"]
        parent = by.get((ref.provider, ref.parent_session_id)) if ref.parent_session_id else None
        (parent["children"] if parent is not None else top).append(r)
    return top


def _neg(ts: str | None) -> str:
    """Sorts newest first (ISO instants): the complement of each character; unknown last."""
    return "~" if not ts else "".join(chr(0x10FFFF - ord(c)) for c in ts)


def _order(rows: list[dict]) -> list[dict]:
    """The index's order, depth first: what previous and next follow."""
    out: list[dict] = []

    def walk(rs: list[dict]) -> None:
        for r in rs:
            out.append(r)
            walk(r["children"])
    walk(_tree(rows))
    return out


def _nav(mod, r: dict, prev: dict | None, nxt: dict | None) -> str:
    f = getattr(mod, "nav", None)
    return "" if f is None else f(r, prev, nxt)


def _nav_of(stable: Path, mod) -> str | None:
    """The navigation a stable page carries now (None when it is missing or has none)."""
    f = getattr(mod, "nav", None)
    if f is None:
        return "" if stable.is_file() else None
    try:
        with open(stable, "rb") as fh:
            head = fh.read(64 << 10).decode("utf-8", "replace")
    except OSError:
        return None
    i = head.find(mod.NAV_OPEN)
    j = head.find(mod.NAV_CLOSE, i)
    return head[i:j + len(mod.NAV_CLOSE)] if i >= 0 and j >= 0 else None


def _copy_with_nav(version: Path, stable: Path, mod, nav: str) -> None:
    """The version's bytes with its navigation mark replaced by `nav` (the mark is in the page's first
    bytes; a Markdown file has none and is copied as it is)."""
    mark = getattr(mod, "NAV_MARK", "").encode("utf-8")
    navb = nav.encode("utf-8")

    def put(f) -> None:
        with open(version, "rb") as src:
            head = src.read(64 << 10)
            if mark:
                head = head.replace(mark, navb, 1)
            f.write(head)
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                f.write(chunk)

    keep.write_atomic(stable, put, binary=True)
