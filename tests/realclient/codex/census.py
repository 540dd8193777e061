"""Census of the record shapes in a CODEX_HOME (what a reader must know), and a diff of two.

    .venv/bin/python -m tests.realclient.codex.census examples/codex-home /tmp/codex-0.169.0/codex-home

Counts ``type``, ``response_item/<payload.type>``, ``event_msg/<payload.type>``,
``event_msg/item_completed/<item.type>``, the payload keys per shape, the side files, and the
tables of the side stores; prints what only one of the two homes has.
"""
from __future__ import annotations

import io
import json
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path


def _lines(p: Path):
    data = p.read_bytes()
    if p.name.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    for ln in data.splitlines():
        try:
            yield json.loads(ln)
        except ValueError:
            continue


def census(home: Path) -> dict:
    shapes: Counter = Counter()
    keys: dict[str, set] = defaultdict(set)
    for p in sorted(home.rglob("rollout-*")):
        for o in _lines(p):
            t = o.get("type")
            pl = o.get("payload") if isinstance(o.get("payload"), dict) else {}
            shape = str(t)
            if t in ("response_item", "event_msg"):
                shape += f"/{pl.get('type')}"
                if pl.get("type") == "item_completed" and isinstance(pl.get("item"), dict):
                    shape += f"/{pl['item'].get('type')}"
                    keys[shape + " item"].update(pl["item"].keys())
            shapes[shape] += 1
            keys[shape].update(pl.keys())
            keys[str(t) + " (line)"].update(o.keys())
    tables: dict[str, list[str]] = {}
    for db in sorted(home.glob("*.sqlite")):
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            con.execute("PRAGMA trusted_schema = ON")
            tables[db.name] = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'"))
            con.close()
        except sqlite3.Error as exc:
            tables[db.name] = [f"<unreadable: {exc}>"]
    return {"shapes": dict(shapes), "keys": {k: sorted(v) for k, v in keys.items()}, "tables": tables}


def diff(a: dict, b: dict, an: str, bn: str) -> str:
    out = [f"| what | only in {an} | only in {bn} |", "| --- | --- | --- |"]
    sa, sb = set(a["shapes"]), set(b["shapes"])
    out.append(f"| record shapes | {', '.join(sorted(sa - sb)) or '-'} | {', '.join(sorted(sb - sa)) or '-'} |")
    for k in sorted(set(a["keys"]) & set(b["keys"])):
        ka, kb = set(a["keys"][k]), set(b["keys"][k])
        if ka != kb:
            out.append(f"| keys of `{k}` | {', '.join(sorted(ka - kb)) or '-'} | {', '.join(sorted(kb - ka)) or '-'} |")
    for db in sorted(set(a["tables"]) | set(b["tables"])):
        ta, tb = set(a["tables"].get(db, [])), set(b["tables"].get(db, []))
        if ta != tb:
            out.append(f"| tables of {db} | {', '.join(sorted(ta - tb)) or '-'} | {', '.join(sorted(tb - ta)) or '-'} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    a, b = Path(sys.argv[1]), Path(sys.argv[2])
    print(diff(census(a), census(b), sys.argv[3] if len(sys.argv) > 3 else a.name,
               sys.argv[4] if len(sys.argv) > 4 else b.name))
