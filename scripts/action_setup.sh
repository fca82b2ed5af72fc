#!/usr/bin/env bash
# Install ci-budget from the action's own checkout into a private virtualenv and write its path
# to $GITHUB_OUTPUT (`cli`, `venv`).
#
# Never installs into the runner's Python: on a GPU runner that interpreter holds the test
# environment (torch, CUDA wheels) and must stay exactly as the tests expect it. The venv is
# reused while the installed copy matches this checkout (version + content digest in a stamp).
# Pip settings (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, ...) pass through, so air-gapped
# runners point pip at their own mirror.
set -euo pipefail

action_path=${ACTION_PATH:?ACTION_PATH must name the ci-budget checkout}
bootstrap=${CI_BUDGET_BOOTSTRAP_PYTHON:-python3}

if ! command -v "$bootstrap" >/dev/null 2>&1; then
  echo "::error title=ci-budget setup::no '$bootstrap' on PATH to create the ci-budget virtualenv"
  exit 1
fi
if ! "$bootstrap" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "::error title=ci-budget setup::$("$bootstrap" --version 2>&1) is too old: ci-budget needs Python >= 3.10"
  exit 1
fi

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$action_path/src/ci_budget/__init__.py")
if [[ -z "$version" ]]; then
  echo "::error title=ci-budget setup::no __version__ in $action_path/src/ci_budget/__init__.py"
  exit 1
fi
# Same version string, different code (a PR branch): the digest tells them apart.
digest=$(
  cd "$action_path" &&
    find pyproject.toml src -type f \( -name '*.py' -o -name '*.toml' \) -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
)
venv="${RUNNER_TEMP:-/tmp}/ci-budget-venv-$version"
stamp="$venv/.ci-budget-stamp"
want="$version $digest"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] &&
  "$venv/bin/ci-budget" --version >/dev/null 2>&1; then
  echo "ci-budget $version ($digest): reusing $venv"
else
  echo "ci-budget $version ($digest): installing into $venv"
  rm -rf "$venv"
  "$bootstrap" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$action_path"
  "$venv/bin/ci-budget" --version
  printf '%s\n' "$want" >"$stamp"
fi

{
  echo "cli=$venv/bin/ci-budget"
  echo "venv=$venv"
  echo "version=$version"
} >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
