"""Containers the Docker daemon (or podman's service) starts as root, outside Cowork Terminal's
container: a command that gives one a part of this computer is held as a hand-off (issue 21), in
plain words (a red team, 2026-12-05: `docker run --privileged -v /:/host alpine chroot /host ...`
and `docker run -v ~:/h alpine sh -c "echo x >> /h/.bashrc"` were moderate, so they ran unasked).
What the person and the model read is what these tests check: the tier, the class of danger and
the plain words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.classifier import Classification, Danger, Tier, classify
from app.core.classifier.handoff import HANDOFF_WORDS
from app.core.classifier.services import CONTAINER_WORDS, FILE_WORDS, VOLUME_WORDS
from app.core.i18n import load_translation
from tests.handoff_checks import held_outside
from tests.stand_in_program import runs_then_refuses, stand_in

HOME = os.path.expanduser("~")
PROJECT = "/srv/work/project"  # outside the home folder, as a project may be
REACHES = "whose programs can reach your files or your computer"


def judged(command: str, cwd: str | None = PROJECT) -> Classification:
    return classify(command, cwd=cwd)


def assert_handed_off(command: str, shown: str, cwd: str | None = PROJECT) -> None:
    """Held, as a program started outside our watch, saying which option reaches this computer."""
    result = held_outside(command, cwd, deciding=True)
    assert result.words[0].template == CONTAINER_WORDS, (command, result)
    name = next(word for word in command.split() if word in ("docker", "podman"))
    assert result.plain[0] == (
        f"Asks {name} to run a container, outside Cowork Terminal's watch, {REACHES} ({shown})"
    ), result.plain
    assert f"({shown})" not in result.reasons[0] and shown in result.reasons[0], result.reasons
    assert "outside Cowork Terminal's watch" in result.reasons[0], result.reasons


def test_the_two_exploits_of_the_red_team_are_held_in_plain_words() -> None:
    assert_handed_off('docker run --privileged -v /:/host alpine chroot /host sh -c "id > /host/tmp/x"', "--privileged")
    assert_handed_off('docker run -v ~:/h alpine sh -c "echo x >> /h/.bashrc"', "-v ~:/h")
    result = judged('docker run -v ~:/h alpine sh -c "echo x >> /h/.bashrc"')
    assert result.reasons == (
        "docker run -v ~:/h: runs a container that can reach your files or your computer, outside Cowork "
        "Terminal's watch",
    )


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("docker run -v /:/h alpine sh", "-v /:/h"),
        ("docker run -v/:/h alpine sh", "-v/:/h"),
        ("docker run -v=/:/h alpine sh", "-v=/:/h"),
        ("docker run -itv /:/h alpine sh", "-itv /:/h"),
        ("docker run -itv/:/h alpine sh", "-itv/:/h"),
        ("docker run --volume /etc:/e:ro alpine sh", "--volume /etc:/e:ro"),
        ("docker run --volume=/etc:/e alpine sh", "--volume=/etc:/e"),
        ("docker run --rm -e A=1 -w /x --name n -v ../:/up alpine sh", "-v ../:/up"),
        ('docker run -v "$HOME":/h alpine sh', '-v "$HOME":/h'),
        ("docker run -v ${HOME}/.ssh:/s alpine sh", "-v ${HOME}/.ssh:/s"),
        ('docker run -v "$PWD/..":/up alpine sh', '-v "$PWD/..":/up'),
        ('docker run -v "$DIR":/d alpine sh', '-v "$DIR":/d'),
        (
            "docker run -v /var/run/docker.sock:/var/run/docker.sock docker:cli ps",
            "-v /var/run/docker.sock:/var/run/docker.sock",
        ),
        ("docker run -v /run/podman/podman.sock:/s alpine sh", "-v /run/podman/podman.sock:/s"),
        ("docker run --mount type=bind,src=/,dst=/h alpine sh", "--mount type=bind,src=/,dst=/h"),
        ("docker run --mount=type=bind,source=/home,target=/h alpine sh", "--mount=type=bind,source=/home,target=/h"),
        ('docker run --mount "type=bind,src=$HOME,dst=/h" alpine sh', '--mount "type=bind,src=$HOME,dst=/h"'),
        ("docker run --mount src=/home,dst=/h alpine sh", "--mount src=/home,dst=/h"),  # a path is no volume's name
        (
            "docker run --mount type=volume,volume-opt=device=/home,dst=/v alpine sh",
            "--mount type=volume,volume-opt=device=/home,dst=/v",
        ),  # a volume that is a folder of this computer
        ("docker run --volumes-from web alpine sh", "--volumes-from web"),
        ("docker run --privileged alpine sh", "--privileged"),
        ("docker run --privileged=true alpine sh", "--privileged=true"),
        ("docker run --pid=host alpine sh", "--pid=host"),
        ("docker run --pid host alpine sh", "--pid host"),
        ("docker run --userns=host alpine sh", "--userns=host"),
        ("docker run --ipc host alpine sh", "--ipc host"),
        ("docker run --network=host alpine sh", "--network=host"),
        ("docker run --net host alpine sh", "--net host"),
        ("docker run --cap-add=SYS_ADMIN alpine sh", "--cap-add=SYS_ADMIN"),
        ("docker run --cap-add ALL alpine sh", "--cap-add ALL"),
        ("docker run --device /dev/sda alpine sh", "--device /dev/sda"),
        ("docker run --device-cgroup-rule 'b 8:* rmw' alpine sh", "--device-cgroup-rule 'b 8:* rmw'"),
        ("docker run --security-opt seccomp=unconfined alpine sh", "--security-opt seccomp=unconfined"),
        ("docker run --security-opt=apparmor=unconfined alpine sh", "--security-opt=apparmor=unconfined"),
        ("docker run --use-api-socket docker:cli ps", "--use-api-socket"),
        ("docker create --privileged alpine sh", "--privileged"),  # `docker start` runs it later, unasked
        ("docker container run --privileged alpine sh", "--privileged"),
        ("docker container create -v /:/h alpine sh", "-v /:/h"),
        ("docker --tlscacert ca.pem run --privileged alpine sh", "--privileged"),  # an option before `run`
        ("docker -H unix:///var/run/docker.sock run --privileged alpine sh", "--privileged"),
        ("podman run --privileged alpine sh", "--privileged"),
        ("podman run --rootfs / sh", "--rootfs"),
        ("podman --root /tmp/x run --pid=host alpine sh", "--pid=host"),
        ("podman pod create --device /dev/sda", "--device /dev/sda"),
        ("docker service create --mount type=bind,src=/,dst=/h alpine", "--mount type=bind,src=/,dst=/h"),
        ("docker service update --mount-add type=bind,src=/etc,dst=/e web", "--mount-add type=bind,src=/etc,dst=/e"),
        ("docker exec --privileged web sh", "--privileged"),
        ("docker container exec -it --privileged web sh", "--privileged"),
        ("docker build --network host .", "--network host"),
        ("docker buildx build --allow security.insecure .", "--allow security.insecure"),
    ],
)
def test_each_spelling_of_an_option_that_gives_the_container_this_computer_is_held(command: str, shown: str) -> None:
    assert_handed_off(command, shown)


def test_a_bind_of_the_projects_own_folder_is_not_held_since_the_command_can_change_it_anyway(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    for command in (
        "docker run --rm -v .:/app -w /app node:20 npm test",
        'docker run --rm -v "$PWD":/app -w /app node:20 npm test',
        'docker run --rm -v "$PWD:/app" node:20 npm test',
        "docker run --rm -v ${PWD}/src:/src alpine ls /src",
        "docker run --rm -v $(pwd):/app alpine ls",
        "docker run --rm -v ./src:/src:ro alpine ls",
        f"docker run --rm -v {project}/src:/src alpine ls",
        "docker run --rm --mount type=bind,src=.,dst=/app alpine ls",
        "cd src && docker run --rm -v .:/src alpine ls",
        "podman run --rm -v .:/app alpine ls",
    ):
        result = judged(command, str(project))
        assert result.tier is Tier.MODERATE, (command, result)
        name = next(word for word in command.split() if word in ("docker", "podman"))
        assert result.reasons == (f"{name}: changes containers",), (command, result)


def test_a_bind_that_leads_out_of_the_project_or_holds_the_home_folder_is_held(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "home").symlink_to(HOME)  # made by an earlier command
    assert_handed_off("docker run -v ./home:/h alpine sh", "-v ./home:/h", str(project))
    assert_handed_off("docker run -v ./home/..:/h alpine sh", "-v ./home/..:/h", str(project))
    # a link the same command line makes first (not there yet when the command is judged)
    assert_handed_off("ln -s ~ h && docker run -v ./h:/h alpine sh", "-v ./h:/h", str(project))
    assert_handed_off("docker run -v ./docker.sock:/s alpine sh", "-v ./docker.sock:/s", str(project))
    # the project is the home folder, or a folder above it, or a settings folder in it
    assert_handed_off("docker run -v .:/h alpine sh", "-v .:/h", HOME)
    assert_handed_off("cd ~ && docker run -v .:/h alpine sh", "-v .:/h", str(project))
    assert_handed_off("docker run -v .:/r alpine sh", "-v .:/r", "/")
    assert_handed_off("docker run -v .:/c alpine sh", "-v .:/c", f"{HOME}/.config")
    # where the command runs is not known: where `.` leads is not either
    assert_handed_off("docker run -v .:/app alpine sh", "-v .:/app", None)
    assert_handed_off('cd "$X" && docker run -v .:/app alpine sh', "-v .:/app", str(project))


def test_what_a_container_writes_in_the_project_is_what_a_later_script_runs(tmp_path: Path) -> None:
    """The container writes the project as root, unseen: a script run after it is not the one read."""
    (tmp_path / "build.sh").write_text("echo building\n")
    assert judged("bash build.sh", str(tmp_path)).tier is Tier.MODERATE
    result = judged("docker run --rm -v .:/app alpine sh -c 'cp /x /app/build.sh' && bash build.sh", str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE, result
    assert f"cannot tell what runs: the command changes the script {tmp_path}/build.sh before running it" in (
        result.reasons
    ), result


def test_what_the_containers_command_runs_is_still_judged() -> None:
    result = judged("docker run --rm -v .:/app alpine rm -rf /app/build")
    assert result.tier is Tier.DESTRUCTIVE and result.danger is Danger.LOSES_FILES, result


@pytest.mark.parametrize(
    "command",
    [
        "docker run --rm alpine echo hi",
        "docker run --rm -v data:/data alpine ls",  # a named volume
        "docker run --rm -v /data alpine ls",  # a new, empty volume at /data in the container
        "docker run --rm --mount src=data,dst=/data alpine ls",
        "docker run --rm --mount type=tmpfs,dst=/cache alpine ls",
        "docker run -dit --name web -p 8080:80 -e MODE=dev --restart unless-stopped nginx",
        "docker run --privileged=false alpine sh",
        "docker run --security-opt no-new-privileges alpine sh",
        "docker run --uts=host alpine hostname",  # the host's name, which the container cannot change
        "docker run --group-add 0 alpine id",  # groups matter only for what the container is given
        "docker run --gpus all nvidia/cuda nvidia-smi",
        "docker run --network my-net --pid container:web alpine sh",
        'docker run --rm -e FOO="$BAR" -w "$PWD" --name "$NAME" alpine echo hi',  # values, not options
        "docker run --rm alpine ls -v /:/x --privileged",  # the container's command's own words
        "docker exec -it web sh",  # an existing container: what it was given was judged when it was made
        "docker build -t app .",
        "docker build --network my-net .",
        "docker pull alpine",
        "docker compose ps",
        "docker compose -f dev.yml down",
        "docker compose logs -f web",
        "docker compose build",
        "docker volume create data",
        "docker service create --name web nginx",
        "docker plugin ls",
        "docker swarm init",
    ],
)
def test_what_gives_the_container_nothing_of_this_computer_stays_moderate(command: str) -> None:
    result = judged(command)
    assert result.tier is Tier.MODERATE, (command, result)


@pytest.mark.parametrize(
    "command", ["docker ps -a", "docker images", "docker logs web", "docker inspect web", "podman ps", "docker version"]
)
def test_read_only_verbs_stay_safe(command: str) -> None:
    assert judged(command).tier is Tier.SAFE


@pytest.mark.parametrize(
    ("command", "name", "verb"),
    [
        ("docker compose up -d", "docker compose", "up"),
        ("docker compose -f dev.yml --profile x run web sh", "docker compose", "run"),
        ("docker compose create", "docker compose", "create"),
        ("docker compose start web", "docker compose", "start"),
        ("docker compose restart", "docker compose", "restart"),
        ("docker compose watch", "docker compose", "watch"),
        ("docker compose scale web=3", "docker compose", "scale"),
        ("docker-compose up", "docker-compose", "up"),
        ("docker-compose --log-level DEBUG up", "docker-compose", "up"),  # an option's value before the verb
        ("docker-compose run web rm -rf /app/tmp", "docker-compose", "run"),
        ("podman compose up", "podman compose", "up"),
        ("docker stack deploy -c stack.yml app", "docker", "stack deploy"),
        ("podman kube play pod.yml", "podman", "kube play"),
        ("podman container runlabel install image", "podman", "container runlabel"),
    ],
)
def test_containers_a_file_describes_are_held_since_the_file_is_not_read(command: str, name: str, verb: str) -> None:
    result = held_outside(command, PROJECT, deciding=True)
    assert result.reasons == (
        f"{name} {verb}: starts containers from a file Cowork Terminal does not read, outside its watch",
    ), result
    assert result.words[0].template == FILE_WORDS
    assert result.plain == (
        f"Asks {name} to start the containers a file describes, outside Cowork Terminal's watch: that file can "
        "give them your files or your computer, and Cowork Terminal does not read it",
    )


def test_compose_exec_is_held_only_with_every_privilege() -> None:
    assert judged("docker compose exec web sh").tier is Tier.MODERATE
    result = judged("docker compose exec --privileged web sh")
    assert result.plain == (
        f"Asks docker compose to run a container, outside Cowork Terminal's watch, {REACHES} (--privileged)",
    )


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("docker volume create -o type=none -o o=bind -o device=/home/ana data", "-o type=none"),
        ("docker volume create --opt=device=/dev/sda1 data", "--opt=device=/dev/sda1"),
        ("docker volume create -otype=none data", "-otype=none"),
        ("podman volume create --opt device=/ data", "--opt device=/"),
    ],
)
def test_a_volume_made_of_a_folder_or_disk_of_this_computer_is_held(command: str, shown: str) -> None:
    result = held_outside(command, PROJECT, deciding=True)
    assert result.words[0].template == VOLUME_WORDS
    name = command.split()[0]
    assert result.plain == (
        f"Asks {name} to make a volume of a folder or disk of this computer, which containers then change "
        f"outside Cowork Terminal's watch ({shown})",
    )


@pytest.mark.parametrize(
    "command", ["docker plugin install vieux/sshfs", "docker plugin enable sshfs", "docker swarm join --token t m:2377"]
)
def test_a_plugin_or_a_swarm_that_starts_programs_here_is_held_as_a_hand_off(command: str) -> None:
    result = held_outside(command, PROJECT, deciding=True)
    assert result.plain == (HANDOFF_WORDS,)
    assert result.reasons == (f"{' '.join(command.split()[:3])}: starts a program outside Cowork Terminal's watch",)


@pytest.mark.parametrize(
    ("command", "source"),
    [
        ("X=--privileged; docker run $X alpine sh", "$X"),
        ('docker run --rm "$IMAGE"', '"$IMAGE"'),  # it may be `--privileged`, and the next word the image
        ("docker run --rm $(docker build -q .)", "$(docker build -q .)"),
        ('docker exec "$ID" sh', '"$ID"'),
        ('docker volume create "$V"', '"$V"'),
    ],
)
def test_an_option_an_expansion_may_be_is_held_as_cannot_tell(command: str, source: str) -> None:
    result = judged(command)
    assert result.tier is Tier.DESTRUCTIVE and result.danger is Danger.CANNOT_TELL, result
    assert result.reasons[0].endswith(f"takes options from {source}"), result


def test_a_subcommand_an_expansion_names_is_held_as_cannot_tell() -> None:
    assert judged("docker $cmd").reasons == ("cannot tell: docker subcommand from $cmd",)
    assert judged('docker compose "$verb"').reasons == ('cannot tell: docker compose subcommand from "$verb"',)


@pytest.mark.parametrize("language", ["de", "es", "ru"])
def test_a_person_reads_the_words_in_their_language(language: str) -> None:
    translation = load_translation(language)
    for template in (CONTAINER_WORDS, FILE_WORDS, VOLUME_WORDS):
        said = translation.gettext(template)
        assert said != template and "{name}" in said, (language, template)


@pytest.mark.anyio
async def test_through_execute_command_a_privileged_container_is_refused_and_docker_never_starts(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server itself, headless with no tray: a stand-in `docker` on the PATH records every start."""
    started = stand_in(tmp_path, monkeypatch, "docker")
    said = await runs_then_refuses(home, tmp_path, "docker ps", "docker run --privileged -v /:/host alpine true")
    assert f"Asks docker to run a container, outside Cowork Terminal's watch, {REACHES} (--privileged)" in said, said
    assert started.read_text() == "ps\n", "docker run must never start"
