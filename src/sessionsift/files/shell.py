"""Lexical analysis of one Bash command: which files it mutates, which it reads cleanly.

Parsed with tree-sitter-bash (a real shell grammar), never with regexes over the text.
Every mutation operand carries its resolution class (BASH-023):

- ``absolute``   - typed absolute in the command (``/x``, ``C:\\x``, ``\\\\server\\x``: BASH-021);
- ``cwd-joined`` - relative, joined to the cwd of the TOOL_USE record (BASH-007: the result
                   record may already carry the post-command cwd);
- ``cd-tracked`` - relative, joined to the directory an earlier ``cd`` in the same command moved to;
- ``unresolved`` - a ``$VAR``, ``~``, command substitution or glob: kept verbatim, never guessed.

Commands that mutate files they do not name (BASH-020) yield class markers instead of paths:
``fmt:<tool>``, ``pkg:<tool>``, ``extract:<tool>``, ``interp:<tool>``, ``git:<sub>``, ``build:<tool>``,
``patch:<tool>``.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from dataclasses import dataclass, field

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter_bash as tsb
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tsb.language()))
    return _PARSER


@dataclass
class Operand:
    raw: str                      # the operand as written (verbatim)
    path: str | None              # resolved absolute path; None when unresolved
    resolution: str               # absolute | cwd-joined | cd-tracked | unresolved
    op: str                       # write | append | delete | touch | mkdir | edit-in-place | copy-dest | move-dest
                                  # | move-src | link | archive | extract-dest | read
    verb: str                     # command name or redirect operator
    heredoc: str | None = None    # literal body of a quoted heredoc consumed by cat/tee (write anchor)


@dataclass
class ReadAnchor:
    path: str | None
    resolution: str
    raw: str
    kind: str                     # cat | head | sed-range
    start: int = 1                # first line delivered (1-based)
    count: int | None = None      # lines requested (head -n N / sed A,B); None = to the end


@dataclass
class ShellAnalysis:
    command: str
    mutations: list[Operand] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    read: ReadAnchor | None = None
    parse_error: bool = False


_GLOB = re.compile(r"(?<!\\)[*?\[]")
_WRAPPERS = {"sudo", "command", "builtin", "exec", "nohup", "time", "nice", "env", "stdbuf", "timeout", "xargs"}
_FMT = {
    "black": "black", "isort": "isort", "rustfmt": "rustfmt", "gofmt": "gofmt", "autopep8": "autopep8",
    "yapf": "yapf", "swiftformat": "swiftformat", "phpcbf": "phpcbf", "shfmt": "shfmt",
}
_PKG = {"npm", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "apt", "apt-get", "brew", "bundle", "gem", "composer",
        "bun", "conda"}
_PKG_SUBS = {"install", "i", "add", "ci", "remove", "rm", "uninstall", "update", "upgrade", "sync", "lock", "init"}
_INTERP = {"python", "python3", "python2", "node", "ruby", "perl", "php", "bash", "sh", "zsh", "deno", "bun", "lua",
           "Rscript", "osascript", "pwsh"}
_GIT_MUT = {"checkout", "reset", "restore", "stash", "merge", "rebase", "pull", "apply", "am", "cherry-pick", "revert",
            "switch", "clean", "mv", "rm", "init", "clone", "commit", "worktree", "submodule"}
_BUILD = {"make", "cmake", "ninja", "cargo", "go", "gradle", "mvn", "tsc", "webpack", "vite", "esbuild"}
_OUTFLAG_CMDS = {"gcc", "g++", "cc", "clang", "clang++", "curl", "sort", "pandoc", "rustc", "go", "javac", "nvcc",
                 "openssl", "tsc", "uglifyjs", "convert", "ffmpeg"}


def is_absolute(p: str) -> bool:
    return p.startswith("/") or bool(re.match(r"^[A-Za-z]:[\\/]", p)) or p.startswith("\\\\")


def _join(base: str, rel: str) -> str:
    if re.match(r"^[A-Za-z]:[\\/]", base) or base.startswith("\\\\"):
        return ntpath.normpath(ntpath.join(base, rel))
    return posixpath.normpath(posixpath.join(base, rel))


class _Cwd:
    def __init__(self, cwd: str | None):
        self.dir = cwd
        self.moved = False      # a cd changed it
        self.lost = cwd is None  # a cd we could not follow

    def copy(self) -> "_Cwd":
        c = _Cwd(self.dir)
        c.moved, c.lost = self.moved, self.lost
        return c


def _literal(node) -> str | None:
    """The literal value of a word-ish node, or None when it depends on expansion."""
    t = node.type
    txt = node.text.decode("utf-8", "surrogateescape")
    if t == "word":
        if _GLOB.search(txt) or txt.startswith("~"):
            return None
        return re.sub(r"\\(.)", r"\1", txt)
    if t == "raw_string":
        return txt[1:-1]
    if t == "string":
        parts = []
        for c in node.children:
            if c.type == '"':
                continue
            if c.type == "string_content":
                parts.append(re.sub(r'\\([$`"\\\n])', r"\1", c.text.decode("utf-8", "surrogateescape")))
            else:
                return None
        return "".join(parts)
    if t == "ansi_c_string":
        return None
    if t == "concatenation":
        parts = []
        for c in node.children:
            v = _literal(c)
            if v is None:
                return None
            parts.append(v)
        return "".join(parts)
    if t == "number":
        return txt
    return None


def _operand(node_or_text, cwd: _Cwd, op: str, verb: str) -> Operand:
    if isinstance(node_or_text, str):
        raw, lit = node_or_text, node_or_text
    else:
        raw = node_or_text.text.decode("utf-8", "surrogateescape")
        lit = _literal(node_or_text)
    if lit is None:
        return Operand(raw, None, "unresolved", op, verb)
    if is_absolute(lit):
        return Operand(raw, _join(lit, "."), "absolute", op, verb)
    if cwd.lost or cwd.dir is None:
        return Operand(raw, None, "unresolved", op, verb)
    return Operand(raw, _join(cwd.dir, lit), "cd-tracked" if cwd.moved else "cwd-joined", op, verb)


def _args(cmd_node) -> tuple[str | None, list]:
    """Command name and argument nodes (wrappers like sudo/env stripped)."""
    name = None
    args = []
    for c in cmd_node.children:
        if c.type == "command_name":
            name = _literal(c.children[0]) if c.children else None
            if name is None:
                name = c.text.decode("utf-8", "surrogateescape")
        elif c.type in ("variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect"):
            continue
        elif name is not None:
            args.append(c)
    while name in _WRAPPERS and args:
        # env A=B cmd / sudo -u x cmd / timeout 5 cmd
        rest = list(args)
        while rest:
            v = _literal(rest[0]) or ""
            if v.startswith("-") or "=" in v or (name == "timeout" and re.match(r"^\d", v)):
                rest.pop(0)
                continue
            break
        if not rest:
            break
        name = _literal(rest[0]) or rest[0].text.decode("utf-8", "surrogateescape")
        args = rest[1:]
    if name:
        name = posixpath.basename(name)
    return name, args


def _vals(args) -> list[tuple[str | None, object]]:
    return [(_literal(a), a) for a in args]


def _positional(vals, takes_value: set[str] = frozenset()) -> list:
    out = []
    skip = False
    dashdash = False
    for v, node in vals:
        if skip:
            skip = False
            continue
        if not dashdash and v is not None and v.startswith("-") and v != "-":
            if v == "--":
                dashdash = True
            elif v in takes_value:
                skip = True
            continue
        out.append(node)
    return out


def analyze(command: str, cwd: str | None) -> ShellAnalysis:
    """Parse one Bash command run from ``cwd`` (the tool_use record's cwd)."""
    res = ShellAnalysis(command)
    try:
        tree = _parser().parse(command.encode("utf-8", "surrogateescape"))
    except Exception:
        res.parse_error = True
        return res
    root = tree.root_node
    res.parse_error = root.has_error
    state = _Cwd(cwd)
    _walk(root, state, res)
    res.read = _read_anchor(root, cwd)
    seen = []
    for m in res.markers:
        if m not in seen:
            seen.append(m)
    res.markers = seen
    return res


_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_HEREDOC_PARTS = ("heredoc_start", "heredoc_body", "heredoc_end")


def _redirects_of(node) -> tuple[list, list]:
    """The redirects a redirected_statement carries, wherever the grammar puts them, and the
    statements the grammar nests inside a heredoc redirect. tree-sitter-bash parses
    `cat <<'EOF' > f && cat f` with `> f` and `&& cat f` INSIDE the heredoc_redirect node (the
    body follows on later lines); `cat <<'EOF' | tee f` puts the pipeline there too."""
    reds, conts = [], []
    for c in node.children:
        if c.type in ("file_redirect", "herestring_redirect"):
            reds.append(c)
        elif c.type == "heredoc_redirect":
            reds.append(c)
            for k in c.children:
                if k.type in ("file_redirect", "herestring_redirect"):
                    reds.append(k)
                elif k.is_named and k.type not in _HEREDOC_PARTS and k.type != "file_descriptor":
                    conts.append(k)
    return reds, conts


def _walk(node, cwd: _Cwd, res: ShellAnalysis, redirects: list | None = None) -> None:
    t = node.type
    if t == "redirected_statement":
        body = node.child_by_field_name("body")
        reds, conts = _redirects_of(node)
        if body is None:
            for r in reds:
                _redirect(r, cwd, res, None)
        else:
            # tree-sitter attaches `a && b > f` redirects to the whole list; bash applies them to
            # the last command only, so walk the body first (its cds apply) and then the redirects.
            _walk(body, cwd, res, reds + list(redirects or []))
        hd = _heredoc_body(reds)
        for k in conts:  # `&& next`, `| tee f` written inside the heredoc redirect
            if k.type == "pipeline" and hd is not None and body is not None and _args(body)[0] == "cat":
                _walk_pipe_from_heredoc(k, cwd, res, hd)
            else:
                _walk(k, cwd, res)
        return
    if t == "command":
        _command(node, cwd, res, redirects or [])
        return
    if t == "subshell":
        inner = cwd.copy()
        for c in node.children:
            _walk(c, inner, res)
        for r in redirects or []:
            _redirect(r, cwd, res, None)
        return
    if t in ("list", "pipeline"):
        kids = [c for c in node.children if c.is_named]
        for i, c in enumerate(kids):
            _walk(c, cwd, res, redirects if i == len(kids) - 1 else None)
        return
    if t in ("function_definition",):
        return
    for c in node.children:
        if c.is_named:
            _walk(c, cwd, res)
    for r in redirects or []:
        _redirect(r, cwd, res, None)


def _walk_pipe_from_heredoc(pipe, cwd: _Cwd, res: ShellAnalysis, heredoc: str) -> None:
    """`cat <<'EOF' | tee f`: the first command of the pipeline reads the heredoc through cat."""
    kids = [c for c in pipe.children if c.is_named]
    for i, c in enumerate(kids):
        if i == 0 and c.type == "command" and _args(c)[0] == "tee":
            before = len(res.mutations)
            _walk(c, cwd, res)
            for o in res.mutations[before:]:
                if o.verb == "tee" and o.op == "write":
                    o.heredoc = heredoc
        else:
            _walk(c, cwd, res)


def _redirect(r, cwd: _Cwd, res: ShellAnalysis, cmd_name: str | None, heredoc: str | None = None) -> None:
    if r.type != "file_redirect":
        return
    opnode = None
    dest = r.child_by_field_name("destination")
    for c in r.children:
        if c.type in (">", ">>", ">|", "&>", "&>>", "<", ">&", "<&", "<>"):
            opnode = c.type
        elif c.type == "file_descriptor" or dest is not None:
            continue
        elif c.is_named:
            dest = c
    if opnode is None or dest is None or opnode in ("<", "<&"):
        return
    v = _literal(dest)
    if v is not None and (v.startswith("/dev/") or (opnode == ">&" and (v.isdigit() or v == "-"))):
        return
    op = "append" if opnode in (">>", "&>>") else "write"
    o = _operand(dest, cwd, op, opnode)
    if heredoc is not None and cmd_name == "cat":
        o.heredoc = heredoc
    res.mutations.append(o)


def _heredoc_body(reds) -> str | None:
    for r in reds:
        if r.type != "heredoc_redirect":
            continue
        start = next((c for c in r.children if c.type == "heredoc_start"), None)
        body = next((c for c in r.children if c.type == "heredoc_body"), None)
        if start is None:
            return None
        s = start.text.decode("utf-8", "surrogateescape")
        if not (s.startswith("'") or s.startswith('"') or s.startswith("\\")):
            return None  # unquoted: the body is subject to expansion
        text = body.text.decode("utf-8", "surrogateescape") if body is not None else ""
        if any(c.type == "<<-" for c in r.children):
            text = "".join(l.lstrip("\t") for l in text.splitlines(keepends=True))
        return text
    return None


def _command(node, cwd: _Cwd, res: ShellAnalysis, outer_reds: list) -> None:
    name, args = _args(node)
    own_reds = [c for c in node.children if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")]
    reds = own_reds + list(outer_reds)
    hd = _heredoc_body(reds)
    for c in args:  # command substitutions inside arguments
        if c.type in ("command_substitution", "process_substitution"):
            for k in c.children:
                if k.is_named:
                    _walk(k, cwd.copy(), res)
    for r in reds:
        _redirect(r, cwd, res, name, hd)
    if name is None:
        return
    vals = _vals(args)
    if name in ("cd", "pushd", "chdir"):
        pos = _positional(vals)
        if not pos:
            cwd.lost, cwd.moved = True, True
            return
        v = _literal(pos[0])
        if v is None or v == "-" or v.startswith("~"):
            cwd.lost, cwd.moved = True, True
        elif is_absolute(v):
            cwd.dir, cwd.moved, cwd.lost = _join(v, "."), True, False
        elif not cwd.lost and cwd.dir is not None:
            cwd.dir, cwd.moved = _join(cwd.dir, v), True
        else:
            cwd.lost, cwd.moved = True, True
        return
    if name == "popd":
        cwd.lost, cwd.moved = True, True
        return
    add = res.mutations.append
    if name == "tee":
        app = any((v or "").startswith("-") and "a" in (v or "") for v, _ in vals if (v or "").startswith("-")) or \
            any(v == "--append" for v, _ in vals)
        for p in _positional(vals):
            o = _operand(p, cwd, "append" if app else "write", "tee")
            if hd is not None and not app:
                o.heredoc = hd
            add(o)
        return
    if name in ("rm", "rmdir", "unlink", "shred"):
        for p in _positional(vals):
            add(_operand(p, cwd, "delete", name))
        return
    if name == "touch":
        for p in _positional(vals, {"-d", "-t", "-r"}):
            add(_operand(p, cwd, "touch", name))
        return
    if name == "mkdir":
        for p in _positional(vals, {"-m"}):
            add(_operand(p, cwd, "mkdir", name))
        return
    if name in ("cp", "mv", "install", "rsync", "ln", "scp"):
        target_dir = None
        for i, (v, n) in enumerate(vals):
            if v in ("-t", "--target-directory") and i + 1 < len(vals):
                target_dir = vals[i + 1][1]
            elif v and v.startswith("--target-directory="):
                target_dir = v.split("=", 1)[1]
        takes = {"-t", "--target-directory", "-m", "-o", "-g", "-S", "--suffix", "-e", "--exclude", "--include"}
        pos = _positional(vals, takes)
        op = {"cp": "copy-dest", "mv": "move-dest", "install": "copy-dest", "rsync": "copy-dest",
              "ln": "link", "scp": "copy-dest"}[name]
        if target_dir is not None:
            add(_operand(target_dir, cwd, op, name))
            srcs = pos
        elif len(pos) >= 2 or (name == "ln" and pos):
            add(_operand(pos[-1], cwd, op, name))
            srcs = pos[:-1]
        else:
            srcs = []
        if name == "mv":
            for s in srcs:
                add(_operand(s, cwd, "move-src", name))
        return
    if name in ("sed", "perl"):
        inplace = any(v and (v == "--in-place" or v.startswith("--in-place=") or
                             (v.startswith("-") and not v.startswith("--") and "i" in v[1:]))
                      for v, _ in vals)
        if not inplace:
            if name == "perl":
                res.markers.append("interp:perl")
            return
        script_given = any(v in ("-e", "--expression", "-f", "--file") or (v or "").startswith("--expression=")
                           for v, _ in vals) or name == "perl"
        pos = _positional(vals, {"-e", "--expression", "-f", "--file", "-l"})
        files = pos if script_given else pos[1:]
        if name == "perl":
            files = [p for p in pos]
        for p in files:
            add(_operand(p, cwd, "edit-in-place", name))
        return
    if name == "dd":
        for v, n in vals:
            if v and v.startswith("of="):
                add(_operand(v[3:], cwd, "write", "dd"))
        return
    if name in ("tar", "bsdtar"):
        flags = ""
        archive = None
        cdir = None
        for i, (v, n) in enumerate(vals):
            if v is None:
                continue
            if i == 0 and not v.startswith("-") and re.fullmatch(r"[A-Za-z]+", v):
                flags += v
                if "f" in v and i + 1 < len(vals):
                    archive = vals[i + 1][1]
            elif v.startswith("--"):
                if v in ("--extract", "--get"):
                    flags += "x"
                elif v == "--create":
                    flags += "c"
                elif v.startswith("--file="):
                    archive = v.split("=", 1)[1]
                elif v.startswith("--directory="):
                    cdir = v.split("=", 1)[1]
            elif v.startswith("-") and len(v) > 1:
                flags += v[1:]
                if v[-1] == "f" and i + 1 < len(vals):
                    archive = vals[i + 1][1]
                if v == "-C" and i + 1 < len(vals):
                    cdir = vals[i + 1][1]
        if "x" in flags:
            res.markers.append("extract:tar")
            if cdir is not None:
                add(_operand(cdir, cwd, "extract-dest", "tar"))
        if "c" in flags and archive is not None:
            add(_operand(archive, cwd, "archive", "tar"))
        return
    if name in ("unzip", "7z", "gunzip", "bunzip2", "unxz", "cpio"):
        res.markers.append(f"extract:{name}")
        return
    if name == "patch":
        res.markers.append("patch:patch")
        return
    if name == "git":
        pos = _positional(vals, {"-C", "-c", "--git-dir", "--work-tree"})
        sub = _literal(pos[0]) if pos else None
        if sub in _GIT_MUT:
            res.markers.append(f"git:{sub}")
        return
    if name in _FMT:
        files = [p for p in _positional(vals)]
        if name == "gofmt" and not any(v == "-w" for v, _ in vals):
            return
        res.markers.append(f"fmt:{_FMT[name]}")
        return
    if name in ("prettier", "eslint", "clang-format", "ruff", "dprint", "terraform"):
        sub = _literal(args[0]) if args else None
        if name == "ruff" and sub == "format" or name == "dprint" and sub == "fmt" or name == "terraform" and sub == "fmt":
            res.markers.append(f"fmt:{name}")
        elif name == "ruff" and any(v == "--fix" for v, _ in vals):
            res.markers.append("fmt:ruff")
        elif name in ("prettier", "eslint") and any(v in ("--write", "-w", "--fix") for v, _ in vals):
            res.markers.append(f"fmt:{name}")
        elif name == "clang-format" and any(v == "-i" for v, _ in vals):
            for p in _positional(vals, {"--style", "-style"}):
                add(_operand(p, cwd, "edit-in-place", name))
        return
    if name == "cargo":
        sub = _literal(args[0]) if args else None
        if sub in ("fmt", "fix"):
            res.markers.append(f"fmt:cargo")
        elif sub in ("add", "remove", "update", "install"):
            res.markers.append("pkg:cargo")
        elif sub in ("build", "run", "test"):
            res.markers.append("build:cargo")
        return
    if name == "go":
        sub = _literal(args[0]) if args else None
        if sub == "fmt":
            res.markers.append("fmt:go")
        elif sub in ("get", "mod"):
            res.markers.append("pkg:go")
        elif sub in ("build",):
            _outflags(vals, cwd, res, name)
            res.markers.append("build:go")
        return
    if name in _PKG:
        sub = _literal(args[0]) if args else None
        if name in ("pip", "pip3") or sub in _PKG_SUBS or (name in ("npm", "pnpm", "yarn", "bun") and sub in ("run", "exec", "x")):
            if sub in ("run", "exec", "x"):
                sc = _literal(args[1]) if len(args) > 1 else None
                if sc and re.search(r"format|fmt|lint:fix|fix", sc):
                    res.markers.append(f"fmt:{name}")
                else:
                    res.markers.append(f"build:{name}")
            else:
                res.markers.append(f"pkg:{name}")
        return
    if name in _INTERP or re.fullmatch(r"python3\.\d+", name or ""):
        res.markers.append(f"interp:{re.sub(r'[0-9.]+$', '', name) or name}")
        return
    if name in _BUILD:
        res.markers.append(f"build:{name}")
        _outflags(vals, cwd, res, name)
        return
    if name in _OUTFLAG_CMDS or name == "wget":
        _outflags(vals, cwd, res, name)
        return


def _outflags(vals, cwd: _Cwd, res: ShellAnalysis, name: str) -> None:
    flags = {"-o", "--output", "--out", "--outfile", "-O" if name == "wget" else "--output-document"}
    for i, (v, n) in enumerate(vals):
        if v is None:
            continue
        if v in flags and i + 1 < len(vals):
            res.mutations.append(_operand(vals[i + 1][1], cwd, "write", f"{name} {v}"))
        else:
            m = re.match(r"^(--output|--out|--outfile|--output-document)=(.+)$", v)
            if m:
                res.mutations.append(_operand(m.group(2), cwd, "write", f"{name} {m.group(1)}"))
            elif name in ("gcc", "g++", "cc", "clang", "clang++") and v.startswith("-o") and len(v) > 2:
                res.mutations.append(_operand(v[2:], cwd, "write", f"{name} -o"))


_SILENT = frozenset({"cd", "mkdir", "touch", "cp", "mv", "rm", "rmdir", "chmod", "chown", "ln", "truncate",
                     "true", ":", "export", "unset", "install"})
"""Commands that print nothing on stdout when they succeed (so a `cat F` after them prints the
whole stdout of the command)."""


def _steps(node, outer: list | None = None) -> list[tuple[object, list]] | None:
    """The simple commands of a command line in execution order, each with the redirects that
    apply to it, or None when it holds anything else (a pipeline, a subshell, a loop...)."""
    t = node.type
    if t in ("program", "list"):
        kids = [c for c in node.children if c.is_named and c.type != "comment"]
        out: list = []
        for i, c in enumerate(kids):
            st = _steps(c, outer if i == len(kids) - 1 else None)
            if st is None:
                return None
            out += st
        return out
    if t == "redirected_statement":
        body = node.child_by_field_name("body")
        reds, conts = _redirects_of(node)
        if body is None:
            return None
        first = _steps(body, reds + list(outer or []))
        if first is None:
            return None
        for k in conts:
            st = _steps(k)
            if st is None:
                return None
            first += st
        return first
    if t == "command":
        return [(node, [c for c in node.children if c.type in _REDIRECTS] + list(outer or []))]
    return None


def _stdout_to_file(reds: list) -> bool:
    for r in reds:
        if r.type != "file_redirect":
            continue
        ops = [c.type for c in r.children if not c.is_named]
        fd = next((c.text for c in r.children if c.type == "file_descriptor"), None)
        if any(o in (">", ">>", ">|", "&>", "&>>") for o in ops) and fd in (None, b"1"):
            return True
    return False


def _silent(cmd, reds: list) -> bool:
    """True when the step prints nothing on stdout (its stdout goes to a file, or it is a command
    that is silent on success: cd, mkdir, cp, `sed -i`, ...)."""
    if _stdout_to_file(reds):
        return True
    name, args = _args(cmd)
    if name in _SILENT:
        return True
    if name in ("sed", "perl"):
        return any((v or "").startswith("-") and not (v or "").startswith("--") and "i" in (v or "")[1:]
                   or (v or "").startswith("--in-place") for v, _ in _vals(args))
    return False


def _read_anchor(root, cwd: str | None) -> ReadAnchor | None:
    """A clean read of one file that is the whole stdout of the command: `cat F`, `head -n N F` or
    `sed -n 'A,Bp' F` as the LAST step, after steps that print nothing on stdout (`cd X`, `sed -i
    ... F`, `echo x >> F`, `cat <<'EOF' > F` ...): a full view of the file AFTER the command's
    changes (the replay applies the command's writes first)."""
    steps = _steps(root)
    if not steps:
        return None
    state = _Cwd(cwd)
    for cmd, reds in steps[:-1]:
        name, _ = _args(cmd)
        if name == "cd":
            _command(cmd, state, ShellAnalysis(""), [])
            continue
        if not _silent(cmd, reds):
            return None
    last, reds = steps[-1]
    if reds:
        return None
    name, args = _args(last)
    vals = _vals(args)
    if any(v is None for v, _ in vals):
        return None
    sv = [v for v, _ in vals]
    if name == "cat" and len(sv) == 1 and not sv[0].startswith("-"):
        o = _operand(args[0], state, "read", "cat")
        return ReadAnchor(o.path, o.resolution, o.raw, "cat") if o.path else None
    if name == "head":
        n = None
        rest = list(zip(sv, args))
        if len(rest) == 3 and rest[0][0] == "-n" and rest[1][0].isdigit():
            n, f = int(rest[1][0]), rest[2][1]
        elif len(rest) == 2 and re.fullmatch(r"-n?\d+", rest[0][0]):
            n, f = int(rest[0][0].lstrip("-n")), rest[1][1]
        else:
            return None
        o = _operand(f, state, "read", "head")
        return ReadAnchor(o.path, o.resolution, o.raw, "head", 1, n) if o.path else None
    if name == "sed" and len(sv) == 3 and sv[0] == "-n":
        m = re.fullmatch(r"(\d+)(?:,(\d+))?p", sv[1])
        if not m:
            return None
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        if b < a or a < 1:
            return None
        o = _operand(args[2], state, "read", "sed")
        return ReadAnchor(o.path, o.resolution, o.raw, "sed-range", a, b - a + 1) if o.path else None
    return None


# -- the grammar as a value a provider's file events are given ----------------------------------


def _dist(name: str) -> str:
    """The installed version of distribution `name` (its dist-info directory's name), or "?"."""
    import os
    import sys

    pre = name.replace("-", "_") + "-"
    for d in sys.path:
        try:
            for n in os.listdir(d or "."):
                if n.startswith(pre) and n.endswith((".dist-info", ".egg-info")):
                    return n
        except OSError:
            continue
    return "?"


class Grammar:
    """This module's analysis as one value (``providers.fileevents.FileQuery.shell``): a provider
    that reads shell calls for the file events capability is given it and never imports this
    package (the shell grammar is no agent's knowledge; the providers layer sits below the
    questions). ``analyze`` is memoised per (command, cwd) in a process: agents repeat commands and
    no caller changes an analysis. ``rules`` names what derives an analysis (this module's source
    and tree-sitter's versions), so a cache of analyses (Claude Code's file facts in the index) is
    kept under it; ``encode``/``decode`` turn an analysis into plain tuples and back (heredoc bodies
    kept as their presence only)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str | None], ShellAnalysis] = {}
        self._rules: str | None = None

    def analyze(self, command: str, cwd: str | None) -> ShellAnalysis:
        k = (command, cwd)
        r = self._memo.get(k)
        if r is None:
            if len(self._memo) >= 8192:
                self._memo.clear()
            r = self._memo[k] = analyze(command, cwd)
        return r

    def rules(self) -> str:
        if self._rules is None:
            import hashlib

            h = hashlib.blake2b(digest_size=12)
            try:
                with open(__file__, "rb") as f:
                    h.update(f.read())
            except OSError:
                from .. import __version__

                h.update(f"unreadable {__file__} {__version__}".encode())
            for d in ("tree_sitter", "tree_sitter_bash"):
                h.update(_dist(d).encode())
            self._rules = "bash.1:" + h.hexdigest()
        return self._rules

    @staticmethod
    def encode(sh: ShellAnalysis) -> tuple:
        ra = sh.read
        return (sh.parse_error, sh.command[:200] if sh.parse_error else None, tuple(sh.markers),
                tuple((m.raw, m.path, m.resolution, m.op, m.verb, m.heredoc is not None) for m in sh.mutations),
                None if ra is None else (ra.path, ra.resolution, ra.raw, ra.kind, ra.start, ra.count))

    @staticmethod
    def decode(o) -> ShellAnalysis:
        """An analysis from ``encode``'s tuple: its paths, verbs, markers and read anchor; a heredoc
        body is "" where one was (None elsewhere) and the command only its first 200 characters
        where it could not be parsed ("" otherwise)."""
        perr, cmd, markers, muts, ra = o
        return ShellAnalysis(cmd or "", [Operand(raw, path, res, op, verb, "" if hd else None)
                                         for raw, path, res, op, verb, hd in muts], list(markers),
                             None if ra is None else ReadAnchor(*ra), perr)


GRAMMAR = Grammar()
"""The one grammar of a process (its memo shared by every question)."""
