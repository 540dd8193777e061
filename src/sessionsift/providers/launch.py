"""What program a process's command line runs, however it was launched: a native binary, a script
under an interpreter (``node …/cli.js``, a local ``node_modules/.bin/<client>`` -- a symlink whose
``#!/usr/bin/env node`` the kernel turns into ``node …/.bin/<client>``), a package runner (``npx
<package>``, ``npm exec``, ``pnpm dlx``, ``bunx``, ``bun x``), a shell running a script, or a
wrapper that stays alive as the client's parent (``timeout``, ``time``, ``nice``, ``sudo``,
``env`` ...). Agent-neutral: a provider says its names (``Provider.process_names``,
``client_packages``, ``client_path_parts``) and :func:`matches` does the rest.

A shell running ``-c STRING`` is not unwrapped: the process that runs the client is a child of its
own, recognised by its own command line (and ``sh -c 'one command'`` execs it in place).
"""

from __future__ import annotations

import os

INTERPRETERS = frozenset({"node", "nodejs", "bun", "deno", "tsx", "ts-node"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash"})
RUNNERS = frozenset({"npx", "bunx", "pnpx", "npx-cli.js"})
MANAGERS = frozenset({"npm", "pnpm", "yarn", "npm-cli.js", "pnpm.cjs", "yarn.js"})
MANAGER_EXEC = frozenset({"exec", "x", "dlx"})
WRAPPERS = {
    # wrapper -> its options that take a value (a value given as the next argument)
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "--class", "-n", "--classdata", "-p", "-P", "-u"},
    "timeout": {"-k", "--kill-after", "-s", "--signal"},
    "nohup": set(), "setsid": set(), "stdbuf": {"-i", "-o", "-e"}, "time": {"-f", "--format", "-o", "--output"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "-t"},
    "doas": {"-u", "-C"}, "chrt": set(), "taskset": set(), "caffeinate": {"-t", "-w"}, "unbuffer": set(),
    "script": {"-c", "--command", "-E", "-O", "-I", "-T", "-t", "-m"}, "strace": {"-o", "-e", "-p", "-s"},
    "ltrace": {"-o", "-e", "-p", "-s"}, "firejail": set(), "systemd-run": {"-p", "--property", "-u", "--unit"},
    "xvfb-run": {"-n", "-s", "-f", "-e"}, "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
}
NODE_VALUE_FLAGS = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                              "--inspect-port", "--title", "--env-file", "--max-old-space-size", "--stack-size",
                              "--disable-warning", "--watch-path", "--input-type"})
NODE_NO_SCRIPT = frozenset({"-e", "--eval", "-p", "--print", "-v", "--version", "-h", "--help", "-i",
                            "--interactive", "-c", "--check"})


def _base(a: str) -> str:
    return os.path.basename(a.replace("\\", "/"))


def package_name(spec: str) -> str:
    """``@scope/name@1.2`` -> ``@scope/name``; ``name@latest`` -> ``name``."""
    if spec.startswith("@"):
        i = spec.find("@", 1)
        return spec if i < 0 else spec[:i]
    return spec.split("@", 1)[0]


def programs(argv: list[str], _depth: int = 0) -> list[str]:
    """Every program a command line runs, outermost first: argv[0], a wrapper's command, an
    interpreter's script, a package runner's package (as its name, ``@scope/name``)."""
    if not argv or _depth > 6:
        return []
    out = [argv[0]]
    b = _base(argv[0])
    rest = list(argv[1:])
    if b.startswith("python") or b in ("exec",):
        return out
    if b in WRAPPERS:
        takes = WRAPPERS[b]
        i = 0
        while i < len(rest):
            a = rest[i]
            if b == "env" and "=" in a and not a.startswith("-"):
                i += 1
                continue
            if b in ("timeout",) and not a.startswith("-"):
                i += 1  # the duration
                break
            if b in ("chrt", "taskset") and not a.startswith("-"):
                i += 1  # the priority / mask
                break
            if a == "--":
                i += 1
                break
            if a.startswith("-"):
                i += 2 if a in takes else 1
                continue
            break
        return out + programs(rest[i:], _depth + 1)
    if b in INTERPRETERS:
        i = 0
        if b in ("bun", "deno") and rest and rest[0] in ("run", "x", "exec"):
            if b == "bun" and rest[0] == "x":
                return out + _package(rest[1:])
            i = 1
        while i < len(rest):
            a = rest[i]
            if a in NODE_NO_SCRIPT:
                return out
            if a == "--":
                i += 1
                break
            if a.startswith("-"):
                i += 2 if a in NODE_VALUE_FLAGS else 1
                continue
            if a.isdigit():  # a value of a flag given apart (`--max-old-space-size 4096`)
                i += 1
                continue
            break
        if i >= len(rest):
            return out
        script = rest[i]
        out.append(script)
        sb = _base(script)
        if sb in RUNNERS:
            return out + _package(rest[i + 1:])
        if sb in MANAGERS:
            return out + _manager(rest[i + 1:])
        return out
    if b in SHELLS:
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("-c",) or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]):
                return out  # `sh -c STRING`: the client is a process of its own
            if a == "--":
                i += 1
                break
            if a.startswith("-") or a.startswith("+"):
                i += 1 + (a in ("-o", "+o", "-O", "+O"))
                continue
            break
        return out + ([rest[i]] if i < len(rest) else [])
    if b in RUNNERS:
        return out + _package(rest)
    if b in MANAGERS:
        return out + _manager(rest)
    return out


def _package(args: list[str]) -> list[str]:
    """The package a runner runs (``npx [-y] [-p PKG] PKG|BIN ...``): its name, and a ``-p``'s."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-p", "--package") and i + 1 < len(args):
            out.append(package_name(args[i + 1]))
            i += 2
            continue
        if a.startswith("--package="):
            out.append(package_name(a.split("=", 1)[1]))
            i += 1
            continue
        if a == "--":
            i += 1
            continue
        if a.startswith("-"):
            i += 1
            continue
        out.append(package_name(a))
        break
    return out


def _manager(args: list[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1
    if i < len(args) and args[i] in MANAGER_EXEC:
        return _package(args[i + 1:])
    return []


def matches(argv: list[str], names, packages=(), path_parts=()) -> bool:
    """Whether a command line runs a client known by these: a program's basename in ``names``, a
    package of ``packages`` (run by name, or a path inside it: ``…/node_modules/<package>/…``,
    a global ``…/lib/node_modules/<package>/cli.js``), or a path holding one of ``path_parts``."""
    for c in programs(argv):
        cc = c.replace("\\", "/")
        if _base(cc) in names:
            return True
        for pkg in packages:
            if cc == pkg or f"/{pkg}/" in cc or cc.endswith(f"/{pkg}"):
                return True
        if any(part in cc for part in path_parts):
            return True
    return False
