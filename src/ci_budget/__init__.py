"""ci-budget: time budgets for registered GPU test suites."""

__version__ = "0.1.0"
