"""Judges each figure of a scenario: better, same or worse on the candidate lab, by how much and
with what confidence, keeping the chance of a false "worse" anywhere in the scenario at alpha.

Per figure: the one-sided Mann–Whitney p-value that the candidate's values are worse (pass/fail
figures: Fisher's exact test on the pass rates) and the Hodges–Lehmann shift. A scenario has
dozens of figures, so a p-value at or below alpha alone would be a false alarm on some figure in
most validations of a change that changes nothing. A figure is worse only when:
  - its p-value is at most the family's level: alpha / K, where K counts the figures whose values
    could reach that level at all (Tarone's correction: figures equal in every run, or too few
    runs to ever be significant, do not dilute the others), and
  - the shift is at least min_change of the baseline's median (a significant but negligible
    shift is "same").
"Better" is the mirror image, a family of its own.

Runs more when in doubt (sequential): after the first runs, when no figure looks worse even
uncorrected (p <= alpha), more runs could not make validate say "worse", and it stops; otherwise
the scenario runs up to max_runs and is judged on all of them. Stopping early only for a pass
keeps the false-alarm chance at alpha, because only the final judgement can reject.
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
    shift: float = 0.0              # candidate − baseline (Hodges–Lehmann); pass rate change for pass/fail
    change_percent: object = None   # shift against the baseline median (None: no scale)
    p_worse: float = 1.0            # one-sided p-values, uncorrected
    p_better: float = 1.0
    least_p_worse: float = 1.0      # the smallest p-values these pooled values could give at all
    least_p_better: float = 1.0
    large: bool = False             # the shift is at least min_change (pass/fail: any change)
    level: float = 0.0              # the p-value threshold the verdict was judged against
    notes: list = field(default_factory=list)

    @property
    def toward_worse(self):
        return self.shift < 0 if self.key.direction == 0 else self.shift * self.key.direction > 0

    @property
    def p_value(self):
        """Of the verdict's direction; of the shift's direction when same."""
        if self.verdict != "same":
            return self.p_worse if self.verdict == "worse" else self.p_better
        if not self.shift:
            return 1.0
        return self.p_worse if self.toward_worse else self.p_better

    @property
    def confidence(self):
        return 1.0 - self.p_value

    def looks_worse(self, alpha):
        """Worse before the correction: worth more runs. The p-value must be at most alpha, or,
        where so few runs cannot reach alpha, the smallest any two samples of these sizes can give."""
        floor = 1 / math.comb(len(self.baseline) + len(self.candidate), len(self.candidate))
        return self.p_worse <= max(alpha, floor) and self.large and self.toward_worse


def _median(values):
    return float(np.median(values)) if values else None


def _pass_fail(j):
    a, b = sum(j.baseline), sum(j.candidate)
    na, nb = len(j.baseline), len(j.candidate)
    j.p_worse, j.p_better = stats.fisher_fewer(a, na, b, nb), stats.fisher_fewer(b, nb, a, na)
    j.least_p_worse, j.least_p_better = stats.least_p_fisher(a, na, b, nb)
    j.shift = b / nb - a / na
    j.change_percent = j.shift * 100
    j.large = j.shift != 0
    if b < nb and a == na:
        j.notes.append(f"failed in {nb - b} of {nb} candidate runs (never on the baseline)")


def _numeric(j, min_change):
    p_higher, p_lower = stats.mann_whitney(j.baseline, j.candidate)
    least_higher, least_lower = stats.least_p_mann_whitney(j.baseline, j.candidate)
    if j.key.direction > 0:
        j.p_worse, j.p_better, j.least_p_worse, j.least_p_better = p_higher, p_lower, least_higher, least_lower
    else:
        j.p_worse, j.p_better, j.least_p_worse, j.least_p_better = p_lower, p_higher, least_lower, least_higher
    j.shift = stats.hodges_lehmann(j.baseline, j.candidate)
    base = _median(j.baseline)
    scale = max(abs(base), SCALE_FLOOR.get(j.key.unit, 1e-3)) if base is not None and math.isfinite(base) else None
    j.change_percent = j.shift / scale * 100 if scale and math.isfinite(j.shift) else None
    j.large = not math.isfinite(j.shift) or (scale is not None and abs(j.shift) >= min_change * scale)
    never_a = sum(1 for v in j.baseline if math.isinf(v))
    never_b = sum(1 for v in j.candidate if math.isinf(v))
    if never_a or never_b:
        j.notes.append(f"never happened in {never_a}/{len(j.baseline)} baseline and {never_b}/{len(j.candidate)} "
                       f"candidate runs")


def judge(key, baseline, candidate, min_change):
    """The figure's tests and shift (its verdict comes with its family: decide())."""
    j = Judgement(key, list(baseline), list(candidate))
    if len(j.baseline) < 2 or len(j.candidate) < 2:
        j.notes.append("too few runs to compare")
    elif key.direction == 0:
        _pass_fail(j)
    else:
        _numeric(j, min_change)
    return j


def decide(judgements, alpha, min_change):
    """Sets every verdict, with the worse and the better figures each a family at alpha; returns
    {"worse": (level, figures that can reach it), "better": (...)}."""
    levels = {"worse": stats.tarone_level([j.least_p_worse for j in judgements], alpha),
              "better": stats.tarone_level([j.least_p_better for j in judgements], alpha)}
    for j in judgements:
        j.verdict, j.level = "same", levels["worse" if j.toward_worse else "better"][0]
        if j.shift and j.large and (j.p_worse if j.toward_worse else j.p_better) <= j.level:
            j.verdict = "worse" if j.toward_worse else "better"
            continue
        p = j.p_worse if j.toward_worse else j.p_better
        if j.shift and p <= j.level:
            j.notes.append(f"significant but below the {min_change * 100:.0f}% that counts")
        elif j.shift and j.large and p <= alpha:
            j.notes.append(f"p = {p:.2g} is above {j.level:.2g}, alpha {alpha:g} corrected for the number of "
                           f"figures")
    return levels


def judge_runs(baseline_figures, candidate_figures, alpha, min_change):
    """(judgements, levels) for every figure any run has; inputs are lists of {Key: value}, one per
    run."""
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

    judgements = [judge(k, values(baseline_figures, k), values(candidate_figures, k), min_change) for k in keys]
    return judgements, decide(judgements, alpha, min_change)


def unprovable(judgements, alpha):
    """Figures that look worse but whose runs could never reach the level (too few conclusive
    runs: the machine was the bottleneck in some): their scenario is inconclusive, not a pass."""
    return [j for j in judgements if j.looks_worse(alpha) and j.verdict != "worse" and j.least_p_worse > j.level]


def sequential(figures_after, runs, max_runs, alpha, min_change, more=lambda looks_worse: None):
    """Judges after `runs` runs per lab and, when some figure looks worse uncorrected, after
    max_runs. figures_after(n) runs what is missing and returns (baseline figures, candidate
    figures) of the first n runs per lab; more(judgements that look worse) is told before the
    extra runs. Returns (judgements, levels, runs per lab judged)."""
    judgements, levels = judge_runs(*figures_after(runs), alpha, min_change)
    looks_worse = [j for j in judgements if j.looks_worse(alpha)]
    if max_runs > runs and looks_worse:
        more(looks_worse)
        return (*judge_runs(*figures_after(max_runs), alpha, min_change), max_runs)
    return judgements, levels, runs
