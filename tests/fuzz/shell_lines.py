"""Generated shell lines and a real-bash oracle for the shell permission rules.

Each generator makes command lines from a grammar of the constructs that matter to the rules:
quotes of every kind, backslash escapes and line continuations, globs and braces, parameter,
arithmetic, command and process substitutions, redirections of every form (with and without
descriptors, spaces, quoted or computed targets), here-documents and here-strings, comments,
newlines, lists, pipelines, subshells, groups, ``!``, compound commands, assignments and
wrappers.

The oracle runs a line the rules admit with the real ``bash -c`` in a sandbox and observes what
it did:

* ``PATH`` holds only logging shims (each records its argv), and every bash builtin but
  ``echo`` is disabled first (``enable -n``), so a builtin the line runs (``eval``, ``exec``,
  ``command``, ``cd``...) is looked up in ``PATH`` and logged too;
* the sandbox tree is snapshotted before and after: any file created or changed is a write;
* a secret file sits outside the workspace; its content in the output is a read outside.

Claims checked:

* **allow** -- a line that ``Bash(echo)`` / ``Bash(git status)`` admit (:func:`allows`) runs
  no program but ``git status ...`` (``echo`` is the builtin) and writes no file;
* **read-only** -- a line the read-only shortcut admits (:func:`read_only`) runs only
  read-only commands, writes no file, and prints nothing of the secret;
* **deny** -- a line that ``Bash(rm)`` neither denies nor is uncertain about (:func:`denies`)
  never runs ``rm`` (here builtins stay enabled and wrappers are the real programs).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from headwire.runtime.policy.rules import parse_rule
from headwire.runtime.policy.shell_rules import READ_ONLY_COMMANDS, allows, denies, read_only
from headwire.runtime.policy.shell_syntax import analyze

SECRET = "TOP-SECRET-7f3a9c"
ALLOW_RULES = [parse_rule("run_shell_command(echo)"), parse_rule("Bash(git status:*)")]
DENY_RULES = [parse_rule("Bash(rm:*)")]
ALLOWED_PREFIXES = (("git", "status"),)
BUILTINS = tuple(
    " ".join(
        (
            ". : [ alias bg bind break builtin caller cd command compgen complete compopt",
            "continue declare dirs disown enable eval exec exit export false fc fg getopts hash",
            "help history jobs kill let local logout mapfile popd printf pushd pwd read",
            "readarray readonly return set shift shopt source suspend test times trap true",
            "type typeset ulimit umask unalias unset wait",
        )
    ).split(" ")
)
SHIMMED = sorted(
    {
        *BUILTINS,
        *READ_ONLY_COMMANDS,
        "git",
        "rm",
        "touch",
        "tee",
        "mkdir",
        "env",
        "xargs",
        "sudo",
        "nohup",
        "timeout",
        "bash",
        "sh",
        "find",
        "sleep",
        "cp",
        "mv",
        "dd",
        "python3",
        "coproc",
        "time",
        "[[",
    }
    - {"echo", "."}
)
REAL_WRAPPERS = ("env", "xargs", "nohup", "timeout", "bash", "sh", "find", "true", "cat", "ls")


def _shim(path: Path) -> None:
    path.write_text(
        '#!/bin/sh\n{ printf \'%s\\037\' "${0##*/}" "$@"; printf \'\\036\'; } >> "$HW_LOG"\n'
    )
    path.chmod(0o755)


@dataclass
class Observation:
    """What one line did in the sandbox."""

    invocations: list[list[str]]
    changed: list[str]
    output: str
    timed_out: bool


class Sandbox:
    """A private tree: ``work`` (the workspace and cwd), ``outside/secret.txt``, shims."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root or tempfile.mkdtemp(prefix="hw-shell-fuzz-")).resolve()
        self.base = self.root / "d1" / "d2" / "d3"
        self.work = self.base / "w"
        self.outside = self.base / "outside"
        self.log = self.root / "log"
        for d in (self.work / "sub", self.work / "3rdparty", self.outside, self.log):
            d.mkdir(parents=True, exist_ok=True)
        (self.outside / "secret.txt").write_text(SECRET + "\n")
        (self.work / "in.txt").write_text("hello\n")
        (self.work / "sub" / "in.txt").write_text("sub\n")
        (self.work / "list0").write_bytes(b"in.txt\0")
        for name, target in (("secret-link", "../outside/secret.txt"), ("linkdir", "../outside")):
            link = self.work / name
            if not link.is_symlink():
                link.symlink_to(target)
        self._created: list[str] = []
        self.bins: dict[str, Path] = {}
        for kind in ("allow", "ro", "deny"):
            folder = self.root / f"bin-{kind}"
            folder.mkdir(exist_ok=True)
            for name in SHIMMED:
                real = shutil.which(name)
                real_ro = kind == "ro" and name in READ_ONLY_COMMANDS and name != "true"
                real_deny = kind == "deny" and name in REAL_WRAPPERS
                if real and (real_ro or real_deny):
                    target = folder / name
                    if not target.exists():
                        target.symlink_to(real)
                else:
                    _shim(folder / name)
            self.bins[kind] = folder

    def close(self) -> None:
        """Remove the tree."""
        shutil.rmtree(self.root, ignore_errors=True)

    def snapshot(self) -> dict[str, tuple[int, int, bool]]:
        """Every path under the root but the log: size, mtime, whether it is a link
        (directories: their existence only)."""
        out: dict[str, tuple[int, int, bool]] = {}
        for folder, dirs, files in os.walk(self.root):
            if Path(folder) == self.log:
                dirs[:] = []
                continue
            for name in dirs + files:
                path = os.path.join(folder, name)
                st = os.lstat(path)
                if name in dirs and not os.path.islink(path):
                    out[path] = (0, 0, False)
                else:
                    out[path] = (st.st_size, st.st_mtime_ns, os.path.islink(path))
        return out

    def run(self, line: str, kind: str, timeout: float = 5.0) -> Observation:
        """Run ``line`` with ``bash -c`` in the workspace under the ``kind`` shims."""
        log = self.log / "calls"
        log.write_bytes(b"")
        before = self.snapshot()
        prologue = (
            ""
            if kind == "deny"
            else "enable -n "
            + " ".join(b for b in BUILTINS if b != "enable")
            + "; enable -n enable\n"
        )
        env = {
            "PATH": str(self.bins[kind]),
            "HW_LOG": str(log),
            "HOME": str(self.base / "home"),
            "LC_ALL": "C",
        }
        timed_out = False
        try:
            done = subprocess.run(
                ["/bin/bash", "-c", prologue + line],
                cwd=self.work,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
                start_new_session=True,
            )
            output = (done.stdout + done.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired as exc:
            timed_out = True
            output = ((exc.stdout or b"") + (exc.stderr or b"")).decode("utf-8", "replace")
        after = self.snapshot()
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        self._created = [p for p in after if p not in before]
        records = log.read_bytes().split(b"\x1e")
        calls = [
            [a.decode("utf-8", "replace") for a in r.split(b"\x1f")[:-1]] for r in records if r
        ]
        return Observation(calls, changed, output, timed_out)

    def restore(self, changed: list[str]) -> None:
        """Undo the writes a line made (so the next line starts from the same tree)."""
        if not changed:
            return
        for path in sorted(self._created, key=len, reverse=True):
            if os.path.lexists(path):
                p = Path(path)
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
        (self.outside / "secret.txt").write_text(SECRET + "\n")
        (self.work / "in.txt").write_text("hello\n")
        (self.work / "sub" / "in.txt").write_text("sub\n")
        (self.work / "list0").write_bytes(b"in.txt\0")
        for d in (self.work / "sub", self.work / "3rdparty", self.outside):
            d.mkdir(parents=True, exist_ok=True)


# -- the grammar ----------------------------------------------------------------------------------

PLAIN = ["x", "owned", "status", "-n", "--short", "a.txt", "1", "2", "-", "--", "a=b", "%s"]
QUOTED = [
    "'a b'",
    '"a b"',
    "'s;rm x'",
    '"$(touch dq)"',
    "$'\\x41'",
    '$"t"',
    '"\\"q"',
    "'\"'",
    '"a\\\nb"',
    "''",
    '""',
    "'status'",
    '"status"',
    "st'at'us",
]
ESCAPED = ["\\;", "a\\ b", "r\\m", "\\$(x)", "\\>f", "\\&", "\\|", "\\\n", "\\#", "\\`x\\`"]
PATTERN = ["*", "{a,b}", "?", "[ab]", "~", "~/x", "{1..2}", "status*", "s{tat,x}us"]
EXPANSION = [
    "$HOME",
    "${HOME}",
    "${x:=y}",
    "$((1+2))",
    "$(touch csub)",
    "`touch bsub`",
    "<(touch psub)",
    ">(touch psub2)",
    "$(echo hi)",
    "${x:-$(touch dflt)}",
    "$((a[$(touch arith)]))",
    "$1",
    "$@",
    "$$",
]
TARGETS = [
    "f",
    "/dev/null",
    "1",
    "2",
    "-",
    "1x",
    "1pwned",
    "3rdparty/../../OUTSIDE.txt",
    '"1"',
    "'2'",
    "$(echo t)",
    "../w2",
    "sub/out",
    "/dev/null/../x",
    "/dev/nullx",
    "3",
    "&1",
    " 1",
    " f",
    "\\1",
    "1\\x",
    "$'1'",
    "{1,2}",
    "*",
]
OPERATORS = [">", ">>", ">|", ">&", "<", "<&", "<>", "&>", "&>>", "<<<", ">&-", "<&-"]
SEPARATORS = [" ; ", ";", " && ", "||", " | ", "|&", " & ", "\n", "\n\n", " ;\n"]


def _word(rng: random.Random, names: list[str]) -> str:
    pick = rng.random()
    if pick < 0.35:
        return rng.choice(PLAIN + names)
    if pick < 0.5:
        return rng.choice(QUOTED)
    if pick < 0.6:
        return rng.choice(ESCAPED)
    if pick < 0.7:
        return rng.choice(PATTERN)
    if pick < 0.85:
        return rng.choice(EXPANSION)
    return _word(rng, names) + _word(rng, names)  # glued: one bash word


def _redirect(rng: random.Random) -> str:
    fd = rng.choice(["", "", "", "1", "2", "3", "0", "10"])
    op = rng.choice(OPERATORS)
    if op.endswith("-"):
        return fd + op
    space = rng.choice(["", "", " "])
    return fd + op + space + rng.choice(TARGETS)


def _heredoc(rng: random.Random) -> tuple[str, str]:
    delim = rng.choice(["EOF", "'EOF'", '"EOF"', "E\\OF", "EOF"])
    dash = rng.choice(["", "-"])
    body = rng.choice(["hi", "$(touch hsub)", "`touch hb`", "$HOME", "EOFx", "\tEOF"])
    return f"<<{dash}{delim}", f"\n{body}\nEOF"


def _simple(rng: random.Random, names: list[str], depth: int) -> str:
    parts = [rng.choice(names)]
    if rng.random() < 0.2:
        parts[0] = rng.choice(["r\\m", '"echo"', "ec'h'o", "\\echo", "$X", "git"])
    parts += [_word(rng, names) for _ in range(rng.randrange(0, 4))]
    if rng.random() < 0.12 and depth < 2:
        parts.append("$(" + _line(rng, names, depth + 1) + ")")
    tail = ""
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        parts.insert(rng.randrange(0, len(parts) + 1), _redirect(rng))
    if rng.random() < 0.08:
        op, body = _heredoc(rng)
        parts.append(op)
        tail = body
    if rng.random() < 0.08:
        parts.insert(0, rng.choice(["X=1", "PATH=.", "x=$(touch asg)", "GIT_DIR=x"]))
    if rng.random() < 0.08:
        parts.append(rng.choice(["# c; touch hash", "#x", "a#b"]))
    glue = " " if rng.random() < 0.9 else " \\\n"
    return glue.join(parts) + tail


def _statement(rng: random.Random, names: list[str], depth: int) -> str:
    pick = rng.random()
    if depth < 2 and pick < 0.08:
        return "( " + _line(rng, names, depth + 1) + " )"
    if depth < 2 and pick < 0.14:
        return "{ " + _line(rng, names, depth + 1) + "; }"
    if depth < 2 and pick < 0.18:
        return "! " + _statement(rng, names, depth + 1)
    if depth < 2 and pick < 0.21:
        return f"if {_simple(rng, names, depth)}; then {_simple(rng, names, depth)}; fi"
    if depth < 2 and pick < 0.23:
        return f"for i in a; do {_simple(rng, names, depth)}; done"
    if depth < 2 and pick < 0.25:
        return f"f() {{ {_simple(rng, names, depth)}; }}; f"
    if pick < 0.27:
        return rng.choice(["x=$(touch standalone)", "x=1", "export X=1"])
    return _simple(rng, names, depth)


def _line(rng: random.Random, names: list[str], depth: int = 0) -> str:
    out = _statement(rng, names, depth)
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        out += rng.choice(SEPARATORS) + _statement(rng, names, depth)
    if rng.random() < 0.05:
        out += rng.choice([" &", ";", " # end"])
    return out


ALLOW_NAMES = ["echo", "echo", "echo", "git status", "git", "touch", "eval", "command", "cat"]
READ_ONLY_NAMES = [
    "cat",
    "cat",
    "du",
    "grep -r x",
    "head",
    "tail",
    "wc",
    "ls",
    "stat",
    "realpath",
    "echo",
    "touch",
]
RO_WORDS = [
    "in.txt",
    "sub/in.txt",
    "secret-link",
    "linkdir/secret.txt",
    "linkdir",
    "../outside/secret.txt",
    "ABS_SECRET",
    "--files0-from=ABS_SECRET",
    "--files0-from=../outside/secret.txt",
    "--files0-from=list0",
    "-f../outside/secret.txt",
    "-fsecret-link",
    "-R",
    "-L",
    "-s",
    "-r",
    "-l",
    "*",
    ".",
    "..",
    "~",
    "-X",
    "secret-link/",
    "./secret-link",
    "sub/../secret-link",
]
DENY_NAMES = [
    "rm",
    "r\\m",
    '"rm"',
    "echo",
    "env rm",
    "command rm",
    "exec rm",
    "eval rm",
    "bash -c 'rm x'",
    'sh -c "rm y"',
    "xargs rm",
    "nohup rm",
    "timeout 5 rm",
    "time rm",
    "find . -maxdepth 0 -exec rm {} ;",
    "$(echo rm)",
    "${X:-rm}",
    "r${x}m",
    "true",
    "cat",
    "ls",
    "env",
    "eval",
    "bash -c",
    "builtin",
]


SAFE_REDIRECTS = [
    "2>&1",
    ">/dev/null",
    "2>/dev/null",
    ">&2",
    "1>&2",
    "&>/dev/null",
    "<in.txt",
    ">&-",
    "<<<x",
    "2>&-",
    "0<in.txt",
]
TWIST_CHARS = list(">&|;$`'\"\\\n#(){}<*?~=! \t")
TWIST_TOKENS = TARGETS + EXPANSION + OPERATORS + SEPARATORS + QUOTED + ESCAPED


def _benign(rng: random.Random, names: list[str], words: list[str]) -> str:
    """A line the rules should admit: known commands, plain words, harmless redirections."""
    commands = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        parts = [rng.choice(names)]
        parts += [rng.choice(words) for _ in range(rng.randrange(0, 4))]
        for _ in range(rng.choice([0, 0, 1, 2])):
            parts.insert(rng.randrange(1, len(parts) + 1), rng.choice(SAFE_REDIRECTS))
        if rng.random() < 0.1:
            parts.append("$(" + rng.choice(names) + " " + rng.choice(words) + ")")
        commands.append(" ".join(parts))
    line = commands[0]
    for command in commands[1:]:
        line += rng.choice([" ; ", " && ", " || ", " | ", "\n", " |& "]) + command
    if rng.random() < 0.1:
        line = "( " + line + " )" if rng.random() < 0.5 else "{ " + line + "; }"
    return line


def _twist(rng: random.Random, line: str) -> str:
    """One small mutation: a shell character or a risky token inserted, or a span replaced."""
    at = rng.randrange(0, len(line) + 1)
    pick = rng.random()
    if pick < 0.4:
        return line[:at] + rng.choice(TWIST_CHARS) + line[at:]
    if pick < 0.8:
        return line[:at] + rng.choice(["", " "]) + rng.choice(TWIST_TOKENS) + line[at:]
    end = min(len(line), at + rng.randrange(1, 4))
    return line[:at] + rng.choice(TWIST_TOKENS) + line[end:]


def _mixed(rng: random.Random, names: list[str], words: list[str], full: list[str]) -> str:
    if rng.random() < 0.35:
        return _line(rng, full)
    line = _benign(rng, names, words)
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        line = _twist(rng, line)
    return line


ALLOW_WORDS = [*PLAIN, "'a b'", '"a b"', "a\\ b", "--", "-n", "'$x'", '"q"', "x=1", "status"]


def gen_allow_line(rng: random.Random) -> str:
    """A line built around ``echo`` and ``git status``."""
    return _mixed(rng, ["echo", "echo", "git status"], ALLOW_WORDS, ALLOW_NAMES)


def gen_read_only_line(rng: random.Random, sandbox: Sandbox) -> str:
    """A line built around the read-only commands and paths in and out of the workspace."""
    if rng.random() < 0.6:
        names = ["cat", "du", "grep -r x", "head", "tail", "wc", "ls", "stat", "realpath", "echo"]
        line = _benign(rng, names, RO_WORDS)
        for _ in range(rng.choice([0, 1, 1, 2])):
            line = _twist(rng, line)
    else:
        line = _line(rng, READ_ONLY_NAMES)
        words = line.split(" ")
        for i in range(len(words)):
            if rng.random() < 0.4:
                words[i] = rng.choice(RO_WORDS)
        line = " ".join(words)
    return line.replace("ABS_SECRET", str(sandbox.outside / "secret.txt"))


def gen_deny_line(rng: random.Random) -> str:
    """A line around ``rm``, spelled, wrapped and computed in many ways."""
    if rng.random() < 0.5:
        line = _benign(rng, ["echo", "ls", "cat", "true", "env", "command"], ALLOW_WORDS)
        for _ in range(rng.choice([1, 1, 2])):
            at = rng.randrange(0, len(line) + 1)
            line = (
                line[:at]
                + rng.choice([" ", ";", "|", "$(", "`", "\n", ""])
                + rng.choice(DENY_NAMES)
                + line[at:]
            )
        return line
    return _line(rng, DENY_NAMES)


# -- the checks ---------------------------------------------------------------------------------


def _outside_rule(call: list[str]) -> bool:
    return not any(tuple(call[: len(p)]) == p for p in ALLOWED_PREFIXES)


def check_allow(line: str, sandbox: Sandbox) -> str | None:
    """``None`` when the claim holds (or the rules do not admit the line), else the violation."""
    if not allows(analyze(line), ALLOW_RULES):
        return None
    seen = sandbox.run(line, "allow")
    sandbox.restore(seen.changed)
    bad = [c for c in seen.invocations if _outside_rule(c)]
    if bad or seen.changed:
        return f"allowed {line!r} but it ran {bad} and changed {seen.changed}"
    return None


def check_read_only(line: str, sandbox: Sandbox) -> str | None:
    """``None`` when the read-only claim holds for ``line`` (or it is not admitted)."""
    if not read_only(analyze(line), sandbox.work, [sandbox.work]):
        return None
    seen = sandbox.run(line, "ro")
    sandbox.restore(seen.changed)
    bad = [c for c in seen.invocations if c and c[0] not in READ_ONLY_COMMANDS]
    if bad or seen.changed or SECRET in seen.output:
        leaked = SECRET in seen.output
        return f"read-only {line!r}: ran {bad}, changed {seen.changed}, leaked secret: {leaked}"
    return None


def check_deny(line: str, sandbox: Sandbox) -> str | None:
    """``None`` when ``Bash(rm)`` holds for ``line`` (denied, asked, or really no ``rm``)."""
    match = denies(analyze(line), DENY_RULES)
    if match.rule is not None or match.uncertain is not None:
        return None
    seen = sandbox.run(line, "deny")
    sandbox.restore(seen.changed)
    ran = [c for c in seen.invocations if c and c[0] == "rm"]
    if ran:
        return f"not denied {line!r} but it ran {ran}"
    return None


__all__ = [
    "Sandbox",
    "check_allow",
    "check_deny",
    "check_read_only",
    "gen_allow_line",
    "gen_deny_line",
    "gen_read_only_line",
]
