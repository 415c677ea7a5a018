"""What a tool's printed resolution adds to a log-scale interval (METHODS.md, "Printed resolution").

A tool prints each value rounded to a quantum q (netperf's latency percentiles: whole
microseconds; :meth:`podnet.tools.base.Adapter.resolution_of`). When a side's runs vary by less
than q they all print the same digits, and the mean of the printed values is off from the mean of
the true ones by a *common* rounding error that more runs do not shrink: three equal P50s of 20 us
say the median lies in [19.5, 20.5), not that it is 20.000. The error of the mean of n values
rounded to a grid of step q, for values spread with sd sigma and a grid position not related to
them (uniform), has variance

    V(sigma) = q^2 / (2 pi^2) * sum_k exp(-4 pi^2 k^2 sigma^2 / q^2) / k^2

(the Fourier series of the rounding sawtooth): q^2 / 12 at sigma = 0 (one uniform error, whatever
n), below 1e-17 q^2 from sigma = q on (the runs' spread dithers the grid and the rounding noise is
already in the sample variance, as Sheppard's correction says). On the log scale q is the relative
quantum q / x. sigma is estimated from the printed values by Sheppard's correction,
max(0, s^2 - q^2 / 12) (0 when it cannot be told apart from the rounding noise: the conservative
end). V enters the interval as a variance known without sampling error: the standard error is
sqrt(s^2 / n + V_T + V_B), its degrees of freedom Welch-Satterthwaite's with V's infinite, so an
interval whose runs printed the same digits is never of width zero and its p-value is that of a
normal test against the rounding alone. Each printed value also carries rounding noise of variance
q^2 / 12 (Sheppard); printed differences live on a lattice (whole microseconds), so three of them
can be equal by chance although the values are dithered. The sample variance is therefore taken as
at least that noise: s^2 >= q_T^2 / 12 + q_B^2 / 12 for a paired log ratio, s^2 >= q^2 / 12 for one
side's log values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .kinds import metric_resolution

if TYPE_CHECKING:
    from ._data import Groups

#: terms of the series summed (the rest is taken as its integral)
_TERMS = np.arange(1, 201, dtype=float)
#: the rounding term is material when it widens the standard error by more than this factor
MATERIAL = 1.1


def relative_quantum(step: ArrayLike, digits: ArrayLike, gmean: ArrayLike) -> np.ndarray:
    """The quantum relative to the values' size: max(step, 10^(floor(log10 x) - digits + 1)) / x."""
    x = np.asarray(gmean, dtype=float)
    step = np.broadcast_to(np.asarray(step, dtype=float), x.shape)
    digits = np.broadcast_to(np.asarray(digits, dtype=float), x.shape)
    ok = np.isfinite(x) & (x > 0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        dq = np.where(ok & (digits > 0), 10.0 ** (np.floor(np.log10(np.where(ok, x, 1.0))) - digits + 1), 0.0)
        q = np.fmax(np.nan_to_num(step), dq) / np.where(ok, x, 1.0)
    return np.where(ok, q, 0.0)


def bias_variance(q_rel: ArrayLike, sd_log: ArrayLike) -> np.ndarray:
    """V: variance of the common rounding error of one side's mean log (above), per side.

    ``q_rel``: the relative quantum; ``sd_log``: the sd of the side's printed log values (NaN,
    e.g. n = 1, counts as 0). 0 where no quantum is declared.
    """
    q = np.nan_to_num(np.asarray(q_rel, dtype=float))
    s2 = np.nan_to_num(np.asarray(sd_log, dtype=float)) ** 2
    q, s2 = np.broadcast_arrays(q, s2)
    out = np.zeros(q.shape)
    on = q > 0
    if on.any():
        sig2 = np.maximum(s2[on] - q[on] ** 2 / 12.0, 0.0)  # Sheppard: the spread beneath the rounding
        a = 4.0 * np.pi**2 * sig2 / q[on] ** 2
        series = np.sum(np.exp(-a[..., None] * _TERMS**2) / _TERMS**2, axis=-1)
        k = _TERMS[-1] + 0.5  # the rest of the series, about its integral from K + 1/2 on
        series += np.exp(-a * k**2) / k
        out[on] = q[on] ** 2 / (2.0 * np.pi**2) * series
    return out


def combine(
    data_var: ArrayLike, df: ArrayLike, known_var: ArrayLike, floor: ArrayLike = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(standard error, degrees of freedom) of a sampled variance ``data_var`` (with ``df``), at least
    ``floor`` (the rounding noise the printed values must carry), plus a known one: se^2 =
    max(data_var, floor) + known_var, df = se^4 / (max(...)^2 / df) (Welch-Satterthwaite; infinite
    when the sampled part is 0)."""
    v = np.fmax(np.asarray(data_var, dtype=float), np.nan_to_num(np.asarray(floor, dtype=float)))
    k = np.nan_to_num(np.asarray(known_var, dtype=float))
    d = np.asarray(df, dtype=float)
    se2 = v + k
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        df_out = np.where(k > 0, np.where(v > 0, se2**2 / (v**2 / d), np.inf), d)
    return np.sqrt(se2), np.where(np.isfinite(v), df_out, np.nan)


def material(data_var: ArrayLike, known_var: ArrayLike, floor: ArrayLike = 0.0) -> np.ndarray:
    """Whether the rounding terms (the floor and the known variance) widen the standard error by
    more than :data:`MATERIAL` (the ``quantised`` column)."""
    v = np.nan_to_num(np.asarray(data_var, dtype=float))
    extra = np.nan_to_num(np.asarray(known_var, dtype=float)) + np.fmax(
        np.nan_to_num(np.asarray(floor, dtype=float)) - v, 0.0
    )
    return (extra > 0) & (v + extra > MATERIAL**2 * v)


def group_terms(g: Groups, lmean: np.ndarray, lsd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group of ``g``: (:func:`bias_variance` of its mean log, q_rel^2 / 12: the rounding noise each
    printed log value carries, the floor of its sample variance), from the resolution its tool prints
    the metric with (``lmean``, ``lsd``: the groups' mean and sd of ln x); 0 where none is declared."""
    step, digits = metric_resolution(g.keys)
    with np.errstate(over="ignore"):
        q = relative_quantum(step, digits, np.exp(lmean))
    return bias_variance(q, lsd), q**2 / 12.0
