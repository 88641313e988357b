"""The suite's Hypothesis profiles, registered in one place (tests/conftest.py loads them).

- `ci`, the default (`make test`): each property runs the examples it names with
  `examples(n)`, the figures the suite has always run.
- `dev` (`make unit`, or `--hypothesis-profile=dev`): a tenth of those, at least five, for
  a maintainer's run in seconds.
- `fuzz` (`make fuzz`; chosen whenever MOCKLLM_FUZZ_EXAMPLES is set): that many examples
  for every property, whatever it names.

HYPOTHESIS_PROFILE=NAME picks one too. No profile has a deadline: on a shared two-core
machine one slow example is the machine, not the code.
"""

from __future__ import annotations

import os

from hypothesis import settings

FUZZ_DEFAULT = 5000  # `make fuzz`'s figure (Makefile)

settings.register_profile("ci", deadline=None)
settings.register_profile("dev", deadline=None)
settings.register_profile(
    "fuzz",
    deadline=None,
    max_examples=int(os.environ.get("MOCKLLM_FUZZ_EXAMPLES") or FUZZ_DEFAULT),
)


def load() -> None:
    fuzz = os.environ.get("MOCKLLM_FUZZ_EXAMPLES")
    settings.load_profile("fuzz" if fuzz else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(ci: int) -> int:
    """The examples a property runs under the loaded profile, given what it runs in `ci`.
    Called where the property is defined, so after pytest has loaded the profile
    (`--hypothesis-profile` included: test modules are imported after that option is read)."""
    profile = settings.get_current_profile_name()
    if profile == "fuzz":
        return settings.default.max_examples
    if profile == "dev":
        return max(5, ci // 10)
    return ci
