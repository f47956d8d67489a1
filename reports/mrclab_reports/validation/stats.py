"""Tests for small, noisy samples: two labs' values of one figure over a handful of runs each.

mann_whitney     exact one-sided p-values of the Mann–Whitney U test (the distribution of the
                 rank sum over every split of the pooled values, counted by dynamic programming;
                 ties as mid-ranks), a normal approximation beyond EXACT_MAX_VALUES pooled values
least_p_mann_whitney, least_p_fisher
                 the smallest p-values any split of the same pooled values could give: what
                 Tarone's correction counts (a figure that cannot become significant costs nothing)
hodges_lehmann   the shift estimate that goes with it: the median of all candidate − baseline
                 differences
fisher_fewer     one-sided Fisher exact test: does the candidate pass less often than the baseline?
tarone_level     the per-figure p-value threshold that keeps the chance of any false "worse" among
                 a family of figures at alpha (Tarone's improvement of Bonferroni)
"""
import math

import numpy as np

EXACT_MAX_VALUES = 80  # pooled values (both labs' runs) up to which the exact distribution is counted


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


def _rank_sum_counts(doubled_ranks, m):
    """counts[s]: how many m-element subsets of the pooled values have doubled rank sum s (doubled:
    mid-ranks are halves, their doubles integers)."""
    top = int(sum(doubled_ranks))
    counts = np.zeros((m + 1, top + 1))
    counts[0, 0] = 1.0
    for r in doubled_ranks:
        r = int(r)
        counts[1:, r:] = counts[1:, r:] + counts[:-1, :top + 1 - r]
    return counts[m]


def mann_whitney(baseline, candidate):
    """(p_greater, p_less): the one-sided p-values that the candidate's values are stochastically
    greater (less) than the baseline's. Values may be ±inf (a recovery that never came)."""
    a, b = list(map(float, baseline)), list(map(float, candidate))
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return 1.0, 1.0
    ranks = _ranks(a + b)
    if n + m <= EXACT_MAX_VALUES:
        doubled = np.rint(ranks * 2).astype(int)
        observed = int(doubled[n:].sum())
        counts = _rank_sum_counts(doubled, m)
        total = counts.sum()
        return float(counts[observed:].sum() / total), float(counts[:observed + 1].sum() / total)
    # Normal approximation with the tie correction and a continuity correction.
    observed = float(ranks[n:].sum())
    mean = m * (n + m + 1) / 2
    _, tied = np.unique(ranks, return_counts=True)
    ties = float(((tied ** 3) - tied).sum())
    var = n * m / 12 * ((n + m + 1) - ties / ((n + m) * (n + m - 1)))
    if var <= 0:
        return 1.0, 1.0
    sd = math.sqrt(var)
    upper = 0.5 * math.erfc((observed - mean - 0.5) / sd / math.sqrt(2))
    lower = 0.5 * math.erfc((mean - observed - 0.5) / sd / math.sqrt(2))
    return min(1.0, upper), min(1.0, lower)


def least_p_mann_whitney(baseline, candidate):
    """(least p_greater, least p_less) over every way of splitting the same pooled values into
    samples of these sizes: the candidate holding the highest (lowest) of them."""
    pooled = sorted(map(float, list(baseline) + list(candidate)))
    n, m = len(baseline), len(candidate)
    return mann_whitney(pooled[:n], pooled[n:])[0], mann_whitney(pooled[m:], pooled[:m])[1]


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


def least_p_fisher(pass_a, n_a, pass_b, n_b):
    """(least p of fewer, least p of more candidate passes) with the same passes in all."""
    passes = pass_a + pass_b
    fewest_b, fewest_a = max(0, passes - n_a), max(0, passes - n_b)
    return fisher_fewer(passes - fewest_b, n_a, fewest_b, n_b), fisher_fewer(passes - fewest_a, n_b, fewest_a, n_a)


def tarone_level(least_p_values, alpha):
    """(level, reachable): reject a figure when its p <= level = alpha / K, where K is the smallest
    number such that at most K figures could reach p <= alpha / K at all (Tarone 1990); reachable
    is how many can. Figures whose pooled values allow no such p (all equal, too few runs) do not
    dilute the others. The chance of any false rejection among the family stays at most alpha."""
    for k in range(1, len(least_p_values) + 1):
        reachable = sum(1 for p in least_p_values if p <= alpha / k)
        if reachable <= k:
            return alpha / k, reachable
    return alpha, 0
