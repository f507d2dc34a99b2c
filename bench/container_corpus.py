"""Everyday developer commands inside the OS container and outside it: which behave differently.

Run (Linux, bwrap installed): python bench/container_corpus.py
Each command runs twice in a fresh project folder, once as `bash -c` and once as the executor starts
it in the container (with the protected set of a throwaway app home); a markdown table of exit codes
follows, differences marked. Commands whose program is missing are left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.execution import container  # noqa: E402

TIMEOUT_S = 120
BASE = getattr(sys, "_base_executable", sys.executable)
WHEEL = next(iter(Path("/").glob("root/.pyenv/versions/*/lib/python3*/test/wheeldata/*.whl")), None)

CORPUS: list[tuple[str, str]] = [
    ("git init, add, commit", "git init -q . && echo a > a && git add a && git -c user.name=a -c user.email=a@b "
     "commit -qm first && git log --oneline | wc -l"),
    ("git status, diff, log", "git init -q . && git status --short && git diff && git log --oneline 2>/dev/null; true"),
    ("git clone of a local repo", "git init -q src && git -C src -c user.name=a -c user.email=a@b commit -q "
     "--allow-empty -m x && git clone -q src dst && ls dst/.git >/dev/null"),
    ("python -m venv", f"{sys.executable} -m venv v && v/bin/python -c 'import sys; print(sys.prefix)'"),
    ("pip install a local wheel into a venv", f"{sys.executable} -m venv v && v/bin/pip install -q --no-index "
     f"{WHEEL} && v/bin/python -m pip show -q wheel" if WHEEL else ""),
    # With the interpreter the venv was made from (a venv refuses --user); outside, removed again.
    ("pip install --user", f"{BASE} -m pip install -q --user --no-index {WHEEL} && {BASE} -m pip uninstall -q -y "
     f"{WHEEL.name.split('-')[0]}" if WHEEL else ""),
    ("python -m pytest --version", f"{sys.executable} -m pytest --version"),
    ("npm init", "npm init -y >/dev/null && test -f package.json"),
    ("node -e", "node -e 'console.log(1+1)'"),
    ("make", "printf 'all:\\n\\techo built > out\\n' > Makefile && make -s && cat out"),
    ("gcc hello", "printf 'int main(){return 0;}' > h.c && cc h.c -o h && ./h"),
    ("tar and gzip", "mkdir d && echo x > d/f && tar czf d.tgz d && rm -r d && tar xzf d.tgz && cat d/f"),
    ("sed -i, cp -r, mv, ln -s, rm -rf in the project", "mkdir p && echo a > p/f && sed -i s/a/b/ p/f && "
     "cp -r p q && mv q r && ln -s r s && rm -rf p r s"),
    ("files in /tmp", "f=$(mktemp) && echo x > $f && rm $f"),
    ("background job that outlives the command", "(setsid sleep 1 >/dev/null 2>&1 &) ; echo started"),
    ("ps sees other processes", "test $(ps -e --no-headers | wc -l) -gt 5"),
    ("curl --version", "curl --version >/dev/null"),
    ("docker version (client and socket)", "docker version >/dev/null 2>&1"),
    ("sudo -n true", "sudo -n true"),
    ("X11 client (xdpyinfo on $DISPLAY)", "xdpyinfo >/dev/null" if os.environ.get("DISPLAY") else ""),
    ("systemctl --user", "systemctl --user is-system-running"),
    ("append to ~/.bashrc", "echo '# corpus' >> ~/.bashrc"),
    ("write ~/.config/autostart/x.desktop", "touch ~/.config/autostart/corpus.desktop"),
    ("ssh -V", "ssh -V 2>/dev/null"),
    # More of a developer's day (issue 21 asks for about 50): version control, builds of other
    # languages, data tools, keys, containers' and clusters' clients, tracing.
    ("git branch, merge, stash", "git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty "
     "-m x && git checkout -qb f && echo a > a && git add a && git -c user.name=a -c user.email=a@b commit -qm a "
     "&& git checkout -q - && git -c user.name=a -c user.email=a@b merge -q f && echo b > a && git stash -q "
     "&& git stash pop -q"),
    ("git worktree add", "git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x "
     "&& git worktree add -q ../wt-corpus-$$ && git worktree remove ../wt-corpus-$$"),
    ("git config --global (~/.gitconfig)", "git config --global corpus.test 1 && git config --global --unset "
     "corpus.test"),
    ("python -m unittest", f"mkdir t && printf 'import unittest\\nclass T(unittest.TestCase):\\n def test(s): "
     f"pass\\n' > t/test_x.py && {sys.executable} -m unittest discover -q -s t"),
    ("python -m compileall", f"echo 'x = 1' > m.py && {sys.executable} -m compileall -q m.py && ls __pycache__"),
    ("python writes and reads sqlite", f"{sys.executable} -c \"import sqlite3; c = sqlite3.connect('d.db'); "
     f"c.execute('create table t(x)'); c.commit()\" && sqlite3 d.db .tables"),
    ("pip --version and pip list in a venv", f"{sys.executable} -m venv v && v/bin/pip --version && v/bin/pip "
     "list -q >/dev/null"),
    ("npm install a local package", "mkdir lib && (cd lib && npm init -y >/dev/null) && npm init -y >/dev/null && "
     "npm install -q --no-audit --no-fund ./lib >/dev/null && ls node_modules/lib"),
    ("node --test", "printf 'const t=require(\"node:test\");t(\"a\",()=>{});' > a.test.js && node --test "
     "a.test.js >/dev/null"),
    ("npx --version", "npx --version >/dev/null"),
    ("g++ hello", "printf 'int main(){return 0;}' > h.cpp && g++ h.cpp -o h && ./h"),
    ("cmake and ninja", "printf 'cmake_minimum_required(VERSION 3.10)\\nproject(p C)\\nadd_executable(h h.c)\\n' "
     "> CMakeLists.txt && printf 'int main(){return 0;}' > h.c && cmake -S . -B b -G Ninja >/dev/null && "
     "ninja -C b >/dev/null && b/h"),
    ("rustc hello", "printf 'fn main(){}' > h.rs && rustc h.rs -o h 2>/dev/null && ./h"),
    ("cargo new and build (offline)", "cargo new -q --vcs none c && cd c && cargo build -q --offline && "
     "./target/debug/c >/dev/null"),
    ("javac and java", "printf 'class H{public static void main(String[] a){}}' > H.java && javac H.java && "
     "java H"),
    ("mvn --version", "mvn --version >/dev/null"),
    ("perl one-liner edits a file", "echo a > f && perl -pi -e s/a/b/ f && grep -q b f"),
    ("jq", "echo '{\"a\":1}' | jq -e .a >/dev/null"),
    ("zip and unzip", "echo x > f && zip -q z.zip f && rm f && unzip -q z.zip && cat f"),
    ("xz and zstd", "echo x > f && xz -k f && zstd -q f && ls f.xz f.zst >/dev/null"),
    ("diff and patch", "echo a > f && echo b > g && diff -u f g > p; patch -s f < p && cmp f g"),
    ("find, grep, awk", "mkdir -p s/t && echo 'x 1' > s/t/f && find . -name f | xargs grep -l x | "
     "xargs awk '{print $2}'"),
    ("openssl: a digest and a key", "echo x | openssl dgst -sha256 >/dev/null && openssl genpkey -algorithm "
     "ed25519 -out k.pem 2>/dev/null"),
    ("ssh-keygen into the project", "ssh-keygen -q -t ed25519 -N '' -f ./key && test -f key.pub"),
    ("gpg --list-keys (~/.gnupg, its agent)", "gpg --batch --list-keys >/dev/null 2>&1"),
    ("docker ps (the daemon's socket)", "docker ps >/dev/null 2>&1"),
    ("kubectl version --client", "kubectl version --client >/dev/null 2>&1"),
    ("strace a child", "strace -f -o /dev/null true"),
    ("lsof of the shell", "lsof -p $$ >/dev/null"),
    ("crontab -l (set-gid)", "crontab -l >/dev/null 2>&1; test $? -ne 127"),
    ("write ~/.claude.json", "touch ~/.claude.json"),
    ("a folder in the home outside the project", "mkdir -p ~/corpus-project-$$ && rmdir ~/corpus-project-$$"),
]  # fmt: skip


def run(line: str, cwd: str, inside: container.Container | None) -> int:
    """The command's exit code; inside the container, as our init reports it on its status fd."""
    argv = ["bash", "-c", line]
    if inside is None:
        try:
            return subprocess.run(argv, cwd=cwd, capture_output=True, timeout=TIMEOUT_S, check=False).returncode
        except subprocess.TimeoutExpired:
            return -1
    read, write = os.pipe()
    try:
        subprocess.run(
            inside.wrap(argv, write),
            cwd=cwd,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
            pass_fds=container.inherited(write, read),
        )
    except subprocess.TimeoutExpired:
        return -1
    finally:
        os.close(write)
    with os.fdopen(read) as status:
        said = status.read().strip()
    return int(said) if said else -2


def main() -> None:
    home = tempfile.mkdtemp(prefix="corpus-home-")
    found = container.linux_container([home])
    if not found.on:
        raise SystemExit(f"bwrap cannot run here: {found.detail}")
    # The outside runs really write these: put them back as they were (or remove them) afterwards.
    touched = [Path.home() / ".bashrc", Path.home() / ".claude.json"]
    backups = {path: path.read_bytes() if path.exists() else None for path in touched}
    print(f"as uid {os.getuid()}; {len(found.mounts) // 3} binds\n")
    print("| command | outside | inside | |\n| --- | --- | --- | --- |")
    try:
        for label, line in CORPUS:
            if not line:
                continue
            codes = []
            for inside in (False, True):
                work = tempfile.mkdtemp(prefix="corpus-")
                codes.append(run(line, work, found if inside else None))
                shutil.rmtree(work, ignore_errors=True)
            mark = "**differs**" if codes[0] != codes[1] else ""
            print(f"| {label} | {codes[0]} | {codes[1]} | {mark} |")
    finally:
        for path, data in backups.items():
            if data is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(data)
        Path.home().joinpath(".config/autostart/corpus.desktop").unlink(missing_ok=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
