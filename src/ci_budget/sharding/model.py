"""A partition model: measured per-file seconds and per-suite fits that size and split shards
better than the in-source est_time. The format is sglang-ci-stats' `model.json`:

    {"est": {SUITE: {PATH: seconds}}, "fit": {SUITE: {"coeff": c, "bias": b}}, ...}

A suite's shard wall time is modelled as coeff x Σ seconds + bias (each shard pays the bias
once). Every part falls back on its own: a file without `est` weighs its est_time, a suite
without a fit (or with a non-positive slope, which is regression noise) gets coeff 1, bias 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PartitionModel:
    est: dict[str, dict[str, float]] = field(default_factory=dict)  # suite -> path -> s
    fit: dict[str, tuple[float, float]] = field(default_factory=dict)  # suite -> (coeff, bias)

    def weights(self) -> dict[tuple[str, str], float]:
        """(path, suite) -> seconds, the shape the planners take."""
        return {(path, suite): s for suite, files in self.est.items() for path, s in files.items()}

    def coeff_bias(self, suite: str) -> tuple[float, float]:
        coeff, bias = self.fit.get(suite, (1.0, 0.0))
        return (1.0, 0.0) if coeff <= 0 else (coeff, bias)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def model_from_json(data: object) -> PartitionModel | None:
    """The model in `data` (parsed JSON), or None when it is not a model at all. Entries of the
    wrong shape are left out, so they fall back like missing ones."""
    if not isinstance(data, dict):
        return None
    model = PartitionModel()
    est = data.get("est")
    for suite, files in est.items() if isinstance(est, dict) else ():
        if isinstance(files, dict):
            table = {p: s for p, v in files.items() if (s := _number(v)) is not None}
            if table:
                model.est[suite] = table
    fit = data.get("fit")
    for suite, entry in fit.items() if isinstance(fit, dict) else ():
        if isinstance(entry, dict):
            coeff, bias = _number(entry.get("coeff", 1.0)), _number(entry.get("bias", 0.0))
            if coeff is not None and bias is not None:
                model.fit[suite] = (coeff, bias)
    return model
