"""`ci-budget guard`: the measured tables in bit-exact guards' docstrings: check them for the
CI architecture, fill them from a run, verify them on this GPU, suggest the filled table."""

from __future__ import annotations

from ci_budget.cli.common import add_group, add_leaf

VERIFY_EXAMPLE = (
    "ci-budget guard verify test/registered/radix_cache/test_kl_bitexact.py "
    "--revert fixes/34184.patch\n"
    "ci-budget guard verify test/registered/x/test_kl.py --revert 1a2b3c4 --write"
)


def add_parser(sub) -> None:
    verbs = add_group(
        sub,
        "guard",
        help="check, fill, verify and suggest the measured tables of bit-exact guards",
        description="Bit-exact guards keep a measured table (fix reverted / fix in place, per "
        "GPU architecture) in a docstring: check it for the CI architecture, fill it from a "
        "run, verify it on this machine's GPU, suggest the filled table on the PR.",
        example="ci-budget guard check --suite base-b-test-1-gpu-large\n" + VERIFY_EXAMPLE,
    )
    _check(verbs)
    _fill(verbs)
    _verify(verbs)
    _suggest(verbs)


def _check(verbs) -> None:
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


def _fill(verbs) -> None:
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


def _verify(verbs) -> None:
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


def _suggest(verbs) -> None:
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
