"""What `plan` asks of and tells GitHub: the facts the trigger core asks for (permission, the
pull request, its commits, the registry at a commit) and the answer on the PR (reaction, reply,
label removal, approval notice). Any failure becomes a message, never a crash."""

from __future__ import annotations


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
            from ci_budget.workspace.commits import registrations_at
            from ci_budget.workspace.rerun_files import rerun_files_at

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
    from ci_budget.render.sticky import marker_for

    marker = marker_for(plan.reply_once)
    if not client.ours(plan.pr_number, marker):
        client.create_comment(plan.pr_number, f"{marker}\n{body}")
