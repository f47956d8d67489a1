"""How often `mrclab validate` cries wolf, measured on simulated drills (no root, no drills): a
model of a noisy lab's ~30 figures per run (a BFD phase and a machine load shared by figures of
one run, heavy-tailed step times, counts with ties, rare "never" recoveries and failed passes)
with no change between the labs. Judging every figure at p <= alpha on its own would call about
one such validation in ten a regression (the false alarm a comments-only change once raised on
CI); the corrected, sequential judgement must stay at or below alpha while still catching a
doubled recovery time, and must cost only --runs runs in most validations of no change."""
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reports"))
from mrclab_reports.validation import judge  # noqa: E402
from mrclab_reports.validation.figures import Key  # noqa: E402

ALPHA, MIN_CHANGE = 0.01, 0.2


def one_run(rng, slower=1.0):
    """One drill's figures; `slower` multiplies the recovery-driven ones (a real regression)."""
    out = {}
    for t in ("mrc", "rc"):
        phase, load = rng.uniform(0, 0.3), rng.lognormal(0, 0.15)
        out[Key(t, "rode through", "pass", 0)] = bool(rng.random() > 0.05)
        out[Key(t, "baseline step p50", "s", +1)] = 0.05 * load * rng.lognormal(0, 0.05)
        out[Key(t, "step time p50", "s", +1)] = 0.05 * load * rng.lognormal(0, 0.05)
        out[Key(t, "step time p99", "s", +1)] = (0.3 + phase) * load * rng.lognormal(0, 0.2) * slower
        out[Key(t, "steps/min", "steps/min", -1)] = 600 / load * rng.lognormal(0, 0.05)
        out[Key(t, "retransmissions", "count", +1)] = float(rng.poisson(3))
        out[Key(t, "bytes lost", "count", +1)] = float(rng.poisson(0.5) * 4096)
        out[Key(t, "EV state changes", "count", +1)] = float(rng.poisson(4))
        recovery = [phase + rng.uniform(0.6, 0.9) if rng.random() > 0.03 else math.inf for _ in range(2)]
        out[Key(t, "worst recovery", "s", +1, True)] = max(recovery) * slower
        for i in range(2):
            out[Key(t, f"recovery #{i} blackhole", "s", +1, True)] = recovery[i] * slower
            out[Key(t, f"routing detect #{i} blackhole", "s", +1, True)] = rng.uniform(0.6, 1.0)
            out[Key(t, f"routing restore #{i} blackhole", "s", +1)] = rng.uniform(1.0, 3.0) * load
    out[Key("mrc", "SLO no_interruption", "pass", 0)] = bool(rng.random() > 0.02)
    return out


def validation(rng, slower=1.0, runs=5, max_runs=10):
    """(any figure worse, runs per lab judged) of one simulated validation."""
    baseline, candidate = [], []

    def figures_after(n):
        while len(baseline) < n:
            baseline.append(one_run(rng))
            candidate.append(one_run(rng, slower))
        return baseline[:n], candidate[:n]

    judgements, _, judged = judge.sequential(figures_after, runs, max_runs, ALPHA, MIN_CHANGE)
    return any(j.verdict == "worse" for j in judgements), judged


def test_no_change_is_a_false_alarm_at_most_alpha_of_the_time():
    rng = np.random.default_rng(2026)
    n = 400
    outcomes = [validation(rng) for _ in range(n)]
    false_alarms = sum(worse for worse, _ in outcomes)
    mean_runs = float(np.mean([judged for _, judged in outcomes]))
    # Uncorrected (every figure on its own at p <= alpha, 5 runs): the rule that raised a false alarm.
    uncorrected = 0
    for _ in range(n):
        base = [one_run(rng) for _ in range(5)]
        cand = [one_run(rng) for _ in range(5)]
        uncorrected += any(j.looks_worse(ALPHA) for j in judge.judge_runs(base, cand, ALPHA, MIN_CHANGE)[0])
    print(f"\nno change, {n} validations: false alarms {false_alarms / n:.1%} (uncorrected per figure: "
          f"{uncorrected / n:.1%}); runs per lab {mean_runs:.2f} on average")
    assert false_alarms / n <= ALPHA
    assert uncorrected / n >= 0.05  # what the correction is for
    assert mean_runs <= 6.5         # no change usually costs only --runs


def test_a_doubled_recovery_is_caught():
    rng = np.random.default_rng(7)
    n = 100
    caught = sum(validation(rng, slower=2.0)[0] for _ in range(n))
    print(f"\nrecovery doubled, {n} validations: caught {caught / n:.0%}")
    assert caught / n >= 0.95
