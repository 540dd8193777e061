"""The checks that hold sessionsift's floor plan (issue 23 item 7), inside the normal test command:

1. the import contract (import-linter, contracts in pyproject.toml ``[tool.importlinter]``): cli >
   the question packages > providers > index > reading and the utilities (docs/architecture.md); the library never
   imports cli/; a reader (providers/) never imports the rendering path (render);
2. no module imports an underscore name from another package;
3. a type checker over the library (mypy, ``[tool.mypy]``);
4. no agent name and no tool name is compared outside ``src/sessionsift/providers/``;
5. no module over 40 KB.

Where today's main breaks a check because the code is being moved by another engineer, the
current violations are written below as an explicit allow-list, each entry with its reason: the
check fails on any violation not in it, and on an entry no longer needed (the list only shrinks).
`python tests/test_architecture.py shrink` lowers the entries the code no longer needs (it never
raises or adds one); `python tests/test_architecture.py floorplan` prints each package's layer and
the packages it imports. Each check takes seconds: lint-imports ~1 s, mypy ~2 s warm (its cache is ``.mypy_cache`` in the
clone; ~16 s the first time), the AST walks well under a second.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
PKG = SRC / "sessionsift"
BIN = Path(sys.executable).parent

# --------------------------------------------------------------------------------------------------
# 1. the import contract
# --------------------------------------------------------------------------------------------------

ALLOWED_IMPORTS: dict[str, str] = {
    # "importer -> imported": the reason -- empty since Claude Code's lane cache moved under
    # providers/claude/cache/ and index/ became the store below every reader (docs/architecture.md)
}
"""Direct imports the layers contract refuses that main still has (given to lint-imports as the
contract's ``ignore_imports``; import-linter fails on an entry that matches no import)."""


def _ini_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "".join("\n    " + str(x) for x in v)
    return str(v)


def _importlinter_ini(extra_ignores: list[str]) -> str:
    """pyproject's [tool.importlinter] as an .importlinter (INI) file, the allow-list added."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    out = ["[importlinter]"]
    for k, v in cfg.items():
        if k != "contracts":
            out.append(f"{k} = {_ini_value(v)}")
    for c in cfg["contracts"]:
        out.append(f"\n[importlinter:contract:{c['id']}]")
        c = dict(c)
        if c.get("type") == "layers" and extra_ignores:
            c["ignore_imports"] = list(c.get("ignore_imports", [])) + extra_ignores
        for k, v in c.items():
            if k != "id":
                out.append(f"{k} = {_ini_value(v)}")
    return "\n".join(out) + "\n"


def test_the_import_contract_holds(tmp_path):
    ini = tmp_path / "importlinter.ini"
    ini.write_text(_importlinter_ini(list(ALLOWED_IMPORTS)))
    r = subprocess.run([str(BIN / "lint-imports"), "--config", str(ini), "--no-cache"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    n = len(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"])
    assert n == 2 and f"Contracts: {n} kept, 0 broken." in r.stdout, r.stdout[-3000:]


def test_every_top_level_module_is_placed_in_a_layer():
    """The contract is exhaustive: a new package must be given its layer in pyproject.toml."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c for c in cfg["contracts"] if c["type"] == "layers"]
    assert layers.get("exhaustive") is True
    placed = {n.strip("() ") for line in layers["layers"] for n in re.split(r"[|:]", line)}
    present = {p.stem for p in PKG.glob("*.py") if p.name != "__init__.py"}
    present |= {p.parent.name for p in PKG.glob("*/__init__.py")}
    optional = {n.strip("() ") for line in layers["layers"] for n in re.split(r"[|:]", line)
                if n.strip().startswith("(")}
    assert present - placed == set()
    assert placed - present - optional == set()


# --------------------------------------------------------------------------------------------------
# 2. no private name crosses a package
# --------------------------------------------------------------------------------------------------

ALLOWED_PRIVATE: dict[tuple[str, str, str], str] = {
    # (importing module, module imported from, name): the reason
}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """One parse per file for every check of the run."""
    return ast.parse(path.read_bytes(), str(path))


def _module_of(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(SRC).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _package_of(module: str) -> str:
    """The package a module belongs to: the directory it is in (a package is its own)."""
    if (SRC / Path(*module.split("."))).is_dir():
        return module
    return module.rsplit(".", 1)[0]


def _private_imports() -> Counter:
    found: Counter = Counter()
    for p in sorted(PKG.rglob("*.py")):
        mod, is_pkg = _module_of(p)
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]
        for n in ast.walk(_tree(p)):
            if not isinstance(n, ast.ImportFrom):
                continue
            if n.level:
                base = here[: len(here) - (n.level - 1)]
                target = ".".join(base + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            if not target.startswith("sessionsift"):
                continue
            for a in n.names:
                if not a.name.startswith("_") or a.name.startswith("__"):
                    continue
                origin = target
                if (SRC / Path(*target.split(".")) / (a.name + ".py")).exists():
                    continue  # `from pkg import _module` is a module, not a name (none today)
                if _package_of(origin) != _package_of(mod):
                    found[(mod, origin, a.name)] += 1
    return found


def test_no_module_imports_a_private_name_of_another_package():
    found = set(_private_imports())
    assert sorted(found - set(ALLOWED_PRIVATE)) == [], "new: make the name public where it lives"
    assert sorted(set(ALLOWED_PRIVATE) - found) == [], ("gone: take it out of ALLOWED_PRIVATE "
                                                        "(python tests/test_architecture.py shrink)")


# --------------------------------------------------------------------------------------------------
# 3. mypy over the library
# --------------------------------------------------------------------------------------------------

MYPY_ALLOWED: dict[str, int] = {
    # module path: mypy errors it still has
    'src/sessionsift/clean/activity.py': 2,
    'src/sessionsift/clean/apply.py': 15,
    'src/sessionsift/clean/archive.py': 1,
    'src/sessionsift/clean/capture.py': 4,
    'src/sessionsift/clean/paths.py': 3,
    'src/sessionsift/clean/restore.py': 8,
    'src/sessionsift/clean/scan.py': 1,
    'src/sessionsift/cli/cmd_core.py': 2,
    'src/sessionsift/cli/cmd_usage.py': 1,
    'src/sessionsift/cli/cmd_worktrees.py': 1,
    'src/sessionsift/cli/fasthelp.py': 2,
    'src/sessionsift/cli/invocation.py': 1,
    'src/sessionsift/cli/options.py': 1,
    'src/sessionsift/cli/search_run.py': 1,
    'src/sessionsift/cli/shared.py': 1,
    'src/sessionsift/cli/stats_run.py': 11,
    'src/sessionsift/cli/usage_view.py': 3,
    'src/sessionsift/export/chunks.py': 5,
    'src/sessionsift/export/html.py': 2,
    'src/sessionsift/export/keep.py': 1,
    'src/sessionsift/export/share.py': 5,
    'src/sessionsift/export/stream.py': 4,
    'src/sessionsift/files/rebuild.py': 2,
    'src/sessionsift/files/recover.py': 8,
    'src/sessionsift/files/shell.py': 9,
    'src/sessionsift/files/touched.py': 3,
    'src/sessionsift/providers/claude/cache/lanes.py': 10,
    'src/sessionsift/providers/claude/cache/search.py': 3,
    'src/sessionsift/index/store.py': 2,
    'src/sessionsift/providers/claude/cache/summary.py': 1,
    'src/sessionsift/live/agents.py': 1,
    'src/sessionsift/live/wait.py': 1,
    'src/sessionsift/live/world.py': 2,
    'src/sessionsift/providers/census.py': 5,
    'src/sessionsift/providers/claude/provider.py': 5,
    'src/sessionsift/providers/claude/files/__init__.py': 1,
    'src/sessionsift/providers/claude/files/backups.py': 4,
    'src/sessionsift/providers/claude/files/events.py': 11,
    'src/sessionsift/providers/claude/files/facts.py': 5,
    'src/sessionsift/providers/claude/files/image.py': 15,
    'src/sessionsift/providers/claude/files/plan.py': 1,
    'src/sessionsift/providers/claude/files/replay.py': 9,
    'src/sessionsift/providers/claude/files/touches.py': 8,
    'src/sessionsift/providers/claude/listing.py': 1,
    'src/sessionsift/providers/claude/live/agents.py': 12,
    'src/sessionsift/providers/claude/live/background.py': 11,
    'src/sessionsift/providers/claude/live/todos.py': 1,
    'src/sessionsift/providers/claude/live/verdict.py': 21,
    'src/sessionsift/providers/claude/live/wait.py': 6,
    'src/sessionsift/providers/claude/live/whoami.py': 2,
    'src/sessionsift/providers/claude/model/lane.py': 3,
    'src/sessionsift/providers/claude/model/lanecols.py': 1,
    'src/sessionsift/providers/claude/model/lineage.py': 6,
    'src/sessionsift/providers/claude/model/projected.py': 1,
    'src/sessionsift/providers/claude/model/record.py': 6,
    'src/sessionsift/providers/claude/records.py': 55,
    'src/sessionsift/providers/claude/search/lanes.py': 4,
    'src/sessionsift/providers/claude/search/scan.py': 13,
    'src/sessionsift/providers/codex/__init__.py': 1,
    'src/sessionsift/providers/codex/reader.py': 3,
    'src/sessionsift/providers/crush.py': 1,
    'src/sessionsift/providers/fileevents.py': 2,
    'src/sessionsift/providers/gemini/__init__.py': 4,
    'src/sessionsift/providers/gemini/discover.py': 4,
    'src/sessionsift/providers/gemini/read.py': 4,
    'src/sessionsift/providers/opencode_json.py': 3,
    'src/sessionsift/providers/opencode_records.py': 4,
    'src/sessionsift/providers/pi/__init__.py': 4,
    'src/sessionsift/providers/pi/read.py': 11,
    'src/sessionsift/providers/qwen/__init__.py': 4,
    'src/sessionsift/providers/qwen/discover.py': 1,
    'src/sessionsift/providers/qwen/read.py': 18,
    'src/sessionsift/providers/reinjection.py': 6,
    'src/sessionsift/providers/scope.py': 4,
    'src/sessionsift/providers/sqlite_ro.py': 1,
    'src/sessionsift/read/needles.py': 7,
    'src/sessionsift/read/watch.py': 3,
    'src/sessionsift/show/session.py': 1,
    'src/sessionsift/sync/answers.py': 2,
    'src/sessionsift/sync/dataset.py': 1,
    'src/sessionsift/sync/run.py': 26,
    'src/sessionsift/sync/session.py': 2,
    'src/sessionsift/sync/store.py': 5,
    'src/sessionsift/timefmt.py': 1,
    'src/sessionsift/usage/blocks.py': 10,
    'src/sessionsift/usage/ccusage_json.py': 2,
    'src/sessionsift/providers/claude/usage.py': 2,
    'src/sessionsift/usage/collect.py': 11,
    'src/sessionsift/usage/live.py': 2,
    'src/sessionsift/usage/prices.py': 1,
    'src/sessionsift/usage/statusline.py': 6,
    'src/sessionsift/worktrees/gitcmd.py': 4,
    'src/sessionsift/worktrees/harness.py': 1,
    'src/sessionsift/worktrees/scan.py': 7,
}
"""The errors mypy reports per module on main when the check landed (issue 23 item 7: 582 in 99
modules), each a count that may only go down: a module not named here has none. Lower an entry
(or remove it) when its errors are fixed; never raise one."""


def _mypy_counts() -> tuple[Counter, str]:
    r = subprocess.run([str(BIN / "mypy"), "--cache-dir", str(REPO / ".mypy_cache"),
                        "--no-error-summary", "--no-pretty", "--hide-error-context"],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    counts: Counter = Counter()
    for line in r.stdout.splitlines():
        m = re.match(r"(src/[^:]+\.py):\d+: error: ", line)
        if m:
            counts[m.group(1)] += 1
    # 1: it found errors, 0: none (2 would be mypy itself failing)
    assert r.returncode == (1 if counts else 0), r.stdout[-3000:] + r.stderr[-3000:]
    return counts, r.stdout


def test_mypy_finds_no_new_error_in_the_library():
    counts, out = _mypy_counts()
    over = {f: (n, MYPY_ALLOWED.get(f, 0)) for f, n in counts.items() if n > MYPY_ALLOWED.get(f, 0)}
    new = "\n".join(l for l in out.splitlines() if l.split(":", 1)[0] in over)
    assert over == {}, "module: (errors, allowed)\n" + new[-6000:]
    under = {f: (counts.get(f, 0), n) for f, n in MYPY_ALLOWED.items() if counts.get(f, 0) < n}
    assert under == {}, ("fewer errors than allowed: lower MYPY_ALLOWED to the first figure "
                         "(python tests/test_architecture.py shrink)")


# --------------------------------------------------------------------------------------------------
# 4. agent and tool names are compared only inside providers/
# --------------------------------------------------------------------------------------------------

SHARED_WORDS = frozenset({"read", "write", "edit", "view", "replace", "shell", "bash", "create",
                          "update", "delete", "move"})
"""Tool names that are also words of sessionsift's own vocabulary (file actions, wait conditions,
shell verbs and shells): compared in shared code they mean the word, and a tool of that spelling
cannot be told from it by the AST, so they are not flagged."""

ALLOWED_NAMES: dict[tuple[str, str], tuple[int, str]] = {
    # (module path under src/sessionsift, name): (comparisons, the reason) -- empty since issue 23's
    # leftovers: what shared code asked of an agent's name is a Provider attribute (deep_scope,
    # lanes_in_paths, worktree_argv_flags, worktree_dir) or a Selection's deep_provider
}


def _agent_and_tool_names() -> tuple[set[str], set[str]]:
    from sessionsift import providers

    agents = set(providers.KNOWN) | set(providers.BUILTIN) | set(providers.registry())
    tools: set[str] = set()
    for cls in providers.registry().values():
        tools |= set(cls.tool_names())
    return agents, tools - SHARED_WORDS


def _strings(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for e in node.elts:
            yield from _strings(e)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "frozenset", "set", "tuple") and node.args:
        yield from _strings(node.args[0])


def _compared_names() -> Counter:
    agents, tools = _agent_and_tool_names()
    found: Counter = Counter()
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel.startswith("providers/"):
            continue
        for n in ast.walk(_tree(p)):
            got: list[str] = []
            if isinstance(n, ast.Compare):  # ==, !=, in, not in, on either side
                for side in (n.left, *n.comparators):
                    got += _strings(side)
            elif isinstance(n, ast.match_case):
                for m in ast.walk(n.pattern):
                    if isinstance(m, ast.MatchValue):
                        got += _strings(m.value)
            elif isinstance(n, ast.Dict):  # a table keyed by agent or tool is a dispatch
                for k in n.keys:
                    if k is not None:
                        got += _strings(k)
            for s in got:
                if s in agents or s in tools:
                    found[(rel, s)] += 1
    return found


def test_no_agent_or_tool_name_is_compared_outside_providers():
    found = _compared_names()
    allowed = {k: v[0] for k, v in ALLOWED_NAMES.items()}
    over = {k: (n, allowed.get(k, 0)) for k, n in found.items() if n > allowed.get(k, 0)}
    assert over == {}, ("(module, name): (comparisons, allowed) -- ask the session's Provider for a "
                        "capability instead (HELPERS.md 'Agent capabilities')")
    under = {k: (found.get(k, 0), n) for k, n in allowed.items() if found.get(k, 0) < n}
    assert under == {}, ("fewer than allowed: lower ALLOWED_NAMES to the first figure "
                         "(python tests/test_architecture.py shrink)")


def test_the_name_check_sees_a_comparison_in_each_form(tmp_path, monkeypatch):
    """The walker flags ==, in, match/case and a dispatch table's keys (a check that sees nothing
    would pass every tree)."""
    pkg = tmp_path / "sessionsift"
    (pkg / "providers").mkdir(parents=True)
    (pkg / "q.py").write_text(
        'def f(p, t):\n'
        '    a = p == "codex"\n'
        '    b = t in ("Bash", "x")\n'
        '    match p:\n'
        '        case "claude-code": pass\n'
        '    return {"crush": 1}, p != "read"\n')
    (pkg / "providers" / "x.py").write_text('y = "codex" == 1\n')
    monkeypatch.setattr(sys.modules[__name__], "PKG", pkg)
    assert _compared_names() == Counter({("q.py", "codex"): 1, ("q.py", "Bash"): 1,
                                         ("q.py", "claude-code"): 1, ("q.py", "crush"): 1})


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string constants that are a module's, class's or function's docstring."""
    out: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        if isinstance(n, (ast.Module, ast.ClassDef)):  # an attribute's docstring follows it
            for a, b in zip(n.body, n.body[1:]):
                if isinstance(a, (ast.Assign, ast.AnnAssign)) and isinstance(b, ast.Expr) \
                        and isinstance(b.value, ast.Constant):
                    out.add(id(b.value))
    return out


ALLOWED_LITERALS: dict[tuple[str, str], tuple[int, str]] = {
    # (module path under src/sessionsift, name): (literals, the reason)
}


def _literal_names() -> Counter:
    """(module, agent name) -> how many string literals outside providers/ are exactly an agent's
    name: a lookup (``roots.get("claude-code")``, ``d["codex"]``), a default, an argument, a row's
    value -- any of them is agent knowledge, where shared code asks a capability (``providers.deep_name``,
    ``providers.having``). Docstrings and f-string text are prose, not looked at."""
    agents, _tools = _agent_and_tool_names()
    found: Counter = Counter()
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel.startswith("providers/"):
            continue
        tree = _tree(p)
        skip = _docstrings(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.JoinedStr):
                skip |= {id(v) for v in n.values}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip \
                    and n.value in agents:
                found[(rel, n.value)] += 1
    return found


def test_no_agent_name_is_written_outside_providers():
    found = _literal_names()
    allowed = {k: v[0] for k, v in ALLOWED_LITERALS.items()}
    over = {k: (n, allowed.get(k, 0)) for k, n in found.items() if n > allowed.get(k, 0)}
    assert over == {}, ("(module, name): (literals, allowed) -- ask providers for the reader with the "
                        "capability (providers.deep_name(), providers.having(attr)) instead of naming it")
    under = {k: (found.get(k, 0), n) for k, n in allowed.items() if found.get(k, 0) < n}
    assert under == {}, "fewer than allowed: lower ALLOWED_LITERALS to the first figure"


def test_the_literal_check_sees_a_lookup_in_each_form(tmp_path, monkeypatch):
    """A dict lookup, a subscript, a default, an argument and a value are each seen; a docstring
    and an f-string's text are not (a check that sees nothing would pass every tree)."""
    pkg = tmp_path / "sessionsift"
    (pkg / "providers").mkdir(parents=True)
    (pkg / "q.py").write_text(
        '"""codex"""\n'
        'def f(roots, p="crush"):\n'
        '    """claude-code"""\n'
        '    a = roots.get("claude-code")\n'
        '    b = roots["codex"]\n'
        '    g(provider="pi")\n'
        '    return f"codex {a}", [b, "gemini-cli"]\n')
    (pkg / "providers" / "x.py").write_text('y = {"codex": 1}["codex"]\n')
    monkeypatch.setattr(sys.modules[__name__], "PKG", pkg)
    assert _literal_names() == Counter({("q.py", "claude-code"): 1, ("q.py", "codex"): 1,
                                        ("q.py", "crush"): 1, ("q.py", "pi"): 1,
                                        ("q.py", "gemini-cli"): 1})


def test_the_roles_providers_answers_are_the_readers_own_attributes():
    """providers.ROLES (what ``having`` answers without importing every reader) is each built-in
    reader's class attribute, and ``deep_name()`` is the one reader with a deep Scope."""
    from sessionsift import providers

    classes = {n: providers.load(n) for n in providers.BUILTIN}
    for attr, names in providers.ROLES.items():
        assert names == tuple(n for n, c in classes.items() if c is not None and getattr(c, attr, None)), attr
    assert providers.ROLES["deep_scope"] == (providers.deep_name(),)


AGENT_MODULES = ("claude", "codex", "gemini", "opencode", "crush", "pi", "qwen", "copilot", "kilo",
                 "crush_live", "opencode_live", "opencode_json", "opencode_records", "opencode_artifacts")
"""The modules and packages of providers/ that are one agent's (the rest is the shared interface)."""

ALLOWED_AGENT_IMPORTS: dict[tuple[str, str], tuple[int, str]] = {
    # (top-level package outside providers, agent module of providers): (modules importing it, why)
}
"""Modules outside providers/ that import one agent's module (each counted once per importing
module, lazy imports included): the count may only go down."""


def _agent_imports() -> Counter:
    import grimp

    g = grimp.build_graph("sessionsift", include_external_packages=False, cache_dir=None)
    found: Counter = Counter()
    for m in g.modules:
        parts = m.split(".")
        if len(parts) < 2 or parts[1] == "providers":
            continue
        for agent in sorted({i.split(".")[2] for i in g.find_modules_directly_imported_by(m)
                             if i.split(".")[1:2] == ["providers"] and len(i.split(".")) > 2
                             and i.split(".")[2] in AGENT_MODULES}):
            found[(parts[1], agent)] += 1
    return found


def test_one_agents_modules_are_imported_only_where_allowed():
    found = _agent_imports()
    allowed = {k: v[0] for k, v in ALLOWED_AGENT_IMPORTS.items()}
    over = {k: (n, allowed.get(k, 0)) for k, n in found.items() if n > allowed.get(k, 0)}
    assert over == {}, ("(package, agent): (importing modules, allowed) -- ask the session's Provider "
                        "for a capability instead of importing an agent's module")
    under = {k: (found.get(k, 0), n) for k, n in allowed.items() if found.get(k, 0) < n}
    assert under == {}, "fewer than allowed: lower ALLOWED_AGENT_IMPORTS to the first figure"


def test_every_agent_module_of_providers_is_named():
    """AGENT_MODULES is every module of providers/ named after an agent (a new reader is counted)."""
    prov = PKG / "providers"
    present = {p.stem for p in prov.glob("*.py")} | {p.parent.name for p in prov.glob("*/__init__.py")}
    shared = {"__init__", "artifacts", "base", "census", "compaction", "deep", "fileevents", "launch",
              "listing", "liveness", "record", "reinjection", "scope", "searchquery", "selection", "session",
              "sqlite_ro", "summary", "usage", "vocab"}
    assert present - shared == set(AGENT_MODULES)


# --------------------------------------------------------------------------------------------------
# 5. no module over 40 KB
# --------------------------------------------------------------------------------------------------

LIMIT = 40 * 1024

ALLOWED_LARGE: dict[str, str] = {
    # module path under src/sessionsift: the reason
}


def test_no_module_is_over_40_kb():
    large = {p.relative_to(PKG).as_posix(): p.stat().st_size for p in PKG.rglob("*.py")
             if p.stat().st_size > LIMIT}
    assert sorted(set(large) - set(ALLOWED_LARGE)) == [], large
    assert sorted(set(ALLOWED_LARGE) - set(large)) == [], "now under 40 KB: take it out of ALLOWED_LARGE (python tests/test_architecture.py shrink)"


# --------------------------------------------------------------------------------------------------
# `python tests/test_architecture.py shrink`: lower (or remove) the allow-list entries the code no
# longer needs -- never raises one and never adds one (a new violation is fixed, not listed).
# --------------------------------------------------------------------------------------------------

def _shrink() -> None:
    path = Path(__file__)
    s = path.read_text()
    counts, _ = _mypy_counts()
    for f, n in MYPY_ALLOWED.items():
        if counts.get(f, 0) < n:
            line = f"    {f!r}: {n},\n"
            s = s.replace(line, "" if not counts.get(f) else f"    {f!r}: {counts[f]},\n", 1)
            print(f"mypy {f}: {n} -> {counts.get(f, 0)}")
    found = _compared_names()
    for (mod, name), (n, _why) in ALLOWED_NAMES.items():
        if found.get((mod, name), 0) < n:
            m = re.search(r"^    \(" + re.escape(repr(mod)) + ", " + re.escape(repr(name)) + r"\): \(\d+, .*\),\n", s, re.M)
            if m:
                new = "" if not found.get((mod, name)) else m.group(0).replace(f"({n}, ", f"({found[(mod, name)]}, ", 1)
                s = s[:m.start()] + new + s[m.end():]
                print(f"names {mod} {name}: {n} -> {found.get((mod, name), 0)}")
    private = set(_private_imports())
    for k in ALLOWED_PRIVATE:
        if k not in private:
            s = re.sub(r"^    " + re.escape(repr(k)) + r": .*\n", "", s, count=1, flags=re.M)
            print(f"private {k}: gone")
    large = {p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py") if p.stat().st_size > LIMIT}
    for k in ALLOWED_LARGE:
        if k not in large:
            s = re.sub(r"^    " + re.escape(repr(k)) + r": .*\n", "", s, count=1, flags=re.M)
            print(f"large {k}: now under 40 KB")
    path.write_text(s)


# --------------------------------------------------------------------------------------------------
# `python tests/test_architecture.py floorplan`: the floor plan as it is -- each top-level package
# or module of sessionsift, in its layer, with the packages it imports (issue 23's closing note).
# --------------------------------------------------------------------------------------------------

def _layers() -> list[list[str]]:
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c for c in cfg["contracts"] if c["type"] == "layers"]
    return [[n.strip("() ") for n in re.split(r"[|:]", line) if n.strip("() ")]
            for line in layers["layers"]]


def _floor_plan() -> dict[str, dict[str, int]]:
    """top-level package -> {top-level package it imports: how many module-to-module imports}
    (every import, lazy ones inside functions included: grimp, as lint-imports sees them)."""
    import grimp

    g = grimp.build_graph("sessionsift", include_external_packages=False, cache_dir=None)
    plan: dict[str, dict[str, int]] = {}
    for mod in sorted(g.modules):
        parts = mod.split(".")
        if len(parts) < 2:
            continue
        src = parts[1]
        row = plan.setdefault(src, {})
        for imp in g.find_modules_directly_imported_by(mod):
            q = imp.split(".")
            if len(q) >= 2 and q[1] != src:
                row[q[1]] = row.get(q[1], 0) + 1
    return plan


def _print_floor_plan() -> None:
    plan = _floor_plan()
    layers = _layers()
    rank = {n: i for i, names in enumerate(layers) for n in names}
    upward = {tuple(k.split(" -> ")) for k in ALLOWED_IMPORTS}
    for i, names in enumerate(layers):
        present = [n for n in names if n in plan]
        if not present:
            continue
        print(f"layer {i}: {' '.join(present)}")
        for n in present:
            deps = plan[n]
            cells = []
            for d in sorted(deps, key=lambda d: (rank.get(d, 99), d)):
                mark = " (UP: allow-listed)" if rank.get(d, 99) < rank.get(n, 99) else ""
                cells.append(f"{d}{mark}")
            print(f"  {n} -> {', '.join(cells) if cells else '-'}")
    cycles = sorted({tuple(sorted((a, b))) for a, ds in plan.items() for b in ds
                     if a in plan.get(b, {})})
    print("package cycles: " + (", ".join(f"{a} <-> {b}" for a, b in cycles) if cycles else "none"))
    print(f"allow-lists: imports against the layers {len(upward)}, private names "
          f"{len(ALLOWED_PRIVATE)}, agent/tool names compared outside providers "
          f"{sum(n for n, _ in ALLOWED_NAMES.values())} in {len({m for m, _ in ALLOWED_NAMES})} "
          f"modules, mypy {sum(MYPY_ALLOWED.values())} in {len(MYPY_ALLOWED)} modules, "
          f"modules over 40 KB {len(ALLOWED_LARGE)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["shrink"]:
        _shrink()
    elif sys.argv[1:] == ["floorplan"]:
        _print_floor_plan()
    else:
        sys.exit("usage: python tests/test_architecture.py shrink|floorplan")
