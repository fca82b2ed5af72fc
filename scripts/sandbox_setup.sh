#!/usr/bin/env bash
# Set a runner up once for ci-budget's test sandbox (docs/security.md: The tests' sandbox). Run as root.
#
# - Installs bubblewrap (bwrap) with apt when it is missing; on other distributions install the
#   `bubblewrap` package yourself.
# - Ubuntu 23.10 and later (24.04 LTS included) let a non-root program create user namespaces
#   only under an AppArmor profile that allows it (kernel.apparmor_restrict_unprivileged_userns=1).
#   When that restriction is on and no profile covers /usr/bin/bwrap yet, this loads one that
#   allows bwrap alone, instead of lifting the restriction for every program.
# - Then starts one sandbox the way ci-budget does for a non-root runner, as uid 65534, and says
#   whether it worked. A runner that is root itself needs no user namespace.
set -euo pipefail

if [[ $(id -u) != 0 ]]; then
  echo "sandbox_setup: run as root (sudo bash $0)" >&2
  exit 1
fi

if ! command -v bwrap >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "sandbox_setup: no bwrap and no apt-get: install the bubblewrap package" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q bubblewrap >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }
fi
echo "sandbox_setup: $(bwrap --version)"

restrict=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [[ -r $restrict && $(cat "$restrict") == 1 ]]; then
  if grep -rlsq -e '/usr/bin/bwrap' /etc/apparmor.d/; then
    echo "sandbox_setup: an AppArmor profile for /usr/bin/bwrap is already installed"
  else
    profile=/etc/apparmor.d/ci-budget-bwrap
    cat >"$profile" <<'PROFILE'
# ci-budget: let bubblewrap (and only it) create the user namespace of the tests' sandbox.
abi <abi/4.0>,
include <tunables/global>

profile ci-budget-bwrap /usr/bin/bwrap flags=(unconfined) {
  userns,
  include if exists <local/ci-budget-bwrap>
}
PROFILE
    apparmor_parser -r "$profile"
    echo "sandbox_setup: loaded $profile (user namespaces for /usr/bin/bwrap only)"
  fi
fi

if setpriv --reuid=65534 --regid=65534 --clear-groups -- \
  bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / --proc /proc --dev /dev \
  -- true; then
  echo "sandbox_setup: ok: an unprivileged user can start the sandbox"
else
  echo "sandbox_setup: bwrap still cannot start as an unprivileged user (in a container? see" \
    "docs/security.md: The tests' sandbox)" >&2
  exit 1
fi
