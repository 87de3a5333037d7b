#!/usr/bin/env python3
"""Checks that scripts/setup.sh installs every dependency of the project's
Python code and lit tests, on this very machine, even where the dependency
is already there for another reason (installed by hand, or pulled in by
another package).

    check_deps.py [--root DIR] [--build DIR] [--llvm-bin DIR]

Run it with `/usr/bin/python3 -I` (as test/Tools/deps.test does): the
isolated interpreter sees neither PYTHONPATH nor the user's site-packages.

Python modules. Every import (at any depth) of every Python file of the
repository (*.py, lit.cfg.py, lit.local.cfg; build trees, node_modules and
hidden folders left out) and of the `%python -c` code of lit RUN lines is
  * the standard library (sys.stdlib_module_names): fine;
  * a module of the repository (a .py file or package of that name): fine;
  * named in the file's device-only marker: fine (see below);
  * else it must be importable by this interpreter, from a file that dpkg
    says belongs to a package that scripts/setup.sh installs.
Device-only marker: a file whose code only runs on the GPU machine
(PyTorch, transformers, onnxruntime's Python package, ...) names the
modules it may import from there in a comment line, at its first column:

    # fp8-opt-deps: device-only (torch, transformers)

Each module named must be imported by the file.

Programs. Every command of every lit RUN line (the first word of each
pipeline element, what `not` and `env` run) and every program substitution
(%python, %node, %lit, %mlir-runner, resolved as test/lit.cfg.py does) is
  * a file of the test, its build output, or a tool the build makes
    (BUILD/bin): fine;
  * else found in LLVM_BIN, then on PATH, and owned by a package that
    scripts/setup.sh installs; lit's shell builtins need no file.

"Installs" means listed in setup.sh's PKGS array or a `missing+=(name)`
line, or Essential to Debian (coreutils, grep, sed, diffutils, ...: always
there). A package pulled in only as a dependency of a listed one does not
count: list what is used.

Prints what it found, one `error:` line per problem (where, what is
missing, what to add), then `deps: ok` or `deps: N errors`; the exit
status is 1 on any error.
"""
import argparse
import ast
import importlib.machinery
import os
import re
import shlex
import shutil
import subprocess
import sys

SKIP_DIRS = {"node_modules", "__pycache__"}
LIT_CONFIGS = {"lit.cfg.py", "lit.local.cfg"}
LIT_SUFFIXES = (".test", ".mlir", ".onnxtext")
# Folders that test/lit.cfg.py excludes from the suite (their RUN lines
# never run).
LIT_EXCLUDES = {"Inputs", "consumer", "reference", "unittests", "models"}
LIT_BUILTINS = {"cd", "echo", "export", "mkdir", "rm", "diff", "cat", ":",
                "true", "false", "printf", "pushd", "popd", "umask",
                # bash builtins (RUN lines run under bash)
                "wait", "exit", "set", "shift", "read", "trap", "eval",
                "command", "type", "return", "break", "continue"}
# lit substitutions that name files of the test, the sources or the build
# (not programs to install).
PROJECT_FILES = {"%t", "%S", "%s", "%fp8_obj", "%fp8_src", "%reference",
                 "%gpu_inputs", "%ort_prefix", "%shared_models"}
SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", "|&"}
MARKER = re.compile(r"^# fp8-opt-deps: device-only \(([^)]*)\)\s*$")


class Checker:
    def __init__(self, root, build, llvm_bin):
        self.root, self.build, self.llvm_bin = root, build, llvm_bin
        self.installed = setup_packages(os.path.join(root, "scripts", "setup.sh"))
        self.installed |= essential_packages()
        self.files = list(self.walk())
        self.uses = {}         # (kind, name) -> (what, file, [where...])
        self.errors = []
        self.device_only = {}  # file -> modules

    def walk(self):
        """Files of the repository; build trees (a CMakeCache.txt), hidden
        and generated folders left out."""
        for top, dirs, files in os.walk(self.root):
            if "CMakeCache.txt" in files or os.path.abspath(top) == self.build:
                dirs[:] = []
                continue
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
            yield from (os.path.join(top, f) for f in sorted(files))

    def rel(self, path):
        return os.path.relpath(path, self.root)

    def error(self, where, message):
        self.errors.append(f"error: {where}: {message}")

    def use(self, kind, name, what, file, where):
        self.uses.setdefault((kind, name), (what, file, []))[2].append(where)

    def lit_tests(self):
        for path in self.files:
            parts = self.rel(path).split(os.sep)
            if path.endswith(LIT_SUFFIXES) and parts[0] == "test" and \
                    not LIT_EXCLUDES & set(parts[1:-1]):
                yield path

    # -- Python modules ------------------------------------------------------

    def check_python(self):
        local = {os.path.basename(p)[:-3] for p in self.files if p.endswith(".py")}
        local |= {os.path.basename(os.path.dirname(p)) for p in self.files
                  if p.endswith("/__init__.py")}
        for path in self.files:
            if not (path.endswith(".py") or os.path.basename(path) in LIT_CONFIGS):
                continue
            text = open(path, encoding="utf-8").read()
            device = set()
            for line in text.splitlines():
                m = MARKER.match(line)
                if m:
                    device |= {n.strip() for n in m.group(1).split(",") if n.strip()}
            found = module_imports(text, self.rel(path))
            for name in sorted(device - {n.split(".")[0] for _, n in found}):
                self.error(self.rel(path), f"the device-only marker names '{name}', "
                           "which the file does not import: drop it from the marker")
            if device:
                self.device_only[self.rel(path)] = sorted(device)
            lit_config = os.path.basename(path) in LIT_CONFIGS
            for number, name in found:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in local | device:
                    self.check_module(f"{self.rel(path)}:{number}", name, lit_config)
        for path in self.lit_tests():
            for number, code in python_snippets(path):
                where = f"{self.rel(path)}:{number}"
                for _, name in module_imports(code, where):
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in local:
                        self.check_module(where, name, False)

    def check_module(self, where, name, lit_config):
        parts = name.split(".")
        path = sys.path[:]
        if lit_config:
            # lit's configuration files also see lit's own modules, from
            # the folder that LLVM's lit script puts on sys.path.
            path.insert(0, os.path.join(os.path.dirname(self.llvm_bin), "utils", "lit"))
        spec = importlib.machinery.PathFinder.find_spec(parts[0], path)
        module = parts[0]
        if spec is not None and spec.origin is None and len(parts) > 1:
            # A namespace package (google): the files are one level down.
            module = ".".join(parts[:2])
            spec = importlib.machinery.PathFinder.find_spec(
                parts[1], list(spec.submodule_search_locations))
        found = spec is not None and spec.origin is not None
        self.use("module", module, f"imports '{module}'", spec.origin if found else None, where)

    # -- Programs of lit RUN lines -------------------------------------------

    def check_programs(self):
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
            else shutil.which("python3")
        programs = {
            "%python": python, "%node": shutil.which("node") or "node",
            "%lit": os.path.join(self.llvm_bin, "lit"),
            "%mlir-runner": os.path.join(self.llvm_bin, "mlir-runner"),
        }
        for path in self.lit_tests():
            for number, command in run_lines(path):
                where = f"{self.rel(path)}:{number}"
                words = command_words(command)
                words += [w for w in shell_words(command) if w in programs and w not in words]
                for word in words:
                    substitution = re.match(r"%[\w-]+", word)
                    if substitution and substitution.group() in PROJECT_FILES:
                        continue
                    if substitution and word not in programs:
                        self.error(where, f"runs '{word}', a lit substitution that "
                                   "scripts/check_deps.py does not know: add it there")
                    else:
                        self.check_program(where, word, programs.get(word, word))

    def check_program(self, where, word, program):
        if "/" in program:
            file = program
        elif os.path.exists(os.path.join(self.build, "bin", program)):
            return  # built by the project
        elif os.path.exists(os.path.join(self.llvm_bin, program)):
            file = os.path.join(self.llvm_bin, program)
        else:
            file = shutil.which(program)
        if file is None or not os.path.exists(file):
            if program not in LIT_BUILTINS:
                self.error(where, f"runs '{word}', which is not installed: add the "
                           "Debian package that provides it to PKGS in scripts/setup.sh")
            return
        self.use("program", word, f"runs '{word}'", file, where)

    # -- Packages ------------------------------------------------------------

    def check_owners(self):
        """Every module and program used must come from a package that
        setup.sh installs; one error per module or program."""
        owners = package_owners(sorted({f for _, f, _ in self.uses.values() if f}))
        self.found = {}
        for (kind, name), (what, file, wheres) in sorted(self.uses.items()):
            where = wheres[0] + (f" (and {len(wheres) - 1} more)" if len(wheres) > 1 else "")
            packages = owners.get(file, set())
            if file is None:
                self.error(where, f"{what}, which {sys.executable} cannot import: add the "
                           "Debian package that provides it to PKGS in scripts/setup.sh, "
                           "or, for code that only runs on the GPU machine, name it in a "
                           "`# fp8-opt-deps: device-only (...)` line")
            elif packages & self.installed:
                self.found[kind, name] = sorted(packages & self.installed)[0]
            elif packages:
                self.error(where, f"{what} from {file}, of package "
                           f"{', '.join(sorted(packages))}, which scripts/setup.sh does "
                           "not install: add it to PKGS there")
            else:
                self.error(where, f"{what} from {file}, which no Debian package owns "
                           "(installed by hand?): add the Debian package that provides "
                           "it to PKGS in scripts/setup.sh")

    def report(self):
        for kind in ("module", "program"):
            print(f"{kind}s: " + ", ".join(f"{n} ({p})" for (k, n), p in
                                           sorted(self.found.items()) if k == kind))
        print("device-only: " + ", ".join(
            f"{f} ({', '.join(m)})" for f, m in sorted(self.device_only.items())))
        for e in self.errors:
            print(e)
        n = len(self.errors)
        print(f"deps: {n} error{'s' * (n != 1)}" if n else "deps: ok")
        return 1 if self.errors else 0


def setup_packages(path):
    """Packages scripts/setup.sh installs: its PKGS=( ... ) array and its
    `missing+=(name)` lines."""
    text = open(path).read()
    m = re.search(r"^PKGS=\((.*?)\)", text, re.S | re.M)
    if not m:
        raise SystemExit(f"error: {path}: no PKGS=( ... ) array")
    body = "\n".join(line.split("#")[0] for line in m.group(1).splitlines())
    return set(body.split()) | set(re.findall(r"missing\+=\(([\w.+-]+)\)", text))


def essential_packages():
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Essential}\n"],
                         capture_output=True, text=True, check=True).stdout
    return {line.split("\t")[0] for line in out.splitlines() if line.endswith("\tyes")}


def package_owners(files):
    """{file: packages that own it (or, for a symbolic link, its target)},
    from one dpkg-query -S; with Debian's merged /usr, /bin/x is /usr/bin/x."""
    names = {}
    for file in files:
        aliases = {file, os.path.realpath(file)}
        aliases |= {a[len("/usr"):] for a in aliases if a.startswith("/usr/")}
        aliases |= {"/usr" + a for a in aliases if not a.startswith("/usr/")}
        for a in aliases:
            names.setdefault(a, set()).add(file)
    # Exit status 1 when some path has no package: those get none.
    out = subprocess.run(["dpkg-query", "-S"] + sorted(names),
                         capture_output=True, text=True).stdout
    owners = {}
    for line in out.splitlines():
        packages, _, path = line.partition(": ")
        if path in names and not packages.startswith("diversion by"):
            for file in names[path]:
                owners.setdefault(file, set()).update(
                    p.strip().split(":")[0] for p in packages.split(","))
    return owners


def module_imports(code, where):
    """(line, dotted module name) of every absolute import in `code`."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        raise SystemExit(f"error: {where}: {err}")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, node.module))
    return sorted(found)


LIT_CONDITIONAL = re.compile(
    r"%if\s+[^%]*?%\{(.*?)%\}(?:\s*%else\s*%\{(.*?)%\})?", re.S)


def lit_branches(command):
    """Every command a RUN line can be once lit's `%if FEATURE %{ A %}
    %else %{ B %}` substitutions are decided (each branch is checked)."""
    m = LIT_CONDITIONAL.search(command)
    if not m:
        return [command]
    out = []
    for branch in (m.group(1), m.group(2) or ""):
        out += lit_branches(command[:m.start()] + branch + command[m.end():])
    return out


def run_lines(path):
    """(first line number, command) of every RUN: command of a lit test,
    continuation lines (a trailing backslash) joined, one per branch of its
    lit conditionals."""
    return [(number, branch) for number, command in raw_run_lines(path)
            for branch in lit_branches(command)]


def raw_run_lines(path):
    commands, current, start = [], None, 0
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.search(r"\bRUN:(.*)$", line)
        if not m:
            continue
        text = m.group(1).rstrip()
        if current is None:
            current, start = "", number
        if text.endswith("\\"):
            current += text[:-1] + " "
        else:
            commands.append((start, current + text))
            current = None
    return commands


def shell_words(command):
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


# Shell grammar words: a command follows the first group, none is one.
SHELL_BEFORE_COMMAND = {"do", "then", "else", "elif", "!", "{", "if", "while",
                        "until"}
SHELL_KEYWORDS = SHELL_BEFORE_COMMAND | {"done", "fi", "}", "for", "in", "case",
                                         "esac"}


def command_words(command):
    """The programs a shell command line runs: the first word of each
    pipeline element (also inside loops, conditionals and $(...)), and what
    `not` and `env` run."""
    words, expect, in_for = [], True, False
    for word in shell_words(command):
        if in_for:  # for NAME in WORDS; do ...: no command until `do`
            in_for = word not in (";", "do")
            expect = not in_for
            continue
        if word == "for" and expect:
            in_for = True
        elif word in SHELL_KEYWORDS and expect:
            expect = word in SHELL_BEFORE_COMMAND
        elif word == ")":
            expect = False  # the end of a subshell or of $(...)
        elif word in SEPARATORS:
            expect = True
        elif expect:
            after = words[-1] if words else ""
            if re.match(r"^\w+=", word) or (after in ("not", "env") and word.startswith("-")):
                continue  # VAR=value, options of not and env
            words.append(word)
            expect = word in ("not", "env")
    return words


def python_snippets(path):
    """(line, code) of every `%python -c CODE` of a lit test's RUN lines."""
    for number, command in run_lines(path):
        words = shell_words(command)
        for i in range(len(words) - 2):
            if words[i] == "%python" and words[i + 1] == "-c":
                yield number, words[i + 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="repository to check (default: the one of this script)")
    ap.add_argument("--build", default=None, help="build tree (default ROOT/build)")
    ap.add_argument("--llvm-bin", default="/usr/lib/llvm-22/bin",
                    help="LLVM's tools, where lit finds them (default /usr/lib/llvm-22/bin)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    checker = Checker(root, os.path.abspath(args.build or os.path.join(root, "build")),
                      args.llvm_bin)
    checker.check_python()
    checker.check_programs()
    checker.check_owners()
    return checker.report()


if __name__ == "__main__":
    sys.exit(main())
