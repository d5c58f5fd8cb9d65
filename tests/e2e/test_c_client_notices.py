"""libdvppclient's unsolicited-notice queue (clients/lib), against a real
dvppd, through tests/e2e/notice_client: past DVPPC_MAX_NOTICES (1024) a
delivery is dropped, counted (dvppc_notices_dropped) and its slot given
back at once, as the Python client does since 4077828. Before, the C
client dropped it silently and its slot stayed leased until the lease
timeout (10 s here), so a consumer busy elsewhere kept the ring full.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_c_client_notices.py
"""
import json
import os
import subprocess
import urllib.parse

import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (build_path, free_port, gradient, sock_dir, stop_daemon,  # noqa: E402
                         to_png)
import daemon_util  # noqa: E402

NOTICE_CLIENT = build_path("tests", "e2e", "notice_client")
MAX_NOTICES = 1024          # DVPPC_MAX_NOTICES (clients/lib/client_int.h)
NOTICES = MAX_NOTICES + 76
LEASE_MS = 10000            # far longer than the test waits for the releases


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("cnotices"))
    port = free_port()
    sdir = sock_dir("dvppcn-", 0o755)
    sock = os.path.join(sdir, "cn.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600", "max_slots": 2048,
                      "lease_timeout_ms": LEASE_MS},
           "device": {"channels": 2}}
    d = daemon_util.start_daemon(tmp, cfg, "cn", port, sock=sock, sock_dir=sdir)
    yield d
    stop_daemon(d)


def line(p):
    out = p.stdout.readline()
    assert out, "notice_client ended early: " + p.stderr.read()
    return json.loads(out)


def test_notices_past_the_cap_are_counted_and_their_slots_released(srv):
    assert os.path.exists(NOTICE_CLIENT), f"{NOTICE_CLIENT} is built by `make`"
    p = subprocess.Popen([NOTICE_CLIENT, srv.sock, "c-notices", str(NOTICES),
                          str(NOTICES - MAX_NOTICES)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = line(p)
        base = first["stats"]["slots_leased"]
        png = to_png(gradient(4, 4, 3))
        q = urllib.parse.urlencode({"w": 2, "h": 2, "dtype": "uint8", "layout": "nhwc",
                                    "scale": 1, "ring": "c-notices"})
        conn = srv.conn()
        try:
            for i in range(NOTICES):
                r = srv.post("/v1/preprocess?" + q, png, conn=conn)
                assert r.status == 200, (i, r)
        finally:
            conn.close()
        p.stdin.write("go\n")
        p.stdin.flush()
        got = line(p)
        assert got["dropped"] == NOTICES - MAX_NOTICES, got["dropped"]
        # the kept notices hold their slots; the dropped ones' came back
        # long before their leases could expire
        assert got["stats"]["slots_leased"] == base + MAX_NOTICES, \
            (got["stats"]["slots_leased"], base)
        p.stdin.write("collect\n")
        p.stdin.flush()
        done = line(p)
        assert done == {"collected": MAX_NOTICES, "bad": 0}, done
        assert p.wait(timeout=30) == 0, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # a round trip on another connection: every release was handled
    with srv.client() as c:
        assert c.stats()["slots_leased"] == base
