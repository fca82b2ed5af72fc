"""Regenerate docs/results.schema.json from the RunResults model.

python scripts/gen_schema.py          # write it
python scripts/gen_schema.py --check  # exit 1 when the checked-in file is out of date
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ci_budget.models import RunResults

TARGET = Path(__file__).resolve().parent.parent / "docs" / "results.schema.json"


def render() -> str:
    schema = RunResults.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python scripts/gen_schema.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
