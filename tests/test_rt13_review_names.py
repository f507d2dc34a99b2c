"""A review of red team 13's fixes (app/core/classifier, app/core/commands/running.py), where no
container guards the protected set: reading a saved output is not held, nor reading or linking the
program's venv and base Python; a `cd` CDPATH or cdable_vars may lead anywhere, `claude`'s options
before `plugin`, gzip's option prefixes and other decompressors lead where they lead; `cd ~/*/` does
not lead into a dot-folder. Each test failed before its fix."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.classifier import names_protected, writes_into
from app.core.commands.running import names_unguarded, unguarded_folders, unguarded_outputs
from app.core.execution import container
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.stdio_client import run

LINUX = sys.platform.startswith("linux")
HOME = "/home/ann"
PROJECT = f"{HOME}/code/site"
PROGRAM = [f"{HOME}/src/cowork/app", f"{HOME}/src/cowork/.venv", f"{HOME}/.pyenv/versions/3.12.3"]
pytestmark = pytest.mark.anyio
REFUSED = "nobody can approve it and it was not run"


@pytest.fixture
def linux_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)
    for name in ("APPDATA", "LOCALAPPDATA", "USERPROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def members(linux_home: None) -> tuple[str, ...]:
    """What `Runs._names_unguarded` passes to names_protected on Linux without bwrap."""
    protected = container.protected_set(
        "linux", {}, HOME, [f"{HOME}/.local/share/cowork-terminal"], PROGRAM, f"{HOME}/.local/lib"
    )
    return (*container.hold_members(protected), *protected.program[:1])


def judged(commands: list[str], members: tuple[str, ...], *, held: bool, cwd: str = PROJECT) -> list[str]:
    """The commands names_protected judges otherwise than `held` says (empty: each as it should be)."""
    return [c for c in commands if names_protected(c, members, cwd=cwd, bare=False) != held]


# -- 6. reading a saved output ------------------------------------------------------------------------


def test_reading_a_saved_output_is_not_held_and_writing_one_is(linux_home: None) -> None:
    paths = AppPaths(data_dir=Path(f"{HOME}/.local/share/cowork-terminal"), log_dir=Path(f"{HOME}/.local/state/ct"))
    outputs = unguarded_outputs(paths)
    assert str(paths.outputs) in outputs
    protected = container.protected_set("linux", {}, HOME, unguarded_folders(paths), PROGRAM, f"{HOME}/.local/lib")
    saved = f"{paths.outputs}/claude-desktop/7.txt"
    reads = [
        f"grep -c error {saved} > /tmp/c.txt",
        f"cp {saved} ./build.log",
        f"head {saved} | tee s.txt",
        f"cat {saved}",
    ]
    assert [c for c in reads if names_unguarded(c, protected, cwd=PROJECT, bare=False, outputs=outputs)] == []
    writes = [
        f"printf 'all tests passed' > {saved}",
        f"rm {saved}",
        "rm -rf ~/.cache/cowork-terminal/outputs/*",
        f"cp notes.txt {paths.outputs}/claude-desktop/",
        f"sed -i 1d {saved}",
    ]
    assert [c for c in writes if not names_unguarded(c, protected, cwd=PROJECT, bare=False, outputs=outputs)] == []


@pytest.mark.skipif(not LINUX, reason="the weaker mode of Linux (bwrap missing)")
async def test_without_bwrap_a_saved_output_is_read_and_copied_and_not_rewritten(
    home: Path, monkeypatch: pytest.MonkeyPatch, user_home: Path, no_container: None
) -> None:
    user = user_home
    async with serving(home) as client:
        first = await run(client, {"command": "seq 1 30000", "cwd": str(user)})
        output = first.get("outputFile")
        assert output, first
        counted = await run(client, {"command": f"grep -c '^3' {output} > c.txt", "cwd": str(user)})
        copied = await run(client, {"command": f"cp {output} ./build.log", "cwd": str(user)})
        teed = await run(client, {"command": f"head -3 {output} | tee s.txt", "cwd": str(user)})
        rewritten = await run(client, {"command": f"printf 'all tests passed\\n' > {output}", "cwd": str(user)})
    assert [r.get("exitCode") for r in (counted, copied, teed)] == [0, 0, 0], (counted, copied, teed)
    assert (user / "c.txt").read_text() == "1112\n"
    assert (user / "build.log").read_text() == Path(output).read_text()
    assert (user / "s.txt").read_text() == "1\n2\n3\n"
    assert REFUSED in rewritten.get("error", ""), rewritten
    assert Path(output).read_text().startswith("1\n2\n")


# -- 8. writes_into: only what is surely written --------------------------------------------------------


def test_writes_into_the_venv_counts_only_what_is_written_there(linux_home: None) -> None:
    venv, base = PROGRAM[1], PROGRAM[2]
    folders = [venv, base]
    reads = [
        f"sed -n 1,5p {base}/lib/python3.12/json/__init__.py > /tmp/x",
        f"cp {venv}/lib/python3.12/site-packages/x.pth /tmp/x",
        f"ln -s {base}/bin/python3 ./py",
        f"cat {venv}/pyvenv.cfg | tee cfg.txt",
        f"diff {venv}/lib/python3.12/site-packages/a.pth b.pth > d.txt",
    ]
    assert [c for c in reads if writes_into(c, folders, cwd=PROJECT)] == []
    writes = [
        f"echo 'import os' > {venv}/lib/python3.12/site-packages/zz.pth",
        f"cp evil.pth {venv}/lib/python3.12/site-packages/",
        f"ln -sf /tmp/evil.py {venv}/lib/python3.12/site-packages/sitecustomize.py",
        f"sed -i 1d {base}/lib/python3.12/site.py",
        f"rm -rf {base}/lib/python3.12/tkinter",
        f"mv {venv}/lib/python3.12/site-packages/x.pth /tmp/",  # moved away: gone from there
        f"tee -a {venv}/lib/python3.12/site-packages/zz.pth < x",
        f"chmod 777 {venv}/bin/python",
    ]
    assert [c for c in writes if not writes_into(c, folders, cwd=PROJECT)] == []


# -- 5. CDPATH from an expansion, cdable_vars ---------------------------------------------------------


def test_a_cd_cdpath_or_cdable_vars_may_lead_anywhere_holds_a_later_relative_write(members: tuple[str, ...]) -> None:
    commands = [
        "C=~/.config; CDPATH=$C cd autostart && echo x > evil.desktop",
        "CDPATH=$(echo ~/.config) cd autostart && echo x > evil.desktop",
        'CDPATH="$HOME/.config" cd autostart && echo x > evil.desktop',
        "shopt -s cdable_vars; cd HOME && echo x >> .b?shrc",
        "shopt -s cdable_vars; cd HOME && echo x >> notes.txt",  # $HOME may be any folder: ~/.ssh
    ]
    assert judged(commands, members, held=True) == []
    unheld = [
        "CDPATH=~/code cd site && echo x > a.txt",
        "unset CDPATH; cd src && make > build.log",
        "shopt -s cdable_vars; cd /tmp/x && echo x > a.txt",  # an absolute folder: no variable looked up
        "C=~/code; CDPATH=$C cd site && ls",  # only reads there
        "shopt -s cdable_vars; cd src && cat README.md",
    ]
    assert judged(unheld, members, held=False) == []


# -- 10. a glob does not lead into a dot-folder ---------------------------------------------------------


def test_a_glob_cd_that_cannot_match_a_dot_folder_is_not_held(members: tuple[str, ...]) -> None:
    unheld = ["cd ~/*/ && touch x", "cd ~/* && echo x > notes.txt", "cd ~/?ode && touch x"]
    assert judged(unheld, members, held=False) == []
    held = [
        "cd ~/.*/ && touch x",
        "cd ~/.con*/autos* && echo x > e.desktop",
        "cd ~/.config/*/ && touch x",  # `*` matches autostart
        "cd ~/.config/?utostart && echo x > e.desktop",
        "cd ~/$d/autostart && echo x > e.desktop",  # an expansion may be `.config`
        'cd ~/"$d"*/autostart && echo x > e.desktop',
    ]
    assert judged(held, members, held=True) == []


# -- 7. claude's options before `plugin` ------------------------------------------------------------------


def test_claude_plugin_after_options_that_take_a_value_is_held(members: tuple[str, ...]) -> None:
    commands = [
        "claude -d api plugin install x",
        "claude --debug api plugin install x",
        "claude -r 1234 plugin install x",
        "claude --resume 1234 plugin enable x",
        "claude --max-turns 3 plugin install x",
        "claude --permission-prompt-tool T plugin install x",
        "claude --json-schema s.json plugin install x",
        "claude --max-budget-usd 5 plugin install x",
        "claude --tools Bash plugin install x",
        "claude --betas b1 plugin marketplace add o/r",
        "claude --add-dir a b plugin install x",  # more than one value: the fallback
        "claude -d plugin install x",  # -d's value is optional
        "claude --max-turns 3 mcp add evil -- /tmp/x",
    ]
    assert judged(commands, members, held=True) == []
    reads = ["claude -d api plugin list", "claude --max-turns 3 -p 'explain the plugin system'", "claude -r 1234"]
    assert judged(reads, members, held=False) == []


# -- 9. gzip's option prefixes, other decompressors -------------------------------------------------------


def test_decompressing_into_a_member_is_held_by_any_spelling(members: tuple[str, ...]) -> None:
    commands = [
        "gzip --suffi=x --decomp ~/.bashrcx",
        "gzip --suf x --decompress ~/.bashrcx",
        "gzip --uncomp -S x ~/.bashrcx",
        'gzip --suffi="$s" -d ~/.bashrcx',  # a suffix only bash knows: any shorter name
        "pigz -d -S x ~/.bashrcx",
        "unpigz -S x ~/.bashrcx",
        "unpigz ~/.bashrc.gz",
        "lzip -d ~/.bashrc.lz",
        "lunzip ~/.bashrc.lz",
        "brotli -d ~/.bashrc.br",
        "brotli --decompress ~/.bashrc.br",
        "zstd -d ~/.bashrc.zst",
        "bzip2 -d ~/.bashrc.bz2",
    ]
    assert judged(commands, members, held=True) == []
    unheld = [
        "gzip --suffi=x --decomp data.csvx",
        "lzip -d ~/Downloads/data.tar.lz",
        "brotli -d site/index.html.br",
        "pigz -k big.log",
        "gzip --stdout notes.txt > n.gz",
        "gzip --suf=.bak --decomp notes.txt.bak",
    ]
    assert judged(unheld, members, held=False) == []
