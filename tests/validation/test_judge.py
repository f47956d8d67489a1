"""The statistics and the judgement of `mrclab validate` on known samples (no root, no drills):
exact Mann–Whitney p-values against hand-computed ones and against enumerating every split,
Fisher's exact test, Hodges–Lehmann, Tarone's level, and the verdicts: a clear shift is worse
(or better), noise and a tiny significant shift are the same, a fault never recovered from is
worse, too few runs say so, and among many figures one at p <= alpha is not yet worse."""
import itertools
import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reports"))
from mrclab_reports.validation import judge, stats  # noqa: E402
from mrclab_reports.validation.figures import Key  # noqa: E402

STEP = Key("mrc", "step time p99", "s", +1)
RATE = Key("mrc", "steps/min", "steps/min", -1)
RECOVERY = Key("rc", "recovery #0 blackhole", "s", +1, True)
RODE = Key("rc", "rode through", "pass", 0)


def judged(key, baseline, candidate, alpha=0.01, min_change=0.2):
    """The judgement of one figure alone (a family of one: its level is alpha)."""
    judgements, _ = judge.judge_runs([{key: v} for v in baseline], [{key: v} for v in candidate], alpha, min_change)
    return judgements[0]


def test_mann_whitney_exact_p_values():
    # Complete separation of 5 and 5: one split of C(10,5) = 252 is as extreme.
    assert stats.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx((1 / 252, 1.0))
    # 3 and 3 can never reach below 1/20.
    assert stats.mann_whitney([1, 2, 3], [4, 5, 6])[0] == pytest.approx(1 / 20)
    # One overlap: U = 1, P(U <= 1) = 2/252.
    assert stats.mann_whitney([1, 2, 3, 4, 6], [5, 7, 8, 9, 10])[0] == pytest.approx(2 / 252)
    # Identical samples: nothing either way.
    p_greater, p_less = stats.mann_whitney([2, 2, 2], [2, 2, 2])
    assert p_greater == pytest.approx(1.0) and p_less == pytest.approx(1.0)
    # "Never" ranks above every number.
    assert stats.mann_whitney([1, 2, 3], [4, math.inf, math.inf])[0] == pytest.approx(1 / 20)


def test_mann_whitney_normal_approximation_agrees_with_the_exact_test():
    a = [float(x) for x in range(12)]
    b = [x + 3.5 for x in a]  # p near 0.02: the approximation is for the exact test beyond 80 values
    exact = stats.mann_whitney(a, b)[0]
    saved, stats.EXACT_MAX_VALUES = stats.EXACT_MAX_VALUES, 0
    try:
        approx = stats.mann_whitney(a, b)[0]
    finally:
        stats.EXACT_MAX_VALUES = saved
    assert approx == pytest.approx(exact, rel=0.1)


def test_the_counted_distribution_is_that_of_every_split():
    def enumerated(a, b):
        ranks = stats._ranks(a + b)
        observed = ranks[len(a):].sum()
        sums = [ranks[list(idx)].sum() for idx in itertools.combinations(range(len(a) + len(b)), len(b))]
        return (sum(s >= observed - 1e-9 for s in sums) / len(sums), sum(s <= observed + 1e-9 for s in sums) / len(sums))

    rng = random.Random(7)
    for _ in range(200):  # small samples with many ties and "never"
        a = [rng.choice([1.0, 2.0, 2.5, 3.0, math.inf]) for _ in range(rng.randint(1, 7))]
        b = [rng.choice([1.0, 2.0, 2.5, 3.0, 4.0, math.inf]) for _ in range(rng.randint(1, 7))]
        assert stats.mann_whitney(a, b) == pytest.approx(enumerated(a, b), abs=1e-12), (a, b)


def test_least_p_values_and_tarone_level():
    # The most extreme split of the pooled values; all equal values can show nothing.
    assert stats.least_p_mann_whitney([3, 1, 2, 5, 4], [1, 2, 3, 4, 5]) == pytest.approx((2 / 252, 2 / 252))
    assert stats.least_p_mann_whitney([2, 2, 2], [2, 2, 2]) == pytest.approx((1.0, 1.0))
    assert stats.least_p_fisher(5, 5, 5, 5) == pytest.approx((1.0, 1.0))
    assert stats.least_p_fisher(4, 5, 5, 5) == pytest.approx((0.5, 0.5))
    # Three figures that can reach 1e-4 and 27 that cannot reach anything: alpha shared by 3, not 30.
    assert stats.tarone_level([1e-4] * 3 + [1.0] * 27, 0.01) == pytest.approx((0.01 / 3, 3))
    # All 30 can: Bonferroni.
    assert stats.tarone_level([1e-5] * 30, 0.01) == pytest.approx((0.01 / 30, 30))
    # None can (30 figures of 5 runs each: 1/252 at best): the level is out of their reach.
    level, reachable = stats.tarone_level([1 / 252] * 30, 0.01)
    assert level < 1 / 252 and reachable == 0


def test_among_many_figures_one_at_p_below_alpha_is_not_yet_worse():
    # 5 runs each: 1 inversion gives p = 2/252 < 0.01 — alone a regression, among 30 figures noise.
    noisy = {STEP: ([1, 2, 3, 4, 6], [5, 7, 8, 9, 10])}
    noisy.update({Key("mrc", f"figure {i}", "s", +1): ([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]) for i in range(29)})
    runs_a = [{k: v[0][i] for k, v in noisy.items()} for i in range(5)]
    runs_b = [{k: v[1][i] for k, v in noisy.items()} for i in range(5)]
    judgements, levels = judge.judge_runs(runs_a, runs_b, 0.01, 0.2)
    step = next(j for j in judgements if j.key == STEP)
    assert step.verdict == "same" and step.p_worse == pytest.approx(2 / 252)
    assert step.looks_worse(0.01)  # worth more runs
    assert any("corrected for the number of figures" in n for n in step.notes), step.notes
    assert levels["worse"][0] < 2 / 252


def test_a_figure_that_looks_worse_on_too_few_runs_is_unprovable_not_same():
    # 5 + 6 runs (the others inconclusive): 1/462 at best, above 0.01 shared by 10 figures.
    runs_a = [{Key("rc", f"figure {i}", "s", +1): 1.0 + 0.01 * r for i in range(10)} for r in range(5)]
    runs_b = [{Key("rc", f"figure {i}", "s", +1): 3.0 + 0.01 * r for i in range(10)} for r in range(6)]
    judgements, _ = judge.judge_runs(runs_a, runs_b, 0.01, 0.2)
    assert all(j.verdict == "same" for j in judgements)
    assert len(judge.unprovable(judgements, 0.01)) == 10
    # With 8 + 8 the same shift is worse, and nothing is left unprovable.
    runs_a += [runs_a[0]] * 3
    runs_b += [runs_b[0]] * 2
    judgements, _ = judge.judge_runs(runs_a, runs_b, 0.01, 0.2)
    assert all(j.verdict == "worse" for j in judgements) and not judge.unprovable(judgements, 0.01)


def test_sequential_runs_more_only_when_a_figure_looks_worse():
    asked = []

    def figures_after(values_a, values_b):
        def after(n):
            asked.append(n)
            return [{STEP: v} for v in values_a[:n]], [{STEP: v} for v in values_b[:n]]
        return after

    quiet = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.0, 1.1, 0.9, 1.0]
    js, _, runs = judge.sequential(figures_after(quiet, quiet[::-1]), 5, 10, 0.01, 0.2)
    assert runs == 5 and asked == [5] and js[0].verdict == "same"
    asked.clear()
    told = []
    js, _, runs = judge.sequential(figures_after(quiet, [2 * v for v in quiet]), 5, 10, 0.01, 0.2, told.append)
    assert runs == 10 and asked == [5, 10] and js[0].verdict == "worse" and len(js[0].baseline) == 10
    assert [j.key for j in told[0]] == [STEP]


def test_fisher_and_hodges_lehmann():
    assert stats.fisher_fewer(5, 5, 0, 5) == pytest.approx(1 / 252)
    assert stats.fisher_fewer(3, 3, 0, 3) == pytest.approx(1 / 20)
    assert stats.fisher_fewer(5, 5, 5, 5) == pytest.approx(1.0)
    assert stats.fisher_fewer(0, 5, 5, 5) == pytest.approx(1.0)  # the candidate passes more
    assert stats.hodges_lehmann([1, 2, 3], [11, 12, 13]) == pytest.approx(10.0)


def test_a_clear_shift_is_worse_with_its_size_and_confidence():
    j = judged(STEP, [1.00, 1.02, 0.98, 1.01, 0.99], [1.50, 1.48, 1.55, 1.52, 1.49])
    assert j.verdict == "worse"
    assert j.shift == pytest.approx(0.5, abs=0.03)
    assert j.change_percent == pytest.approx(50, abs=3)
    assert j.confidence == pytest.approx(1 - 1 / 252)


def test_direction_matters():
    # steps/min going down is worse; going up is better.
    assert judged(RATE, [100, 101, 99, 100, 102], [60, 61, 59, 62, 60]).verdict == "worse"
    assert judged(RATE, [60, 61, 59, 62, 60], [100, 101, 99, 100, 102]).verdict == "better"
    assert judged(STEP, [1.5, 1.5, 1.6, 1.5, 1.55], [1.0, 1.0, 1.1, 0.9, 1.0]).verdict == "better"


def test_noise_and_small_shifts_are_the_same():
    noisy_a = [1.0, 1.4, 0.8, 1.2, 0.9]
    noisy_b = [1.1, 0.85, 1.3, 1.0, 1.25]
    assert judged(STEP, noisy_a, noisy_b).verdict == "same"
    tiny = judged(STEP, [1.00, 1.01, 1.00, 1.01, 1.00], [1.05, 1.06, 1.05, 1.06, 1.05])
    assert tiny.verdict == "same"
    assert any("below the 20%" in n for n in tiny.notes)
    # Three runs each cannot reach p <= 0.01, however far apart.
    assert judged(STEP, [1, 1, 1], [9, 9, 9]).verdict == "same"


def test_never_recovering_is_worse_and_said():
    j = judged(RECOVERY, [0.9, 1.0, 1.1, 0.95, 1.05], [math.inf] * 5)
    assert j.verdict == "worse"
    assert math.isinf(j.shift)
    assert any("never happened in 0/5 baseline and 5/5 candidate" in n for n in j.notes)


def test_pass_rates():
    assert judged(RODE, [True] * 5, [False] * 5).verdict == "worse"
    one_failure = judged(RODE, [True] * 5, [True] * 4 + [False])
    assert one_failure.verdict == "same"
    assert any("failed in 1 of 5 candidate runs" in n for n in one_failure.notes)
    assert judged(RODE, [False] * 5, [True] * 5).verdict == "better"


def test_missing_figures():
    runs_a = [{STEP: 1.0, RECOVERY: 1.0}, {STEP: 1.1, RECOVERY: 0.9}, {STEP: 1.0, RECOVERY: 1.0}]
    runs_b = [{STEP: 1.0}, {STEP: 1.05}, {STEP: 1.0}]
    out = {j.key: j for j in judge.judge_runs(runs_a, runs_b, 0.05, 0.2)[0]}
    assert out[RECOVERY].candidate == [math.inf] * 3  # a recovery that is missing never came
    assert out[RECOVERY].verdict == "worse"
    assert judged(STEP, [1.0], [2.0], 0.05).notes == ["too few runs to compare"]


def test_a_figure_shown_worse_is_a_regression_though_another_cannot_be_told():
    """A scenario with one figure shown worse is a regression even when another figure looks
    worse with too few runs to show it (that one is named, but does not make it inconclusive);
    with none shown worse, such a figure makes it inconclusive."""
    from mrclab_reports.validation import report  # noqa: E402
    shown = judged(RECOVERY, [0.9, 1.0, 1.1, 0.95, 1.05], [math.inf] * 5)
    doubtful = judged(STEP, [1, 1, 1], [9, 9, 9])
    assert shown.verdict == "worse" and doubtful.verdict == "same"
    note = "mrc: step time p99 looks worse, but 3 + 3 conclusive runs cannot show it"
    assert report.scenario_verdict({"judgements": [shown, doubtful], "inconclusive": note}) == "regression"
    assert report.scenario_verdict({"judgements": [doubtful], "inconclusive": note}) == "inconclusive"
    assert report.scenario_verdict({"judgements": [doubtful], "inconclusive": ""}) == "pass"
