"""Where a dataset lives: a local (or mounted, or synced) folder, or object storage (``s3://``).

Every write is whole or absent: a local file is written under a ``.part`` name, fsynced and
renamed into place (``os.replace``, atomic on one file system); an object is written to a local
temp file first and then put in one upload, so a failed write leaves at most an object whose
name no manifest commits (readers open only files of committed runs: dataset.py). Nothing here
ever overwrites a file it did not write: each machine writes only below its own ``machine=``
partitions and its own manifest.

``s3://bucket/prefix`` goes through pyarrow's S3 file system (credentials and region as the AWS
SDK finds them). A server other than AWS (MinIO, a test's moto server) is named with
``?endpoint_override=http://127.0.0.1:9000`` in the URL or the ``AWS_ENDPOINT_URL`` variable.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from ..errors import UsageError


@dataclass
class Store:
    url: str
    """As the user gave it (a folder path or ``s3://bucket/prefix``)."""
    root: str
    """The dataset's root in the file system's own terms (an absolute path, or ``bucket/prefix``)."""
    fs: object | None = None
    """pyarrow.fs.FileSystem for object storage; None for a local folder (plain os calls)."""

    @property
    def local(self) -> bool:
        return self.fs is None

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    # -- reading ------------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes | None:
        """The object's bytes, None when it does not exist."""
        if self.local:
            try:
                with open(self.path(rel), "rb") as f:
                    return f.read()
            except FileNotFoundError:
                return None
        import pyarrow.fs as pafs

        info = self.fs.get_file_info(self.path(rel))
        if info.type != pafs.FileType.File:
            return None
        with self.fs.open_input_stream(self.path(rel)) as f:
            return f.read()

    def list(self, rel: str, suffix: str = "") -> list[str]:
        """Relative paths of every file below ``rel`` (recursively) ending with ``suffix``, sorted;
        a ``.part`` file (a local write not yet renamed) never."""
        if self.local:
            base = self.path(rel)
            out = []
            for d, _dirs, files in os.walk(base):
                for n in files:
                    if n.endswith(suffix) and not n.endswith(".part"):
                        out.append(os.path.relpath(os.path.join(d, n), self.root))
            return sorted(out)
        import pyarrow.fs as pafs

        sel = pafs.FileSelector(self.path(rel), recursive=True, allow_not_found=True)
        return sorted(i.path[len(self.root) + 1:] for i in self.fs.get_file_info(sel)
                      if i.type == pafs.FileType.File and i.path.endswith(suffix))

    # -- writing ------------------------------------------------------------------------------
    def temp_for(self, rel: str) -> str:
        """A local path to write the file ``rel`` into before :meth:`place` puts it in place: beside
        its destination (a ``.part`` name no reader lists) for a folder, a temp file for objects."""
        if self.local:
            dest = self.path(rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            return f"{os.path.dirname(dest)}/.{os.path.basename(dest)}.{os.getpid()}.part"
        fd, tmp = tempfile.mkstemp(prefix="ssift-sync-", suffix=".part")
        os.close(fd)
        return tmp

    def place(self, tmp: str, rel: str) -> int:
        """Make the finished local file ``tmp`` the file ``rel``, whole (fsync + rename, or one
        upload); returns its size. ``tmp`` is gone afterwards."""
        try:
            if self.local:
                dest = self.path(rel)
                with open(tmp, "rb+") as f:
                    os.fsync(f.fileno())
                    size = os.fstat(f.fileno()).st_size
                os.replace(tmp, dest)
                _fsync_dir(os.path.dirname(dest))
                return size
            size = os.path.getsize(tmp)
            with open(tmp, "rb") as src:
                out = self.fs.open_output_stream(self.path(rel))
                try:
                    while True:
                        b = src.read(8 << 20)
                        if not b:
                            break
                        out.write(b)
                finally:
                    out.close()
            return size
        finally:
            self.discard(tmp)

    @staticmethod
    def discard(tmp: str) -> None:
        try:
            os.unlink(tmp)
        except OSError:
            pass

    def write_atomic(self, rel: str, fill: Callable[[str], None]) -> int:
        """Write the file ``rel`` whole: ``fill(local_path)`` writes it, then :meth:`place`."""
        tmp = self.temp_for(rel)
        try:
            fill(tmp)
        except BaseException:
            self.discard(tmp)
            raise
        return self.place(tmp, rel)

    def write_bytes(self, rel: str, data: bytes) -> int:
        def fill(p: str) -> None:
            with open(p, "wb") as f:
                f.write(data)

        return self.write_atomic(rel, fill)

    def delete(self, rel: str) -> None:
        try:
            if self.local:
                os.unlink(self.path(rel))
            else:
                self.fs.delete_file(self.path(rel))
        except (FileNotFoundError, OSError):
            pass


def _fsync_dir(d: str) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def open_store(url: str) -> Store:
    """A dataset location from what the user typed: ``s3://bucket/prefix[?endpoint_override=...]``
    or a folder (created when absent)."""
    if not url:
        raise UsageError("name a dataset: a folder, or s3://bucket/prefix")
    parts = urlsplit(url)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise UsageError(f"{url}: an s3 URL names a bucket (s3://bucket/prefix)")
        import pyarrow.fs as pafs

        q = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        ep = q.pop("endpoint_override", None) or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        kw: dict = {}
        if ep:
            e = urlsplit(ep)
            kw["endpoint_override"] = e.netloc or ep
            kw["scheme"] = e.scheme or "https"
        if "region" in q:
            kw["region"] = q.pop("region")
        elif os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION"):
            kw["region"] = os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION")
        if q:
            raise UsageError(f"{url}: unknown URL option(s) {', '.join(sorted(q))} (endpoint_override, region)")
        fs = pafs.S3FileSystem(**kw)
        root = (parts.netloc + "/" + parts.path.strip("/")).rstrip("/")
        return Store(url, root, fs)
    if parts.scheme and len(parts.scheme) > 1 and parts.scheme not in ("file",):
        raise UsageError(f"{url}: a dataset is a folder or s3://bucket/prefix (not {parts.scheme}://)")
    path = parts.path if parts.scheme == "file" else url
    root = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(root) and not os.path.isdir(root):
        raise UsageError(f"{url}: not a folder")
    return Store(url, root, None)
