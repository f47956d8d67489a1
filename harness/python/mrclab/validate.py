"""validate: `mrclab validate` from Python — does a candidate lab make training ride through worse?"""
from __future__ import annotations

import json
import os
import subprocess
from typing import Sequence

from . import _build


class ValidateError(Exception):
    """validate could not run (bad input or environment); str() is mrclab's one-line message."""


def validate(baseline: str | os.PathLike, candidate: str | os.PathLike, scenarios: Sequence[str | os.PathLike], *,
             runs: int = 5, max_runs: int | None = None, alpha: float = 0.01, min_change_percent: float = 20.0, backend: str | None = None,
             out: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """Runs every scenario `runs` times on each lab, up to `max_runs` (default twice `runs`) where
    a figure looks worse after those (lab files are deployed and destroyed; a deployed lab's name
    is used as it is), and returns validation.json as a dict:
    result['verdict'] is 'pass' (nothing worse), 'regression' or 'inconclusive';
    result['scenarios'][i]['figures'] holds every figure with both labs' values, its verdict
    (better, same, worse), shift, p-value and confidence; alpha bounds the chance of any false
    "worse" in the whole validation. Raises ValidateError on bad input and
    KeyboardInterrupt after cleaning up on Ctrl-C."""
    args = [_build.MRCLAB, "validate", "--baseline", str(baseline), "--candidate", str(candidate), "--json",
            "--runs", str(runs), "--alpha", str(alpha), "--min-change", str(min_change_percent)]
    if max_runs is not None:
        args += ["--max-runs", str(max_runs)]
    if backend:
        args += ["--backend", backend]
    if out is not None:
        args += ["--out", str(out)]
    if not progress:
        args.append("--quiet")
    proc = subprocess.run(args + [str(s) for s in scenarios], stdout=subprocess.PIPE,
                          stderr=None if progress else subprocess.PIPE, text=True)
    if proc.returncode == 130:
        raise KeyboardInterrupt
    if proc.returncode not in (0, 1, 3):
        lines = (proc.stderr or "").strip().splitlines()
        raise ValidateError(lines[-1] if lines else f"mrclab validate exited {proc.returncode}")
    return json.loads(proc.stdout)


def worse_figures(result: dict) -> list[str]:
    """'SCENARIO: TRANSPORT: FIGURE' of every figure judged worse (empty: no regression)."""
    return [f"{s['scenario']}: {f['transport'] + ': ' if f['transport'] else ''}{f['figure']}"
            for s in result["scenarios"] for f in s["figures"] if f["verdict"] == "worse"]
