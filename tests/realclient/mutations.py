"""Crash artefacts made from real transcripts by explicit, named mutations.

Each function takes the bytes of a real ``.jsonl`` transcript and returns
``(mutated_bytes, info)`` where ``info`` says exactly what was done (offsets,
lengths) so tests can check the reader against it.  The docstring of each says
which crash it imitates.  :data:`MUTATIONS` maps a stable name to each function.
"""
from __future__ import annotations

from typing import Callable

NUL_RUN = 64  # length of the NUL runs written below


def _lines(data: bytes) -> list[bytes]:
    """Lines including their trailing newline."""
    return data.splitlines(keepends=True)


def _pick(lines: list[bytes], frac: float = 0.5) -> int:
    """Index of a reasonably long record near ``frac`` of the file (never the first or last line)."""
    n = len(lines)
    assert n >= 3, "transcript too short to mutate"
    i = max(1, min(n - 2, int(n * frac)))
    # prefer a line long enough to cut in the middle of a string value
    for j in list(range(i, n - 1)) + list(range(1, i)):
        if len(lines[j]) > 80:
            return j
    return i


def nul_run_inside_line(data: bytes) -> tuple[bytes, dict]:
    """Imitates a crash of a filesystem that zero-fills a block in the middle of a record that was being
    written (a power loss with delayed allocation): a run of NUL bytes replaces the middle of one record
    line, which is no longer valid JSON; all other lines are intact."""
    lines = _lines(data)
    i = _pick(lines)
    ln = lines[i]
    mid = len(ln) // 2
    k = min(NUL_RUN, len(ln) - mid - 2)
    lines[i] = ln[:mid] + b"\0" * k + ln[mid + k:]
    offset = sum(len(x) for x in lines[:i]) + mid
    return b"".join(lines), {"line_index": i, "nul_offset": offset, "nul_length": k, "damaged_lines": [i]}


def nul_run_at_end(data: bytes) -> tuple[bytes, dict]:
    """Imitates a power loss after the file size was extended but before the data reached disk: the file
    ends with a run of NUL bytes after the last complete (newline-terminated) record."""
    return data + b"\0" * NUL_RUN, {"nul_offset": len(data), "nul_length": NUL_RUN, "intact_bytes": len(data)}


def nul_run_then_record(data: bytes) -> tuple[bytes, dict]:
    """Imitates a torn append that was zero-filled, after which the client (restarted, or another writer)
    appended the next record on the same physical line: one line holds a NUL run followed by a complete,
    valid JSON record (and its newline).  The record after the NULs is the file's original last record,
    duplicated; the line that held it before is replaced by the NUL-prefixed version."""
    lines = _lines(data)
    if not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    last = lines[-1]
    lines[-1] = b"\0" * NUL_RUN + last
    offset = sum(len(x) for x in lines[:-1])
    return b"".join(lines), {"line_index": len(lines) - 1, "nul_offset": offset, "nul_length": NUL_RUN,
                             "record_offset": offset + NUL_RUN, "record": last.rstrip(b"\n").decode()}


def torn_final_line(data: bytes) -> tuple[bytes, dict]:
    """Imitates a process killed mid-``write()`` of its last record: the final line is truncated in the middle
    of the record and the file has no trailing newline."""
    lines = _lines(data)
    last = lines[-1]
    cut = max(1, len(last) // 2)
    lines[-1] = last[:cut].rstrip(b"\n")
    out = b"".join(lines)
    return out, {"line_index": len(lines) - 1, "torn_offset": len(out) - len(lines[-1]),
                 "torn_length": len(lines[-1]), "complete_lines": len(lines) - 1}


def invalid_utf8_in_string(data: bytes) -> tuple[bytes, dict]:
    """Imitates corrupted bytes inside a string value (a bit flip on disk, or a writer that split a multi-byte
    character): bytes that are not valid UTF-8 (0xC3 0x28, 0xFF) are placed inside a JSON string of one record,
    keeping the line's JSON structure otherwise intact."""
    lines = _lines(data)
    i = _pick(lines, 0.4)
    ln = lines[i]
    # find a position inside a string value: just after '"timestamp":"' or else after the first ':"'
    for needle in (b'"timestamp":"', b'"uuid":"', b':"'):
        p = ln.find(needle)
        if p >= 0:
            p += len(needle)
            break
    else:
        raise ValueError("no string value found")
    bad = b"\xc3\x28\xff"
    lines[i] = ln[:p] + bad + ln[p:]
    offset = sum(len(x) for x in lines[:i]) + p
    return b"".join(lines), {"line_index": i, "bad_offset": offset, "bad_bytes": bad.hex()}


def _record(line: bytes) -> dict | None:
    import json

    try:
        o = json.loads(line)
    except ValueError:
        return None
    return o if isinstance(o, dict) else None


def _zero_fill(data: bytes, pick, last: bool = False) -> tuple[bytes, dict]:
    """Zero-fill (keep length and newline) the first (`last`: the last) line whose record satisfies
    `pick(obj, later)`, `later` being the uuids later records name as parentUuid (so the chain
    really runs through it)."""
    lines = _lines(data)
    objs = [_record(x) for x in lines]
    order = range(len(objs) - 1, -1, -1) if last else range(len(objs))
    for i in order:
        o = objs[i]
        if o is None or i == 0 or i == len(lines) - 1:
            continue
        later = {x.get("parentUuid") for x in objs[i + 1:] if x}
        if pick(o, later):
            ln = lines[i]
            body = ln[:-1] if ln.endswith(b"\n") else ln
            lines[i] = b"\0" * len(body) + ln[len(body):]
            m = o.get("message") if isinstance(o.get("message"), dict) else {}
            return b"".join(lines), {"line_index": i, "line_no": i + 1, "nul_offset": sum(len(x) for x in lines[:i]),
                                     "nul_length": len(body), "uuid": o.get("uuid"), "type": o.get("type"),
                                     "stop_reason": m.get("stop_reason"),
                                     "children": [j + 1 for j, x in enumerate(objs) if x and x.get("parentUuid") == o.get("uuid")]}
    raise ValueError("no record of that shape in the transcript")


def _blocks(o: dict) -> list:
    m = o.get("message") if isinstance(o.get("message"), dict) else {}
    c = m.get("content")
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def destroyed_tool_result(data: bytes) -> tuple[bytes, dict]:
    """Imitates a crash that left the block holding one tool_result record unwritten (NUL-filled) in a finished
    session: the LAST tool_result record whose uuid a later record names as its parent (in the final turn,
    before the end_turn reply) becomes a line of NULs of the same length; its tool_use is left without a
    result, its child without a parent."""
    return _zero_fill(data, lambda o, later: o.get("type") == "user" and o.get("uuid") in later
                      and any(b.get("type") == "tool_result" for b in _blocks(o)), last=True)


def destroyed_prompt(data: bytes) -> tuple[bytes, dict]:
    """Imitates the same crash over a genuine prompt: the SECOND string-content user record (a prompt after a
    finished turn) becomes a line of NULs; its reply's records point at a parent that is gone."""
    seen = []

    def pick(o, later):
        m = o.get("message") if isinstance(o.get("message"), dict) else {}
        if o.get("type") == "user" and not o.get("isMeta") and isinstance(m.get("content"), str):
            seen.append(o)
            return len(seen) == 2 and o.get("uuid") in later
        return False
    return _zero_fill(data, pick)


def destroyed_assistant(data: bytes) -> tuple[bytes, dict]:
    """Imitates the same crash over an assistant reply: the first end_turn assistant record that a later record
    names as its parent (the reply that ended turn 1, the next prompt's parent) becomes a line of NULs."""
    return _zero_fill(data, lambda o, later: o.get("type") == "assistant" and o.get("uuid") in later
                      and (o.get("message") or {}).get("stop_reason") == "end_turn")


MUTATIONS: dict[str, Callable[[bytes], tuple[bytes, dict]]] = {
    "nul_run_inside_line": nul_run_inside_line,
    "nul_run_at_end": nul_run_at_end,
    "nul_run_then_record": nul_run_then_record,
    "torn_final_line": torn_final_line,
    "invalid_utf8_in_string": invalid_utf8_in_string,
    "destroyed_tool_result": destroyed_tool_result,
    "destroyed_prompt": destroyed_prompt,
    "destroyed_assistant": destroyed_assistant,
}
