"""Three dvppd behind a real HAProxy 2.6, and again behind a real nginx 1.22,
each from the shipped config (deploy/haproxy/haproxy.cfg,
deploy/nginx/dvppd.conf) with only the addresses changed.

A fixed-rate load of mixed /v1/preprocess, /v1/image and /v1/batch requests
runs for 20 s; during it:
  1. dvppd1 gets SIGTERM (its service.drain_delay_s, then its drain; it must
     exit 0) and is started again, as systemd's Restart= would;
  2. dvppd2 is restarted by deploy/rolling-restart;
  3. dvppd3 gets SIGKILL, and is started again a second later.
Every answer must be 200 with the bytes a single daemon gives for the same
request. No request may fail around the drain or the rolling restart; around
the SIGKILL, only requests the balancer may not retry may fail: those whose
answer had begun when the daemon died (counted and printed). The counts of
every run are printed (pytest -s shows them; they are also in the failure
message).
"""
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

pytest.register_assert_rewrite("fleet")
import fleet  # noqa: E402

RATE = 40          # requests a second
SECONDS = 20       # of load
KILL_WINDOW = 6.0  # s after the SIGKILL in which failures are the SIGKILL's
NGINX_FAIL_TIMEOUT = 2  # the upstream servers' fail_timeout in deploy/nginx
DRAIN_DELAY = 3    # service.drain_delay_s of the daemons: above HAProxy's
                   # inter 1s x fall 2 of deploy/haproxy/haproxy.cfg


def need(tool):
    if not shutil.which(tool):
        pytest.skip(f"{tool} not installed (make deps installs it)")


def images():
    import daemon_util as du
    jpgs = [du.to_jpeg(du.gradient(w, h, seed)) for seed, (w, h) in
            enumerate([(320, 240), (200, 300), (640, 360)])]
    pngs = [du.to_png(du.gradient(w, h, 10 + seed)) for seed, (w, h) in
            enumerate([(128, 96), (97, 61)])]
    return jpgs, pngs


def templates():
    import daemon_util as du
    jpgs, pngs = images()
    out = []
    for i, body in enumerate(jpgs + pngs):
        out.append(fleet.Template(
            "preprocess", "/v1/preprocess?w=64&h=48&mean=0.485,0.456,0.406"
            "&std=0.229,0.224,0.225", body))
        out.append(fleet.Template("image", f"/v1/image?w=96&h=96&mode=fit&quality={80 + i}",
                                  body))
    parts = [(f"img{i}", b, f"img{i}", "application/octet-stream")
             for i, b in enumerate(jpgs + pngs)]
    body, headers = du.multipart(parts)
    out.append(fleet.Template("batch", "/v1/batch?w=32&h=32&mode=fill", body, headers))
    out.append(fleet.Template("batch", "/v1/batch?w=48&h=40&dtype=uint8&layout=nhwc",
                              body, headers))
    return out


def run_scenario(balancer_cls, capsys):
    # A short folder: HAProxy's stats socket path must fit sun_path.
    d = tempfile.mkdtemp(prefix="fleet", dir="/tmp")
    daemons = fleet.make_fleet(d, 3, drain_delay_s=DRAIN_DELAY)
    bal = None
    events = {}
    try:
        temps = templates()
        for t in temps:
            t.learn(daemons[0].port)
        bal = balancer_cls(d, daemons)
        bal.start()
        load = fleet.Load(bal.port, temps, RATE, SECONDS)
        load.start()
        d1, d2, d3 = daemons

        # 1. SIGTERM: a drain, then the daemon is started again.
        time.sleep(1.5)
        events["sigterm"] = load.elapsed()
        old = d1.proc
        rc = d1.stop(signal.SIGTERM)
        assert rc == 0, f"dvppd1 exit status {rc} after SIGTERM:\n{d1.log()}"
        events["sigterm_exit"] = load.elapsed()
        d1.start()
        assert d1.proc is not old
        wait_back(bal, d1)

        # 2. The rolling-restart script, on dvppd2 (the others must be ready).
        events["rolling"] = load.elapsed()
        old = d2.proc
        cmd = [sys.executable, fleet.ROLLING_RESTART,
               "--restart-cmd", f"{sys.executable} {fleet.__file__} restart {d} {{name}}",
               "--check", f"dvppd1={d1.url}", "--check", f"dvppd3={d3.url}",
               f"dvppd2={d2.url}"]
        if isinstance(bal, fleet.HAProxy):
            cmd += ["--haproxy-socket", bal.stats_sock, "--settle", "0.5"]
        else:
            cmd += ["--settle", str(NGINX_FAIL_TIMEOUT + 0.5)]
        rr = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert rr.returncode == 0, rr.stdout + rr.stderr + d2.log()
        assert old.wait(timeout=5) == 0, f"dvppd2's drain exit status:\n{d2.log()}"
        assert "dvppd2: ready again" in rr.stdout, rr.stdout
        events["rolling_done"] = load.elapsed()

        # 3. SIGKILL, then a restart a second later.
        events["sigkill"] = load.elapsed()
        assert events["sigkill"] < SECONDS - 2, \
            f"the events did not fit in the {SECONDS} s of load: {events}"
        d3.stop(signal.SIGKILL)
        time.sleep(1.0)
        d3.start()
        load.join()
        return judge(load, events, bal, capsys)
    finally:
        if bal:
            bal.stop()
        fleet.stop_all(daemons)
        shutil.rmtree(d, ignore_errors=True)


def wait_back(bal, daemon, timeout=15):
    """Until the balancer sends to @daemon again (HAProxy: its server UP;
    nginx: its fail_timeout over)."""
    if isinstance(bal, fleet.Nginx):
        time.sleep(NGINX_FAIL_TIMEOUT + 0.5)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if bal.all_up():
            return
        time.sleep(0.1)
    pytest.fail(f"{bal.kind} did not put {daemon.name} back within {timeout} s")


def judge(load, events, bal, capsys):
    recs = load.records
    fails = load.failures()
    t0 = load.t0
    kill = events["sigkill"]
    in_kill = [r for r in fails if kill - 0.2 <= r.sent - t0 <= kill + KILL_WINDOW]
    elsewhere = [r for r in fails if r not in in_kill]
    unretryable = [r for r in in_kill if r.partial]
    by_kind = {}
    for r in recs:
        by_kind[r.kind] = by_kind.get(r.kind, 0) + 1
    lines = [f"{bal.kind}: {len(recs)} requests at {RATE}/s for {SECONDS} s "
             f"({', '.join(f'{k} {n}' for k, n in sorted(by_kind.items()))}); "
             f"{len(recs) - len(fails)} answered 200 with a single daemon's bytes",
             f"  events (s into the load): " +
             ", ".join(f"{k} {v:.1f}" for k, v in events.items()),
             f"  failed around the SIGTERM drain and the rolling restart: {len(elsewhere)}",
             f"  failed around the SIGKILL: {len(in_kill)}, of which the balancer may not "
             f"retry (answer begun when the daemon died): {len(unretryable)}",
             f"  sent more than 0.5 s late: {load.late}"]
    drained_retries = 0
    if isinstance(bal, fleet.HAProxy):
        st = bal.stat()
        lines.append("  haproxy retries/redispatches per server: " + ", ".join(
            f"{n} {v.get('wretr')}/{v.get('wredis')}" for n, v in sorted(st.items())
            if n.startswith("dvppd")))
        # The drained daemons needed no retry at all: HAProxy's checks saw
        # /readyz 503 and took them out before their listeners closed.
        drained_retries = sum(int(st[n].get("wretr") or 0) + int(st[n].get("wredis") or 0)
                              for n in ("dvppd1", "dvppd2"))
    else:
        n, how = bal.retried()
        lines.append(f"  nginx sent {n} request(s) to a second daemon "
                     f"(upstream statuses: {sorted(set(how))})")
    for r in fails[:20]:
        lines.append(f"  FAILED #{r.i} {r.kind} sent at {r.sent - t0:.2f} s: {r.error}")
    summary = "\n".join(lines)
    with capsys.disabled():
        print("\n" + summary)
    assert len(recs) == int(RATE * SECONDS), summary
    assert all(r.done is not None for r in recs), summary
    assert not elsewhere, summary
    assert len(in_kill) == len(unretryable), summary
    assert drained_retries == 0, summary
    return summary


@pytest.mark.parametrize("balancer", ["haproxy", "nginx"])
def test_fleet_survives_drain_rolling_restart_and_kill(balancer, capsys):
    need("haproxy" if balancer == "haproxy" else "nginx")
    if not os.path.exists(fleet.DVPPD):
        pytest.skip("dvppd not built")
    cls = fleet.HAProxy if balancer == "haproxy" else fleet.Nginx
    run_scenario(cls, capsys)


def test_rolling_restart_refuses_to_take_a_second_daemon_out():
    """deploy/rolling-restart restarts nothing while another daemon of the
    fleet is not ready (exit 1, naming it), stops at a restart command that
    fails, and restarts one that works: a new process, ready, the old one
    drained and exited 0."""
    d = tempfile.mkdtemp(prefix="rr", dir="/tmp")
    daemons = fleet.make_fleet(d, 2, drain_delay_s=0)
    try:
        a, b = daemons
        restart = f"{sys.executable} {fleet.__file__} restart {d} {{name}}"
        base = [sys.executable, fleet.ROLLING_RESTART, "--settle", "0"]
        assert b.stop() == 0
        rr = subprocess.run(base + ["--restart-cmd", restart, "--check", f"{b.name}={b.url}",
                                    f"{a.name}={a.url}"], capture_output=True, text=True,
                            timeout=60)
        assert rr.returncode == 1 and f"not ready: {b.name}" in rr.stdout, rr
        b.start()
        rr = subprocess.run(base + ["--restart-cmd", "exit 3", f"{a.name}={a.url}",
                                    f"{b.name}={b.url}"], capture_output=True, text=True,
                            timeout=60)
        assert rr.returncode == 1 and "exited 3" in rr.stdout and "1 not restarted" in rr.stdout
        old_a, old_b = a.proc, b.proc
        rr = subprocess.run(base + ["--restart-cmd", restart, f"{a.name}={a.url}",
                                    f"{b.name}={b.url}"], capture_output=True, text=True,
                            timeout=60)
        assert rr.returncode == 0, rr
        assert "2 daemon(s) restarted" in rr.stdout, rr.stdout
        assert old_a.wait(timeout=5) == 0 and old_b.wait(timeout=5) == 0
        for x, old in ((a, old_a), (b, old_b)):
            assert x.pid() != old.pid and x.ready()
    finally:
        fleet.stop_all(daemons)
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("balancer", ["haproxy", "nginx"])
def test_balancer_refuses_bodies_over_the_daemons_limits(balancer):
    """A Content-Length above the daemons' limit for the endpoint (32 MiB
    single-image, 256 MiB batch) is refused 413 by the balancer itself,
    before any body byte is sent; a body under it goes through."""
    need(balancer)
    import daemon_util as du
    d = tempfile.mkdtemp(prefix="lim", dir="/tmp")
    daemons = fleet.make_fleet(d, 1, drain_delay_s=0)
    bal = None
    try:
        bal = (fleet.HAProxy if balancer == "haproxy" else fleet.Nginx)(d, daemons)
        bal.start()
        for path, n, status in (("/v1/image", 32 << 20, None), ("/v1/image", (32 << 20) + 1, 413),
                                ("/v1/batch", (256 << 20) + 1, 413)):
            s = socket.create_connection(("127.0.0.1", bal.port), timeout=10)
            try:
                s.sendall(f"POST {path}?w=8&h=8 HTTP/1.1\r\nHost: x\r\nContent-Length: {n}"
                          "\r\n\r\n".encode())
                if status is None:
                    # Under the limit the balancer waits for the body: no early answer.
                    s.settimeout(1.0)
                    with pytest.raises(socket.timeout):
                        s.recv(1)
                    continue
                r = du.read_raw_response(s)
                assert r is not None and r[0] == status, (path, n, r)
            finally:
                s.close()
        c = http.client.HTTPConnection("127.0.0.1", bal.port, timeout=10)
        c.request("POST", "/v1/image?w=8&h=8", body=du.to_png(du.gradient(16, 16, 1)))
        assert c.getresponse().status == 200
        c.close()
    finally:
        if bal:
            bal.stop()
        fleet.stop_all(daemons)
        shutil.rmtree(d, ignore_errors=True)
