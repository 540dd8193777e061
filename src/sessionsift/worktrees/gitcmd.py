"""git itself answers every git question here: fixed argument vectors, no shell, bytes in and out.

- `git worktree list --porcelain -z` (git >= 2.36) lists a repository's worktrees; `-z` keeps a
  path or lock reason with a newline in one field.
- The main line is what the repository says it is: `refs/remotes/origin/HEAD` (the remote's
  default branch), else `origin/main`, `origin/master`, else a local `main`, `master`; else it is
  unknown and every "merged?" question stays unanswered (held back, never guessed).
- `git status --porcelain=v1 -z` decides clean/dirty (tracked changes and untracked entries;
  ignored entries are counted apart, because `git worktree remove` deletes them).
- `git rev-list --left-right --count MAIN...HEAD` gives commits on the worktree's HEAD that the
  main line lacks (`ahead`) and commits the main line gained since they forked (`behind`).

Every call runs with `GIT_OPTIONAL_LOCKS=0` (status does not rewrite the index), `LC_ALL=C`
and no terminal prompt, and runs no program a repository's own config names (a repository named
on the command line or in a client record, or through `serve`'s /worktrees page, may be hostile):
`core.fsmonitor=false` (status would run the fsmonitor hook), `core.hooksPath=/dev/null`, and
every filter driver the repository configures emptied (`filter.<name>.clean/smudge/process=`:
status runs a clean filter on a file whose stat changed) -- given as GIT_CONFIG_COUNT pairs, so a
driver name holding `=` or a newline cannot break out of its key; no pager, no system config,
no external diff, no credential helper. `safe.directory` is left as git has it: git refuses a
repository another user owns, and that refusal is the scan's answer for it (an error, never a
guess). Not covered: a submodule's own filter drivers (status recurses into submodules; the
fsmonitor and hooks settings reach them, the driver names are read from the top repository only).
The pids of running git children are kept in `RUNNING` so a process snapshot taken meanwhile can
leave our own git processes out.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field

RUNNING: set[int] = set()
_LOCK = threading.Lock()


class GitError(Exception):
    def __init__(self, args: list, rc: int | None, stderr: str):
        self.argv = args
        self.rc = rc
        self.stderr = stderr
        shown = " ".join(os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args[:6])
        super().__init__(f"`git {shown}` failed" + (f" (exit {rc})" if rc is not None else "")
                         + (f": {stderr.strip()[:300]}" if stderr.strip() else ""))


SAFE_CONFIG = (("core.fsmonitor", "false"), ("core.hooksPath", os.devnull), ("core.pager", "cat"),
               ("core.askPass", ""), ("credential.helper", ""), ("diff.external", ""))
"""Config given to every git call, over the repository's own: nothing it names runs."""
DRIVER_KEYS = ("clean", "smudge", "process")


def _env(extra: tuple[tuple[bytes, bytes], ...] = ()) -> dict[bytes, bytes]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF") and not k.startswith(("GIT_CONFIG_KEY_",
                                                                                         "GIT_CONFIG_VALUE_"))}
    env.update({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
                "PAGER": "cat", "GIT_CONFIG_NOSYSTEM": "1"})
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"):
        env.pop(k, None)
    pairs = [(a.encode(), b.encode()) for a, b in SAFE_CONFIG] + list(extra)
    envb = {os.fsencode(a): os.fsencode(b) for a, b in env.items()}
    envb[b"GIT_CONFIG_COUNT"] = str(len(pairs)).encode()
    for i, (key, val) in enumerate(pairs):
        envb[b"GIT_CONFIG_KEY_%d" % i] = key
        envb[b"GIT_CONFIG_VALUE_%d" % i] = val
    return envb


def _drivers_off(cwd: str) -> tuple[tuple[bytes, bytes], ...]:
    """`filter.<name>.clean/smudge/process` emptied for every filter driver the repository's
    config at `cwd` names (reading config runs nothing)."""
    try:
        p = subprocess.run(["git", "-C", os.fsencode(cwd), "config", "-z", "--get-regexp", r"^filter\."],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                           env=_env(), timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    names: list[bytes] = []
    for item in p.stdout.split(b"\0"):
        key = item.split(b"\n", 1)[0]
        if key.count(b".") >= 2:
            name = key[len(b"filter."):key.rindex(b".")]
            if name not in names:
                names.append(name)
    return tuple((b"filter." + n + b"." + k.encode(), b"") for n in names for k in DRIVER_KEYS)


def run(cwd: str, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    """`git -C cwd args...` with bytes output, running nothing the repository's config names
    (module docstring). Raises GitError when check and rc != 0."""
    argv: list[str | bytes] = ["git", "--no-pager", "-C", os.fsencode(cwd)] + [os.fsencode(a) for a in args]
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             env=_env(_drivers_off(cwd)))
    except OSError as exc:
        raise GitError(list(args), None, f"cannot run git: {exc.strerror}") from None
    with _LOCK:
        RUNNING.add(p.pid)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise GitError(list(args), None, f"timed out after {timeout:.0f} s") from None
    finally:
        with _LOCK:
            RUNNING.discard(p.pid)
    cp = subprocess.CompletedProcess(argv, p.returncode, out, err)
    if check and p.returncode != 0:
        raise GitError(list(args), p.returncode, err.decode("utf-8", "replace"))
    return cp


def text(b: bytes) -> str:
    return os.fsdecode(b)


# --- worktree list ---------------------------------------------------------------------------


@dataclass
class ListedWorktree:
    path: str
    head: str | None = None
    branch: str | None = None
    """Full ref (`refs/heads/x`) or None when detached/bare."""
    detached: bool = False
    bare: bool = False
    locked: bool = False
    lock_reason: str | None = None
    """The lock file's text exactly ("" when locked without a reason); None when unlocked."""
    prunable: str | None = None


def list_worktrees(repo: str) -> list[ListedWorktree]:
    """Every worktree git knows for the repository at `repo`, main worktree first."""
    out = run(repo, "worktree", "list", "--porcelain", "-z").stdout
    items: list[ListedWorktree] = []
    cur: ListedWorktree | None = None
    for field_ in out.split(b"\0"):
        if not field_:
            if cur is not None:
                items.append(cur)
                cur = None
            continue
        key, _, val = field_.partition(b" ")
        if key == b"worktree":
            if cur is not None:
                items.append(cur)
            cur = ListedWorktree(text(val))
        elif cur is None:
            continue
        elif key == b"HEAD":
            cur.head = val.decode() or None
        elif key == b"branch":
            cur.branch = text(val)
        elif key == b"detached":
            cur.detached = True
        elif key == b"bare":
            cur.bare = True
        elif key == b"locked":
            cur.locked = True
            cur.lock_reason = text(val)
        elif key == b"prunable":
            cur.prunable = text(val) or "prunable"
    if cur is not None:
        items.append(cur)
    return items


def short_branch(ref: str | None) -> str | None:
    if ref is None:
        return None
    return ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref


def common_dir(path: str) -> str:
    """Absolute common git dir of the repository `path` belongs to."""
    out = run(path, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout
    return text(out.rstrip(b"\n"))


def admin_dirs(common: str) -> dict[str, str]:
    """worktree path -> its admin dir `<common>/worktrees/<id>`, read from each `gitdir` file."""
    out: dict[str, str] = {}
    base = os.path.join(common, "worktrees")
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for n in names:
        d = os.path.join(base, n)
        try:
            with open(os.path.join(d, "gitdir"), "rb") as fh:
                g = text(fh.read().rstrip(b"\n"))
        except OSError:
            continue
        wt = g[:-len("/.git")] if g.endswith("/.git") else os.path.dirname(g)
        out[os.path.normpath(wt)] = d
    return out


# --- the main line ---------------------------------------------------------------------------


@dataclass
class MainLine:
    ref: str | None
    sha: str | None
    source: str
    """How it was chosen: `origin/HEAD`, `origin/main`, ..., or `unknown: <why>`."""

    @property
    def known(self) -> bool:
        return self.sha is not None

    def to_json(self) -> dict:
        return {"ref": self.ref, "sha": self.sha, "source": self.source}


CANDIDATES = ("refs/remotes/origin/main", "refs/remotes/origin/master", "refs/heads/main", "refs/heads/master")


def main_line(repo: str) -> MainLine:
    r = run(repo, "symbolic-ref", "-q", "refs/remotes/origin/HEAD", check=False)
    if r.returncode == 0 and r.stdout.strip():
        ref = text(r.stdout.strip())
        sha = _resolve(repo, ref)
        if sha:
            return MainLine(ref, sha, "origin/HEAD")
    for ref in CANDIDATES:
        sha = _resolve(repo, ref)
        if sha:
            return MainLine(ref, sha, ref.replace("refs/remotes/", "").replace("refs/heads/", "local "))
    return MainLine(None, None, "unknown: no origin/HEAD, origin/main, origin/master, main or master")


def _resolve(repo: str, ref: str) -> str | None:
    r = run(repo, "rev-parse", "--verify", "-q", ref + "^{commit}", check=False)
    return r.stdout.strip().decode() if r.returncode == 0 and r.stdout.strip() else None


@dataclass
class Merge:
    ahead: int | None = None
    """Commits on HEAD not on the main line (unmerged work)."""
    behind: int | None = None
    """Commits on the main line not on HEAD (the shared history moved since they forked)."""
    ahead_unique: int | None = None
    """Of `ahead`, those with no patch-equivalent commit on the main line (cherry-pick test)."""
    error: str | None = None


def merge_state(repo: str, main: MainLine, head: str | None) -> Merge:
    if not main.known:
        return Merge(error=f"main line {main.source}")
    if not head:
        return Merge(error="the worktree has no HEAD commit")
    try:
        out = run(repo, "rev-list", "--left-right", "--count", f"{main.sha}...{head}").stdout.split()
        behind, ahead = int(out[0]), int(out[1])
        uniq = None
        if ahead:
            u = run(repo, "rev-list", "--count", "--cherry-pick", "--right-only", "--no-merges",
                    f"{main.sha}...{head}").stdout
            uniq = int(u.strip())
        else:
            uniq = 0
        return Merge(ahead, behind, uniq)
    except (GitError, ValueError, IndexError) as exc:
        return Merge(error=str(exc))


# --- clean or dirty --------------------------------------------------------------------------

IN_PROGRESS = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG")


@dataclass
class Status:
    tracked: int | None = None
    """Entries with staged or unstaged changes to tracked files (incl. conflicts)."""
    untracked: int | None = None
    """Untracked entries (a wholly untracked directory counts once)."""
    ignored: int | None = None
    """Ignored entries (an ignored directory counts once): `git worktree remove` deletes them."""
    in_progress: list[str] = field(default_factory=list)
    """An operation git has under way in this worktree (rebase, merge, cherry-pick, bisect)."""
    sample: list[str] = field(default_factory=list)
    """The first few changed/untracked entries (`XY path`)."""
    ignored_sample: list[str] = field(default_factory=list)
    """The first few ignored entries: what `git worktree remove` would delete with the worktree."""
    error: str | None = None

    @property
    def dirty(self) -> bool | None:
        if self.error is not None:
            return None
        return bool(self.tracked or self.untracked or self.in_progress)


def status(path: str, admin: str | None) -> Status:
    try:
        out = run(path, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignored=matching",
                  "--ignore-submodules=none").stdout
    except GitError as exc:
        return Status(error=str(exc))
    st = Status(0, 0, 0)
    parts = out.split(b"\0")
    i = 0
    while i < len(parts):
        e = parts[i]
        i += 1
        if len(e) < 3:
            continue
        code, name = e[:2], text(e[3:])
        if code[:1] in (b"R", b"C"):
            i += 1  # the rename/copy source follows as its own field
        if code == b"!!":
            st.ignored += 1
            if len(st.ignored_sample) < 5:
                st.ignored_sample.append(name)
            continue
        if code == b"??":
            st.untracked += 1
        else:
            st.tracked += 1
        if len(st.sample) < 5:
            st.sample.append(f"{code.decode(errors='replace')} {name}")
    if admin:
        st.in_progress = [n for n in IN_PROGRESS if os.path.exists(os.path.join(admin, n))]
    return st


# --- size ------------------------------------------------------------------------------------


@dataclass
class Size:
    bytes: int | None
    files: int | None
    unreadable: int = 0
    note: str | None = None


def disk_usage(path: str, skip: set[str]) -> Size:
    """Bytes allocated on disk under `path` (du semantics: st_blocks, hard links once, symlinks
    not followed, one filesystem), skipping nested worktree roots in `skip`."""
    try:
        top = os.lstat(path)
    except OSError as exc:
        return Size(None, None, note=f"not measured: {exc.strerror}")
    dev = top.st_dev
    seen: set[tuple[int, int]] = set()
    total, files, bad = top.st_blocks * 512, 0, 0
    stack = [path]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            bad += 1
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    bad += 1
                    continue
                if st.st_dev != dev:
                    continue
                if st.st_nlink > 1:
                    k = (st.st_dev, st.st_ino)
                    if k in seen:
                        continue
                    seen.add(k)
                total += st.st_blocks * 512
                if e.is_dir(follow_symlinks=False):
                    if e.path not in skip:
                        stack.append(e.path)
                else:
                    files += 1
    note = f"lower bound: {bad} entries could not be read" if bad else None
    return Size(total, files, bad, note)
