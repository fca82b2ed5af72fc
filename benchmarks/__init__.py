"""ci-budget's benchmarks: each prints its baseline, ci-budget, and the ratio measured in one run."""
