"""The only paths the clean-up builds from manifest text: validated relative parts under a root.

A manifest line is authenticated, but someone holding the key can still write anything into one
(and a damaged archive can hold anything): no path is built from its text without these checks,
and none is followed through a symlink (restore opens every component with ``O_NOFOLLOW``).
"""

from __future__ import annotations

import os
import re

HEX64 = re.compile(r"^[0-9a-f]{64}$")
CID = re.compile(r"^[0-9a-f]{16}$")
PROVIDER = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def rel_parts(rel) -> tuple[str, ...] | None:
    """The names of a relative path, or None when it is not a non-empty relative path of names
    (absolute, empty, ``.``/``..`` or an empty component, a NUL)."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\0" in rel:
        return None
    parts = tuple(rel.split("/"))
    if any(p in ("", ".", "..") for p in parts):
        return None
    return parts


def normal_abs(p) -> bool:
    return isinstance(p, str) and os.path.isabs(p) and os.path.normpath(p) == p and "\0" not in p


def under(path: str, root: str) -> bool:
    """``path`` lies strictly below ``root`` (both normal absolute paths)."""
    return path.startswith(root.rstrip("/") + "/")


def entry_problem(e: dict) -> str | None:
    """Why the paths of a capture entry cannot be acted on (recovery moves and unlinks only what
    passes): its id is not 16 hex digits, its scan root not a normal absolute path, a footprint
    entry or an item not ``scan_root/<validated relative parts>``, or a footprint entry's parent
    reached through a symlink that leads out of the scan root. None: every path is sound."""
    if not (isinstance(e.get("id"), str) and CID.match(e["id"])):
        return "its capture id is not 16 hex digits"
    root = e.get("scan_root")
    if not normal_abs(root):
        return f"its scan root {root!r} is not a normal absolute path"
    tops = e.get("top")
    if not isinstance(tops, list) or not all(normal_abs(t) and under(t, root) for t in tops):
        return f"a footprint entry lies outside its scan root {root}"
    real_root = os.path.realpath(root)
    for t in tops:
        rp = os.path.realpath(os.path.dirname(t))
        if rp != real_root and not under(rp, real_root):
            return f"{t} resolves outside its scan root {root} (through a symlink)"
    for it in e.get("items") or []:
        parts = rel_parts(it.get("rel")) if isinstance(it, dict) else None
        if parts is None or it.get("path") != os.path.join(root, *parts):
            return f"an item's path lies outside its scan root {root} or is not its relative path"
    return None
