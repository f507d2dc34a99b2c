"""Other container and VM tools whose daemon (or machine) runs programs outside Cowork Terminal's
container, often as root, often with this computer's folders (issue 21): nerdctl and podman-compose
(read as docker's), LXD and incus, libvirt (virsh, virt-install), multipass, lima, colima, vagrant,
distrobox, toolbox, machinectl, containerd's ctr, crictl, and kubectl on a cluster of this computer
(kind, k3d, minikube, Docker Desktop...). What gives one of them a part of this computer, or starts
or enters a machine whose folders its own settings decide, is held as a hand-off in words already
translated; listing, stopping and the rest keep their tier; what they are given to run is judged."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from app.core.classifier import Classification, Danger, Tier, classify
from app.core.classifier.handoff import HANDOFF_WORDS
from app.core.classifier.services import CONTAINER_WORDS, FILE_WORDS, VOLUME_WORDS
from app.core.i18n import load_translation
from tests.handoff_checks import held_outside
from tests.stand_in_program import runs_then_refuses, stand_in

PROJECT = "/srv/work/project"  # outside the home folder, as a project may be


def judged(command: str, cwd: str | None = PROJECT) -> Classification:
    return classify(command, cwd=cwd)


@functools.cache
def translated(language: str, template: str) -> str:
    return load_translation(language).gettext(template)


def assert_handed_off(command: str, template: str, cwd: str | None = PROJECT) -> None:
    """Held as a program started outside our watch, in words each language has."""
    result = held_outside(command, cwd, deciding=True)
    assert result.words[0].template == template, (command, result)
    for language in ("de", "es", "ru"):
        assert translated(language, template) != template, (language, template)


@pytest.mark.parametrize(
    ("command", "template"),
    [
        # nerdctl: docker's options, read as docker's; podman-compose as docker-compose
        ("nerdctl run --privileged alpine sh", CONTAINER_WORDS),
        ("nerdctl run -v /:/host alpine sh", CONTAINER_WORDS),
        ("nerdctl -n k8s.io run --net host alpine sh", CONTAINER_WORDS),
        ("nerdctl --namespace k8s.io run --pid=host alpine sh", CONTAINER_WORDS),
        ("nerdctl exec --privileged web sh", CONTAINER_WORDS),
        ("nerdctl volume create -o device=/home data", VOLUME_WORDS),
        ("nerdctl compose up -d", FILE_WORDS),
        ("podman-compose up -d", FILE_WORDS),
        ('podman-compose --podman-run-args "--privileged" -f dev.yml run web sh', FILE_WORDS),
        ("podman-compose systemd -a register", FILE_WORDS),  # systemd starts the project at each login
        # LXD and incus
        ("lxc exec c -- ls", HANDOFF_WORDS),
        ("lxc shell c", HANDOFF_WORDS),
        ("lxc console c", HANDOFF_WORDS),
        ("incus exec c -- bash", HANDOFF_WORDS),
        ("lxc --project dev exec c -- ls", HANDOFF_WORDS),
        ("lxc launch ubuntu:24.04 c -c security.privileged=true", CONTAINER_WORDS),
        ("lxc launch ubuntu:24.04 c --config=security.privileged=1", CONTAINER_WORDS),
        ("lxc launch ubuntu:24.04 c -csecurity.privileged=true", CONTAINER_WORDS),
        ("lxc launch ubuntu:24.04 c -ec raw.lxc='lxc.mount.entry = / h none bind'", CONTAINER_WORDS),
        ("lxc init ubuntu:24.04 c -p privileged", CONTAINER_WORDS),  # a profile's settings are not seen here
        ("lxc launch ubuntu:24.04 c -d root,source=/home", CONTAINER_WORDS),
        ("incus create images:debian/12 c -c security.privileged=true", CONTAINER_WORDS),
        ("lxc copy c1 c2 -c raw.idmap='both 1000 0'", CONTAINER_WORDS),
        ("lxc launch ubuntu:24.04 c < settings.yaml", FILE_WORDS),  # settings from its input
        ("lxc config set c security.privileged true", CONTAINER_WORDS),
        ("lxc config set c security.privileged=true limits.cpu=2", CONTAINER_WORDS),
        ('lxc config set c raw.idmap "both 1000 0"', CONTAINER_WORDS),
        ("lxc config set c linux.kernel_modules=overlay", CONTAINER_WORDS),
        ("lxc config set c raw.lxc - < mounts.conf", CONTAINER_WORDS),
        ("lxc profile set default security.privileged=true", CONTAINER_WORDS),
        ('lxc config set c "$KEY" true', CONTAINER_WORDS),  # an expansion may be any key
        ("lxc config device add c h disk source=/home path=/h", CONTAINER_WORDS),
        ("lxc config device add c h disk source=~ path=/h", CONTAINER_WORDS),
        ("lxc config device add c d unix-block source=/dev/sda", CONTAINER_WORDS),
        ("lxc config device add c g gpu", CONTAINER_WORDS),
        (
            "lxc config device add c s proxy listen=unix:/d.sock connect=unix:/run/docker.sock bind=container",
            CONTAINER_WORDS,
        ),
        ("lxc profile device add default h disk source=/ path=/h", CONTAINER_WORDS),
        ("lxc config device set c h source /etc", CONTAINER_WORDS),
        ("lxc config device set c h source=/etc", CONTAINER_WORDS),
        ("lxc profile add c privileged", CONTAINER_WORDS),
        ("lxc profile assign c default,privileged", CONTAINER_WORDS),
        ("lxc config edit c", FILE_WORDS),
        ("lxc profile edit default < p.yaml", FILE_WORDS),
        ("lxc storage create p dir source=/home/ana", VOLUME_WORDS),
        ("lxc query -X PUT /1.0/instances/c --data '{}'", HANDOFF_WORDS),  # the daemon's API itself
        ('lxc alias add l "launch @ARGS@ -c security.privileged=true"', CONTAINER_WORDS),  # what `lxc l` does
        # libvirt
        ("virsh define vm.xml", HANDOFF_WORDS),
        ("virsh create vm.xml", HANDOFF_WORDS),
        ("virsh start vm1", HANDOFF_WORDS),
        ("virsh edit vm1", HANDOFF_WORDS),
        ("virsh attach-disk vm1 /dev/sda vdb", HANDOFF_WORDS),
        ('virsh qemu-agent-command vm1 \'{"execute": "guest-exec"}\'', HANDOFF_WORDS),
        ("virsh qemu-monitor-command vm1 --hmp 'migrate exec:sh'", HANDOFF_WORDS),
        ("virsh snapshot-revert vm1 clean", HANDOFF_WORDS),
        ("virsh snapshot-create-as vm1 s --disk-only --diskspec vda,file=/etc/x", HANDOFF_WORDS),
        ("virsh pool-create-as home dir --target /home", HANDOFF_WORDS),
        ("virsh -c qemu:///system start vm1", HANDOFF_WORDS),
        ("virsh --connect=qemu+ssh://root@localhost/system define vm.xml", HANDOFF_WORDS),  # this computer
        ("virsh 'list; start vm1'", HANDOFF_WORDS),  # one word: a line of commands
        ('echo "start vm1" | virsh', HANDOFF_WORDS),  # commands from its input
        ("virsh < commands.txt", HANDOFF_WORDS),
        ("virt-install --name x --disk /dev/sda --import", HANDOFF_WORDS),
        ("virt-xml vm1 --edit --disk /dev/sda", HANDOFF_WORDS),
        # machines of their own, and the containers distrobox and toolbox make
        ("multipass exec vm -- ls", HANDOFF_WORDS),
        ("multipass shell", HANDOFF_WORDS),  # the primary machine: the home folder
        ("multipass launch --mount ~/src:/src", HANDOFF_WORDS),
        ("multipass launch --name x --mount=/:/host", HANDOFF_WORDS),
        ("multipass mount ~ vm:/h", HANDOFF_WORDS),
        ("limactl start", HANDOFF_WORDS),
        ("limactl start template://docker", HANDOFF_WORDS),
        ("limactl shell default", HANDOFF_WORDS),
        ("lima uname -a", HANDOFF_WORDS),
        ("nerdctl.lima run --rm alpine true", HANDOFF_WORDS),
        ("colima start", HANDOFF_WORDS),
        ("colima -p dev ssh", HANDOFF_WORDS),
        ("vagrant up", HANDOFF_WORDS),
        ("vagrant reload", HANDOFF_WORDS),
        ("vagrant ssh -c 'make test'", HANDOFF_WORDS),
        ("distrobox create -n dev -i fedora", HANDOFF_WORDS),
        ("distrobox enter dev -- ls", HANDOFF_WORDS),
        ("distrobox-enter dev", HANDOFF_WORDS),
        ("toolbox enter", HANDOFF_WORDS),
        ("toolbox run make", HANDOFF_WORDS),
        ("machinectl shell", HANDOFF_WORDS),  # this computer itself, through machined
        ("machinectl shell root@.host /bin/id", HANDOFF_WORDS),
        ("machinectl start web", HANDOFF_WORDS),
        ("machinectl bind web /home/ana /h", HANDOFF_WORDS),
        ("machinectl copy-from web /etc/passwd /home/ana/p", HANDOFF_WORDS),
        # containerd and the Kubernetes runtime
        ("ctr run --privileged docker.io/library/alpine:latest x sh", CONTAINER_WORDS),
        (
            "ctr run --mount type=bind,src=/,dst=/h,options=rbind:rw docker.io/library/alpine:latest x sh",
            CONTAINER_WORDS,
        ),
        ("ctr -n k8s.io run --net-host docker.io/library/alpine:latest x sh", CONTAINER_WORDS),
        ("ctr run --rootfs / x sh", CONTAINER_WORDS),
        ("ctr c create --with-ns pid:/proc/1/ns/pid docker.io/library/alpine:latest x", CONTAINER_WORDS),
        ("ctr run --config spec.json x", CONTAINER_WORDS),  # an OCI spec file, not read here
        ("crictl runp pod.json", FILE_WORDS),
        ("crictl run container.json pod.json", FILE_WORDS),
        # Kubernetes clusters on this computer
        ("kubectl --context kind-kind apply -f pod.yaml", FILE_WORDS),
        ("kubectl --context=minikube create -f pod.yaml", FILE_WORDS),
        ("kubectl --context docker-desktop run x --image=alpine --overrides='{}'", HANDOFF_WORDS),
        ("kubectl --context k3d-dev exec -it web -- sh", HANDOFF_WORDS),
        ("kubectl --context rancher-desktop debug node/n -it --image=alpine", HANDOFF_WORDS),
        ("kubectl --server https://127.0.0.1:6443 apply -f pod.yaml", FILE_WORDS),
        ("minikube kubectl -- apply -f pod.yaml", FILE_WORDS),
        ("minikube start", HANDOFF_WORDS),
        ("minikube mount /:/host", HANDOFF_WORDS),
        ("minikube ssh", HANDOFF_WORDS),
        ("kind create cluster --config kind.yaml", HANDOFF_WORDS),  # extraMounts, and privileged nodes
        ("k3d cluster create dev -v /:/host@server:0", HANDOFF_WORDS),
    ],
)
def test_what_gives_a_machine_or_container_this_computer_is_held_as_a_hand_off(command: str, template: str) -> None:
    assert_handed_off(command, template)


def test_the_findings_say_which_option_and_the_tool() -> None:
    result = judged("lxc launch ubuntu:24.04 c -c security.privileged=true")
    assert result.plain == (
        "Asks lxc to run a container, outside Cowork Terminal's watch, whose programs can reach your files or "
        "your computer (-c security.privileged=true)",
    )
    assert judged("virsh define vm.xml").reasons == ("virsh define: starts a program outside Cowork Terminal's watch",)
    assert judged("nerdctl compose up").reasons == (
        "nerdctl compose up: starts containers from a file Cowork Terminal does not read, outside its watch",
    )


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("nerdctl ps", Tier.SAFE),  # as `docker ps`
        ("nerdctl run --rm alpine echo hi", Tier.MODERATE),
        ("nerdctl compose ps", Tier.MODERATE),
        ("podman-compose ps", Tier.SAFE),
        ("podman-compose exec web sh", Tier.MODERATE),  # an existing container, as docker compose's
        ("lxc list", Tier.MODERATE),
        ("lxc info c", Tier.MODERATE),
        ("lxc image list", Tier.MODERATE),
        ("lxc launch ubuntu:24.04 c", Tier.MODERATE),
        ("lxc launch ubuntu:24.04 c -p default -e -c limits.cpu=2 -s pool1", Tier.MODERATE),
        ("lxc launch ubuntu:24.04 c -c security.privileged=false", Tier.MODERATE),
        ("lxc config set c limits.cpu 2", Tier.MODERATE),
        ('lxc config set c limits.cpu "$N"', Tier.MODERATE),
        ('lxc config set "$C" limits.memory=4GiB', Tier.MODERATE),
        ("lxc config device add c data disk pool=default source=vol1 path=/data", Tier.MODERATE),  # a volume
        ("lxc config device add c eth0 nic nictype=bridged parent=lxdbr0", Tier.MODERATE),
        ("lxc config device add c web proxy listen=tcp:0.0.0.0:80 connect=tcp:127.0.0.1:80", Tier.MODERATE),
        ("lxc config device set c root size=20GiB", Tier.MODERATE),
        ("lxc file push notes.txt c/root/", Tier.MODERATE),  # the client reads it here, in the container
        ("lxc stop c", Tier.MODERATE),
        ("lxc query /1.0/instances", Tier.MODERATE),
        ("lxc storage create p zfs", Tier.MODERATE),
        ("virsh list --all", Tier.MODERATE),
        ("virsh dumpxml vm1", Tier.MODERATE),
        ("virsh shutdown vm1", Tier.MODERATE),
        ("virsh snapshot-create-as vm1 before-upgrade", Tier.MODERATE),
        ("virsh -r start vm1", Tier.MODERATE),  # a read-only connection changes nothing
        ("virsh -c qemu+ssh://root@build.example.com/system start vm1", Tier.MODERATE),  # another computer
        ("virt-install --name x --disk size=10 --print-xml", Tier.MODERATE),
        ("virt-customize -a disk.img --run-command 'echo hi'", Tier.MODERATE),  # runs as our own child
        ("systemd-nspawn -D /var/lib/machines/x", Tier.MODERATE),  # needs root: fails in the container
        ("multipass list", Tier.MODERATE),
        ("multipass launch -n x", Tier.MODERATE),
        ("multipass stop vm", Tier.MODERATE),
        ("limactl list", Tier.MODERATE),
        ("limactl stop default", Tier.MODERATE),
        ("colima status", Tier.MODERATE),
        ("vagrant status", Tier.MODERATE),
        ("vagrant halt", Tier.MODERATE),
        ("distrobox list", Tier.MODERATE),
        ("toolbox list", Tier.MODERATE),
        ("machinectl list", Tier.MODERATE),
        ("machinectl status web", Tier.MODERATE),
        ("machinectl poweroff web", Tier.MODERATE),
        ("ctr images ls", Tier.MODERATE),
        ("ctr run --rm docker.io/library/alpine:latest x echo hi", Tier.MODERATE),
        ("ctr task exec --exec-id 1 x sh", Tier.MODERATE),  # an existing container, as docker exec
        ("crictl ps", Tier.MODERATE),
        ("crictl exec -it c sh", Tier.MODERATE),
        ("kubectl apply -f pod.yaml", Tier.MODERATE),  # no kubeconfig here: not known to be this computer's
        ("kubectl --context gke_prod_eu apply -f pod.yaml", Tier.MODERATE),
        ("kubectl -s https://k8s.example.com exec web -- sh", Tier.MODERATE),
        ('kubectl --context "$CTX" apply -f pod.yaml', Tier.MODERATE),
        ("kubectl --context kind-kind get pods", Tier.SAFE),
        ("kubectl --context kind-kind logs web", Tier.SAFE),
        ("kubectl --context kind-kind scale deploy/web --replicas=2", Tier.MODERATE),
        ("minikube status", Tier.MODERATE),
        ("minikube kubectl -- get pods", Tier.MODERATE),
        ("kind get clusters", Tier.MODERATE),
        ("kind delete cluster", Tier.MODERATE),
        ("k3d cluster list", Tier.MODERATE),
    ],
)
def test_what_gives_them_nothing_of_this_computer_keeps_its_tier(command: str, tier: Tier) -> None:
    result = judged(command)
    assert result.tier is tier, (command, result)


@pytest.mark.parametrize(
    "command",
    [
        "lxc exec c -- rm -rf /home/ana/Documents",
        "distrobox enter dev -- rm -rf ~/Documents",
        "vagrant ssh -c 'rm -rf /vagrant/build'",
        "kubectl --context kind-kind exec web -- rm -rf /data",
    ],
)
def test_what_they_are_given_to_run_is_still_judged(command: str) -> None:
    result = judged(command)
    assert result.tier is Tier.DESTRUCTIVE and result.danger is Danger.LOSES_FILES, (command, result)
    assert any(f.danger is Danger.OUTSIDE_WATCH for f in classify(command, cwd=PROJECT).findings), result


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ('lxc "$VERB" c', 'cannot tell: lxc subcommand from "$VERB"'),
        ("lxc config $SUB c x=1", "cannot tell: lxc config subcommand from $SUB"),
        ('lxc launch ubuntu:24.04 c "$OPTS"', 'cannot tell: lxc launch takes options from "$OPTS"'),
        ('virsh "$CMD" vm1', 'cannot tell: virsh subcommand from "$CMD"'),
        ("vagrant $CMD", "cannot tell: vagrant subcommand from $CMD"),
        ("kind create $WHAT", "cannot tell: kind create subcommand from $WHAT"),
        ("ctr run $OPTS docker.io/library/alpine:latest x", "cannot tell: ctr run takes options from $OPTS"),
    ],
)
def test_a_subcommand_or_an_option_an_expansion_may_be_is_held_as_cannot_tell(command: str, reason: str) -> None:
    result = judged(command)
    assert result.tier is Tier.DESTRUCTIVE and result.danger is Danger.CANNOT_TELL, (command, result)
    assert reason in result.reasons, result


def test_a_cluster_of_this_computer_is_known_by_the_kubeconfig_kubectl_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no `--context`, kubectl uses the kubeconfig's current one: `--kubeconfig`, else the first
    file of $KUBECONFIG that names one, else ~/.kube/config (not written here: the machine's own)."""
    kind = tmp_path / "kind.yaml"
    kind.write_text("apiVersion: v1\nkind: Config\ncurrent-context: kind-dev\ncontexts: []\n")
    remote = tmp_path / "prod.yaml"
    remote.write_text('apiVersion: v1\ncurrent-context: "gke_prod_eu"\n')
    assert_handed_off(f"kubectl --kubeconfig {kind} apply -f pod.yaml", FILE_WORDS)
    assert_handed_off(f"kubectl --kubeconfig={kind} exec web -- sh", HANDOFF_WORDS)
    assert_handed_off("kubectl --kubeconfig kind.yaml run x --image=alpine", HANDOFF_WORDS, str(tmp_path))
    assert judged(f"kubectl --kubeconfig {remote} apply -f pod.yaml").tier is Tier.MODERATE
    assert judged(f"kubectl --kubeconfig {kind} --context gke_prod_eu apply -f x.yaml").tier is Tier.MODERATE
    assert judged(f"kubectl --kubeconfig {kind} get pods").tier is Tier.SAFE
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "absent.yaml"), str(kind), str(remote)]))
    assert_handed_off("kubectl apply -f pod.yaml", FILE_WORDS)
    monkeypatch.setenv("KUBECONFIG", str(remote))
    assert judged("kubectl apply -f pod.yaml").tier is Tier.MODERATE


def test_a_folder_of_the_project_given_to_an_lxd_container_is_not_held(tmp_path: Path) -> None:
    """As docker's `-v .:/app`: the command can change those files anyway."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    result = judged(f"lxc config device add c src disk source={project}/src path=/src", str(project))
    assert result.tier is Tier.MODERATE, result
    assert_handed_off(f"lxc config device add c up disk source={tmp_path} path=/up", CONTAINER_WORDS, str(project))


@pytest.mark.anyio
async def test_through_execute_command_an_lxd_exec_is_refused_and_lxc_never_starts_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server itself, headless with no tray: a stand-in `lxc` on the PATH records every start."""
    started = stand_in(tmp_path, monkeypatch, "lxc")
    said = await runs_then_refuses(home, tmp_path, "lxc list", "lxc exec web -- sh -c 'id'")
    assert HANDOFF_WORDS in said, said
    assert started.read_text() == "list\n", "lxc exec must never start"
