"""ci-budget: time budgets for registered GPU test suites."""

__version__ = "0.1.0"
HISTORY_STORE = "ci-budget-history.json"  # default timing-history file
