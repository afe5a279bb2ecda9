"""Which branches promote baselines: the default branch, and those a config names.

The one rule both the promote mode (may this push promote?) and the artifact store (are a
PR base branch's baselines kept?) ask (docs/baselines-per-branch.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase


def branch_promotes(branch: str, default_branch: str, patterns: Sequence[str]) -> bool:
    """Whether pushes to ``branch`` promote: the default branch always; others when a name
    or fnmatch pattern of ``patterns`` (``release/*``) matches it, case-sensitively."""
    return branch == default_branch or any(fnmatchcase(branch, p) for p in patterns)
