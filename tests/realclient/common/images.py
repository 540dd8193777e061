"""Small real image files for the harnesses' work dirs (a client attaches or views them)."""
from __future__ import annotations

import struct
import zlib


def png(w: int, h: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid w x h PNG of one colour (8-bit RGB), built with zlib: every byte a decoder reads."""
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


RED = png(4, 3, (255, 0, 0))
BLUE = png(2, 2, (0, 0, 255))
