"""The Bash mutation parser (tree-sitter-bash). Inputs are command strings, not records."""
from __future__ import annotations

import pytest

from sessionsift.files.shell import analyze


def muts(cmd, cwd="/w"):
    return [(m.op, m.path, m.resolution) for m in analyze(cmd, cwd).mutations]


@pytest.mark.parametrize("cmd,expected", [
    ("echo x > out.txt", [("write", "/w/out.txt", "cwd-joined")]),
    ("echo x >> /abs/log", [("append", "/abs/log", "absolute")]),
    ("echo x >| clob", [("write", "/w/clob", "cwd-joined")]),
    ("make 2> err.log", [("write", "/w/err.log", "cwd-joined")]),
    ("cmd &>> all.log", [("append", "/w/all.log", "cwd-joined")]),
    ("echo x > /dev/null 2>&1", []),
    ("echo x | tee -a t1 t2", [("append", "/w/t1", "cwd-joined"), ("append", "/w/t2", "cwd-joined")]),
    ("cp a b c/", [("copy-dest", "/w/c", "cwd-joined")]),
    ("cp -t dest a b", [("copy-dest", "/w/dest", "cwd-joined")]),
    ("mv a.txt b.txt", [("move-dest", "/w/b.txt", "cwd-joined"), ("move-src", "/w/a.txt", "cwd-joined")]),
    ("ln -s target link", [("link", "/w/link", "cwd-joined")]),
    ("install -m 755 bin /usr/local/bin/x", [("copy-dest", "/usr/local/bin/x", "absolute")]),
    ("rsync -a src/ dst/", [("copy-dest", "/w/dst", "cwd-joined")]),
    ("rm -rf build", [("delete", "/w/build", "cwd-joined")]),
    ("touch a b", [("touch", "/w/a", "cwd-joined"), ("touch", "/w/b", "cwd-joined")]),
    ("mkdir -p x/y", [("mkdir", "/w/x/y", "cwd-joined")]),
    ("sed -i 's/a/b/' f.txt", [("edit-in-place", "/w/f.txt", "cwd-joined")]),
    ("sed -i.bak -e s/a/b/ -e s/c/d/ g.txt", [("edit-in-place", "/w/g.txt", "cwd-joined")]),
    ("sed 's/a/b/' f.txt > g.txt", [("write", "/w/g.txt", "cwd-joined")]),
    ("tar czf out.tgz src", [("archive", "/w/out.tgz", "cwd-joined")]),
    ("gcc -o prog main.c", [("write", "/w/prog", "cwd-joined")]),
    ("curl -o page.html http://x", [("write", "/w/page.html", "cwd-joined")]),
    ("dd if=/dev/zero of=disk.img bs=1", [("write", "/w/disk.img", "cwd-joined")]),
    ("cd sub && echo x > f", [("write", "/w/sub/f", "cd-tracked")]),
    ("cd /abs && echo x > f", [("write", "/abs/f", "cd-tracked")]),
    ("(cd sub && echo > a); echo > b", [("write", "/w/sub/a", "cd-tracked"), ("write", "/w/b", "cwd-joined")]),
    ("cd $D && echo x > f", [("write", None, "unresolved")]),
    ("rm -f *.o", [("delete", None, "unresolved")]),
    ("echo x > \"$OUT\"", [("write", None, "unresolved")]),
    ("echo x > ~/f", [("write", None, "unresolved")]),
    ("echo x > 'a b.txt'", [("write", "/w/a b.txt", "cwd-joined")]),
    ("sudo tee /etc/x < in", [("write", "/etc/x", "absolute")]),
])
def test_mutations(cmd, expected):
    assert muts(cmd) == expected


def test_result_cwd_is_not_used_tool_use_cwd_is():
    # BASH-007: the caller passes the tool_use record's cwd; the operand joins to it
    assert muts("echo > f", "/spawn") == [("write", "/spawn/f", "cwd-joined")]


def test_unresolved_keeps_operand_verbatim():
    m = analyze("cp a $DEST/x", "/w").mutations[0]
    assert m.raw == "$DEST/x" and m.path is None


@pytest.mark.parametrize("cmd,markers", [
    ("cargo fmt --all", ["fmt:cargo"]),
    ("npm install", ["pkg:npm"]),
    ("pip install -e .", ["pkg:pip"]),
    ("tar -xzf a.tgz", ["extract:tar"]),
    ("unzip a.zip", ["extract:unzip"]),
    ("python3 script.py", ["interp:python"]),
    ("git checkout main && git status", ["git:checkout"]),
    ("black . && ruff format x.py", ["fmt:black", "fmt:ruff"]),
    ("prettier --write src", ["fmt:prettier"]),
    ("patch -p1 < fix.diff", ["patch:patch"]),
    ("ls -la", []),
])
def test_markers(cmd, markers):
    assert analyze(cmd, "/w").markers == markers


def test_heredoc_write_anchor_quoted_only():
    a = analyze("cat > f.txt <<'EOF'\nx $HOME\nEOF", "/w")
    assert a.mutations[0].heredoc == "x $HOME\n"
    a = analyze("cat > f.txt <<EOF\nx $HOME\nEOF", "/w")
    assert a.mutations[0].heredoc is None  # unquoted: subject to expansion
    a = analyze("tee g.txt <<'EOF' >/dev/null\nbody\nEOF", "/w")
    assert [(m.path, m.heredoc) for m in a.mutations] == [("/w/g.txt", "body\n")]
    a = analyze("python3 - <<'EOF'\nopen('x','w')\nEOF", "/w")
    assert a.mutations == [] and a.markers == ["interp:python"]


@pytest.mark.parametrize("cmd,kind,start,count", [
    ("cat f.txt", "cat", 1, None),
    ("cd /w && cat f.txt", "cat", 1, None),
    ("head -n 5 f.txt", "head", 1, 5),
    ("head -20 f.txt", "head", 1, 20),
    ("sed -n '3,7p' f.txt", "sed-range", 3, 5),
])
def test_read_anchors(cmd, kind, start, count):
    r = analyze(cmd, "/w").read
    assert r is not None and (r.kind, r.start, r.count, r.path) == (kind, start, count, "/w/f.txt")


@pytest.mark.parametrize("cmd", ["cat f | grep x", "cat -n f.txt", "cat a b", "echo; cat f.txt", "cat $F",
                                 "cat f.txt > g"])
def test_not_read_anchors(cmd):
    assert analyze(cmd, "/w").read is None


def test_windows_absolute_operand():
    assert muts("echo > C:\\\\x\\\\y.txt", "/w")[0][2] == "absolute"
