"""pytest hooks for tests/scale: the same as tests/e2e's (skips are listed,
and fail the run under CI), and tests/e2e on sys.path so that the scale
tests share daemon_util (starting daemons, the HTTP helpers, test images)
with the end-to-end tests instead of keeping a copy."""
import importlib.util
import os
import sys

import pytest

E2E = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e")
if E2E not in sys.path:
    sys.path.insert(0, E2E)
pytest.register_assert_rewrite("daemon_util")

_spec = importlib.util.spec_from_file_location("dvpp_e2e_conftest",
                                               os.path.join(E2E, "conftest.py"))
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)
pytest_configure = _e2e.pytest_configure
