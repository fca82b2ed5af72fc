"""The base branch's `.github/CI_PERMISSIONS.json` (sglang's grants), read for `plan`."""

from __future__ import annotations

import json
from pathlib import Path

from ci_budget.trigger.authz import Permissions, PermissionsError, parse_permissions

MAX_BYTES = 4 * 1024 * 1024


def read_permissions(root: Path, rel: str) -> tuple[Permissions | None, list[str]]:
    """(the grants, warnings). A missing file is no grants and no warning; one that cannot be
    used is no grants and one warning naming it: authorisation then asks GitHub, never less."""
    if not rel:
        return None, []
    path = root / rel
    try:
        if not path.is_file():
            return None, []
        if path.stat().st_size > MAX_BYTES:
            return None, [f"{rel}: over {MAX_BYTES // 2**20} MiB; its grants are not used"]
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        return None, [f"{rel}: cannot read it ({exc}); its grants are not used"]
    try:
        permissions = parse_permissions(data, rel)
    except PermissionsError as exc:
        return None, [f"{exc}; its grants are not used"]
    return permissions, list(permissions.problems)
