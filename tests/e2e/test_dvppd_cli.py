"""dvppd's command line and configuration, through the real binary.

Every dvppd here gets an explicit --config in the test's temp folder (a
free HTTP port, its socket in a fresh /tmp folder), so nothing of the host
leaks in: not /etc/dvppd/dvppd.conf, not port 8080, not run/ in the tree.
The one exception is test_without_config_reads_the_default_file, which is
about exactly that lookup; it runs `--check-config` (no daemon starts) in a
temp cwd and HOME.
"""
import json
import os
import shutil
import signal
import subprocess

import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import DVPPD, free_port, sock_dir, start_daemon, stop_daemon  # noqa: E402

# dvppd_config.h DVPPD_DEFAULT_CONFIG: read when there is no --config.
DEFAULT_CONFIG = "/etc/dvppd/dvppd.conf"

pytestmark = pytest.mark.skipif(not os.path.exists(DVPPD), reason="dvppd not built")


def run(*args, cwd=None, env=None):
    return subprocess.run([DVPPD, *args], capture_output=True, text=True, timeout=30,
                          cwd=cwd, env=env)


def empty_config(tmp_path):
    f = tmp_path / "empty.conf"
    f.write_text("{}")
    return str(f)


def test_check_config_prints_defaults(tmp_path):
    """An empty file leaves the built-in defaults, whatever the host has in /etc."""
    r = run("--config", empty_config(tmp_path), "--check-config")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["http"]["listen"] == "127.0.0.1:8080"
    assert c["socket"]["path"] == "run/dvppd.sock"
    assert c["limits"]["max_jpeg_scans"] == 100
    assert c["log"]["level"] == "info"


def test_without_config_reads_the_default_file(tmp_path):
    """No --config: dvppd reads DEFAULT_CONFIG when it exists, else the
    built-in defaults apply. The test only reads (it never writes /etc), so
    which branch runs is the host's; either way the answer must equal the
    same file given explicitly. cwd and HOME are temp folders, so a dvppd
    that looked for a relative or per-user file would be caught too."""
    assert DEFAULT_CONFIG in run("--help").stdout
    env = dict(os.environ, HOME=str(tmp_path))
    r = run("--check-config", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    want = DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else empty_config(tmp_path)
    ref = run("--config", want, "--check-config")
    assert ref.returncode == 0, ref.stderr
    assert json.loads(r.stdout) == json.loads(ref.stdout)


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


@pytest.fixture
def isolated(tmp_path):
    """A config of the test's own: a free port and a socket in a fresh
    /tmp folder (sun_path is short), removed when the daemon stops."""
    port, sdir = free_port(), sock_dir("dvppd-cli-")
    sock = os.path.join(sdir, "d.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": sock}}
    yield lambda: start_daemon(str(tmp_path), cfg, "dvppd", port, sock=sock, sock_dir=sdir)
    shutil.rmtree(sdir, ignore_errors=True)  # when the test failed before a stop


def test_sigterm_stops_cleanly(isolated):
    d = isolated()               # /readyz 200 and the socket there: fully started
    stop_daemon(d)               # SIGTERM; exit status 0
    out = d.log()
    assert "starting" in out and "stopping" in out
    assert not os.path.exists(d.sock), "socket left behind"


def test_journal_prefixes_under_systemd(isolated, monkeypatch):
    monkeypatch.setenv("JOURNAL_STREAM", "8:1234")  # inherited by the daemon only
    d = isolated()
    try:
        d.proc.send_signal(signal.SIGINT)  # stops it as SIGTERM does
        rc = d.proc.wait(timeout=25)
    finally:
        stop_daemon(d, check=False)        # kills it if SIGINT did not
    assert rc == 0, d.log()
    assert d.log().splitlines()[0].startswith("<6>dvppd "), d.log()
