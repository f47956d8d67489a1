"""Lab: a deployed lab as an object (deploy, attach, destroy, plan, exec, vtysh)."""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any, Sequence, Union

import yaml

from . import _build, _mrclab


@dataclass(frozen=True)
class Node:
    """A node of the plan: a switch (kind 'switch', role 'spine'/'leaf', plane) or a host."""
    name: str
    kind: str
    netns: str
    plane: int = -1
    role: str = ""
    usid: str = ""
    interfaces: tuple = ()
    ports: tuple = ()

    @property
    def is_host(self) -> bool:
        return self.kind == "host"


@dataclass(frozen=True)
class Link:
    """A link of the plan: ends `a` and `b` as (node, interface), its plane, fabric or host link."""
    index: int
    plane: int
    fabric: bool
    a: tuple
    b: tuple
    subnet: str = ""

    @property
    def target(self) -> str:
        """The name faults use for this link: 'node:interface' of end a."""
        return f"{self.a[0]}:{self.a[1]}"


LabSource = Union[str, os.PathLike, dict]


class Lab:
    """A deployed lab on this machine. Create one with Lab.deploy(...) (destroyed when used as a
    context manager, or by destroy()) or Lab.attach(name) for a lab deployed elsewhere (never
    destroyed by this object unless you call destroy())."""

    def __init__(self, name: str, *, owned: bool = False, deploy_report: dict | None = None):
        self.name = name
        self.owned = owned
        self.deploy_report = deploy_report or {}
        self._plan: dict | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @classmethod
    def deploy(cls, lab: LabSource, *, name: str | None = None, timeout: int = 120,
               progress: bool = False) -> "Lab":
        """Deploys and verifies a lab from a lab file path or a dict with the same content
        (see labs/README.md); `name` renames it. Returns when every BGP session is up and
        every host reaches every other; rolls everything back on error or Ctrl-C."""
        if isinstance(lab, dict):
            doc, source = dict(lab), "<dict>"
        else:
            source = str(lab)
            doc = yaml.safe_load(_mrclab.read_input_file(source))  # bounded and strict, as the CLI reads
            if not isinstance(doc, dict):
                raise ValueError(f"{source}: (document): expected a mapping")
        if name:
            doc["name"] = name
        report = _mrclab.deploy(json.dumps(doc), source, timeout, progress)
        return cls(doc["name"], owned=True, deploy_report=report)

    @classmethod
    def attach(cls, name: str) -> "Lab":
        """A lab that is already deployed (by `mrclab deploy` or another process)."""
        if name not in _mrclab.deployed_labs():
            raise ValueError(f"lab '{name}' is not deployed (deployed: {', '.join(_mrclab.deployed_labs()) or 'none'})")
        return cls(name)

    def destroy(self) -> dict:
        """Removes every namespace, link and daemon of the lab; returns what was removed."""
        report = _mrclab.destroy(self.name)
        self.owned = False
        return report

    def __enter__(self) -> "Lab":
        return self

    def __exit__(self, *exc) -> None:
        if self.owned:
            self.destroy()

    def __repr__(self) -> str:
        return f"Lab({self.name!r}, {len(self.nodes)} nodes, {len(self.links)} links)"

    # -- plan ------------------------------------------------------------------------------
    @property
    def plan(self) -> dict:
        """The resolved plan as deployed (addresses, ASNs, uSIDs, routes), as a dict."""
        if self._plan is None:
            self._plan = _mrclab.deployed_plan(self.name)
        return self._plan

    @property
    def nodes(self) -> list[Node]:
        return [Node(n["name"], n["kind"], n["netns"], n.get("plane", -1), n.get("role", ""),
                     str(n.get("usid", "")), tuple(i["name"] for i in n.get("interfaces", [])),
                     tuple((p["plane"], p["interface"], p["address"]) for p in n.get("ports", [])))
                for n in self.plan["nodes"]]

    @property
    def hosts(self) -> list[Node]:
        return [n for n in self.nodes if n.is_host]

    @property
    def switches(self) -> list[Node]:
        return [n for n in self.nodes if not n.is_host]

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise ValueError(f"unknown node '{name}' in lab '{self.name}'")

    @property
    def links(self) -> list[Link]:
        return [Link(l["index"], l["plane"], l["fabric"], (l["a"]["node"], l["a"]["interface"]),
                     (l["b"]["node"], l["b"]["interface"]), l.get("subnet", ""))
                for l in self.plan["links"]]

    @property
    def state(self) -> dict:
        """The lab's state record (state: deploying|ready|failed, deploy figures, ...)."""
        return _mrclab.lab_state(self.name)

    # -- commands --------------------------------------------------------------------------
    def exec(self, node: str, cmd: Sequence[str] | str, *, check: bool = True,
             timeout: float = 60) -> subprocess.CompletedProcess:
        """Runs a command inside a node's namespaces (like `mrclab exec`); returns the
        CompletedProcess with text stdout/stderr. A string is split on whitespace."""
        argv = cmd.split() if isinstance(cmd, str) else list(cmd)
        self.node(node)
        proc = subprocess.run([_build.MRCLAB, "exec", self.name, node, "--", *argv],
                              capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{node}: {' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
        return proc

    def vtysh(self, node: str, command: str) -> Any:
        """An FRR command on a switch; output parsed as JSON when the command ends in 'json'."""
        if self.node(node).is_host:
            raise ValueError(f"'{node}' is a host; vtysh runs on switches")
        out = self.exec(node, ["vtysh", "-c", command]).stdout
        return json.loads(out) if command.rstrip().endswith("json") else out

    # -- faults and jobs -------------------------------------------------------------------
    @property
    def fault(self):
        """Fault injection (mrclab.Faults): lab.fault.blackhole('p0-leaf0:spine0'), ..."""
        from .faults import Faults
        if not hasattr(self, "_faults"):
            self._faults = Faults(self)
        return self._faults

    def revert_faults(self) -> int:
        """Reverts every active fault of the lab, whoever applied it; returns how many."""
        return _mrclab.revert_leftover_faults(self.name)

    def job(self, **config):
        """A synthetic training job on this lab (mrclab.Job; see its docstring for options)."""
        from .job import Job
        return Job(self, **config)
