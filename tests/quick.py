"""How much a property test tries: all of it (`make test`), or a few examples each in the quick
tier (`make check` sets CONVVIZ_HYPOTHESIS=check; tests/conftest.py loads that profile).

A test that sets its own max_examples passes it through `examples`, so the quick tier caps it
too; tests that keep hypothesis' default take the profile's.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("CONVVIZ_HYPOTHESIS", "default")
CHECK_EXAMPLES = 20  # per property in the quick tier


def examples(n: int) -> int:
    """A property's max_examples: n, or at most CHECK_EXAMPLES in the quick tier."""
    return min(n, CHECK_EXAMPLES) if PROFILE == "check" else n
