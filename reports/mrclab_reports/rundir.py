"""Loads a drill's run directory (see harness/drill/run_recorder.h) into plain data.

Only result.json is required; every other file may be missing or empty (a drill interrupted
early), and then the sections that need it say so. A file that is there but malformed is an
error naming the file, the line and what is wrong.
"""
import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

EV_STATES = ("GOOD", "ASSUMED_BAD", "DENIED")


class RunDirError(Exception):
    """A run directory that cannot be reported on; str() names the file and the problem."""


@dataclass
class Fault:
    index: int
    kind: str
    description: str
    windows: list          # [(applied_unix, reverted_unix or None)]
    recovery_seconds: object = None


@dataclass
class Step:
    step: int
    phase: str             # warmup | baseline | faults | tail
    faults_active: int
    start: float
    end: float
    seconds: float
    bytes_verified: int
    bytes_bad: int
    retransmissions: int
    collectives: list      # [(kind, seconds, busbw_gbps)]


@dataclass
class EvSeries:
    """Per-EV samples of one transport: row k is EV keys[k] = (qp, ev, plane); column j is t[j]."""
    t: np.ndarray
    keys: list
    tx_data: np.ndarray    # cumulative first transmissions, NaN where not sampled
    retransmits: np.ndarray
    state: np.ndarray      # index into EV_STATES, -1 where not sampled


@dataclass
class Transport:
    name: str
    transport: str
    ev_mode: str
    evs: int
    job: dict
    steps_per_minute: float
    cpu_seconds: float
    step_time: dict
    step_time_bound: float
    rode_through: bool
    faults: list
    steps: list = field(default_factory=list)
    ev_series: object = None          # EvSeries or None
    start: float = None               # unix time of its first step (or of its job start)
    end: float = None                 # unix time of its last step (or of its job end)
    stack: str = "model"              # model (our MRC core) | kernel (the kernel's RC on VM hosts)

    @property
    def kind(self) -> str:
        """'mrc, srv6, 32 EVs' for our core's transports; "the kernel's rc, rdma_rxe" for the kernel's."""
        if self.stack == "kernel":
            return f"the kernel's {self.transport}, rdma_rxe"
        return f"{self.transport}, {self.ev_mode}, {self.evs} EVs"


@dataclass
class Run:
    path: Path
    label: str                        # scenario name
    result: dict
    verdict: str
    slos: list
    transports: list
    events: list
    links: dict                       # end -> {"link": int, "t": array, "rx_packets": array, ...}
    lab: object                       # lab.json or None
    scenario_text: str
    started: float
    finished: float

    def transport(self, name):
        return next(t for t in self.transports if t.name == name)


def _fail(path, what):
    raise RunDirError(f"{path}: {what}")


def _require(obj, key, path, where):
    if not isinstance(obj, dict) or key not in obj:
        _fail(path, f"{where}: missing field '{key}'")
    return obj[key]


def _load_result(path):
    if not path.exists():
        _fail(path, "missing: not a run directory of `mrclab drill`, or the drill did not finish "
                    "(result.json is written last)")
    try:
        result = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        _fail(path, f"cannot read: {e}")
    except json.JSONDecodeError as e:
        _fail(path, f"line {e.lineno}: not valid JSON ({e.msg})")
    if not isinstance(result, dict):
        _fail(path, "not a JSON object")
    for key in ("verdict", "slos", "transports"):
        _require(result, key, path, "top level")
    if not isinstance(result["transports"], list) or not isinstance(result["slos"], list):
        _fail(path, "'transports' and 'slos' must be lists")
    return result


def _transport(doc, i, path):
    where = f"transports[{i}]"
    job = _require(doc, "job", path, where)
    for key in ("state", "steps"):
        _require(job, key, path, f"{where}.job")
    faults = []
    for j, f in enumerate(doc.get("faults", [])):
        windows = []
        for w in _require(f, "windows", path, f"{where}.faults[{j}]"):
            if not isinstance(w, list) or len(w) != 2:
                _fail(path, f"{where}.faults[{j}].windows: expected [applied, reverted] pairs")
            windows.append((float(w[0]), None if w[1] is None else float(w[1])))
        faults.append(Fault(int(f.get("index", j)), str(_require(f, "kind", path, f"{where}.faults[{j}]")),
                            str(f.get("description", "")), windows, f.get("recovery_seconds")))
    return Transport(
        name=str(_require(doc, "name", path, where)), transport=str(doc.get("transport", "")),
        ev_mode=str(doc.get("ev_mode") or ""), evs=int(doc.get("evs") or 0), job=job,
        steps_per_minute=doc.get("steps_per_minute"), cpu_seconds=doc.get("cpu_seconds"),
        step_time=doc.get("step_time") or {}, step_time_bound=doc.get("step_time_bound"),
        rode_through=bool(doc.get("rode_through")), faults=faults, stack=str(doc.get("stack") or "model"))


def _rows(path):
    """CSV rows as dicts with their line numbers; [] for a missing or empty file."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    try:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            return [(reader.line_num, row) for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        _fail(path, f"cannot read: {e}")


def _number(path, line, row, key, kind=float):
    try:
        return kind(row[key])
    except KeyError:
        _fail(path, f"line {line}: missing column '{key}'")
    except (TypeError, ValueError):
        _fail(path, f"line {line}: column '{key}' is not a number: {row.get(key)!r}")


def _load_steps(path):
    steps = {}
    for line, row in _rows(path):
        collectives = []
        c = 0
        while f"c{c}_kind" in row and row[f"c{c}_kind"]:
            collectives.append((row[f"c{c}_kind"], _number(path, line, row, f"c{c}_seconds"),
                                _number(path, line, row, f"c{c}_busbw_gbps")))
            c += 1
        if not row.get("transport"):
            _fail(path, f"line {line}: missing column 'transport'")
        steps.setdefault(row["transport"], []).append(Step(
            step=_number(path, line, row, "step", int), phase=row.get("phase", ""),
            faults_active=_number(path, line, row, "faults_active", int),
            start=_number(path, line, row, "start"), end=_number(path, line, row, "end"),
            seconds=_number(path, line, row, "seconds"),
            bytes_verified=_number(path, line, row, "bytes_verified", int),
            bytes_bad=_number(path, line, row, "bytes_bad", int),
            retransmissions=_number(path, line, row, "retransmissions", int), collectives=collectives))
    return steps


def _load_evs(path):
    per_transport = {}
    for line, row in _rows(path):
        if not row.get("transport") or not row.get("qp"):
            _fail(path, f"line {line}: missing column 'transport' or 'qp'")
        key = (row["qp"], _number(path, line, row, "ev", int), _number(path, line, row, "plane", int))
        state = row.get("state", "")
        per_transport.setdefault(row["transport"], []).append(
            (_number(path, line, row, "t"), key, EV_STATES.index(state) if state in EV_STATES else -1,
             _number(path, line, row, "tx_data"), _number(path, line, row, "tx_retransmits")))
    series = {}
    for name, samples in per_transport.items():
        times = sorted({s[0] for s in samples})
        keys = sorted({s[1] for s in samples}, key=lambda k: (k[1], k[0]))
        ti = {t: j for j, t in enumerate(times)}
        ki = {k: i for i, k in enumerate(keys)}
        tx = np.full((len(keys), len(times)), np.nan)
        retx = np.full_like(tx, np.nan)
        st = np.full(tx.shape, -1, dtype=int)
        for t, key, state, data, retrans in samples:
            i, j = ki[key], ti[t]
            tx[i, j], retx[i, j], st[i, j] = data, retrans, state
        series[name] = EvSeries(np.array(times), keys, tx, retx, st)
    return series


def _load_links(path):
    ends = {}
    for line, row in _rows(path):
        if not row.get("end"):
            _fail(path, f"line {line}: missing column 'end'")
        e = ends.setdefault(row["end"], {"link": _number(path, line, row, "link", int), "rows": []})
        e["rows"].append([_number(path, line, row, k) for k in
                          ("t", "rx_packets", "tx_packets", "rx_dropped", "tx_dropped")])
    links = {}
    for end, e in ends.items():
        a = np.array(sorted(e["rows"]))
        links[end] = {"link": e["link"], "t": a[:, 0], "rx_packets": a[:, 1], "tx_packets": a[:, 2],
                      "rx_dropped": a[:, 3], "tx_dropped": a[:, 4]}
    return links


def _load_events(path):
    if not path.exists():
        return []
    events = []
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        _fail(path, f"cannot read: {e}")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            _fail(path, f"line {n}: not valid JSON ({err.msg})")
        if not isinstance(e, dict) or "t" not in e or "type" not in e:
            _fail(path, f"line {n}: an event needs 't' and 'type'")
        events.append(e)
    return events


def _load_json(path):
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        _fail(path, f"not valid JSON ({e})")


def load(directory):
    """Reads RUN_DIR; raises RunDirError naming the file and what is wrong."""
    d = Path(directory)
    if not d.exists():
        raise RunDirError(f"{d}: no such run directory")
    if not d.is_dir():
        raise RunDirError(f"{d}: not a directory (give the run directory, e.g. runs/<time>-<scenario>/)")
    result = _load_result(d / "result.json")
    transports = [_transport(doc, i, d / "result.json") for i, doc in enumerate(result["transports"])]
    steps = _load_steps(d / "steps.csv")
    evs = _load_evs(d / "evs.csv")
    events = _load_events(d / "events.jsonl")
    for t in transports:
        t.steps = sorted(steps.get(t.name, []), key=lambda s: s.step)
        t.ev_series = evs.get(t.name)
        job_times = [e["t"] for e in events if e["type"] == "job_state" and e.get("job") == t.name]
        t.start = t.steps[0].start if t.steps else (min(job_times) if job_times else None)
        ends = [s.end for s in t.steps] + job_times
        t.end = max(ends) if ends else None
    scenario = d / "scenario.yaml"
    return Run(path=d, label=str(result.get("scenario") or d.name), result=result,
               verdict=str(result["verdict"]), slos=result["slos"], transports=transports, events=events,
               links=_load_links(d / "links.csv"), lab=_load_json(d / "lab.json"),
               scenario_text=scenario.read_text() if scenario.exists() else "",
               started=result.get("started") or (events[0]["t"] if events else None),
               finished=result.get("finished") or (events[-1]["t"] if events else None))
