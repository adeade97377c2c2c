"""A flip synthesizer that reports R-side versions as synthpop does (test-only): the versions path
of an R synthesizer is exercised where R's synthpop cannot be installed."""

from __future__ import annotations

from holdbench.synthesizers.flip import Flip

FAKE_VERSIONS = {"R": "R version 9.9.9 (test)", "synthpop": "1.9-test", "rpart": "4.1-test", "rpy2": "3.5-test"}


class FakeR(Flip):
    def versions(self) -> dict[str, str | None]:
        return dict(FAKE_VERSIONS)
