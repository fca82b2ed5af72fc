"""Every `ci-budget` command, in the order `--help` shows them (`cli.COMMANDS`): `add_<name>`
declares the command and names the use case each of its leaves runs (`cli.common.add_leaf`);
the leaf's flags come from that use case's options.

- `scan`: the registry, by suite or as JSON.
- `plan`: decide what a GitHub event runs, where, and at which commit.
- `run`: run registered test files with per-file timeouts and record timings.
- `report`: measured time against est_time, from one or more shards' results.
- `diff`: the static budget report of a PR, est_time against its base (no GPU).
- `guard`: the measured tables in bit-exact guards' docstrings: check them for the CI
  architecture, fill them from a run, verify them on this GPU, suggest the filled table.
- `history`: measured times kept across runs: add results, show statistics, suggest est_time
  from them.

Only argparse is imported at module level (through `cli.common`): a leaf loads its use case's
module only when it parses or prints help, so `--help` stays fast.
"""

from __future__ import annotations

from ci_budget.cli.common import add_group, add_leaf


def add_scan(sub) -> None:
    add_leaf(
        sub,
        "scan",
        help="list registered test files and registry errors",
        description="Statically scan test files for register_*_ci(...) calls. Errors are "
        "path:line:col and all of them are reported; the exit status is 1 when there are any.",
        example="ci-budget scan --suite base-b-test-1-gpu-large\n"
        "ci-budget scan --format json > registry.json",
        use_case=("ci_budget.app.scan", "scan", "ScanOptions"),
    )


def _event_flags(p) -> None:
    p.add_argument("--event-name", default=None, help="default: $GITHUB_EVENT_NAME")
    p.add_argument("--event-path", default=None, help="default: $GITHUB_EVENT_PATH")


def add_plan(sub) -> None:
    add_leaf(
        sub,
        "plan",
        help="decide what a GitHub event runs, where and at which commit",
        description="Read the event from the runner environment (GITHUB_EVENT_NAME, "
        "GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_TOKEN, ...) and write should-run, reason, "
        "matrix, head-sha, pr-number and trigger to GITHUB_OUTPUT. A /rerun-test comment is "
        "authorised with the commenter's repository permission and answered on the PR. "
        "Someone else's bad input never fails the step: the exit status is 0 with "
        "should-run=false and the reason.",
        example="GITHUB_EVENT_NAME=issue_comment GITHUB_EVENT_PATH=event.json ci-budget plan\n"
        "ci-budget plan --suite base-b-test-1-gpu-large --format json",
        use_case=("ci_budget.app.plan", "plan", "PlanOptions"),
        token="GitHub token (default: $GITHUB_TOKEN)",
        extra=_event_flags,
    )


def add_run(sub) -> None:
    add_leaf(
        sub,
        "run",
        help="run registered test files and record per-file and per-class timings",
        description="Run the files of one or more suites (or explicit specs), each in its own "
        "process with a timeout, and write a results JSON after every file. Prints progress "
        "lines and, at the end, sglang's TIMINGS block. Stops at the first file that does not "
        "pass, as sglang's per-commit runs do (--continue-on-error runs the rest). A drop-in "
        "for sglang's `run_suite.py`: its flags (--hw, --auto-partition-id/-size, "
        "--partition-model-file, --timeout-from-est-time, --enable-retry ...) mean what they "
        "mean there, and with --hw the files run as `python3 FILE -f` from test/; --from-log "
        "reads the output of a run_suite.py run instead of running. "
        "Exit status: 0 every file passed, 1 a file failed, timed out or crashed, 2 usage error.",
        example="ci-budget run --suite base-b-test-1-gpu-large --partition 0/2 "
        "--out results/shard0.json\n"
        "ci-budget run test/registered/test_srt.py::TestSRT.test_decode --timeout-per-file 600\n"
        "ci-budget run --suite base-b-test-1-gpu-large --partition 3/12 --dry-run --format json\n"
        "cd test && ci-budget run --hw cuda --suite base-b-test-1-gpu-large "
        "--auto-partition-id 3 --auto-partition-size 12 --partition-model-file model.json",
        use_case=("ci_budget.app.run", "run", "RunOptions"),
    )


def add_report(sub) -> None:
    add_leaf(
        sub,
        "report",
        help="compare measured time with est_time and publish the report",
        description="Build the budget report from result files (one per shard, merged) and "
        "the registry. Writes markdown (--out) and a JSON copy next to it, the step summary, "
        "outputs and annotations when running in GitHub Actions, and with --post the PR's "
        "sticky comment. The static report against the PR base is `ci-budget diff`. "
        "--report-json publishes a report JSON another job wrote (untrusted: validated as "
        "--kind and rendered again; on workflow_run the PR is looked up from the run's head).",
        example="ci-budget report --results 'results/*.json' --fail-on over\n"
        "ci-budget report --json-report report.json --format text\n"
        "ci-budget report --report-json artifact/ci-budget-report.json --kind budget --post",
        use_case=("ci_budget.app.report", "report", "ReportOptions"),
        token="GitHub token for --post (default: $GITHUB_TOKEN)",
    )


def add_diff(sub) -> None:
    add_leaf(
        sub,
        "diff",
        help="the static budget report: est_time changes against the PR base",
        description="The static report every PR gets, no GPU needed: est_time changes "
        "against --base REF, new and removed files, suite moves, registry errors the PR "
        "introduced, per affected suite the shards and predicted makespan against its timeout, "
        "measured history of the touched files (--history) and the guard-table flags of changed "
        "files. Writes markdown (--out) and a JSON copy next to it, the step summary and "
        "outputs in GitHub Actions, and with --post its own sticky comment (kind 'budget').",
        example='ci-budget diff --base origin/main\nci-budget diff --base "$BASE_SHA" --post',
        use_case=("ci_budget.app.diff", "diff", "DiffOptions"),
        token="GitHub token for --post (default: $GITHUB_TOKEN)",
    )


VERIFY_EXAMPLE = (
    "ci-budget guard verify test/registered/radix_cache/test_kl_bitexact.py "
    "--revert fixes/34184.patch\n"
    "ci-budget guard verify test/registered/x/test_kl.py --revert 1a2b3c4 --write"
)


def add_guard(sub) -> None:
    verbs = add_group(
        sub,
        "guard",
        help="check, fill, verify and suggest the measured tables of bit-exact guards",
        description="Bit-exact guards keep a measured table (fix reverted / fix in place, per "
        "GPU architecture) in a docstring: check it for the CI architecture, fill it from a "
        "run, verify it on this machine's GPU, suggest the filled table on the PR.",
        example="ci-budget guard check --suite base-b-test-1-gpu-large\n" + VERIFY_EXAMPLE,
    )
    _guard_check(verbs)
    _guard_fill(verbs)
    _guard_verify(verbs)
    _guard_suggest(verbs)


def _guard_check(verbs) -> None:
    add_leaf(
        verbs,
        "check",
        help="flag table rows not shown to matter on the CI architecture",
        description="Read the measured tables (fix reverted / fix in place, per GPU "
        "architecture) in module and class docstrings and flag rows whose fix is not shown "
        "to matter on the CI architecture. The CI arch is --arch, else the runner config of "
        "--suite or of each file's registration, else the docstring's 'CI runs X' hint.",
        example="ci-budget guard check test/registered/radix_cache/test_kl_bitexact.py\n"
        "ci-budget guard check --suite base-b-test-1-gpu-large --format json --fail-on-flags",
        use_case=("ci_budget.app.check", "check", "CheckOptions"),
    )


def _guard_fill(verbs) -> None:
    add_leaf(
        verbs,
        "fill",
        help="print a file's measured tables, filled with values from a run",
        description="Print the measured tables of FILE. With --fill-from, write each row's "
        "value from the results into the column of the run's GPU architecture, keeping the "
        "table's layout: the 'fix reverted' column with --reverted (the run had the fix "
        "switched off), else the 'fix in place' column. A test's value is its record_property "
        "'avg_kl_div', else the last value it printed matching the value pattern "
        "(arch.value-pattern, default 'avg_kl_div=<number>'); rows are matched by name "
        "(docs/arch-tables.md). Values matching no row, rows two tests claim and values "
        "whose rows sit under several fixes are listed, never guessed. "
        "--write edits the table lines of FILE in place.",
        example="ci-budget guard fill test/registered/x/test_kl.py --fill-from results.json\n"
        "ci-budget guard fill test_kl.py --fill-from reverted.json --reverted --write",
        use_case=("ci_budget.app.fill", "fill", "FillOptions"),
    )


def _guard_verify(verbs) -> None:
    add_leaf(
        verbs,
        "verify",
        help="run FILE with fixes reverted, then as it is, and fill this GPU's columns",
        description="In a temporary git worktree of HEAD with each REF reverted (a commit, or "
        "a patch file applied in reverse), run FILE with ci-budget's runner on this machine's "
        "GPU; then run the unreverted checkout. Print FILE's measured table with the detected "
        "architecture's 'fix reverted' and 'fix in place' columns filled from the values the "
        "tests recorded or printed, and every row that stays silent or unverified on this "
        "architecture. The worktree is removed whatever happens. Only rows of the fix the REF "
        "names (its number in a patch name or commit subject, or --group) get reverted values.",
        example=VERIFY_EXAMPLE,
        use_case=("ci_budget.app.guard_verify", "guard_verify", "VerifyOptions"),
    )


def _guard_suggest(verbs) -> None:
    add_leaf(
        verbs,
        "suggest",
        help="post a verification's filled table as a review suggestion on the PR",
        description="Answer a /verify-guard: read VERIFICATION (verification.json of guard "
        "verify --results-dir, from the GPU job), refill the file's table from the file's text "
        "at the pinned commit (read from GitHub; nothing but the numbers is taken from the "
        "job) and post it as a review comment with a suggestion block on the table's lines. "
        "Where GitHub refuses (the lines are outside the PR's diff) the table goes into a "
        "plain comment. Needs GITHUB_REPOSITORY and a token with pull-requests: write.",
        example="ci-budget guard suggest --verification v/verification.json --pr 12 --sha "
        "0123abc...",
        use_case=("ci_budget.app.guard_suggest", "guard_suggest", "GuardSuggestOptions"),
        token="GitHub token (default: $GITHUB_TOKEN)",
    )


def add_history(sub) -> None:
    verbs = add_group(
        sub,
        "history",
        help="keep per-file measured times across runs and suggest est_time from them",
        description="Add run results to a history store and show per (file, suite) statistics "
        "(nearest-rank p50/p90/max over passing runs; timeouts counted and shown as a lower "
        "bound); suggest est_time values from them. Adding the same results file twice adds "
        "nothing.",
        example="ci-budget history add results/*.json --history ci-budget-history.json\n"
        "ci-budget history show --history ci-budget-history.json --suite base-b-test-1-gpu-large",
    )
    add_leaf(
        verbs,
        "add",
        help="add results files (RunResults JSON) to the store",
        description="Add the samples of results files to the store (created when missing).",
        example="ci-budget history add shard-*.json --history ci-budget-history.json",
        use_case=("ci_budget.app.history", "add", "AddOptions"),
    )
    add_leaf(
        verbs,
        "show",
        help="per (file, suite) statistics",
        description="n, p50, p90 and max of passing runs per (file, suite); timeouts counted. "
        "--format markdown adds a picture per series (Mermaid, as GitHub draws it): measured "
        "runs, rolling p50/p90 and est_time over time.",
        example="ci-budget history show --history history.json --format markdown "
        "--file test/registered/x/test_a.py",
        use_case=("ci_budget.app.history", "show", "ShowOptions"),
    )
    _history_suggest(verbs)
    _watch(verbs)


def _history_suggest(verbs) -> None:
    add_leaf(
        verbs,
        "suggest",
        help="suggest est_time values from measured history",
        description="Suggest est_time = p90 of passing runs x (1 + thresholds.margin), rounded "
        "up to thresholds.round-to (--rule sglang: the p90 itself, as sglang's "
        "update_est_time.py), where the change is at least 30 s and 30 %. --write rewrites only "
        "the est_time literal in each test file; --open-pr BRANCH also commits them on BRANCH, "
        "pushes it and opens or updates one pull request with a table of old, new, measured "
        "and why.",
        example="ci-budget history suggest --history ci-budget-history.json\n"
        "ci-budget history suggest --suite base-b-test-1-gpu-large --write\n"
        "ci-budget history suggest --rule sglang --open-pr ci-budget/est-time",
        use_case=("ci_budget.app.suggest", "suggest", "SuggestOptions"),
        token="GitHub token for --open-pr (default: $GITHUB_TOKEN)",
    )


def _watch(verbs) -> None:
    add_leaf(
        verbs,
        "watch",
        help="watch suites' headroom, step changes and their commits, est_time vs p90",
        description="Per suite: the slowest shard's wall in each run, its trend (Theil-Sen, 95 % "
        "interval), the headroom against its timeout and when the trend crosses it. Per file: "
        "sustained steps of >= 20 % and >= 30 s with the commits between the two runs that "
        "touched the file, a module it imports, or CI (git log in --root); steps shared by "
        "several files at one run boundary as one event. est_time against measured p90. "
        "--format markdown is the body of one tracking issue; --post-issue opens it, or edits "
        "it in place.",
        example="ci-budget history watch sglang-ci-stats/runs --root sglang --format markdown\n"
        "ci-budget history watch --history ci-budget-history.json --format json\n"
        "ci-budget history watch sglang-ci-stats/runs --post-issue",
        use_case=("ci_budget.app.watch", "watch", "WatchOptions"),
        token="GitHub token for --post-issue (default: $GITHUB_TOKEN)",
    )
