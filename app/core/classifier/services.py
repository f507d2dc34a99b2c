"""Containers, clusters, clouds and databases."""

from __future__ import annotations

from .findings import D, M
from .options import _operands
from .stdin import _Stdin
from .words import _Word


class _ServiceRules:
    """Rules for docker, kubectl, terraform, gh, dropdb.

    Mixed into _Analyzer: `self` is the analyzer, which provides add, argv, inner, sub_script, code_words,
    wrapper, guard_parents and the rest. Each `cmd_<name>` handles a program, found by name in argv.
    """

    def cmd_docker(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = [a.value for a in _operands(args, frozenset({"-H", "--host", "--context", "-c", "--config"}))]
        pair = tuple(ops[:2])
        if pair in (("system", "prune"), ("volume", "rm"), ("volume", "prune"), ("volume", "remove")):
            self.add(D, "{name} {value}: deletes data", name=name, value=" ".join(pair))
        elif ops[:1] and ops[0] in ("ps", "images", "logs", "inspect", "version", "info", "stats", "top",
                                    "history", "search", "port", "diff"):  # fmt: skip
            return
        else:
            self.add(M, "{name}: changes containers", name=name)

    cmd_podman = cmd_docker

    def cmd_kubectl(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args, frozenset({"-n", "--namespace", "--context"}))), "")
        if sub == "delete":
            self.add(D, "kubectl delete: deletes cluster resources")
        elif sub not in ("get", "describe", "logs", "version", "explain", "top", "api-resources", "config"):
            self.add(M, "kubectl {sub}: changes the cluster", sub=sub)

    def cmd_terraform(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), "")
        if sub == "destroy" or "-destroy" in {a.value for a in args}:
            self.add(D, "{name} destroy: deletes infrastructure", name=name)
        elif sub not in ("plan", "show", "output", "validate", "fmt", "version", "providers", "graph"):
            self.add(M, "{name} {sub}: changes infrastructure", name=name, sub=sub)

    cmd_tofu = cmd_terraform

    def cmd_gh(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = [a.value for a in _operands(args)]
        if len(ops) >= 2 and ops[1] == "delete":
            self.add(D, "gh {value} delete: deletes it on GitHub", value=ops[0])
        elif len(ops) >= 2 and ops[1] in ("view", "list", "status", "diff", "checks"):
            return
        else:
            self.add(M, "gh: acts on GitHub")

    def cmd_dropdb(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, "{name}: deletes a database", name=name)

    cmd_dropuser = cmd_dropdb
