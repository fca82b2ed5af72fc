import sys

from ci_budget.cli import main

sys.exit(main())
