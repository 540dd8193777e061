"""The instant of the last record of a JSON Lines file, read backwards from its end in bounded
chunks (``Provider.last_activity``'s default: clean's age gate)."""

from __future__ import annotations

import os

LAST_LINE_MAX = 32 << 20
"""The longest record :func:`last_jsonl_instant` parses (longer: its instant is unknown)."""
BACK_MAX = 128 << 20
"""How far back from a file's end :func:`last_jsonl_instant` reads at most."""


def _dig(o, path: tuple[str, ...]):
    for k in path:
        if not isinstance(o, dict):
            return None
        o = o.get(k)
    return o


def last_jsonl_instant(path, keys: tuple[tuple[str, ...], ...] = (("timestamp",),)) -> str | None:
    """The instant of the last record of a JSON Lines file that carries one (the newest of its
    ``keys`` paths), read backwards line by line from the end in bounded chunks: every complete
    line after it must be a JSON object carrying none (a record without an instant). None when
    the file does not end with a newline (a record being written), a line on the way is longer
    than ``LAST_LINE_MAX`` or not JSON, or nothing within ``BACK_MAX`` bytes carries one."""
    import orjson

    try:
        f = open(path, "rb")
    except OSError:
        return None
    with f:
        try:
            end = os.fstat(f.fileno()).st_size
        except OSError:
            return None
        if end == 0:
            return None
        f.seek(end - 1)
        if f.read(1) != b"\n":
            return None  # the last record is being written (or torn): its instant is unknown
        pos, buf, read = end, b"", 0
        while True:
            # buf = the unread lines' bytes [pos, ...), ending with a line's newline (or empty)
            while buf:
                j = buf.rfind(b"\n", 0, len(buf) - 1)
                if j < 0 and pos > 0:
                    break  # the start of this line is not read yet
                line, buf = buf[j + 1:], buf[:j + 1]
                body = line.strip()
                if not body:
                    continue
                try:
                    o = orjson.loads(body)
                except orjson.JSONDecodeError:
                    return None
                if not isinstance(o, dict):
                    return None
                got = [v for v in (_dig(o, k) for k in keys) if isinstance(v, str) and v]
                if got:
                    return max(got)
            if pos == 0 or len(buf) > LAST_LINE_MAX or read >= BACK_MAX:
                return None
            n = min(1 << 20, pos)
            pos -= n
            f.seek(pos)
            buf = f.read(n) + buf
            read += n

