"""dvppd's command line and configuration, through the real binary."""
import json
import os
import signal
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DVPPD = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"), "dvppd")

pytestmark = pytest.mark.skipif(not os.path.exists(DVPPD), reason="dvppd not built")


def run(*args):
    return subprocess.run([DVPPD, *args], capture_output=True, text=True, timeout=30)


def test_check_config_prints_defaults():
    r = run("--check-config")
    assert r.returncode == 0
    c = json.loads(r.stdout)
    assert c["http"]["listen"] == "127.0.0.1:8080"
    assert c["limits"]["max_jpeg_scans"] == 100
    assert c["log"]["level"] == "info"


def test_file_then_flags_override(tmp_path):
    f = tmp_path / "d.conf"
    f.write_text('{"http": {"listen": "0.0.0.0:9000"}, "device": {"channels": 3}}')
    c = json.loads(run("--config", str(f), "--channels", "5", "--check-config").stdout)
    assert c["http"]["listen"] == "0.0.0.0:9000" and c["device"]["channels"] == 5


@pytest.mark.parametrize("text,needle", [
    ('{"device": {"channelz": 2}}', "device.channelz: unknown key"),
    ('{"device": {"channels": -1}}', "device.channels"),
    ('{"http": {"listen": "nohost"}}', "HOST:PORT"),
    ('{"log": {"level": "loud"}}', "log.level"),
    ('{"device": {"channels": 1, "channels": 2}}', "duplicate"),
    ("{not json", "d.conf:1"),
])
def test_bad_config_is_refused_with_the_key(tmp_path, text, needle):
    f = tmp_path / "d.conf"
    f.write_text(text)
    r = run("--config", str(f), "--check-config")
    assert r.returncode == 1 and needle in r.stderr, r.stderr


def test_sigterm_stops_cleanly():
    p = subprocess.Popen([DVPPD], stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    out = p.communicate(timeout=10)[1]
    assert p.returncode == 0
    assert "starting" in out and "stopping" in out


def test_journal_prefixes_under_systemd():
    env = dict(os.environ, JOURNAL_STREAM="8:1234")
    p = subprocess.Popen([DVPPD], stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=10)[1]
    assert p.returncode == 0
    assert err.splitlines()[0].startswith("<6>dvppd ")
