"""A tiny hybrid (attention + recurrent state) model with a prefix cache, for bit-exact guards."""

from bitexact_model.backend import get_backend
from bitexact_model.cache import BUG_ENV, KNOWN_BUGS, PrefixCache, active_bugs
from bitexact_model.cases import TABLE_CASES, avg_kl, run_case
from bitexact_model.guard import KLRecorder
from bitexact_model.model import TinyHybridModel

__all__ = [
    "BUG_ENV",
    "KNOWN_BUGS",
    "KLRecorder",
    "PrefixCache",
    "TABLE_CASES",
    "TinyHybridModel",
    "active_bugs",
    "avg_kl",
    "get_backend",
    "run_case",
]
