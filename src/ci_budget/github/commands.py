"""The calls behind plan's answers to sglang's commands (edge): the memory of earlier refusals,
labels, reruns of failed workflow runs, and the cooldown's look at recent runs. Mixed into
`client.GitHubClient`, whose retry budget and error handling they share."""

from __future__ import annotations

import re

from ci_budget.render.sticky import first_line

_RAN = ("success", "failure", "timed_out", "action_required")  # sglang pr-gate's "ran" states
_REFUSED = re.compile(r"<!-- ci-budget:refused-([\w.-]+) -->")  # trigger.comment's marker


class CommandCalls:
    """Needs `_repo`, `_gh`, `_call` and `identity` from `GitHubClient`."""

    def refused_logins(self, number: int, page: int) -> set[str]:
        """The logins (lower case) our own refusal replies name, on page `page` of 100 of the
        comments of #number (one request; the caller picks the page of the newest)."""
        me = self.identity()
        issue = self._repo.get_issue(number)
        comments = self._call(
            f"comments of #{number}", lambda: issue.get_comments().get_page(max(page, 1) - 1)
        )
        found = set()
        for c in comments:
            hit = _REFUSED.fullmatch(first_line(c.body))
            if hit and c.user is not None and c.user.login == me:
                found.add(hit.group(1).lower())
        return found

    def rerun_failed(self, head_sha: str, skip_path: str | None = None) -> list[str]:
        """Rerun every completed workflow run at `head_sha` that failed (its failed jobs and
        their dependents) or was skipped (the whole run), except the workflow file `skip_path`;
        returns what was rerun ("name #id")."""
        runs = self._call(
            f"workflow runs at {head_sha[:12]}",
            lambda: list(self._repo.get_workflow_runs(head_sha=head_sha)),
        )
        done = []
        post = self._gh.requester.requestJsonAndCheck
        for run in runs:
            if run.status != "completed" or run.conclusion not in ("failure", "skipped"):
                continue
            if skip_path and (run.path or "").split("@")[0] == skip_path:
                continue
            # The whole run when it was skipped; else its failed jobs and their dependents.
            url = f"{run.url}/{'rerun' if run.conclusion == 'skipped' else 'rerun-failed-jobs'}"
            self._call(f"rerun of workflow run {run.id}", lambda u=url: post("POST", u), write=True)
            done.append(f"{run.name} #{run.id}")
        return done

    def last_gated_run(
        self, workflow: str, actor: str, since: str, skip_run: str | None, gate: str
    ) -> str:
        """When the newest run of `workflow` (a file name) by `actor` since `since` ran a job
        besides `gate` (the plan job): its `created_at`, else "". As sglang's pr-gate: at most
        5 runs are looked into, and a 6th counts as having run."""
        get = self._gh.requester.requestJsonAndCheck
        url = f"{self._repo.url}/actions/workflows/{workflow}/runs"
        query = {"actor": actor, "created": f">={since}", "per_page": 100}
        _, data = self._call(
            f"runs of {workflow} by {actor}", lambda: get("GET", url, parameters=query)
        )
        runs = [r for r in data.get("workflow_runs") or [] if str(r.get("id")) != str(skip_run)]
        for i, run in enumerate(runs):
            if i == 5:
                return str(run.get("created_at") or since)
            _, jobs = self._call(
                f"jobs of run {run['id']}", lambda u=run["jobs_url"]: get("GET", u)
            )
            if any(
                j.get("name") != gate and j.get("conclusion") in _RAN
                for j in jobs.get("jobs") or []
            ):
                return str(run.get("created_at") or since)
        return ""

    def add_labels(self, number: int, names: list[str]) -> None:
        """Add `names` (PyGithub sends a bare list; GitHub's description wants `{"labels"}`)."""
        url = f"{self._repo.url}/issues/{number}/labels"
        self._call(
            f"add labels {', '.join(names)} to #{number}",
            lambda: self._gh.requester.requestJsonAndCheck("POST", url, input={"labels": names}),
            write=True,
        )
