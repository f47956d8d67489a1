"""The statistics and the judgement of `mrclab validate` on known samples (no root, no drills):
exact Mann–Whitney p-values against hand-computed ones, Fisher's exact test, Hodges–Lehmann,
and the verdicts: a clear shift is worse (or better), noise and a tiny significant shift are
the same, a fault never recovered from is worse, too few runs say so."""
import math
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
    b = [x + 6.5 for x in a]
    exact = stats.mann_whitney(a, b)[0]
    saved, stats.EXACT_LIMIT = stats.EXACT_LIMIT, 0
    try:
        approx = stats.mann_whitney(a, b)[0]
    finally:
        stats.EXACT_LIMIT = saved
    assert approx == pytest.approx(exact, rel=0.25)


def test_fisher_and_hodges_lehmann():
    assert stats.fisher_fewer(5, 5, 0, 5) == pytest.approx(1 / 252)
    assert stats.fisher_fewer(3, 3, 0, 3) == pytest.approx(1 / 20)
    assert stats.fisher_fewer(5, 5, 5, 5) == pytest.approx(1.0)
    assert stats.fisher_fewer(0, 5, 5, 5) == pytest.approx(1.0)  # the candidate passes more
    assert stats.hodges_lehmann([1, 2, 3], [11, 12, 13]) == pytest.approx(10.0)


def test_a_clear_shift_is_worse_with_its_size_and_confidence():
    j = judge.judge(STEP, [1.00, 1.02, 0.98, 1.01, 0.99], [1.50, 1.48, 1.55, 1.52, 1.49], 0.01, 0.2)
    assert j.verdict == "worse"
    assert j.shift == pytest.approx(0.5, abs=0.03)
    assert j.change_percent == pytest.approx(50, abs=3)
    assert j.confidence == pytest.approx(1 - 1 / 252)


def test_direction_matters():
    # steps/min going down is worse; going up is better.
    assert judge.judge(RATE, [100, 101, 99, 100, 102], [60, 61, 59, 62, 60], 0.01, 0.2).verdict == "worse"
    assert judge.judge(RATE, [60, 61, 59, 62, 60], [100, 101, 99, 100, 102], 0.01, 0.2).verdict == "better"
    assert judge.judge(STEP, [1.5, 1.5, 1.6, 1.5, 1.55], [1.0, 1.0, 1.1, 0.9, 1.0], 0.01, 0.2).verdict == "better"


def test_noise_and_small_shifts_are_the_same():
    noisy_a = [1.0, 1.4, 0.8, 1.2, 0.9]
    noisy_b = [1.1, 0.85, 1.3, 1.0, 1.25]
    assert judge.judge(STEP, noisy_a, noisy_b, 0.01, 0.2).verdict == "same"
    tiny = judge.judge(STEP, [1.00, 1.01, 1.00, 1.01, 1.00], [1.05, 1.06, 1.05, 1.06, 1.05], 0.01, 0.2)
    assert tiny.verdict == "same"
    assert any("below the 20%" in n for n in tiny.notes)
    # Three runs each cannot reach p <= 0.01, however far apart.
    assert judge.judge(STEP, [1, 1, 1], [9, 9, 9], 0.01, 0.2).verdict == "same"


def test_never_recovering_is_worse_and_said():
    j = judge.judge(RECOVERY, [0.9, 1.0, 1.1, 0.95, 1.05], [math.inf] * 5, 0.01, 0.2)
    assert j.verdict == "worse"
    assert math.isinf(j.shift)
    assert any("never happened in 0/5 baseline and 5/5 candidate" in n for n in j.notes)


def test_pass_rates():
    assert judge.judge(RODE, [True] * 5, [False] * 5, 0.01, 0.2).verdict == "worse"
    one_failure = judge.judge(RODE, [True] * 5, [True] * 4 + [False], 0.01, 0.2)
    assert one_failure.verdict == "same"
    assert any("failed in 1 of 5 candidate runs" in n for n in one_failure.notes)
    assert judge.judge(RODE, [False] * 5, [True] * 5, 0.01, 0.2).verdict == "better"


def test_missing_figures():
    runs_a = [{STEP: 1.0, RECOVERY: 1.0}, {STEP: 1.1, RECOVERY: 0.9}, {STEP: 1.0, RECOVERY: 1.0}]
    runs_b = [{STEP: 1.0}, {STEP: 1.05}, {STEP: 1.0}]
    out = {j.key: j for j in judge.judge_runs(runs_a, runs_b, 0.05, 0.2)}
    assert out[RECOVERY].candidate == [math.inf] * 3  # a recovery that is missing never came
    assert out[RECOVERY].verdict == "worse"
    assert judge.judge(STEP, [1.0], [2.0], 0.05, 0.2).notes == ["too few runs to compare"]
