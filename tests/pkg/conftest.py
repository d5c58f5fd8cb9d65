"""pytest hooks and fixtures for tests/pkg, the Debian packages (debian/).

- The same skip ledger as tests/e2e: every skip is listed at the end with its
  reason, and with CI set any skip fails the run.
- ``debs``: the packages, built once per session with ``make deb`` (from a
  clean copy of the tree, DEB_BUILD_OPTIONS=nocheck: the unit suites run in
  ``make test`` anyway), or taken from the folder the environment variable
  DVPP_DEBS names (a developer's earlier ``make deb``).
- ``pkg_report``: lines the tests want in ``make test``'s output (which
  packages, lintian's verdict, what install/remove/purge left), printed in a
  "Debian packages" section at the end even under ``pytest -q``.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
E2E = REPO / "tests" / "e2e"
# tests/e2e's daemon_util (HTTP answers, polling, images, ports) serves
# these tests too, as it does tests/scale.
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))
pytest.register_assert_rewrite("daemon_util")

_spec = importlib.util.spec_from_file_location("dvpp_e2e_conftest", E2E / "conftest.py")
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)

# What debian/control builds (the -dbgsym packages dh_strip adds are not
# installed by the tests).
PACKAGES = ("dvppd", "dvppd-deploy", "libdvppclient1", "libdvppclient-dev", "libdvpp-dev",
            "libdvpp-acl-dev", "python3-dvpp")
BUILD_TOOLS = ("dpkg-buildpackage", "dh", "dpkg-deb", "lintian")

_REPORT = []


def pytest_configure(config):
    _e2e.pytest_configure(config)


def pytest_terminal_summary(terminalreporter):
    if not _REPORT:
        return
    terminalreporter.section("Debian packages (tests/pkg)", sep="=", bold=True)
    for line in _REPORT:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def pkg_report():
    """Append a line to the summary printed after the tests."""
    return _REPORT.append


def deb_version():
    """The version debian/changelog gives (the packages' version)."""
    out = subprocess.run(["dpkg-parsechangelog", "-l", str(REPO / "debian" / "changelog"),
                          "-S", "Version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _collect(folder):
    """{package: path} of the .debs in folder; None unless all are there."""
    found = {}
    for deb in sorted(Path(folder).glob("*.deb")):
        name = deb.name.split("_", 1)[0]
        if name in PACKAGES:
            found[name] = deb
    return found if set(found) == set(PACKAGES) else None


@pytest.fixture(scope="session")
def deb_dir(pkg_report):
    """The folder holding the built packages and their .changes."""
    missing = [t for t in BUILD_TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip("the Debian packaging tools are not installed (missing: "
                    f"{', '.join(missing)}; `make deps` installs them)")
    given = os.environ.get("DVPP_DEBS")
    if given:
        if _collect(given) is None:
            pytest.fail(f"DVPP_DEBS={given} does not hold all of {', '.join(PACKAGES)}")
        pkg_report(f"packages: taken from DVPP_DEBS={given}")
        return Path(given)
    build = Path(os.environ.get("DVPP_BUILD", "build"))
    if not build.is_absolute():
        build = REPO / build
    out = build / "deb"
    log = build / "deb.log"
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck")
    with open(log, "w") as f:
        r = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "deb",
                            f"DEB_OUT={out}"], stdout=f, stderr=subprocess.STDOUT, env=env,
                           timeout=1800)
    if r.returncode != 0:
        pytest.fail(f"make deb failed (exit {r.returncode}); the end of {log}:\n"
                    + log.read_text(errors="replace")[-4000:])
    pkg_report(f"packages: built by `make deb` into {out} (log {log})")
    return out


@pytest.fixture(scope="session")
def debs(deb_dir):
    """{package name: Path of its .deb}, every package of debian/control."""
    found = _collect(deb_dir)
    if found is None:
        pytest.fail(f"{deb_dir} lacks some of {', '.join(PACKAGES)}: "
                    f"{sorted(p.name for p in Path(deb_dir).glob('*.deb'))}")
    return found
