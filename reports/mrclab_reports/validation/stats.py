"""Tests for small, noisy samples: two labs' values of one figure over a handful of runs each.

mann_whitney   exact one-sided p-values of the Mann–Whitney U test (every split of the pooled
               values enumerated, ties as mid-ranks), a normal approximation beyond 200,000 splits
hodges_lehmann the shift estimate that goes with it: the median of all candidate − baseline
               differences
fisher_fewer   one-sided Fisher exact test: does the candidate pass less often than the baseline?
"""
import itertools
import math

import numpy as np

EXACT_LIMIT = 200_000  # splits of the pooled sample enumerated at most


def _ranks(values):
    """Mid-ranks (1-based) of values, ties sharing the mean of their ranks."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = np.asarray(values)[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney(baseline, candidate):
    """(p_greater, p_less): the one-sided p-values that the candidate's values are stochastically
    greater (less) than the baseline's. Values may be ±inf (a recovery that never came)."""
    a, b = list(map(float, baseline)), list(map(float, candidate))
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return 1.0, 1.0
    ranks = _ranks(a + b)
    observed = float(ranks[n:].sum())
    total = math.comb(n + m, m)
    if total <= EXACT_LIMIT:
        sums = np.fromiter((ranks[list(idx)].sum() for idx in itertools.combinations(range(n + m), m)),
                           dtype=float, count=total)
        eps = 1e-9
        return float((sums >= observed - eps).mean()), float((sums <= observed + eps).mean())
    # Normal approximation with the tie correction and a continuity correction.
    mean = m * (n + m + 1) / 2
    _, counts = np.unique(ranks, return_counts=True)
    ties = float(((counts ** 3) - counts).sum())
    var = n * m / 12 * ((n + m + 1) - ties / ((n + m) * (n + m - 1)))
    if var <= 0:
        return 1.0, 1.0
    sd = math.sqrt(var)
    upper = 0.5 * math.erfc((observed - mean - 0.5) / sd / math.sqrt(2))
    lower = 0.5 * math.erfc((mean - observed - 0.5) / sd / math.sqrt(2))
    return min(1.0, upper), min(1.0, lower)


def hodges_lehmann(baseline, candidate):
    """Median of candidate − baseline over all pairs (inf when infinities dominate)."""
    diffs = [b - a for a in baseline for b in candidate if not (math.isinf(a) and math.isinf(b))]
    if not diffs:
        return 0.0
    return float(np.median(diffs))


def fisher_fewer(pass_a, n_a, pass_b, n_b):
    """One-sided p-value that the candidate's pass rate (pass_b of n_b) is lower than the
    baseline's (pass_a of n_a) only by chance: P(candidate passes <= pass_b) given the margins."""
    passes, total = pass_a + pass_b, n_a + n_b
    if total == 0:
        return 1.0
    denominator = math.comb(total, n_b)
    low = max(0, passes - n_a)
    return sum(math.comb(passes, k) * math.comb(total - passes, n_b - k)
               for k in range(low, pass_b + 1)) / denominator
