"""Suite-wide pytest hooks for tests/e2e: skips are never silent.

- Every run ends with a list of the skipped tests and why (pytest -q alone
  prints only a count), so a missing tool or missing test data shows.
- With the environment variable CI set (to anything but "", "0" or
  "false"), any skip fails the run and the list says so: CI (.ci/run, a
  Debian 12 machine with everything `make deps` installs and `make
  test-data` fetches) must run every test, so a skip there is a defect of
  the machine or of the test. Modules that skip themselves at import
  (pytest.skip(allow_module_level=True)) and empty parameter sets count too.
"""
import os

import pytest


def ci_mode():
    """True when the CI environment variable asks for a run without skips."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def skip_reason(report):
    """The reason pytest recorded for a skip (longrepr is (path, line, 'Skipped: why'))."""
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(report.longrepr)


class SkipLedger:
    """Collects every skip of the session; fails the session under CI."""

    def __init__(self):
        self.skips = []  # (node id, reason), in the order they happened

    def _record(self, report):
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.append((report.nodeid, skip_reason(report)))

    def pytest_collectreport(self, report):
        self._record(report)  # a module that skipped itself: none of it ran

    def pytest_runtest_logreport(self, report):
        self._record(report)

    def pytest_sessionfinish(self, session, exitstatus):
        # Only turn a green run red; a run that already failed keeps its status.
        if self.skips and ci_mode() and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if not self.skips:
            return
        ci = ci_mode()
        what = "FAIL the run: CI is set, so every test must run" if ci else \
            "did not run (with CI set they fail the run)"
        terminalreporter.section(f"{len(self.skips)} skipped tests {what}", sep="=",
                                 red=ci, yellow=not ci, bold=True)
        for nodeid, reason in self.skips:
            terminalreporter.write_line(f"SKIPPED {nodeid}: {reason}")


def pytest_configure(config):
    config.pluginmanager.register(SkipLedger(), "dvpp-skip-ledger")
