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
