"""`ci-budget guard verify`: a guard file run with its fix reverted and as it is, on this
machine's GPU, and its measured table filled for this architecture."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_common, add_subcommand

EXAMPLE = (
    "ci-budget guard verify test/registered/radix_cache/test_kl_bitexact.py "
    "--revert fixes/34184.patch\n"
    "ci-budget guard verify test/registered/x/test_kl.py --revert 1a2b3c4 --write"
)


def add_parser(sub):
    p = add_subcommand(
        sub,
        "guard",
        help="verify a guard's measured table on this machine's GPU",
        description="Bit-exact guards: run them with their fix reverted and fill their tables.",
        example=EXAMPLE,
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    v = add_subcommand(
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
        example=EXAMPLE,
    )
    add_common(v)
    _add_suggest(verbs)
    v.add_argument("file", help="guard test file with a measured table in a docstring")
    v.add_argument("--revert", nargs="+", required=True, metavar="REF",
                   help="commit or patch file of each fix to revert")  # fmt: skip
    v.add_argument("--group", metavar="FIX", help="table group of the fix (default: from REF)")
    v.add_argument("--arch", help="architecture (default: the GPU found on this machine)")
    v.add_argument("--python", help="interpreter the tests run with (default: this one)")
    v.add_argument("--timeout-per-file", type=float, metavar="S",
                   help="per-run timeout in seconds (default: the config's file timeout)")  # fmt: skip
    v.add_argument("--write", action="store_true", help="edit FILE's docstring in place")
    v.add_argument("--results-dir", type=Path, metavar="DIR",
                   help="write reverted.json and fixed.json (the two runs' results) and "
                   "verification.json (the values by row) there")  # fmt: skip
    return p


def _add_suggest(verbs) -> None:
    s = add_subcommand(
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
    )
    add_common(s)
    s.add_argument("--verification", type=Path, required=True, metavar="FILE")
    s.add_argument("--pr", type=int, required=True, help="pull request number")
    s.add_argument("--sha", required=True, help="the commit the plan pinned (head-sha)")
    s.add_argument("--token", help="GitHub token (default: GITHUB_TOKEN)")
    s.add_argument("--dry-run", action="store_true", help="print the comment, post nothing")


def run(args) -> int:
    if args.verb == "suggest":
        return _suggest(args)
    return _verify(args)


def _suggest(args) -> int:
    from ci_budget.app.guard_suggest import GuardSuggestOptions, suggest
    from ci_budget.cli.common import settings

    options = GuardSuggestOptions(args.verification, args.pr, args.sha, post=not args.dry_run)
    return suggest(settings(args), options)


def _verify(args) -> int:
    import sys

    from ci_budget.app.guard_verify import VerifyOptions, run_verify
    from ci_budget.cli.common import settings

    options = VerifyOptions(
        file=args.file, refs=args.revert, python=args.python or sys.executable, arch=args.arch,
        group=args.group, timeout=args.timeout_per_file, write=args.write,
        results_dir=args.results_dir,
    )  # fmt: skip
    return run_verify(settings(args), options)
