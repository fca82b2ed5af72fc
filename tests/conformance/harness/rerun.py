"""`/rerun-test` as sglang's own handler decides it, next to ci-budget's decision, on a checkout.

    python -m tests.conformance.harness.rerun CHECKOUT            # compare on the recorded comments
    python -m tests.conformance.harness.rerun CHECKOUT --record   # and rewrite the fixture from it

sglang's side: the checkout's `scripts/ci/utils/slash_command_handler.py` is loaded by file path
and its `main()` called, in a child process whose working directory is the checkout, with the
GitHub objects faked (a commenter with write permission, an open same-repository PR, an open
maintenance gate) so that every workflow dispatch it makes is recorded instead of sent. The
checkout's code runs in that child: use trusted checkouts only.

ci-budget's side: the checkout scanned zero config (answering `/rerun-test` itself, as it does
in place of sglang's handler), and `trigger.decide` called on the same comment with the same facts (write permission, an open PR whose head is older than the comment).

Both are reduced to one shape, `{"runs": {runner label: [spec, ...]}, "refused": [spec, ...]}`,
specs written `path[::Class[::test]]` from the repository root. `--record` writes
tests/fixtures/sglang_rerun/fixture.json: the comments with sglang's decision and the facts of
the checkout that ci-budget's decision needs (the registrations of every file under the roots a
`/rerun-test` searches, the multimodal test files, the zero-config settings), so that
tests/ciprofile/test_rerun_sglang.py can check ci-budget against sglang without a checkout.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import subprocess
import sys
import time
import types
from pathlib import Path

HANDLER = "scripts/ci/utils/slash_command_handler.py"
REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests" / "fixtures" / "sglang_rerun" / "fixture.json"
COMMENTS = REPO / "tests" / "fixtures" / "sglang_rerun" / "comments.json"
REFUSED = "\u26d4 `"  # how the handler's reply starts a line about one spec it refused
LOGIN = "ci-budget-harness"  # ci-budget's commenter (write permission), and sglang's by default


# --- sglang's handler, with GitHub faked -------------------------------------------------------


class _Obj(types.SimpleNamespace):
    pass


class _Comment:
    def __init__(self, record, cid, body=""):
        self.record, self.id, self.body = record, cid, body
        self.user = _Obj(login=os.environ.get("USER_LOGIN", LOGIN))

    def create_reaction(self, kind):
        self.record["reactions"].append(kind)

    def edit(self, body):
        self.body = body
        self.record["replies"][-1] = body


class _Pull:
    def __init__(self, record):
        self.record = record
        owner = _Obj(login="sgl-project")
        self.head = _Obj(sha="0" * 40, ref="harness-branch", repo=_Obj(owner=owner))
        self.user = _Obj(login="pr-author")
        self.number = 1

    def get_labels(self):
        return []

    def get_files(self):
        return []

    def create_issue_comment(self, body):
        self.record["replies"].append(body)
        return _Comment(self.record, 1000 + len(self.record["replies"]), body)

    def add_to_labels(self, label):
        self.record["labels"].append(label)


class _Repo:
    full_name = "sgl-project/sglang"
    owner = _Obj(login="sgl-project")

    def __init__(self, record):
        self.record = record
        self.pull = _Pull(record)

    def get_pull(self, number):
        return self.pull

    def get_issue(self, number):
        return _Obj(get_comment=lambda cid: _Comment(self.record, cid))

    def get_collaborator_permission(self, login):
        return "write"

    def get_workflows(self):
        return [_Obj(name="Rerun Test", id=42)]

    def get_workflow_runs(self, **kwargs):
        return []


class _Response:
    def __init__(self, status, data=None):
        self.status_code, self._data, self.text = status, data or {}, ""

    def json(self):
        return self._data


def _load_handler(record: dict):
    """sglang's handler module, loaded from the checkout (the working directory), its GitHub
    and HTTP calls going to fakes that write into `record`."""
    spec = importlib.util.spec_from_file_location("sglang_slash_handler", HANDLER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def post(url, json=None, **kwargs):
        record["dispatches"].append(json["inputs"])
        return _Response(204)

    mod.requests = _Obj(get=lambda *a, **k: _Response(404), post=post)
    mod.Github = lambda auth=None: _Obj(get_repo=lambda name: _Repo(record))
    mod.Auth = _Obj(Token=lambda token: token)
    mod.find_workflow_run_url = lambda *a, **k: None  # the run URL poll sleeps 30 s
    mod.time = _Obj(time=time.time, sleep=lambda s: None)
    return mod


def commenter(checkout: Path) -> str:
    """Who comments: someone the checkout's CI_PERMISSIONS.json lets rerun tests (cooldown 0),
    as older handlers answer nobody else; else a write collaborator it does not list."""
    try:
        table = json.loads((checkout / ".github/CI_PERMISSIONS.json").read_text())
    except (OSError, ValueError):
        return LOGIN
    listed = sorted(k for k, v in table.items()
                    if isinstance(v, dict) and v.get("cooldown_interval_minutes") == 0)  # fmt: skip
    return listed[0] if listed else LOGIN


def _handler_child(checkout: str, bodies: list[str], conn) -> None:
    """In the child: run sglang's main() on each body and send back what it did."""
    import contextlib
    import io

    login = commenter(Path(checkout))
    os.chdir(checkout)
    sys.argv = [HANDLER]
    record: dict = {}
    mod = _load_handler(record)
    for body in bodies:
        record.clear()
        record.update(dispatches=[], replies=[], reactions=[], labels=[])
        os.environ.update(
            GITHUB_TOKEN="harness", REPO_FULL_NAME="sgl-project/sglang", PR_NUMBER="1",
            COMMENT_ID="1", COMMENT_BODY=body, USER_LOGIN=login,
        )  # fmt: skip
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                mod.main()
        except BaseException as exc:  # noqa: BLE001 - report anything the handler does
            record["error"] = f"{type(exc).__name__}: {exc}"
        conn.send(dict(record))
    conn.close()


def sglang_records(checkout: Path, bodies: list[str]):
    """What sglang's handler does for each body, in order (one child process for all)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_handler_child, args=(str(checkout), bodies, child))
    proc.start()
    child.close()
    for _ in bodies:
        yield parent.recv()
    proc.join()


def sglang_record(checkout: Path, body: str) -> dict:
    return next(iter(sglang_records(checkout, [body])))


def _spec(command: str, mode: str) -> str:
    """A dispatched test command as a repo-root spec: `registered/x.py Cls.test` (unittest,
    run from test/) -> `test/registered/x.py::Cls::test`; multimodal commands are pytest node
    ids. A selector its runner cannot read (`Cls::test` to unittest, `Cls.test` to pytest) is
    kept as given, after a space: no spec of ci-budget's looks like it."""
    if mode == "multimodal_gen":
        path, _, selector = command.partition("::")
        sep, wrong = "::", "."
    else:
        path, _, selector = command.partition(" ")
        path, sep, wrong = "test/" + path, ".", "::"
    if selector and wrong in selector:
        return f"{path} {selector}"
    return "::".join([path, *(selector.split(sep) if selector else [])])


def sglang_decision(record: dict) -> dict:
    runs: dict[str, list[str]] = {}
    for inputs in record["dispatches"]:
        label = inputs["runs_on"] or inputs["mode"]
        specs = [_spec(c, inputs["mode"]) for c in inputs["test_command"].split("\n")]
        runs.setdefault(label, []).extend(specs)
    refused = []
    for reply in record["replies"]:
        for line in reply.split("\n"):
            if line.startswith(REFUSED) and "`: " in line:
                refused.append(line[len(REFUSED) :].split("`: ", 1)[0])
    whole = not runs and not refused and "confused" in record["reactions"]
    return decision(runs, refused, whole)


def decision(runs: dict, refused: list, command_refused: bool) -> dict:
    """The one shape both sides are compared in."""
    return {"runs": {k: sorted(set(v)) for k, v in sorted(runs.items())},
            "refused": sorted(set(refused)), "command_refused": command_refused}  # fmt: skip


# --- ci-budget's decision -----------------------------------------------------------------------


def payload(body: str) -> dict:
    user = {"login": LOGIN, "type": "User"}
    return {
        "action": "created",
        "comment": {"id": 1, "body": body, "user": user, "created_at": "2026-08-22T12:00:00Z"},
        "issue": {"number": 1, "pull_request": {"url": "x"}},
        "sender": user,
    }


def ours_decision(body: str, registrations, config, root: str, files=()):
    """(ci-budget's decision on `body`, the plan) with the facts the harness fakes for sglang
    too: the plan's matrix, and the specs the resolution it was made from refused."""
    from ci_budget.models import Plan
    from ci_budget.registry import specs
    from ci_budget.trigger.authz import Facts
    from ci_budget.trigger.decide import decide

    pull = types.SimpleNamespace(
        state="open", head_sha="0" * 40, number=1, draft=False,
        head_pushed_at="2026-08-22T11:00:00Z",
    )  # fmt: skip
    facts = Facts(permission="write", pull=pull, root=root, rerun_files=list(files),
                  commits=[pull.head_sha])  # fmt: skip
    plan = decide("issue_comment", payload(body), facts, registrations, config)
    if not isinstance(plan, Plan):
        raise SystemExit(f"ci-budget asked for {plan} with every fact given")
    runs: dict[str, list[str]] = {}
    for row in plan.matrix:
        runs.setdefault(",".join(row.runs_on), []).extend(row.specs)
    command = specs.parse_command(body, config.github.max_specs, config.github.command)
    refused = []
    if command is not None and not command.problems:
        refused = specs.resolve(command.specs, registrations, config, root, files).refused_specs
    whole = not plan.should_run and plan.reply is not None and not refused
    return decision(runs, refused, whole), plan


def checkout_facts(root: Path):
    """(registrations, config, multimodal test files) of a checkout, zero config."""
    from ci_budget.app.settings import Settings
    from ci_budget.workspace.scan import rerun_files, scan_tree

    settings = Settings(root=root, environ={})
    # ci-budget in place of sglang's handler (docs/adopting.md, "instead of"): zero config it
    # answers /ci-budget-run beside it and leaves /rerun-test to it, with the same resolution.
    github = settings.config.github.model_copy(update={"command": "/rerun-test"})
    config = settings.config.model_copy(update={"github": github})
    registrations = scan_tree(root, config).registrations
    return registrations, config, rerun_files(root, config)


# --- the fixture ------------------------------------------------------------------------------


def _commit(root: Path) -> str:
    marker = root / ".commit"
    if marker.is_file():
        return marker.read_text().strip()
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True)  # fmt: skip
    return done.stdout.strip() or root.name


def _relevant(cases: list[dict]) -> tuple[set[str], set[str]]:
    """(files either side decided about, bare names the comments use): the part of a checkout
    that decides the recorded cases. A glob's matches are all among the files decided about,
    and a bare name is decided by the files that have it."""
    files, names = set(), set()
    for case in cases:
        for side in (case["sglang"], case.get("ci_budget", case["sglang"])):
            specs = [s for v in side["runs"].values() for s in v] + side["refused"]
            files |= {s.split("::")[0].split(" ")[0] for s in specs}
        for token in case["body"].split():
            names.add(token.strip("\"'`").split("::")[0].rpartition("/")[2])
    return files, names


def snapshot(registrations, config, files, cases) -> dict:
    """What ci-budget's decision on `cases` reads from the checkout, as data: the registrations
    and rerun files that decide them, and the zero-config settings."""
    wanted, names = _relevant(cases)

    def keep(path: str) -> bool:
        return path in wanted or path.rpartition("/")[2] in names

    regs = [r.model_dump(mode="json", exclude_defaults=True) for r in registrations
            if keep(r.file)]  # fmt: skip
    return {
        "registrations": regs,
        "rerun_files": [f for f in files if keep(f)],
        "config": config.model_dump(mode="json", by_alias=True, exclude_defaults=True),
    }


def every_file(root: Path, form: str) -> list[dict]:
    tops = ["test/registered", "python/sglang/multimodal_gen/test"]
    found = sorted(p.relative_to(root).as_posix() for top in tops
                   for p in (root / top).rglob("test_*.py"))  # fmt: skip
    if form == "name":
        found = sorted({f.rpartition("/")[2] for f in found})
    return [{"body": f"/rerun-test {f}", "source": "every file"} for f in found]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--comments", type=Path, default=COMMENTS)
    ap.add_argument("--record", action="store_true", help=f"rewrite {FIXTURE.relative_to(REPO)}")
    ap.add_argument("--all-files", choices=["path", "name"],
                    help="instead of the comments: `/rerun-test PATH` (or its bare name) for "
                    "every test_*.py file under test/registered and the rerun folders")  # fmt: skip
    args = ap.parse_args(argv)
    root = args.checkout.resolve()
    if not (root / HANDLER).is_file():
        ap.error(f"{root}: no {HANDLER}")
    comments = json.loads(args.comments.read_text())
    if args.all_files:
        comments = every_file(root, args.all_files)
    registrations, config, files = checkout_facts(root)
    cases, differ = [], 0
    records = sglang_records(root, [item["body"] for item in comments])
    for item, record in zip(comments, records, strict=True):
        if "error" in record:
            print(f"sglang's handler failed on {item['body']!r}: {record['error']}")
            return 2
        theirs = sglang_decision(record)
        ours, plan = ours_decision(item["body"], registrations, config, str(root), files)
        same = ours == theirs
        differ += not same
        mark = "same" if same else f"DIFFERS ({item.get('difference', 'not listed')})"
        if not (same and args.all_files):
            print(f"{mark}: {item['body']!r}", flush=True)
        if not same:
            print(f"  sglang:    {json.dumps(theirs)}\n  ci-budget: {json.dumps(ours)}")
        case = {**item, "sglang": theirs}
        if not same:
            case["ci_budget"] = {**ours, "reason": plan.reason}
        cases.append(case)
    print(f"{len(comments) - differ} of {len(comments)} decided the same")
    if args.record:
        data = {
            "sglang_commit": _commit(root),
            "source": "https://github.com/kp-forks/sglang (Apache-2.0), a mirror of sgl-project/sglang",
            "cases": cases,
            **snapshot(registrations, config, files, cases),
        }
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        print(f"wrote {FIXTURE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
