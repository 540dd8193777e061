"""Run a command on a real pseudo-terminal of a given size and return what it showed: the way a
person sees it (the program's isatty() is true, its terminal size is the window's)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

CLI = [sys.executable, "-m", "sessionsift"]


@dataclass
class Shown:
    code: int
    raw: bytes
    """Every byte the terminal received (stdout and stderr share it, as on a real terminal)."""

    @property
    def text(self) -> str:
        """Decoded strictly: a character cut in the middle is an error here, not a `�`."""
        return self.raw.decode("utf-8").replace("\r\n", "\n")

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def run_on_terminal(args: list[str], cols: int = 80, rows: int = 40, env: dict | None = None,
                    stdin: bytes | None = None, cwd: str | Path | None = None, timeout: float = 120.0) -> Shown:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    e = dict(os.environ if env is None else env)
    e.pop("COLUMNS", None)
    e.pop("LINES", None)
    e.setdefault("TERM", "xterm-256color")
    p = subprocess.Popen(args, stdin=subprocess.PIPE if stdin is not None else slave, stdout=slave, stderr=slave,
                         env=e, cwd=cwd, start_new_session=True)
    os.close(slave)
    if stdin is not None:
        p.stdin.write(stdin)
        p.stdin.close()
    out = bytearray()
    try:
        while True:
            r, _, _ = select.select([master], [], [], timeout)
            if not r:
                p.kill()
                raise TimeoutError(f"{args}: no output for {timeout} s")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    return Shown(p.wait(), bytes(out))
