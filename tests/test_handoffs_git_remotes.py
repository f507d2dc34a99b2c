"""git's remotes read as git reads them (a red team, 2026-12-05, each run with git 2.39: git contacted
this machine while the command was moderate or safe). A remote on this machine over ssh makes this
machine's sshd start git-upload-pack or git-receive-pack (or what `remote.X.uploadpack` names)
outside the command's container: such a command is held. git chooses a remote from more than
`remote.X.url`: `branch.B.remote` and `pushRemote`, `remote.pushDefault` (each may be a URL),
groups, the old `remotes/` and `branches/` files, includes, and its submodules' own remotes; and a
config file is read as git reads it (continuation lines, quotes anywhere, `[remote.Backup]`)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify, git_settings
from tests.handoff_checks import held_outside, tier_apart

HERE = "localhost:/srv/x.git"  # reached over ssh on this machine


def git(folder: Path, *args: str) -> None:
    subprocess.run(  # noqa: S603 (git from the PATH, our own arguments)
        ["git", "-C", str(folder), "-c", "user.name=ana", "-c", "user.email=ana@example.com", *args],  # noqa: S607
        check=True,
        capture_output=True,
    )


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with an empty project folder; git's system file left out, as for git itself."""
    folder = tmp_path / "ana"
    (folder / ".ssh").mkdir(parents=True)
    (folder / "project").mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return folder


@pytest.fixture
def repository(user_home: Path) -> Path:
    """A repository on branch main with `origin` on another machine."""
    folder = user_home / "project"
    git(folder, "init", "-q", "-b", "main")
    git(folder, "remote", "add", "origin", "git@github.com:ana/x.git")
    return folder


def cannot_tell(command: str, cwd: Path) -> None:
    result = classify(command, cwd=str(cwd))
    assert result.tier is Tier.DESTRUCTIVE, (command, result)
    assert result.danger is Danger.CANNOT_TELL, (command, result)
    assert "cannot tell which repository's settings it reads" in result.reasons[0], result


# ---- where git finds its settings, and how it reads a file


@pytest.mark.parametrize(
    ("environ", "files"),
    [
        ({}, ["/h/.config/git/config", "/h/.gitconfig", "/etc/gitconfig"]),
        ({"XDG_CONFIG_HOME": "/x"}, ["/x/git/config", "/h/.gitconfig", "/etc/gitconfig"]),
        ({"XDG_CONFIG_HOME": ""}, ["/h/.config/git/config", "/h/.gitconfig", "/etc/gitconfig"]),  # empty: unset
        ({"GIT_CONFIG_GLOBAL": "/g"}, ["/g", "/etc/gitconfig"]),
        ({"GIT_CONFIG_GLOBAL": ""}, ["/etc/gitconfig"]),  # empty: no user's file at all
        ({"GIT_CONFIG_SYSTEM": "/s"}, ["/h/.config/git/config", "/h/.gitconfig", "/s"]),
        ({"GIT_CONFIG_SYSTEM": ""}, ["/h/.config/git/config", "/h/.gitconfig"]),
        ({"GIT_CONFIG_NOSYSTEM": "1"}, ["/h/.config/git/config", "/h/.gitconfig"]),
        ({"GIT_CONFIG_NOSYSTEM": "Yes"}, ["/h/.config/git/config", "/h/.gitconfig"]),
        ({"GIT_CONFIG_NOSYSTEM": "0"}, ["/h/.config/git/config", "/h/.gitconfig", "/etc/gitconfig"]),  # a boolean
        ({"GIT_CONFIG_NOSYSTEM": "false"}, ["/h/.config/git/config", "/h/.gitconfig", "/etc/gitconfig"]),
        ({"GIT_CONFIG_NOSYSTEM": ""}, ["/h/.config/git/config", "/h/.gitconfig", "/etc/gitconfig"]),
    ],
)
def test_the_files_git_reads_as_its_variables_say(environ: dict[str, str], files: list[str]) -> None:
    assert git_settings.git_config_files(environ, "/h") == files


TRICKY_CONFIGS = [
    '[remote "a"]\n\turl = local\\\nhost:/x\n',  # a backslash-newline goes on with the next line
    '[remote "a"]\n\turl = local"host":/x # a comment\n',  # quotes anywhere in a value
    '[remote "a"]\n\turl = "a b;#c"  ; comment\n\tpushurl = x\\ty\\n\\\\\\"z\n',  # escapes
    "[remote.Backup]\n\turl = localhost:/x\n",  # the old syntax: all of it in lower case
    '[remote "b\\k"]\n\turl = localhost:/x\n[Remote "CaSe"] URL = y\n',  # `\k` as `k`; a key after the header
    '[remote "q\\"x"]\n\turl = z\n[a]\n\tb = "x ;y"z\\\n  w\n',  # an escaped quote; a value over two lines
    "\ufeff[core]\r\n\tbare\r\n\tname =   two\t\twords  \r\n",  # a byte-order mark, CRLF, no `=`, tabs as spaces
]


@pytest.mark.parametrize("text", TRICKY_CONFIGS)
def test_a_config_is_read_as_git_lists_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config"
    path.write_bytes(text.encode())
    done = subprocess.run(
        ["git", "config", "--list", "--null", "--file", str(path)],  # noqa: S607 (git from the PATH)
        capture_output=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    listed = [tuple(entry.decode().partition("\n")[::2]) for entry in done.stdout.split(b"\0")[:-1]]
    read = git_settings.config_entries(text)
    assert read[: len(listed)] == listed


def test_where_remotes_lead_from_the_settings() -> None:
    config = git_settings.config_of([
        ("remote.origin.url", "git@github.com:a/x.git"),
        ("remote.backup.url", "https://example.com/x"),
        ("remote.backup.pushurl", HERE),
        ("remote.localhost:/y.uploadpack", "touch /tmp/x"),  # a remote named by a URL, with no url
        ("branch.main.remote", "localhost:/z"),
        ("branch.main.pushremote", "ana@127.0.0.1:/p"),
        ("remotes.all", "origin  team/b\tall"),  # a group, holding itself too
        ("url.localhost:/r/.insteadof", "gh:"),
        ("url.ana@localhost:/w/.pushinsteadof", "gw:"),
    ])  # fmt: skip
    urls = git_settings.remote_urls
    assert urls(config, ["backup"], push=False) == ["backup", "https://example.com/x"]  # no pushurl for a fetch
    assert HERE in urls(config, ["backup"], push=True)
    assert "localhost:/y" in urls(config, None, push=False)  # git takes its name for its URL
    assert "localhost:/z" in urls(config, None, push=False)  # the remote the branch names, a URL
    assert "ana@127.0.0.1:/p" not in urls(config, None, push=False)  # pushRemote: pushes only
    assert "ana@127.0.0.1:/p" in urls(config, None, push=True)
    assert urls(config, ["all"], push=False) == ["all", "origin", "team/b", "git@github.com:a/x.git"]
    rewritten = urls(config, [], push=False, given=["gh:x.git", "gw:y.git"])
    assert rewritten == ["gh:x.git", "gw:y.git", "localhost:/r/x.git"]  # pushInsteadOf: pushes only
    assert "ana@localhost:/w/y.git" in urls(config, [], push=True, given=["gw:y.git"])


# ---- a repository whose settings lead a remote to this machine


@pytest.mark.parametrize(
    ("settings", "command"),
    [
        ([("branch.main.remote", HERE)], "git fetch"),  # the branch's remote is a URL
        ([("branch.main.remote", HERE)], "git pull"),
        ([("branch.main.remote", HERE)], "git push"),
        ([("branch.main.remote", HERE)], "git ls-remote"),
        ([("branch.main.pushRemote", HERE)], "git push"),
        ([("remote.pushDefault", HERE)], "git push"),
        ([("remotes.all", f"origin {HERE}")], "git fetch all"),  # a group
        ([("remotes.all", f"origin {HERE}")], "git remote update all"),
        ([("remotes.all", f"origin {HERE}")], "git fetch --multiple origin all"),
        ([("remotes.all", f"origin {HERE}")], "git fetch --mult origin all"),  # a prefix of the option
        ([("remotes.all", f"origin {HERE}")], "git pull --all"),
        ([("remote.team/backup.url", HERE)], "git push team/backup"),  # names git takes that a word pattern did not
        ([("remote.b~k.url", HERE)], "git fetch b~k"),
        ([("remote.b@k.url", HERE)], "git ls-remote b@k"),
        ([("remote.team/backup.url", HERE)], "git fetch --multiple origin team/backup"),
        ([("remote.team/backup.url", HERE)], "git remote prune -n team/backup"),  # a dry run still asks it
        # the red team's chain: a remote named by a URL, its upload-pack set, chosen by the branch
        ([("remote.localhost:/x.uploadpack", "touch /tmp/PWNED"), ("branch.main.remote", "localhost:/x")], "git fetch"),
    ],
)
def test_a_remote_git_chooses_or_is_named_that_is_this_machine_is_held(
    repository: Path, settings: list[tuple[str, str]], command: str
) -> None:
    for key, value in settings:
        git(repository, "config", key, value)
    held_outside(command, str(repository), deciding=True)


def test_what_contacts_no_remote_on_this_machine_keeps_its_tier(repository: Path) -> None:
    git(repository, "config", "remote.backup.url", "https://example.com/x.git")
    git(repository, "config", "remote.backup.pushurl", HERE)
    git(repository, "config", "remote.local.url", HERE)
    git(repository, "config", "branch.main.pushRemote", HERE)
    cwd = str(repository)
    assert classify("git fetch backup", cwd=cwd).tier is Tier.MODERATE  # a fetch never uses pushurl
    held_outside("git push backup", cwd, deciding=True)
    assert classify("git ls-remote --get-url local", cwd=cwd).tier is Tier.SAFE  # prints the URL only
    assert classify("git ls-remote --get local", cwd=cwd).tier is Tier.SAFE
    assert classify("git fetch origin", cwd=cwd).tier is Tier.MODERATE
    assert classify("git remote show -n local", cwd=cwd).tier is Tier.SAFE


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("[remote.Backup]\n\turl = local\\\nhost:/x\n", "git push backup"),
        ('[remote "backup"]\n\turl = local"host":/x\n', "git push backup"),
        ('[remote "b\\k"]\n\turl = localhost:/x\n', "git push bk"),
        ('[branch "main"]\n\tremote = "localhost:/x"\n', "git fetch"),
        ("[include]\n\tpath = more\n", "git push backup"),  # relative to the file that includes it
        ('[includeIf "onbranch:elsewhere"]\n\tpath = more\n', "git push backup"),  # any condition may be met
        ('[includeIf "gitdir:/nowhere/"]\n\tpath = ~/more.inc\n', "git push backup"),
    ],
)
def test_a_repositorys_config_is_read_as_git_reads_it(repository: Path, text: str, command: str) -> None:
    with (repository / ".git" / "config").open("a") as config:
        config.write(text)
    (repository / ".git" / "more").write_text('[remote "backup"]\n\turl = localhost:/x\n')
    Path(os.environ["HOME"], "more.inc").write_text('[remote "backup"]\n\turl = localhost:/x\n')
    held_outside(command, str(repository), deciding=True)


def test_the_users_config_and_the_file_it_includes_are_read(user_home: Path) -> None:
    (user_home / ".gitconfig").write_text("[include]\n\tpath = ~/.gitconfig.local\n")
    (user_home / ".gitconfig.local").write_text('[url "localhost:/srv/"]\n\tinsteadOf = gh:\n')
    held_outside("git clone gh:x.git", str(user_home / "project"), deciding=True)
    assert classify("git clone other:x.git", cwd=str(user_home / "project")).tier is Tier.MODERATE


def test_the_old_remotes_and_branches_files_are_read(repository: Path) -> None:
    (repository / ".git" / "remotes").mkdir(exist_ok=True)  # git init makes `branches/`
    (repository / ".git" / "remotes" / "old").write_text(f"URL: {HERE}\nPull: refs/heads/main:refs/heads/old\n")
    (repository / ".git" / "branches").mkdir(exist_ok=True)
    (repository / ".git" / "branches" / "older").write_text(f"{HERE}#main\n")
    held_outside("git fetch old", str(repository), deciding=True)
    held_outside("git pull older", str(repository), deciding=True)
    held_outside("git fetch", str(repository), deciding=True)  # `origin` could be one of them


def test_the_settings_read_with_their_includes_are_what_git_lists(repository: Path, user_home: Path) -> None:
    """The classifier reads git's settings itself (git is not started: an include could make it
    wait): what git lists with its includes, and an include whose condition is not met too."""
    with (repository / ".git" / "config").open("a") as config:
        config.write("".join(TRICKY_CONFIGS[:5]) + '[includeIf "onbranch:x"]\n\tpath = more\n')
    (repository / ".git" / "more").write_text('[remote "more"]\n\turl = localhost:/more\n[include]\n\tpath = ../m2\n')
    (repository / "m2").write_text("[remotes]\n\tall = a b\n")
    (user_home / ".gitconfig").write_text('[url "localhost:/srv/"]\n\tinsteadOf = gh:\n')
    done = subprocess.run(  # noqa: S603 (git from the PATH, our own arguments)
        ["git", "-C", str(repository), "config", "--list", "--null", "--includes"],  # noqa: S607
        capture_output=True,
        env={"PATH": os.environ["PATH"], "HOME": str(user_home)},
        check=True,
    )
    listed = [tuple(entry.decode().partition("\n")[::2]) for entry in done.stdout.split(b"\0")[:-1]]
    unmet = [("remote.more.url", "localhost:/more"), ("remotes.all", "a b")]  # `more` and what it includes
    by_git = git_settings.config_of([*listed, *unmet])
    here = git_settings.git_config(str(repository / ".git"), os.environ, str(user_home))
    assert here.urls == by_git.urls
    assert (here.groups, here.rewrites) == (by_git.groups, by_git.rewrites) == ({"all": ["a", "b"]}, [
        ("localhost:/srv/", "gh:", False)])  # fmt: skip
    assert by_git.urls["more"] == ["localhost:/more"] and by_git.urls["backup"] == ["localhost:/x"]


def test_an_include_git_would_wait_on_is_held_in_time(repository: Path, user_home: Path) -> None:
    os.mkfifo(repository / ".git" / "pipe")
    git(repository, "config", "include.path", "pipe")
    started = time.monotonic()
    assert tier_apart("git push", repository) == "DESTRUCTIVE"
    os.mkfifo(user_home / ".gitconfig")
    assert tier_apart("git ls-remote origin", user_home / "project") == "DESTRUCTIVE"
    assert time.monotonic() - started < 30


# ---- submodules


@pytest.fixture
def superproject(repository: Path, user_home: Path) -> Path:
    """`repository` with the submodule `lib`, cloned from a repository beside it."""
    library = user_home / "lib"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    git(library, "commit", "-q", "--allow-empty", "-m", "one")
    git(repository, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(repository, "commit", "-q", "-m", "lib")
    return repository


@pytest.mark.parametrize("command", ["git submodule update --init", "git submodule sync", "git submodule init"])
def test_a_submodules_url_that_is_this_machine_is_held(superproject: Path, command: str) -> None:
    git(superproject, "config", "--file", ".gitmodules", "submodule.lib.url", HERE)
    held_outside(command, str(superproject), deciding=True)
    assert classify("git submodule status", cwd=str(superproject)).tier is not Tier.DESTRUCTIVE


def test_a_relative_submodule_url_leads_where_the_superprojects_remote_is(superproject: Path) -> None:
    git(superproject, "config", "--file", ".gitmodules", "submodule.lib.url", "../lib.git")
    git(superproject, "remote", "set-url", "origin", HERE)
    held_outside("git submodule update --init --recursive", str(superproject), deciding=True)


def test_a_populated_submodules_own_remote_is_read(superproject: Path) -> None:
    git(superproject / "lib", "remote", "set-url", "origin", HERE)
    cwd = str(superproject)
    for command in ("git fetch", "git pull --recurse-submodules", "git submodule update --remote",
                    "git push --recurse-submodules=on-demand"):  # fmt: skip
        held_outside(command, cwd, deciding=True)
    for command in ("git fetch --no-recurse-submodules", "git push", "git push --recurse-submodules=check"):
        assert classify(command, cwd=cwd).tier is Tier.MODERATE, command
    git(superproject, "config", "push.recurseSubmodules", "on-demand")
    held_outside("git push", cwd, deciding=True)


def test_setting_a_submodules_url_or_cloning_submodules_unseen(superproject: Path) -> None:
    cwd = str(superproject)
    held_outside(f"git submodule set-url lib {HERE}", cwd, deciding=True)
    cannot_tell("git clone --recurse-submodules https://github.com/ana/x.git", superproject)  # its .gitmodules
    cannot_tell("git clone --recursive https://github.com/ana/x.git", superproject)
    assert classify("git clone https://github.com/ana/x.git", cwd=cwd).tier is Tier.MODERATE


def test_a_settings_file_the_line_writes_before_git_reads_it_is_held(superproject: Path) -> None:
    git(superproject, "config", "include.path", "../team.gitconfig")  # not there yet
    cannot_tell(f"printf '[remote \"b\"]\\n\\turl = {HERE}\\n' > team.gitconfig && git push b", superproject)
    cannot_tell("cp /tmp/modules .gitmodules && git submodule update --init", superproject)
    for command in ("cp /tmp/x . && git push", 'echo x > "$f"; git push', "sed -i s/a/b/ $(git ls-files); git push"):
        assert classify(command, cwd=str(superproject)).tier is Tier.MODERATE, command  # no file of git's by name


# ---- the command line, its variables, and a folder only bash can tell


@pytest.mark.parametrize(
    "command",
    [
        f"git config branch.master.remote {HERE}",
        "git config remote.localhost:/x.uploadpack 'touch /tmp/PWNED'",  # a remote named by a URL
        f"git -c branch.master.remote={HERE} fetch",
        f"git -c remote.pushDefault={HERE} push",
        f"git config --global branch.main.pushRemote {HERE}",
        f"git config remotes.all 'origin {HERE}'",
        f"git config --file .gitmodules submodule.lib.url {HERE}",
        f"git clone -c branch.main.remote={HERE} https://github.com/ana/x.git",
        f'git config "$KEY" {HERE}',  # any key, as bash may make it
    ],
)
def test_settings_that_point_a_remote_at_this_machine_are_held(repository: Path, command: str) -> None:
    held_outside(command, str(repository), deciding=True)


@pytest.mark.parametrize(
    "command",
    [
        "GIT_DIR=/x git ls-remote backup",
        "export GIT_DIR=/x; git fetch",
        "GIT_COMMON_DIR=/x git fetch",
        "HOME=/x git fetch",
        "XDG_CONFIG_HOME=/x git push",
        "GIT_CONFIG_GLOBAL=/dev/null git pull",  # (to another file: git's configuration, held already)
        "GIT_CONFIG_SYSTEM=/dev/null git clone gh:x",
        "GIT_CONFIG_NOSYSTEM=0 git remote update",
        'printf -v "$v" /x; git fetch',  # a variable whose name is only known when it runs
        'git fetch "$R"',  # a remote or a URL, only bash can tell
        'git pull "$R" main',
    ],
)
def test_settings_the_classifier_cannot_see_are_held_as_cannot_tell(repository: Path, command: str) -> None:
    cannot_tell(command, repository)


def test_a_remote_by_name_in_a_folder_only_bash_can_tell_is_held_and_a_url_is_not(repository: Path) -> None:
    for command in ('cd "$D" && git ls-remote backup', 'cd "$D"; git push', 'git -C "$D" fetch',
                    'git -C "$D" remote update'):  # fmt: skip
        cannot_tell(command, repository)
    for command in (
        'git -C "$D" ls-remote https://github.com/ana/x.git',  # a URL needs no repository
        'cd "$D" && git clone https://github.com/ana/x.git',
        'git fetch "/srv/$R"',  # a path here
        "HOME=/x git status",  # no remote
    ):
        assert classify(command, cwd=str(repository)).tier is not Tier.DESTRUCTIVE, command


def test_a_cd_that_may_fail_leaves_git_in_the_folder_it_was_in(repository: Path) -> None:
    git(repository, "config", "remote.backup.url", HERE)
    held_outside("cd /nowhere; git fetch backup", str(repository), deciding=True)


# ---- cost: the settings are read once for a command, and once across commands while they stay


def test_a_line_of_many_lookups_reads_the_settings_once(user_home: Path) -> None:
    project = user_home / "project"
    git(project, "init", "-q")
    with (project / ".git" / "config").open("a") as config:
        number = 0
        while config.tell() < 240 * 1024:
            config.write(f'[remote "r{number}"]\n\turl = https://example.com/r{number}.git\n')
            number += 1
    line = " ; ".join(["git ls-remote r1"] * 500)
    started = time.monotonic()
    assert classify(line, cwd=str(project)).tier is Tier.SAFE
    assert time.monotonic() - started < 3  # 7 s when each read the file (on a busy 2-core machine)


def test_settings_kept_across_commands_are_read_again_once_changed(repository: Path) -> None:
    time.sleep(1.1)  # older than a second: kept
    assert classify("git push", cwd=str(repository)).tier is Tier.MODERATE
    git(repository, "config", "remote.origin.url", HERE)
    held_outside("git push", str(repository), deciding=True)
