"""Runs the drills of a validation: each scenario N times on each lab (more when judge.sequential
asks for them), with the same seeds, the two labs' runs interleaved (A B, B A, A B, ...) so that a machine getting busier or quieter affects
both alike.

Labs given as files are deployed here and destroyed at the end, also after an error or Ctrl-C;
two labs of the same name (a copy of a lab file with a change in it) take turns: the one whose
turn it is gets deployed. A lab given by name must already be deployed and is left as it is.
A drill whose verdict is inconclusive (this machine was the bottleneck) is run once more with the
same seed; if it stays inconclusive it is left out of the figures and reported.
"""
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mrclab_reports import rundir


class ValidateError(Exception):
    """Bad input or environment; str() is the one-line reason."""


class Interrupted(Exception):
    pass


@dataclass
class Side:
    role: str                       # baseline | candidate
    spec: str                       # as given on the command line
    file: object = None             # Path of a lab file validate deploys, None for a deployed lab
    name: str = ""


@dataclass
class RunRecord:
    side: str
    index: int
    seed: int
    run_dir: str
    verdict: str
    seconds: float
    attempts: int
    run: object = None              # rundir.Run of a conclusive run, else None


@dataclass
class ScenarioRuns:
    scenario: str
    name: str
    seed: int
    records: list = field(default_factory=list)
    done: int = 0                   # runs per side so far

    def conclusive(self, role):
        return [r for r in self.records if r.side == role and r.run is not None]


def _mrclab():
    return os.environ.get("MRCLAB") or "mrclab"


def _call(args):
    """Runs mrclab with args; returns (exit status, stdout, stderr). A Ctrl-C reaches the child
    too (same process group): we wait for it to clean up rather than killing it."""
    proc = subprocess.Popen([_mrclab()] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        proc.wait()
        raise Interrupted() from None
    if proc.returncode == 130:
        raise Interrupted()
    return proc.returncode, out, err


def _last_line(text):
    """mrclab's one-line message (its last line on stderr) without the 'mrclab: error: ' prefix."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].removeprefix("mrclab: error: ").removeprefix("mrclab: ") if lines else "(no message)"


def deployed_labs():
    rc, out, err = _call(["list", "--json"])
    if rc != 0:
        raise ValidateError(f"mrclab list: {_last_line(err)}")
    return {lab["lab"] for lab in json.loads(out or "[]")}


def declared_backend(scenarios):
    """The backend the scenario files ask for with their `backend:` key (None: netns, the
    default), when --backend does not say; raises ValidateError when they ask for different
    ones. A file that cannot be read as YAML counts as netns here: drill --check names its fault."""
    wanted = {}
    for scenario in scenarios:
        try:
            doc = yaml.safe_load(Path(scenario).read_text())
        except (yaml.YAMLError, OSError, UnicodeDecodeError):
            doc = None
        backend = doc.get("backend") if isinstance(doc, dict) else None
        wanted[str(scenario)] = backend if backend in ("netns", "ns3") else "netns"
    if len(set(wanted.values())) > 1:
        raise ValidateError("--backend: the scenarios are meant for different backends (" +
                            ", ".join(f"{s}: {b}" for s, b in wanted.items()) +
                            "); give --backend, or validate them separately")
    return "ns3" if "ns3" in wanted.values() else None


def resolve(side, backend, deployed):
    """Fills side.file and side.name (ns3: the name comes with the scenario check, as deploy
    --check needs root); raises ValidateError naming the option."""
    option = f"--{side.role}"
    path = Path(side.spec)
    if path.is_file() and backend == "ns3":
        side.file = path.resolve()
        return
    if path.is_file():
        # deploy --check: the file, the machine, and that no lab of its name is deployed (validate
        # deploys lab files itself; a deployed lab is given by its name).
        rc, out, err = _call(["deploy", str(path), "--check", "--json"])
        if rc != 0:
            raise ValidateError(f"{option} {side.spec}: {_last_line(err)}")
        side.file, side.name = path.resolve(), json.loads(out)["lab"]
        return
    if backend == "ns3":
        raise ValidateError(f"{option} {side.spec}: no such lab file (the ns3 backend needs lab files)")
    if side.spec in deployed:
        side.name = side.spec
        return
    raise ValidateError(f"{option} {side.spec}: neither a lab file nor a deployed lab (mrclab list shows them)")


class Labs:
    """The labs validate deployed: at most one per name at a time, all destroyed by close()."""

    def __init__(self, progress):
        self.holder = {}            # lab name -> Side deployed under it by us
        self.progress = progress

    def ready(self, side, backend):
        if side.file is None or backend == "ns3" or self.holder.get(side.name) is side:
            return
        if side.name in self.holder:
            self._destroy(side.name)
        self.progress(f"deploying {side.role} lab {side.name} from {side.file}")
        rc, _, err = _call(["deploy", str(side.file), "-q"])
        if rc != 0:
            raise ValidateError(f"--{side.role} {side.spec}: deploy failed: {_last_line(err)}")
        self.holder[side.name] = side

    def _destroy(self, name):
        del self.holder[name]
        rc, _, err = _call(["destroy", name])
        if rc != 0:
            print(f"mrclab validate: warning: destroying lab {name}: {_last_line(err)}", file=sys.stderr)

    def close(self):
        for name in list(self.holder):
            try:
                self._destroy(name)
            except Interrupted:
                pass


def _lab_argument(side, backend):
    """What drill --lab gets: the file where validate does not deploy (ns3), else the lab's name."""
    return str(side.file) if backend == "ns3" else side.name


def _drill(scenario, side, seed, out_dir, backend):
    args = ["drill", str(scenario), "--lab", _lab_argument(side, backend), "--seed", str(seed),
            "--out", str(out_dir), "--json", "-q", "--metrics", "off"]
    if backend:
        args += ["--backend", backend]
    rc, out, err = _call(args)
    if rc not in (0, 1, 3):
        raise ValidateError(f"{scenario}: the drill on {side.role} lab {side.name} failed: {_last_line(err)}")
    try:
        result = json.loads(out)
    except json.JSONDecodeError:
        raise ValidateError(f"{scenario}: the drill on {side.role} lab {side.name} printed no result: "
                            f"{_last_line(err)}") from None
    return result


def check_scenario(scenario, sides, backend):
    """ScenarioRuns (still without runs) of a scenario that fits both labs (its targets, its
    hosts): `mrclab drill --check` on each; raises ValidateError with drill's message."""
    for side in sides:
        rc, out, err = _call(["drill", str(scenario), "--check", "--json", "--lab", str(side.file or side.name)] +
                             (["--backend", backend] if backend else []))
        if rc != 0:
            raise ValidateError(f"{_last_line(err)} (checking {scenario} on --{side.role} "
                                f"{side.spec})")
        check = json.loads(out)
        side.name = side.name or check["lab"]
    return ScenarioRuns(str(scenario), check["scenario"], int(check["seed"]))


def run_scenario(result, sides, upto, total, out_root, labs, backend, progress):
    """Adds runs to a ScenarioRuns until each side has `upto` (of at most `total`): seeds seed,
    seed+1, ..., the sides' order alternating from one run to the next."""
    scenario, name, seed0 = result.scenario, result.name, result.seed
    for i in range(result.done, upto):
        order = sides if i % 2 == 0 else list(reversed(sides))
        for side in order:
            seed = seed0 + i
            record = None
            for attempt in (1, 2):
                labs.ready(side, backend)
                progress(f"{name}: run {i + 1}/{total} on the {side.role} lab {side.name} (seed {seed}"
                         f"{', again: the last was inconclusive' if attempt == 2 else ''})")
                t0 = time.monotonic()
                res = _drill(scenario, side, seed, Path(out_root) / name / side.role, backend)
                record = RunRecord(side.role, i, seed, res.get("run_dir", ""), res.get("verdict", ""),
                                   time.monotonic() - t0, attempt)
                if record.verdict != "inconclusive":
                    break
            if record.verdict != "inconclusive":
                try:
                    record.run = rundir.load(record.run_dir)
                except rundir.RunDirError as e:
                    raise ValidateError(str(e)) from None
            progress(f"{name}: run {i + 1}/{total} on the {side.role} lab: {record.verdict} in "
                     f"{record.seconds:.1f} s")
            result.records.append(record)
        result.done = i + 1
    return result
