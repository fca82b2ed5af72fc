"""Test-side helpers: publish a measured KL to pytest, or just print it under plain unittest."""

from __future__ import annotations

from bitexact_model.cache import active_bugs


class KLRecorder:
    """Mixin for `unittest.TestCase` guards.

    Under pytest, `test/registered/conftest.py` sets `_record` to the test's `record_property`
    before each test; under `python3 FILE -f` it stays None and the value is only printed.
    """

    _record = None

    def record_kl(self, case: str | None, kl: float) -> None:
        bugs = active_bugs()
        if case and len(bugs) == 1:
            # With one fix reverted, name the table row of that fix (`#34184 <label>`): the same
            # label can sit under several fixes, and other fixes' rows were not measured here.
            case = f"#{next(iter(bugs))} {case}"
        label = f" [{case}]" if case else ""
        print(f"{type(self).__name__}.{self._testMethodName}{label} avg_kl_div={kl!r}")
        if self._record is not None:
            if case:
                self._record("kl_case", case)
            self._record("avg_kl_div", kl)

    def assert_bit_exact(self, case: str | None, result) -> None:
        self.record_kl(case, result.kl)
        self.assertGreater(result.positions, 0)
        self.assertEqual(
            result.kl,
            0.0,
            f"{case or self._testMethodName}: KL(uncached || cached) = {result.kl!r} over "
            f"{result.positions} positions; the cached path must reproduce the uncached logprobs "
            "bit for bit (a nonzero value is a state-reuse bug)",
        )
