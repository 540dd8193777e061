"""This machine's identity in a dataset, and the local lock and crash marker of a sync.

The machine id is made once (a random UUID) and kept in
``${XDG_STATE_HOME:-~/.local/state}/sessionsift/machine.json`` with the machine's name: the host
name, or the name given with ``--machine NAME`` (kept for later runs). A dataset's manifest for a
name records the id that owns it, so two machines cannot write under one name by mistake.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import UsageError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    d = Path(base) / "sessionsift"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


@dataclass(frozen=True)
class Machine:
    id: str
    name: str
    host: str


def _clean_host(h: str) -> str:
    h = re.sub(r"[^A-Za-z0-9._-]", "-", h.split(".")[0] or h) or "machine"
    return h if NAME_RE.match(h) else ("m-" + h)[:64]


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise UsageError(f"--machine {name!r}: a machine name is 1-64 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit (it names a folder of the dataset)")
    return name


def this_machine(name: str | None = None) -> Machine:
    """The stable identity of this machine; `name` renames it (and is kept)."""
    path = state_dir() / "machine.json"
    data: dict = {}
    try:
        data = orjson.loads(path.read_bytes())
        if not isinstance(data, dict):
            data = {}
    except (OSError, orjson.JSONDecodeError):
        data = {}
    host = socket.gethostname()
    changed = False
    if not isinstance(data.get("id"), str):
        data["id"] = str(uuid.uuid4())
        changed = True
    if name is not None:
        check_name(name)
        if data.get("name") != name:
            data["name"] = name
            changed = True
    if not isinstance(data.get("name"), str) or not NAME_RE.match(data["name"]):
        data["name"] = _clean_host(host)
        changed = True
    if changed:
        tmp = path.with_name(f".machine.{os.getpid()}.json")
        tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        os.replace(tmp, path)
    return Machine(data["id"], data["name"], host)


def _key(dataset_url: str, machine: str) -> str:
    return hashlib.sha256(f"{dataset_url}\0{machine}".encode()).hexdigest()[:16]


class SyncLock:
    """One sync of a machine into a dataset at a time (flock on a local file); raises UsageError
    when another is running."""

    def __init__(self, dataset_url: str, machine: str):
        self.path = state_dir() / f"sync-{_key(dataset_url, machine)}.lock"
        self.fd: int | None = None

    def __enter__(self) -> "SyncLock":
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            raise UsageError("another sync of this machine into this dataset is running",
                             hint="wait for it to finish, then run sync again")
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def pending_path(dataset_url: str, machine: str) -> Path:
    """Where a run names itself before it writes a data file (removed once its manifest is written):
    after a crash, the next run finds its files by the run id and removes them."""
    return state_dir() / f"sync-{_key(dataset_url, machine)}.pending"
