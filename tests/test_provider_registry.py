"""The provider registry's fast path (issue 16): when every distribution declaring the
`sessionsift.providers` group declares exactly the built-in readers, the registry is loaded
without importlib.metadata; it must list what importlib.metadata lists, and step aside for
anything it cannot read plainly (an outside reader, a zip on sys.path, a partial declaration)."""

from __future__ import annotations

import sys
import tomllib
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from sessionsift import providers as P

REPO = Path(__file__).resolve().parents[1]


def test_builtin_table_is_pyprojects():
    eps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][P.GROUP]
    assert eps == P.BUILTIN


def test_fast_path_lists_what_importlib_metadata_lists():
    fast = P._builtin_only()
    assert fast is not None, "the installed package alone must take the fast path"
    slow = sorted((ep.name, ep.value) for ep in entry_points(group=P.GROUP))
    assert sorted((n, v) for n, v, _l in fast) == slow
    for (_n, v, load), ep in zip(sorted(fast), sorted(entry_points(group=P.GROUP), key=lambda e: e.name)):
        assert load() is ep.load()


def _dist(site: Path, name: str, text: str) -> None:
    d = site / f"{name}-0.0.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0\n")
    (d / "entry_points.txt").write_text(text)


def test_outside_reader_takes_importlib_metadata(tmp_path, monkeypatch):
    _dist(tmp_path, "acme_reader", f"[{P.GROUP}]\nacme = acme_reader:Acme\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert P._builtin_only() is None


def test_partial_or_odd_declaration_takes_importlib_metadata(tmp_path, monkeypatch):
    pairs = list(P.BUILTIN.items())[:-1]
    _dist(tmp_path, "old_sessionsift", f"[{P.GROUP}]\n" + "".join(f"{k} = {v}\n" for k, v in pairs))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert P._builtin_only() is None


def test_same_declaration_elsewhere_keeps_the_fast_path(tmp_path, monkeypatch):
    body = "# a comment\n[console_scripts]\nx = y:z\n\n" + f"[{P.GROUP}]\n" + "".join(
        f"  {k}={v}  \n" for k, v in reversed(P.BUILTIN.items()))
    _dist(tmp_path, "sessionsift_copy", body)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    fast = P._builtin_only()
    assert fast is not None and [n for n, _v, _l in fast] == list(P.BUILTIN)


def test_zip_on_path_takes_importlib_metadata(tmp_path, monkeypatch):
    z = tmp_path / "bundle.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("acme-0.0.dist-info/entry_points.txt", f"[{P.GROUP}]\nacme = acme:Acme\n")
    monkeypatch.setattr(sys, "path", [str(z), *sys.path])
    assert P._builtin_only() is None


@pytest.mark.parametrize("text", [f"[{P.GROUP}]\nnot a pair\n", f"[ {P.GROUP} ]\nacme = a:b\n"])
def test_unreadable_section_takes_importlib_metadata(tmp_path, monkeypatch, text):
    _dist(tmp_path, "weird", text)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert P._builtin_only() is None


# -- lazy built-in readers (issue 16): a reader not looked at is not imported --------------------


@pytest.fixture
def fresh(monkeypatch):
    """The registry's module state emptied for the test, restored after."""
    for k, v in (("_REGISTRY", None), ("_EPS", None), ("_FAST", False), ("_LOADED", {}), ("_FAILED", {})):
        monkeypatch.setattr(P, k, v)
    return P


def test_builtin_classes_are_what_the_lazy_path_names_them():
    from sessionsift.providers.scope import FLAGS

    assert list(P.KNOWN) == list(P.BUILTIN) == list(FLAGS)
    for name, value in P.BUILTIN.items():
        cls = P._load_builtin(value)
        assert getattr(cls, "name", name) == name
        assert cls.display == P.KNOWN[name]
        assert cls.home_flag == FLAGS[name]


_REQS = [dict(roots={"claude-code": "CH"}), dict(roots={"codex": "CX"}), dict(home="HOME"),
         dict(home="HOME", only=("gemini-cli",)), dict(roots={"claude-code": "CH"}, only=("claude-code", "crush")),
         dict(roots={"opencode": "OC", "crush": "CR"}), dict(), dict(only=("codex",))]


@pytest.mark.parametrize("req", _REQS, ids=[str(r) for r in _REQS])
def test_lazy_survey_covers_what_the_full_registry_covers(req, fresh, tmp_path, monkeypatch):
    from sessionsift.providers import scope as S

    for k in ("roots", "home"):
        if k == "roots" and k in req:
            req = {**req, "roots": {n: str(tmp_path / d) for n, d in req["roots"].items()}}
        elif k in req:
            req = {**req, k: str(tmp_path / req[k])}
    env = {"HOME": str(tmp_path / "nohome")}
    assert P.builtins_only()
    lazy = S.survey(S.RootRequest(**req), env)
    assert P._REGISTRY is None  # answered without loading every reader
    looked = {e.name for e in lazy.entries if e.coverage.state != "not_looked"}
    assert set(P._LOADED) == looked
    monkeypatch.setattr(P, "_FAST", False)  # the registry's way: every reader loaded, then surveyed
    full = S.survey(S.RootRequest(**req), env)
    assert [e.coverage for e in lazy.entries] == [e.coverage for e in full.entries]
    assert [e.display for e in lazy.entries] == [e.display for e in full.entries]
    assert [(e.root, e.sessions, e.problems) for e in lazy.entries] == [(e.root, e.sessions, e.problems)
                                                                      for e in full.entries]


def test_a_builtin_that_cannot_load_is_no_adapter_as_before(fresh, tmp_path, monkeypatch):
    from sessionsift.providers import scope as S

    real = P._load_builtin

    def broken(value):
        if value.startswith("sessionsift.providers.opencode:"):
            raise ImportError("No module named '_sqlite3'")
        return real(value)

    monkeypatch.setattr(P, "_load_builtin", broken)
    req = S.RootRequest(home=str(tmp_path))
    lazy = S.survey(req, {})
    oc = lazy.entry("opencode")
    assert oc.coverage.state == "no_adapter" and oc.provider is None
    assert oc.coverage.reason == ("cannot load sessionsift.providers.opencode:Opencode: ImportError: "
                                  "No module named '_sqlite3'")
    for k, v in (("_REGISTRY", None), ("_LOADED", {}), ("_FAILED", {})):
        monkeypatch.setattr(P, k, v)
    monkeypatch.setattr(P, "_FAST", False)
    full = S.survey(req, {})
    assert [e.coverage for e in lazy.entries] == [e.coverage for e in full.entries]
    assert P.load_failures() == {"opencode": oc.coverage.reason}


def test_a_claude_only_command_imports_no_other_reader(tmp_path):
    import os
    import subprocess

    code = ("import sys; sys.argv[0] = 'sessionsift'\n"
            "import atexit\n"
            "atexit.register(lambda: print(' '.join(sorted(m for m in sys.modules if m in ('sqlite3',"
            " 'sessionsift.providers.opencode', 'sessionsift.providers.crush', 'sessionsift.providers.codex',"
            " 'sessionsift.providers.gemini'))), file=sys.stderr))\n"
            "from sessionsift.cli import main; main()")
    home = str(REPO / "examples" / "claude-home")
    for argv in (["stats", "--claude-home", home, "--no-index"], ["search", "Bash", "-c", "--claude-home", home,
                                                                   "--no-index"]):
        p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, timeout=300,
                           env=dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path)))
        assert p.returncode == 0 and p.stdout.strip(), p.stderr
        assert p.stderr.decode().strip().splitlines()[-1:] in ([], [""]), p.stderr
    p = subprocess.run([sys.executable, "-c", code, "stats", "--home", str(REPO / "examples" / "home"), "--no-index"],
                       capture_output=True, timeout=300, env=dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path)))
    assert "sqlite3" in p.stderr.decode().split()  # the probe sees them when they are looked at
