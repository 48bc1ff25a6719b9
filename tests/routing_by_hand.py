"""The routing interval written out independently of skilleval.stats, to check it by hand.

A pooled proportion over queries (clusters of trials); Kish's design effect from the
cluster-robust variance of the ratio; Wilson's interval on N / deff trials. Uses scipy's
normal quantile, where skilleval uses the standard library's.
"""
from __future__ import annotations

import math

from scipy.stats import norm


def clustered_by_hand(pairs: list[tuple[int, int]], confidence: float = 0.95) -> tuple[float, float]:
    pairs = [(k, n) for k, n in pairs if n]
    g = len(pairs)
    big_n = sum(n for _, n in pairs)
    p = sum(k for k, _ in pairs) / big_n
    if g < 2 or p in (0.0, 1.0):
        n_eff = float(g)  # no spread to estimate: the query is the unit
    else:
        mean_k = p  # residual of each query from the pooled ratio, scaled by its trials
        var_ratio = g / (g - 1) * sum((k - mean_k * n) ** 2 for k, n in pairs) / big_n ** 2
        deff = max(1.0, var_ratio / (p * (1 - p) / big_n))
        n_eff = big_n / deff
    z = norm.ppf(0.5 + confidence / 2)
    centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z / (1 + z * z / n_eff) * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff ** 2))
    return (0.0 if p == 0 else centre - half, 1.0 if p == 1 else centre + half)
