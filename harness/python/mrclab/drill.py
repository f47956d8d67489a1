"""run_drill: a whole drill from Python, as `mrclab drill` runs it."""
from __future__ import annotations

import os
from typing import Sequence

from . import _mrclab


def run_drill(scenario: str | os.PathLike, *, lab: str | None = None, out: str | os.PathLike = "runs",
              metrics: str | None = None, transports: Sequence[str] = (), keep_lab: bool = False,
              progress: bool = False, backend: str | None = None) -> dict:
    """Runs the scenario (boots or reuses its lab, runs the job over each transport through the
    fault schedule, reverts every fault, evaluates the SLOs) and returns result.json as a dict;
    result['verdict'] is 'pass', 'fail' or 'inconclusive' (this machine was the bottleneck during a
    fault window or the baseline; result['emulation_fidelity'] says why) and result['run_dir'] holds
    events, steps and JUnit.
    lab: another lab file or a deployed lab's name; metrics: 'HOST:PORT' to serve Prometheus
    metrics meanwhile (port 0: a free one; None or 'off': none). backend: 'netns' (the emulated
    lab, root) or 'ns3' (the same lab simulated; no root; times in the run directory are
    simulated seconds); default: the scenario's `backend:` key, else netns. Scenario errors
    (and a bad `metrics`) are ValueError naming the file or keyword, the field and the reason."""
    options = {"lab": str(lab or ""), "out": str(out), "metrics": str(metrics or ""), "transports": list(transports),
               "keep_lab": keep_lab, "progress": progress, "summary": False, "backend": backend or ""}
    return _mrclab.run_drill(str(scenario), options)
