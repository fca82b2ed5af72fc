"""The stand-in HTTP server: validates each request against GitHub's description, then serves it."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from . import routes, spec
from .state import NOT_ACCESSIBLE, Comment, Fault, Identity, Issue, State

WRITES = {"POST", "PATCH", "PUT", "DELETE"}
ADMIN = "/_standin/"

# Tokens every default stand-in knows.
INSTALLATION_TOKEN = "ghs_installation_token_for_tests"
READONLY_TOKEN = "ghs_readonly_fork_token_for_tests"
PAT_TOKEN = "ghp_personal_token_for_tests"
BOT_LOGIN = "github-actions[bot]"
BOT_ID = 41898282


def default_state(repo: str = "octo-org/hello-gpu") -> State:
    state = State(repo=repo)
    state.identities[INSTALLATION_TOKEN] = Identity(BOT_LOGIN, BOT_ID, "Bot", installation=True)
    state.identities[READONLY_TOKEN] = Identity(
        BOT_LOGIN, BOT_ID, "Bot", installation=True, read_only=True
    )
    state.identities[PAT_TOKEN] = Identity("ci-maintainer", 5001, "User")
    state.roles["ci-maintainer"] = "admin"
    return state


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like api.github.com
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the state has a call log
        pass

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

    def _send(self, resp: routes.Resp) -> None:
        kind = "application/json; charset=utf-8"
        data = b"" if resp.body is None else json.dumps(resp.body).encode()
        if resp.text is not None:
            data, kind = resp.text.encode(), "text/plain; charset=utf-8"
        self.send_response(resp.status)
        for key, value in resp.headers.items():
            self.send_header(key, value)
        if data:
            self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        query = parse_qs(url.query, keep_blank_values=True)
        if url.path.startswith(ADMIN):
            self._send(self.server.standin.admin(self.command, url.path[len(ADMIN) :], raw))
            return
        base = f"http://{self.headers.get('Host', '127.0.0.1')}"
        resp = self.server.standin.serve(
            self.command, url.path, query, raw, self.headers.get("Content-Type"),
            self.headers.get("Authorization", ""), base,
            {k.lower(): v for k, v in self.headers.items()},
        )  # fmt: skip
        self._send(resp)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: StandIn


class StandIn:
    """A stateful local GitHub: `with StandIn() as gh: ... gh.url ...`."""

    def __init__(self, state: State | None = None, host: str = "127.0.0.1", port: int = 0):
        self.state = state or default_state()
        self._server = _Server((host, port), Handler)
        self._server.standin = self
        self._thread: threading.Thread | None = None
        self._after: dict[str, list] = {}  # operationId -> one-shot callbacks(state)

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandIn:
        spec._openapi()  # built before the first request, not while a client waits on it
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- seeding and faults ----------------------------------------------------------------
    def add_identity(self, token: str, login: str, **kw: Any) -> Identity:
        ident = Identity(login, 3000 + len(self.state.identities), **kw)
        self.state.identities[token] = ident
        return ident

    def add_pull(self, number: int, **kw: Any) -> Issue:
        with self.state.lock:
            issue = Issue(number, **kw)
            self.state.issues[number] = issue
            return issue

    def add_comment(self, number: int, login: str, body: str, user_type: str = "User") -> int:
        ident = next((i for i in self.state.identities.values() if i.login == login), None)
        ident = ident or Identity(login, 4000 + len(login), user_type)
        with self.state.lock:
            return self.state.add_comment(number, ident, body).id

    def comments(self, number: int) -> list[Comment]:
        with self.state.lock:
            return self.state.issue_comments(number)

    def fail(
        self,
        op: str,
        status: int,
        message: str = "Server Error",
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """The next `times` requests for operationId `op` are answered `status`."""
        body = {"message": message, "documentation_url": routes.DOCS}
        with self.state.lock:
            queue = self.state.faults.setdefault(op, deque())
            queue.extend(Fault(status, body, dict(headers or {})) for _ in range(times))

    def secondary_rate_limit(self, op: str, retry_after: int) -> None:
        msg = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
        self.fail(op, 403, msg, {"Retry-After": str(retry_after)})

    def too_many_requests(self, op: str, retry_after: int) -> None:
        self.fail(op, 429, "Too Many Requests", {"Retry-After": str(retry_after)})

    def primary_rate_limit(self, op: str, reset_epoch: int) -> None:
        headers = {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": "5000",
            "x-ratelimit-reset": str(reset_epoch),
            "x-ratelimit-resource": "core",
        }
        self.fail(op, 403, "API rate limit exceeded for installation ID 1.", headers)

    def fail_after(self, op: str, served: int, then) -> None:
        """Call `then()` (e.g. a fault) once `op` has been served `served` more times."""
        left = [served]

        def hook(state: State) -> None:
            left[0] -= 1
            if left[0] <= 0:
                then()
            else:
                self.after(op, hook)

        self.after(op, hook)

    def after(self, op: str, func) -> None:
        """Run `func(state)` once, right after the next `op` is served (e.g. delete a comment
        between a reporter's list and its edit)."""
        with self.state.lock:
            self._after.setdefault(op, []).append(func)

    # --- observation -----------------------------------------------------------------------
    def calls(self, op: str | None = None) -> list[dict[str, Any]]:
        with self.state.lock:
            return [c for c in self.state.calls if op is None or c["op"] == op]

    @property
    def invalid(self) -> list[str]:
        with self.state.lock:
            return list(self.state.invalid)

    # --- serving ---------------------------------------------------------------------------
    def serve(
        self, method, path, query, raw, content_type, authorization, base, headers=None
    ) -> routes.Resp:
        with self.state.lock:
            entry = {"method": method, "path": path, "op": None, "status": 0, "t": time.time()}
            entry["query"] = {k: v[-1] for k, v in query.items()}
            self.state.calls.append(entry)
        resp = self._serve(
            entry, method, path, query, raw, content_type, authorization, base, headers or {}
        )
        resp = self._rate(resp)
        entry["status"] = resp.status
        return resp

    def _rate(self, resp: routes.Resp) -> routes.Resp:
        """With a rate window: count the request (a 304 is free, as on GitHub), send the
        x-ratelimit-* headers, and answer 403 once the window is spent."""
        with self.state.lock:
            rate = self.state.rate
            if rate is None:
                return resp
            if rate.remaining <= 0:
                resp = routes.error(403, "API rate limit exceeded for installation ID 1.")
            elif resp.status != 304:
                rate.remaining -= 1
            resp.headers.update({
                "x-ratelimit-limit": str(rate.limit),
                "x-ratelimit-remaining": str(rate.remaining),
                "x-ratelimit-used": str(rate.limit - rate.remaining),
                "x-ratelimit-reset": str(rate.reset),
                "x-ratelimit-resource": "core",
            })  # fmt: skip
            return resp

    def _reject(self, entry: dict, status: int, why: str) -> routes.Resp:
        with self.state.lock:
            self.state.invalid.append(why)
        entry["invalid"] = why
        return routes.error(status, why)

    def _serve(self, entry, method, path, query, raw, content_type, authorization, base, headers):
        extra = routes.EXTRA.get((method, path))
        if extra is not None:
            op, func, params = extra[0], extra[1], {}
        else:
            found = spec.match(method, path)
            if found is None:
                return self._reject(
                    entry, 404, f"{method} {path}: no such operation in GitHub's description"
                )
            op, params = found
            func = routes.OPERATIONS[op]
        entry["op"] = op
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                return self._reject(entry, 400, f"{method} {path}: Problems parsing JSON")
        if extra is None:
            vpath = path
            if "path" in params:  # one segment for the description's path template
                vpath = path[: len(path) - len(params["path"])] + quote(params["path"], safe="")
            why = spec.validate(method, vpath, query, raw, content_type)
            if why:
                return self._reject(entry, 422, why)
        token = authorization.split(" ", 1)[-1].strip() if authorization else ""
        if not token:
            return routes.error(401, "Requires authentication")
        who = self.state.identities.get(token)
        if who is None:
            return routes.error(401, "Bad credentials")
        entry["login"] = who.login
        with self.state.lock:
            queue = self.state.faults.get(op)
            if queue:
                fault = queue.popleft()
                return routes.Resp(fault.status, fault.body, fault.headers)
            if method in WRITES and who.read_only and op != "graphql":
                return routes.error(403, NOT_ACCESSIBLE)
            req = routes.Req(method, path, query, body, who, params, base, headers)
            resp = func(self.state, req)
            for hook in self._after.pop(op, []):
                hook(self.state)
            return resp

    def admin(self, method: str, what: str, raw: bytes) -> routes.Resp:
        """Test control outside the API: state dump and fault injection (not counted as calls)."""
        if method == "GET" and what == "state":
            return routes.Resp(200, self.state.to_json())
        if method == "POST" and what == "fault":
            data = json.loads(raw or b"{}")
            self.fail(data["op"], int(data["status"]), data.get("message", "Server Error"),
                      data.get("headers"), int(data.get("times", 1)))  # fmt: skip
            return routes.Resp(204)
        return routes.error(404, f"unknown admin request {method} {ADMIN}{what}")
