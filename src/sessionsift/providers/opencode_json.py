"""opencode's legacy JSON tree (releases before the SQLite store, e.g. 1.1.x; measured with 1.1.65).

Layout under the data dir, as opencode's own ``json-migration.ts`` reads it (ids come from the file
names, not from the JSON, since earlier moves did not always update the JSON):

    storage/project/<projectID>.json
    storage/session/<projectID>/<sessionID>.json
    storage/message/<sessionID>/<messageID>.json
    storage/part/<messageID>/<partID>.json
    storage/session_diff/<sessionID>.json, storage/todo/<sessionID>.json

The first SQLite release migrates this tree into ``opencode.db`` once (when the database does not
exist yet) and leaves the tree in place, so a data dir can hold both: a session found in both is
read from the database (the tree's copy is reported as such in ``SessionRef.extra``).
An even older per-project layout (``project/<dir>/storage/session/info/*.json``) is not read: its
presence is reported as a problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import orjson

from .base import Problem, ReadReport, Record, SessionRef
from .opencode_records import PROVIDER, SessionMapper, iso_ms


def _load(path: Path, report: ReadReport | None = None) -> dict | None:
    try:
        data = path.read_bytes()
    except OSError as e:
        if report is not None:
            report.problems.append(Problem(str(path), f"cannot read: {e.strerror or e}"))
        return None
    if report is not None:
        report.files += 1
        report.bytes += len(data)
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        if report is not None:
            report.malformed_lines.append(f"{path}:1")
        return None
    if not isinstance(obj, dict):
        if report is not None:
            report.malformed_lines.append(f"{path}:1")
        return None
    return obj


def storage_dir(data_dir: Path) -> Path:
    return data_dir / "storage"


def discover(data_dir: Path, problems: list[Problem], provider: str = PROVIDER) -> list[SessionRef]:
    st = storage_dir(data_dir)
    refs: list[SessionRef] = []
    sdir = st / "session"
    if not sdir.is_dir():
        return refs
    projects: dict[str, dict] = {}
    pdir = st / "project"
    if pdir.is_dir():
        for f in sorted(pdir.glob("*.json")):
            projects[f.stem] = _load(f) or {}
    if sdir.joinpath("info").is_dir() or any((data_dir / "project").glob("*/storage/session/info")):
        problems.append(Problem(str(data_dir), "pre-0.4 per-project opencode layout (session/info/*.json) is not read"))
    for proj in sorted(p for p in sdir.iterdir() if p.is_dir() and p.name != "info"):
        for f in sorted(proj.glob("*.json")):
            obj = _load(f)
            if obj is None:
                problems.append(Problem(str(f), "legacy session file is not a JSON object"))
                continue
            sid = f.stem
            t = obj.get("time") if isinstance(obj.get("time"), dict) else {}
            msgs = st / "message" / sid
            last = iso_ms(t.get("updated"))
            refs.append(SessionRef(
                provider, sid, [f], project=obj.get("directory") if isinstance(obj.get("directory"), str) else None,
                project_source="session.directory", first_at=iso_ms(t.get("created")), last_at=last,
                size=None, title=obj.get("title") if isinstance(obj.get("title"), str) else None,
                parent_session_id=obj.get("parentID") if isinstance(obj.get("parentID"), str) else None,
                version=obj.get("version") if isinstance(obj.get("version"), str) else None,
                extra={"store": "legacy-json", "project_id": proj.name,
                       "worktree": (projects.get(proj.name) or {}).get("worktree"),
                       "archived": bool(t.get("archived")), "time_archived": iso_ms(t.get("archived")),
                       "slug": obj.get("slug"), "messages_dir": str(msgs), "data_dir": str(data_dir)}))
    return refs


def _sorted_messages(mdir: Path, report: ReadReport) -> list[tuple[str, dict]]:
    out = []
    for f in mdir.glob("*.json"):
        obj = _load(f, report)
        if obj is not None:
            out.append((f.stem, obj))
    out.sort(key=lambda x: ((x[1].get("time") or {}).get("created") if isinstance(x[1].get("time"), dict)
                            and isinstance((x[1].get("time") or {}).get("created"), (int, float)) else 0, x[0]))
    return out


def read(ref: SessionRef, report: ReadReport, raw: bool) -> Iterator[Record]:
    data_dir = Path(ref.extra.get("data_dir") or ref.paths[0].parents[3])
    st = storage_dir(data_dir)
    report.files += 1
    mdir = st / "message" / ref.session_id
    mapper = SessionMapper(ref.session_id, report, path=None, is_child=ref.parent_session_id is not None, raw=raw,
                           provider=ref.provider,
                           data_dir=data_dir)
    for mid, m in _sorted_messages(mdir, report):
        parts = []
        for f in sorted((st / "part" / mid).glob("*.json")):
            p = _load(f, report)
            if p is not None:
                parts.append((f.stem, p, None))
        mapper.path = str(mdir / f"{mid}.json")
        yield from _with_paths(mapper.message(mid, m, None, parts), st, mid, mdir)


def _with_paths(recs: Iterator[Record], st: Path, mid: str, mdir: Path) -> Iterator[Record]:
    for r in recs:
        if r.locator.startswith("part:"):
            r.path = str(st / "part" / mid / (r.locator[5:].split("#", 1)[0] + ".json"))
        else:
            r.path = str(mdir / f"{mid}.json")
        yield r


def read_files(ref: SessionRef) -> list[Path]:
    """The files `read` reads for `ref`, with the directories it lists (a message or part added
    moves its directory's mtime): the session file, its message dir and each message file, each
    message's part dir and each part file."""
    data_dir = Path(ref.extra.get("data_dir") or ref.paths[0].parents[3])
    st = storage_dir(data_dir)
    out: list[Path] = list(ref.paths)
    mdir = st / "message" / ref.session_id
    out.append(mdir)
    for f in sorted(mdir.glob("*.json")):
        out.append(f)
        pd = st / "part" / f.stem
        out.append(pd)
        out += sorted(pd.glob("*.json"))
    return out


def footprint(ref: SessionRef) -> list[Path]:
    data_dir = Path(ref.extra.get("data_dir") or ref.paths[0].parents[3])
    st = storage_dir(data_dir)
    out: list[Path] = list(ref.paths)
    mdir = st / "message" / ref.session_id
    if mdir.is_dir():
        out.append(mdir)
        for f in sorted(mdir.glob("*.json")):
            pd = st / "part" / f.stem
            if pd.is_dir():
                out.append(pd)
    for extra in (st / "session_diff" / f"{ref.session_id}.json", st / "todo" / f"{ref.session_id}.json"):
        if extra.exists():
            out.append(extra)
    return out

