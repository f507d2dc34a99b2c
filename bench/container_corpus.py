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
    ("pip install --user", f"{sys.executable} -m pip install -q --user --no-index {WHEEL}" if WHEEL else ""),
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
            pass_fds=container.inherited(write),
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
    bashrc = Path.home() / ".bashrc"
    backups = {bashrc: bashrc.read_bytes()} if bashrc.exists() else {}
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
        for path, data in backups.items():  # the outside run really appended
            path.write_bytes(data)
        Path.home().joinpath(".config/autostart/corpus.desktop").unlink(missing_ok=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
