// actions/github-script, run locally: the step's `script` as the body of an async function of
// (require, github, context, core, fetch), the way the action calls it. `github.rest.NS.METHOD`
// is the REST operation whose operationId is `NS/kebab-method` in the GitHub stand-in's OpenAPI
// subset (octokit derives its method names from the same ids); `github.paginate` follows Link
// headers. `context` and `core` read and write what the runner gives every action: GITHUB_*
// variables, the event file, INPUT_* inputs, GITHUB_OUTPUT. No npm packages.
import fs from "node:fs";
import crypto from "node:crypto";
import { createRequire } from "node:module";

const env = process.env;
const input = (name) => (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] || "").trim();

const spec = JSON.parse(fs.readFileSync(env.HARNESS_OPENAPI, "utf8"));
const operations = {};
for (const [template, item] of Object.entries(spec.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (op && op.operationId) operations[op.operationId] = { method: method.toUpperCase(), template };
  }
}
const kebab = (name) => name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());

class RequestError extends Error {
  constructor(status, message, response) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.response = response;
  }
}

async function send(method, url, body) {
  const headers = {
    accept: "application/vnd.github+json",
    authorization: `token ${input("github-token")}`,
    "user-agent": "actions/github-script (harness)",
  };
  if (body !== undefined) headers["content-type"] = "application/json";
  const resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  const data = text ? JSON.parse(text) : undefined;
  const response = { status: resp.status, url, headers: Object.fromEntries(resp.headers), data };
  if (resp.status >= 400) throw new RequestError(resp.status, (data && data.message) || text, response);
  return response;
}

function request(id, op, params = {}) {
  const rest = { ...params };
  let path = op.template.replace(/\{([^}]+)\}/g, (_, name) => {
    if (!(name in rest)) throw new Error(`${id}: parameter ${name} is required`);
    const value = String(rest[name]);
    delete rest[name];
    return name === "path" ? value.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(value);
  });
  let body;
  if (op.method === "GET" || op.method === "DELETE") {
    const query = new URLSearchParams(Object.entries(rest).map(([k, v]) => [k, String(v)]));
    if ([...query].length) path += `?${query}`;
  } else {
    body = rest;
  }
  return send(op.method, env.GITHUB_API_URL + path, body);
}

const rest = new Proxy({}, {
  get: (_, ns) => new Proxy({}, {
    get: (_, method) => {
      const id = `${String(ns)}/${kebab(String(method))}`;
      const op = operations[id];
      if (!op) throw new Error(`github-script (harness): ${String(ns)}.${String(method)} (${id}) is not in the stand-in's OpenAPI subset`);
      const call = (params) => request(id, op, params);
      call.operationId = id;
      return call;
    },
  }),
});

function items(data) {
  if (Array.isArray(data)) return data;
  const lists = Object.values(data || {}).filter(Array.isArray);
  if (lists.length !== 1) throw new Error("paginate: the answer holds no single list");
  return lists[0];
}

async function paginate(call, params = {}, map) {
  let response = await call({ per_page: 100, ...params });
  const out = [];
  for (;;) {
    const page = items(response.data);
    out.push(...(map ? map({ ...response, data: page }) : page));
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.link || "");
    if (!next) return out;
    response = await send("GET", next[1]);
  }
}

const payload = env.GITHUB_EVENT_PATH ? JSON.parse(fs.readFileSync(env.GITHUB_EVENT_PATH, "utf8")) : {};
const [owner, repo] = (env.GITHUB_REPOSITORY || "/").split("/");
const context = {
  payload,
  eventName: env.GITHUB_EVENT_NAME,
  sha: env.GITHUB_SHA,
  ref: env.GITHUB_REF,
  workflow: env.GITHUB_WORKFLOW,
  action: env.GITHUB_ACTION,
  actor: env.GITHUB_ACTOR,
  job: env.GITHUB_JOB,
  runId: Number(env.GITHUB_RUN_ID),
  runNumber: Number(env.GITHUB_RUN_NUMBER),
  apiUrl: env.GITHUB_API_URL,
  serverUrl: env.GITHUB_SERVER_URL,
  repo: { owner, repo },
  get issue() {
    return { owner, repo, number: (payload.issue || payload.pull_request || payload).number };
  },
};

function fileCommand(file, name, value) {
  const text = typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);
  const delimiter = `ghadelimiter_${crypto.randomUUID()}`;
  fs.appendFileSync(file, `${name}<<${delimiter}\n${text}\n${delimiter}\n`);
}
const core = {
  getInput: input,
  setOutput: (name, value) => fileCommand(env.GITHUB_OUTPUT, name, value),
  exportVariable: (name, value) => fileCommand(env.GITHUB_ENV, name, value),
  setFailed: (message) => {
    process.exitCode = 1;
    console.log(`::error::${message}`);
  },
  info: (message) => console.log(message),
  debug: (message) => console.log(`::debug::${message}`),
  notice: (message) => console.log(`::notice::${message}`),
  warning: (message) => console.log(`::warning::${message}`),
  error: (message) => console.log(`::error::${message}`),
};

const github = { rest, paginate, request: (route, params) => { throw new Error(`github.request(${route}) is not supported by the harness`); } };
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
try {
  const body = new AsyncFunction("require", "github", "context", "core", "fetch", input("script"));
  const result = await body(createRequire(import.meta.url), github, context, core, fetch);
  core.setOutput("result", input("result-encoding") === "string" ? String(result) : JSON.stringify(result));
} catch (err) {
  core.setFailed(`Unhandled error: ${err}`);
}
