"""Use case `plan`: what a GitHub event runs, where and at which commit.

Then what `plan` asks of and tells GitHub (`Feedback`): the facts the trigger core asks for
(permission, the pull request, its commits, the registry at a commit) and the answer on the PR
(reaction, reply, label removal, approval notice). Any failure becomes a message, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import HISTORY_HELP, MODEL_HELP, AppError, Sink, option


@dataclass
class PlanOptions:
    format: str = option("text", choices=("text", "json"), help="what to print")
    suites: list[str] | None = option(
        None, flag="--suite",
        help="run these suites instead of what the event asks (repeatable; space or comma "
        "separated)",
    )  # fmt: skip
    specs: list[str] | None = option(
        None, help="run these files / file::Class / file::Class::test instead of the event's"
    )
    history: Path | None = option(None, metavar="FILE", help=HISTORY_HELP)
    partition_model: Path | None = option(None, metavar="FILE", help=MODEL_HELP)


def plan(settings, options: PlanOptions, sink: Sink | None = None) -> int:
    """Decide, answer on the PR, write the outputs; exit 0 (someone else's bad input never
    fails the step), except for registry errors in a plan that would run: those stop it with
    one line each and exit 2, as sglang's compute_partitions.py stops (docs/commands.md)."""
    from ci_budget.render.escape import inline

    sink = sink or Sink(settings)
    settings.check()
    feedback = Feedback(settings)
    errors: list = []
    try:
        decided = _decide(settings, options, feedback, sink, errors)
    except (AppError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a PR's file or an event this code did not foresee: no run, exit 0
        from ci_budget.models import Plan

        text = str(exc) if len(str(exc)) <= 300 else str(exc)[:300] + "..."
        sink.error(f"plan: {type(exc).__name__}: {text}")
        decided = Plan(reason=f"plan could not decide ({type(exc).__name__}); not running")
    answer(decided, feedback, settings.env.run_url, sink)
    calls = feedback.calls
    per_suite, total = max_parallel(decided)
    sink.outputs(
        {
            "should-run": decided.should_run,
            "reason": decided.reason,
            "matrix": matrix_json(decided),
            "max-parallel": per_suite,
            "max-parallel-total": total,
            "head-sha": decided.head_sha or "",
            "pr-number": "" if decided.pr_number is None else decided.pr_number,
            "trigger": decided.trigger,
            "calls": 0 if calls is None else calls,
        }
    )
    verdict = "runs" if decided.should_run else "no run"
    reason = inline(decided.reason)  # names from the PR's files: text, never markup
    sink.summary(f"**ci-budget plan** ({decided.trigger}): {verdict}: {reason}\n\n")
    if options.format == "json":
        sink.echo(decided.model_dump_json(indent=2))
    else:
        sink.echo(describe(decided, calls))
    return 2 if errors else 0


def _decide(settings, options: PlanOptions, feedback, sink: Sink, errors: list):
    """Ask the trigger core, fetching each fact it asks for, until it gives a Plan; a plan
    that would run over registry errors is stopped (`errors` gets them)."""
    from ci_budget.app.numbers import plan_numbers
    from ci_budget.github.actions import EventError
    from ci_budget.models import Plan
    from ci_budget.trigger.authz import Facts
    from ci_budget.trigger.decide import decide, split_list
    from ci_budget.workspace.git import in_work_tree
    from ci_budget.workspace.project import read_permissions
    from ci_budget.workspace.scan import rerun_files, scan_tree

    root, config = settings.root, settings.config
    facts = Facts(sha=settings.env.sha, root=str(root))
    if options.suites is not None:
        facts.suites = split_list(" ".join(options.suites))
    if options.specs is not None:
        facts.specs = split_list(" ".join(options.specs))
    name = settings.event_name
    # Comment and pull_request_target runs use the base branch's code: the registry that plans
    # the run is read from the approved commit, as data.
    base_code = name in ("issue_comment", "pull_request_target")
    facts.read_commits = base_code and in_work_tree(root)
    if base_code:  # the grants of the base branch's checkout; never a PR's own copy
        facts.permissions, problems = read_permissions(root, config.github.permissions_file)
        for problem in problems:
            sink.warn(problem)
    payload = None
    if facts.suites is None and facts.specs is None and name:
        try:
            payload = settings.event()
        except EventError as exc:
            return Plan(reason=str(exc))
    scanned = scan_tree(root, config)
    registrations = scanned.registrations
    facts.rerun_files = rerun_files(root, config)  # the checkout's; a commit's: with its registry
    # a bad history or model is a warning: shard counts then fall back as sglang's do
    numbers = plan_numbers(options.history, options.partition_model, sink, lenient=True)
    if not numbers.empty:
        facts.weights = numbers.weights(registrations)
    facts.model = numbers.model
    for _ in range(8):  # refusals, permission, pull, commits, registry: at most five facts
        out = decide(name, payload, facts, registrations, config)
        if isinstance(out, Plan):
            asked = facts.suites is not None or facts.specs is not None
            if scanned.errors and (out.should_run or asked):
                errors += scanned.errors
                return stopped(out, scanned.errors, sink)
            return _with_walls(out, registrations, config, numbers)
        gather(out, facts, feedback, config)
    # pragma: no cover - the core never asks more than five times
    return Plan(reason="plan: authorisation did not settle; not running")


def _with_walls(plan, registrations, config, numbers):
    """Each suite shard's predicted wall and stage timeout on its matrix row: the best
    estimate the history and model allow, on the split the runner makes."""
    from ci_budget.budget.impact import shard_walls
    from ci_budget.sharding.select import parse_partition

    for row in plan.matrix:
        if row.suite is None or row.partition is None:
            continue
        regs = [
            r for r in registrations
            if r.suite == row.suite and r.enabled and row.backend in (None, r.backend)
        ]  # fmt: skip
        regs = [r for r in regs if not r.nightly] or regs
        index, count = parse_partition(row.partition)
        if regs:
            row.predicted_wall = shard_walls(regs, row.suite, count, numbers)[index]
            row.timeout_s = config.suite_timeout_s(row.suite, regs[0].stage)
    return plan


def stopped(plan, errors: list, sink: Sink):
    """No run: a file with a registry error has no registration, so a plan without it would
    neither run it nor size the shards as sglang's CI does (which stops on it). One line per
    error, the reason in the outputs, the summary and (where the trigger answers) the reply."""
    from ci_budget.github.actions import annotation
    from ci_budget.render.escape import code, md

    for problem in errors:
        sink.error(str(problem))
    sink.annotations(
        annotation("error", p.message, file=p.file, line=p.line or None, title="registry error")
        for p in errors[:10]
    )
    files = sorted({p.file for p in errors})
    reason = (
        f"{len(errors)} registry error(s) in {len(files)} file(s) ({', '.join(files[:3])}"
        f"{', ...' if len(files) > 3 else ''}): not running; ci-budget scan lists them"
    )
    listed = "".join(f"\n- {code(str(p), cell=False)}" for p in errors[:20])
    reply = None if plan.reply is None else f"Not running: {md(reason)}{listed}\n"
    return plan.model_copy(
        update={"should_run": False, "reason": reason, "matrix": [], "reply": reply,
                "reaction": "confused" if plan.reaction else None}
    )  # fmt: skip


def matrix_json(plan) -> str:
    import json

    rows = []
    for row in plan.matrix:
        data = row.model_dump(mode="json", exclude={"predicted_wall", "timeout_s"})
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


def describe(plan, calls: int | None) -> str:
    from ci_budget.models import secs

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
        if row.predicted_wall is not None:
            of = f" of {row.timeout_s / 60:g} min" if row.timeout_s else ""
            lines.append(f"  predicted wall: {secs(row.predicted_wall)}{of}")
    if calls is not None:
        lines.append(f"github-api-calls: {calls}")
    return "\n".join(lines)  # printed through the Sink: no line of it is a workflow command


class Feedback:
    """The GitHub client, made on first use; any failure becomes a message, never a crash."""

    def __init__(self, settings):
        self.settings = settings
        self.token = settings.token
        self.client = None

    def get(self):
        if self.client is None:
            from ci_budget.github.client import client_from_env

            settings = self.settings
            self.client = client_from_env(
                settings.env.values, token=self.token, config=settings.config
            )
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


def gather(need, facts, feedback, config) -> None:
    """Fetch the fact `need` names. Failures are recorded, and the core refuses on them."""
    try:
        if need.what == "registry":
            from ci_budget.workspace.scan import registrations_at, rerun_files_at

            facts.registry_sha = need.sha
            facts.registry = registrations_at(facts.root, need.sha, config, feedback.token)
            facts.rerun_files = rerun_files_at(facts.root, need.sha, config)
            return
        client = feedback.get()
        if need.what == "refusals":
            facts.refused = client.refused_logins(need.number, need.page or 1)
        elif need.what == "permission":
            facts.permission = client.permission(need.login)
        elif need.what == "commits":
            facts.commits = client.pull_commits(need.number)
        else:
            facts.pull = client.pull(need.number)
    except Exception as exc:  # noqa: BLE001 - any doubt about authorisation means no run
        setattr(facts, f"{need.what}_error", _problem(exc))  # refusals_error: ask as if none


def answer(plan, feedback, run_url: str | None, sink) -> list[str]:
    """React and reply on the PR, remove a lapsed label; returns warnings (the plan stands
    either way)."""
    warnings: list[str] = []
    acts = plan.reply or plan.notice or plan.unlabel
    if plan.reaction is None and not acts:
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
            from ci_budget.github.sticky import upsert

            upsert(client, plan.pr_number, "approval", plan.notice)
        except Exception as exc:  # noqa: BLE001
            warnings.append(
                f"cannot post the approval notice on #{plan.pr_number}: {_problem(exc)}"
            )
    for warning in warnings:
        sink.warn(warning)
    return warnings


def _reply(client, plan, body: str) -> None:
    """Post the reply; a `reply_once` reply only when this PR has none of ours with its key."""
    if plan.reply_once is None:
        client.create_comment(plan.pr_number, body)
        return
    from ci_budget.render.blocks import marker_for

    marker = marker_for(plan.reply_once)
    if not client.ours(plan.pr_number, marker):
        client.create_comment(plan.pr_number, f"{marker}\n{body}")
