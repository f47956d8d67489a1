"""Judges each figure of a scenario: better, same or worse on the candidate lab, by how much and
with what confidence.

A numeric figure is worse when the one-sided Mann–Whitney p-value that the candidate's values are
higher (for figures where higher is worse) is at most alpha AND the Hodges–Lehmann shift is at
least min_change of the baseline's median (so a significant but negligible shift is "same"):
both a test and an effect size, because these machines are noisy and a scenario has dozens of
figures. A pass/fail figure is worse when a one-sided Fisher exact test says the candidate passes
less often (p <= alpha). "Better" is the mirror image.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from mrclab_reports.validation import stats

# Below these, a baseline median is too small to take a percentage of (a change from 0 retransmissions
# to 3 is measured against 1, from 0 s to 4 ms against 1 ms).
SCALE_FLOOR = {"s": 1e-3, "count": 1.0, "steps/min": 1.0, "": 1e-3}


@dataclass
class Judgement:
    key: object                     # figures.Key
    baseline: list                  # values, one per run
    candidate: list
    verdict: str = "same"           # better | same | worse
    p_value: float = 1.0            # of the verdict's direction (of "worse" when same)
    shift: float = 0.0              # candidate − baseline (Hodges–Lehmann); pass rate change for pass/fail
    change_percent: object = None   # shift against the baseline median (None: no scale)
    notes: list = field(default_factory=list)

    @property
    def confidence(self):
        return 1.0 - self.p_value


def _median(values):
    return float(np.median(values)) if values else None


def _pass_fail(j, alpha):
    a, b = sum(j.baseline), sum(j.candidate)
    na, nb = len(j.baseline), len(j.candidate)
    p_fewer, p_more = stats.fisher_fewer(a, na, b, nb), stats.fisher_fewer(b, nb, a, na)
    j.shift = b / nb - a / na
    j.change_percent = j.shift * 100
    if p_fewer <= alpha:
        j.verdict, j.p_value = "worse", p_fewer
    elif p_more <= alpha:
        j.verdict, j.p_value = "better", p_more
    else:
        j.p_value = min(p_fewer, p_more) if j.shift else 1.0
    if b < nb and a == na:
        j.notes.append(f"failed in {nb - b} of {nb} candidate runs (never on the baseline)")


def _numeric(j, alpha, min_change):
    direction = j.key.direction
    p_higher, p_lower = stats.mann_whitney(j.baseline, j.candidate)
    j.shift = stats.hodges_lehmann(j.baseline, j.candidate)
    base = _median(j.baseline)
    scale = max(abs(base), SCALE_FLOOR.get(j.key.unit, 1e-3)) if base is not None and math.isfinite(base) else None
    j.change_percent = j.shift / scale * 100 if scale and math.isfinite(j.shift) else None
    large = not math.isfinite(j.shift) or (scale is not None and abs(j.shift) >= min_change * scale)
    p_worse, p_better = (p_higher, p_lower) if direction > 0 else (p_lower, p_higher)
    toward_worse = j.shift * direction > 0
    if p_worse <= alpha and large and toward_worse:
        j.verdict, j.p_value = "worse", p_worse
    elif p_better <= alpha and large and not toward_worse and j.shift != 0:
        j.verdict, j.p_value = "better", p_better
    else:
        j.p_value = p_worse if toward_worse or j.shift == 0 else p_better
        if min(p_worse, p_better) <= alpha and not large:
            j.notes.append(f"significant but below the {min_change * 100:.0f}% that counts")
    never_a = sum(1 for v in j.baseline if math.isinf(v))
    never_b = sum(1 for v in j.candidate if math.isinf(v))
    if never_a or never_b:
        j.notes.append(f"never happened in {never_a}/{len(j.baseline)} baseline and {never_b}/{len(j.candidate)} "
                       f"candidate runs")


def judge(key, baseline, candidate, alpha, min_change):
    j = Judgement(key, list(baseline), list(candidate))
    if len(j.baseline) < 2 or len(j.candidate) < 2:
        j.notes.append("too few runs to compare")
        return j
    if key.direction == 0:
        _pass_fail(j, alpha)
    else:
        _numeric(j, alpha, min_change)
    return j


def judge_runs(baseline_figures, candidate_figures, alpha, min_change):
    """Judgements for every figure any run has; inputs are lists of {Key: value}, one per run."""
    keys = []
    for figs in baseline_figures + candidate_figures:
        keys += [k for k in figs if k not in keys]

    def values(runs, key):
        out = []
        for figs in runs:
            if key in figs:
                out.append(figs[key])
            elif key.missing_is_never:
                out.append(math.inf)
        return out

    return [judge(k, values(baseline_figures, k), values(candidate_figures, k), alpha, min_change) for k in keys]
