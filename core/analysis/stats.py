"""Correlation with the numbers a reviewer asks for: Pearson r, n, a two-sided p-value and two 95%
intervals. Pure numpy and the standard library (no SciPy in the default install).

* The p-value tests r = 0 with t = r·sqrt((n-2)/(1-r²)) on n-2 degrees of freedom (Student's t, from
  the regularized incomplete beta function).
* The main interval is Fisher's: z = atanh(r) is close to normal with standard error 1/sqrt(n-3), so the
  interval is tanh(z ± 1.96/sqrt(n-3)) (n >= 4). It agrees with the p-value, which a bootstrap over a
  handful of points need not (n = 4 gave a bootstrap interval of [-1.00, -0.82] beside p = 0.051).
* The second is the percentile bootstrap over the units (resampled with replacement, a fixed seed so a
  report is reproducible). Resamples in which one side has no variance have no r and are skipped; when
  more than half are skipped the interval is left undefined rather than built on a few.
* Below SMALL_N points nothing should be concluded from r, whatever its p-value: reports say so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
SMALL_N = 10  # below this many points a report says "n too small to conclude"
Z_95 = 1.959963984540054
BOOTSTRAP_SEED = 20260409  # fixed: the same folder always gives the same interval
_BLOCK = 250  # resamples computed at once, so memory stays small for large n


@dataclass(frozen=True)
class Correlation:
    r: float | None          # None: fewer than 2 points, or no variance on one side
    n: int
    p_value: float | None    # None: r undefined or n < 3
    ci_low: float | None     # the bootstrap interval
    ci_high: float | None
    resamples: int           # bootstrap resamples that had an r
    fisher_low: float | None = None   # Fisher's z interval (None: r undefined or n < 4)
    fisher_high: float | None = None

    @property
    def too_small(self) -> bool:
        return self.n < SMALL_N

    def to_json(self) -> dict[str, float | int | bool | None]:
        return {"r": self.r, "n": self.n, "p_value": self.p_value, "fisher95_low": self.fisher_low,
                "fisher95_high": self.fisher_high, "ci95_low": self.ci_low, "ci95_high": self.ci_high,
                "bootstrap_resamples": self.resamples, "too_small": self.too_small}

    def describe(self) -> str:
        return describe_correlation(self.to_json())


def describe_correlation(values: Mapping[str, Any]) -> str:
    """One line for a correlation as `Correlation.to_json()` gives it (reports and the studio's captions): r, n,
    p, Fisher's interval, the bootstrap's, and "n too small to conclude" below SMALL_N points."""
    r, n, p = values.get("r"), int(values.get("n") or 0), values.get("p_value")
    if r is None:
        why = "too few points" if n < 2 else "no variance: every point has the same success rate or the same IM rate"
        return f"undefined (n = {n}: {why})"
    p_text = "p undefined" if p is None else ("p < 0.001" if p < 0.001 else f"p = {p:.3f}")
    low, high = values.get("fisher95_low"), values.get("fisher95_high")
    fisher = "Fisher 95% CI undefined" if low is None else f"Fisher 95% CI [{low:.2f}, {high:.2f}]"
    low, high = values.get("ci95_low"), values.get("ci95_high")
    boot = "bootstrap CI undefined" if low is None else f"bootstrap [{low:.2f}, {high:.2f}]"
    text = f"r = {r:.2f} (n = {n}, {p_text}, {fisher}, {boot})"
    return text + (f"; n too small to conclude (fewer than {SMALL_N} points)" if n < SMALL_N else "")


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or None when either side has no variance (or fewer than two points)."""
    if len(xs) != len(ys) or len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)))


def _beta_continued_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny, epsilon = 1e-300, 3e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 400):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < epsilon:
            break
    return result


def regularized_incomplete_beta(x: float, a: float, b: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(1.0 - x, b, a) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return regularized_incomplete_beta(df / (df + t * t), df / 2.0, 0.5)


def pearson_p_value(r: float, n: int) -> float | None:
    if n < 3:
        return None
    if abs(r) >= 1.0:
        return 0.0
    df = n - 2
    return t_two_sided_p(r * math.sqrt(df / (1.0 - r * r)), df)


def bootstrap_interval(xs: Sequence[float], ys: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES,
                       seed: int = BOOTSTRAP_SEED) -> tuple[float | None, float | None, int]:
    """(low, high, resamples that had an r) of the percentile bootstrap 95% interval of r."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    n = len(x)
    if n < 3:
        return None, None, 0
    rng = np.random.default_rng(seed)
    values: list[np.ndarray] = []
    for start in range(0, resamples, _BLOCK):
        picks = rng.integers(0, n, size=(min(_BLOCK, resamples - start), n))
        xb, yb = x[picks], y[picks]
        xb = xb - xb.mean(axis=1, keepdims=True)
        yb = yb - yb.mean(axis=1, keepdims=True)
        sxx, syy, sxy = (xb * xb).sum(axis=1), (yb * yb).sum(axis=1), (xb * yb).sum(axis=1)
        valid = (sxx > 1e-12) & (syy > 1e-12)
        values.append(np.clip(sxy[valid] / np.sqrt(sxx[valid] * syy[valid]), -1.0, 1.0))
    found = np.concatenate(values) if values else np.zeros(0)
    if len(found) * 2 < resamples:
        return None, None, len(found)
    low, high = np.percentile(found, [2.5, 97.5])
    return float(low), float(high), len(found)


def fisher_interval(r: float, n: int) -> tuple[float | None, float | None]:
    """Fisher's 95% interval for r from n points: tanh(atanh(r) ± 1.96/sqrt(n-3)); None below 4 points."""
    if n < 4:
        return None, None
    if abs(r) >= 1.0:
        return r, r  # a perfect line: no spread to speak of (and "n too small" says the rest when it is)
    z, spread = math.atanh(r), Z_95 / math.sqrt(n - 3)
    return math.tanh(z - spread), math.tanh(z + spread)


def correlation(xs: Sequence[float], ys: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES,
                seed: int = BOOTSTRAP_SEED) -> Correlation:
    r = pearson(xs, ys)
    if r is None:
        return Correlation(None, len(xs), None, None, None, 0)
    low, high, used = bootstrap_interval(xs, ys, resamples, seed)
    fisher_low, fisher_high = fisher_interval(r, len(xs))
    return Correlation(r, len(xs), pearson_p_value(r, len(xs)), low, high, used, fisher_low, fisher_high)
