#!/usr/bin/env python3
"""LightGBM's lambdarank on the synthetic data of polytune's ranker test
(src/learn/rank/tests.rs, `simpson`): the same rows, drawn with the same
SplitMix64 stream, the same held-out groups, and the median Spearman rho
within the held-out groups, to compare with `learn::rank` (an oracle of
ranking quality, not of bits: the two differ in binning, defaults and
tie handling).

    python3 -m venv /tmp/lgb && /tmp/lgb/bin/pip install lightgbm numpy scipy
    /tmp/lgb/bin/python scripts/lambdarank_oracle.py
"""
import statistics

import lightgbm as lgb
import numpy as np
from scipy.stats import spearmanr

MASK = (1 << 64) - 1


class SplitMix64:
    """src/lab/rng.rs's SplitMix64, draw for draw."""

    def __init__(self, seed):
        self.s = seed & MASK

    def next_u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def unit(self):
        return (self.next_u64() >> 11) / float(1 << 53)


def simpson(first, groups, per):
    rng = SplitMix64(first + 77)
    x, g, y = [], [], []
    for k in range(first, first + groups):
        c = 3.0 * rng.unit()
        for _ in range(per):
            u = rng.unit()
            x.append([c + u, rng.unit(), rng.unit()])
            g.append(k)
            y.append(-10.0 * c + u + u * u / 2.0)
    return x, g, y


def relevance(y, g, levels=5):
    """Integer grades (LightGBM's lambdarank needs them): each label's
    place between its group's least and greatest, rounded."""
    out = []
    for k in sorted(set(g)):
        ys = [v for v, h in zip(y, g) if h == k]
        lo, hi = min(ys), max(ys)
        out += [round(levels * (v - lo) / (hi - lo)) if hi > lo else 0 for v in ys]
    return out


def main():
    x, g, y = simpson(0, 40, 20)
    tx, tg, ty = simpson(1000, 15, 20)
    for objective in ["lambdarank", "rank_xendcg", "regression"]:
        label = y if objective == "regression" else relevance(y, g, 5)
        params = dict(objective=objective, num_iterations=100, learning_rate=0.3,
                      max_depth=3, num_leaves=8, min_data_in_leaf=5, verbose=-1,
                      deterministic=True, seed=1)
        data = lgb.Dataset(np.array(x), label=np.array(label), group=[20] * 40)
        m = lgb.train(params, data)
        s = m.predict(np.array(tx))
        rhos = []
        for k in sorted(set(tg)):
            idx = [i for i, h in enumerate(tg) if h == k]
            rhos.append(spearmanr([s[i] for i in idx], [ty[i] for i in idx]).correlation)
        print(f"{objective}: held-out median rho {statistics.median(rhos):.3f} "
              f"(min {min(rhos):.3f})")


if __name__ == "__main__":
    main()
