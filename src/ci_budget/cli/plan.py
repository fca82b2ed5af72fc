"""`ci-budget plan`: decide what a GitHub event runs, where, and at which commit."""

from __future__ import annotations

from ci_budget.cli.common import add_common, add_history, add_partition_model, add_subcommand


def add_parser(sub):
    p = add_subcommand(
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
        "ci-budget plan --suites base-b-test-1-gpu-large --format json",
    )
    add_common(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--token", default=None, help="GitHub token (default: $GITHUB_TOKEN)")
    p.add_argument(
        "--suites",
        action="append",
        default=None,
        help="run these suites instead of what the event asks (space or comma separated)",
    )
    p.add_argument(
        "--specs",
        action="append",
        default=None,
        help="run these files / file::Class / file::Class::test instead of the event's",
    )
    add_history(p)
    add_partition_model(p)
    p.add_argument("--event-name", default=None, help="default: $GITHUB_EVENT_NAME")
    p.add_argument("--event-path", default=None, help="default: $GITHUB_EVENT_PATH")
    return p


def _safe(text: str) -> str:
    """Lines the Actions runner will not read as workflow commands."""
    return "\n".join(
        " " + line if line.lstrip().startswith("::") else line for line in text.splitlines()
    )


def matrix_json(plan) -> str:
    import json

    rows = []
    for row in plan.matrix:
        data = row.model_dump(mode="json")
        data["spec_args"] = " ".join(row.specs)  # validated specs: safe to split on spaces
        rows.append(data)
    return json.dumps({"include": rows}, separators=(",", ":"))


def max_parallel(plan) -> tuple[str, int]:
    """(suite -> shards that may run at once, as JSON; their sum over the matrix, with one per
    spec row): what a workflow puts in `strategy.max-parallel`."""
    import json

    per_suite: dict[str, int] = {}
    specs = 0
    for row in plan.matrix:
        if row.suite is None:
            specs += 1
        else:
            per_suite[row.suite] = row.max_parallel or 1
    total = sum(per_suite.values()) + specs
    return json.dumps(per_suite, separators=(",", ":"), sort_keys=True), max(total, 1)


def _describe(plan, calls: int | None) -> str:
    lines = [
        f"should-run: {'true' if plan.should_run else 'false'}",
        f"trigger: {plan.trigger}",
        f"reason: {plan.reason}",
    ]
    if plan.pr_number is not None:
        lines.append(f"pr-number: {plan.pr_number}")
    if plan.head_sha:
        lines.append(f"head-sha: {plan.head_sha}")
    for row in plan.matrix:
        what = " ".join(row.specs) if row.specs else f"suite {row.suite} partition {row.partition}"
        lines.append(f"job: {row.name} [runs-on: {', '.join(row.runs_on)}] {what}")
    if calls is not None:
        lines.append(f"github-api-calls: {calls}")
    return _safe("\n".join(lines))


class _Feedback:
    """The GitHub client, made on first use; any failure becomes a message, never a crash."""

    def __init__(self, token, config):
        self.token = token
        self.config = config
        self.client = None

    def get(self):
        if self.client is None:
            from ci_budget.github.client import client_from_env

            self.client = client_from_env(token=self.token, config=self.config)
        return self.client

    @property
    def calls(self) -> int | None:
        if self.client is None:
            return None
        calls = self.client.calls
        return calls if isinstance(calls, int) else len(calls)


def _problem(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _gather(need, facts, feedback, config) -> None:
    """Fetch the fact `need` names. Failures are recorded, and the core refuses on them."""
    try:
        if need.what == "registry":
            from ci_budget.workspace.commits import registrations_at

            facts.registry_sha = need.sha
            facts.registry = registrations_at(facts.root, need.sha, config, feedback.token)
            return
        client = feedback.get()
        if need.what == "permission":
            facts.permission = client.permission(need.login)
        elif need.what == "commits":
            facts.commits = client.pull_commits(need.number)
        else:
            facts.pull = client.pull(need.number)
    except Exception as exc:  # noqa: BLE001 - any doubt about authorisation means no run
        setattr(facts, f"{need.what}_error", _problem(exc))


def _answer(plan, feedback, run_url: str | None) -> list[str]:
    """React and reply on the PR; returns warnings (the plan stands either way)."""
    import sys

    warnings = []
    if plan.reaction is None and plan.reply is None and plan.notice is None and not plan.unlabel:
        return warnings
    try:
        client = feedback.get()
    except Exception as exc:  # noqa: BLE001
        return [f"cannot answer on the pull request: {_problem(exc)}"]
    if plan.reaction and plan.comment_id is not None:
        try:
            client.react(plan.comment_id, plan.reaction)
        except Exception as exc:  # noqa: BLE001
            warnings.append(f"cannot react to comment {plan.comment_id}: {_problem(exc)}")
    if plan.reply and plan.pr_number is not None:
        body = plan.reply + (f"\n[plan run]({run_url})\n" if run_url else "")
        try:
            _reply(client, plan, body)
        except Exception as exc:  # noqa: BLE001
            warnings.append(f"cannot reply on #{plan.pr_number}: {_problem(exc)}")
    for label in plan.unlabel:
        try:
            client.remove_label(plan.pr_number, label)
        except Exception as exc:  # noqa: BLE001
            warnings.append(
                f"cannot remove label {label!r} from #{plan.pr_number}: {_problem(exc)}"
            )
    if plan.notice and plan.pr_number is not None:
        try:  # one comment per PR, edited in place: a push never adds a notification
            client.upsert_sticky(plan.pr_number, "approval", plan.notice)
        except Exception as exc:  # noqa: BLE001
            warnings.append(
                f"cannot post the approval notice on #{plan.pr_number}: {_problem(exc)}"
            )
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return warnings


def _reply(client, plan, body: str) -> None:
    """Post the reply; a `reply_once` reply only when this PR has none of ours with its key."""
    if plan.reply_once is None:
        client.create_comment(plan.pr_number, body)
        return
    from ci_budget.render.sticky import marker_for

    marker = marker_for(plan.reply_once)
    if not client.ours(plan.pr_number, marker):
        client.create_comment(plan.pr_number, f"{marker}\n{body}")


def _in_git(root) -> bool:
    from ci_budget.workspace.git import GitError, _git

    try:
        return _git(root, "rev-parse", "--is-inside-work-tree").strip() == b"true"
    except GitError:
        return False


def run(args) -> int:
    import sys

    from ci_budget.cli.common import CliError, history_weights, load, load_partition_model
    from ci_budget.github.events import EventError, load_payload, runner_env
    from ci_budget.github.workflow import append_summary, set_outputs
    from ci_budget.models import Plan
    from ci_budget.trigger.decide import Facts, decide, split_list
    from ci_budget.workspace.scan import scan_tree

    env = runner_env()
    root, config = load(args)
    facts = Facts(sha=env.sha, root=str(root))
    if args.suites is not None:
        facts.suites = split_list(" ".join(args.suites))
    if args.specs is not None:
        facts.specs = split_list(" ".join(args.specs))
    name = args.event_name or env.event_name
    # Comment and pull_request_target runs use the base branch's code: the registry that plans
    # the run is read from the approved commit, as data.
    facts.read_commits = name in ("issue_comment", "pull_request_target") and _in_git(root)
    payload, plan = None, None
    if facts.suites is None and facts.specs is None and name:
        try:
            payload = load_payload(name, args.event_path or env.event_path)
        except EventError as exc:
            plan = Plan(reason=str(exc))
    feedback = _Feedback(args.token or env.token, config)
    if plan is None:
        registrations = scan_tree(root, config).registrations
        try:
            facts.weights = history_weights(args.history, registrations)
        except CliError as exc:  # shard counts fall back to est_time; the plan still stands
            print(f"warning: {exc}; shard counts use est_time", file=sys.stderr)
        facts.model = load_partition_model(args.partition_model)
        if facts.model is not None:
            facts.weights = {**facts.model.weights(), **(facts.weights or {})}
        for _ in range(6):  # permission, pull, commits, registry: at most four facts
            out = decide(name, payload, facts, registrations, config)
            if isinstance(out, Plan):
                plan = out
                break
            _gather(out, facts, feedback, config)
        else:  # pragma: no cover - the core never asks more than four times
            plan = Plan(reason="plan: authorisation did not settle; not running")
    _answer(plan, feedback, env.run_url)
    calls = feedback.calls
    per_suite, total = max_parallel(plan)
    set_outputs(
        {
            "should-run": plan.should_run,
            "reason": plan.reason,
            "matrix": matrix_json(plan),
            "max-parallel": per_suite,
            "max-parallel-total": total,
            "head-sha": plan.head_sha or "",
            "pr-number": "" if plan.pr_number is None else plan.pr_number,
            "trigger": plan.trigger,
            "calls": 0 if calls is None else calls,
        }
    )
    verdict = "runs" if plan.should_run else "no run"
    append_summary(f"**ci-budget plan** ({plan.trigger}): {verdict}: {plan.reason}\n\n")
    if args.format == "json":
        sys.stdout.write(plan.model_dump_json(indent=2) + "\n")
    else:
        print(_describe(plan, calls))
    return 0
