"""The packaged dvppd under a real systemd: Debian 12 booted in systemd-nspawn.

One container per module (tests/pkg/machine.py) on a throw-away view of the cached
Debian 12 root (tests/pkg/rootfs.py: mmdebstrap minbase + systemd + the .debs'
dependencies). All the built .debs are installed inside with `dpkg -i`, then, in order:

- install enables and starts dvppd.socket only; the first connection starts dvppd.service,
  on the HTTP port and (after `systemctl stop dvppd.service`) on the Unix socket
  /run/dvppd/dvppd.sock (dvppctl as a user of the group dvpp; a user outside it is kept
  out by the file modes); the answers are checked against numpy (lossless PNG), the host's
  build of dvppd (same request) and in-process dvppctl inside the machine;
- `systemctl reload dvppd` applies a changed limits.max_side while HTTP and Unix socket
  clients keep sending: no failed request, and the new limit gives 422 ELIMIT;
- `systemctl stop dvppd.service` with requests in flight (DVPPD_FAULTS=stall_ms via a
  drop-in): every one answered 200; a connection made during the drain is served by the
  daemon the socket starts next;
- the watchdog (WatchdogSec=3s drop-in) kills and restarts a daemon whose workers stall;
  the restarted one answers;
- the live unit's sandbox: `systemd-analyze security` <= 2.0, and the daemon process
  really runs unprivileged, seccomp-filtered, in its own network namespace;
- the daemon's journal lines carry priorities (info at start, err for a refused reload);
- last, `dpkg -r` stops the socket and the running daemon, `dpkg -P` forgets them.

The container shares the host's network namespace, so dvppd.socket's HTTP listener is
moved to a free port by a drop-in written before the install (so the packaged default,
127.0.0.1:8080, is never bound on the host).
"""
import functools
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_util as du  # noqa: E402  (tests/e2e, on the path through conftest.py)
import machine as nspawn  # noqa: E402
import rootfs  # noqa: E402
from daemon_util import free_port, gradient  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SOCK = "/run/dvppd/dvppd.sock"
CONF = "/etc/dvppd/dvppd.conf"
DEB_DIR = "/var/cache/dvpp-test/debs"
SOCKET_DROPIN = "/etc/systemd/system/dvppd.socket.d/50-test-port.conf"
STALL_DROPIN = "/etc/systemd/system/dvppd.service.d/50-test-stall.conf"
WATCHDOG_DROPIN = "/etc/systemd/system/dvppd.service.d/50-test-watchdog.conf"
SPEC_SMALL = {"ops": [{"resize": {"w": 16, "h": 16}}],
              "normalize": {"dtype": "uint8", "layout": "nhwc"}}


# --------------------------------------------------------------------------
# Images and HTTP (host side)


def encode(img, fmt, **kw):
    return du.encode_image(Image.fromarray(img), fmt, **kw)


# The e2e suite's helpers, polling every 0.1 s (each poll here may be an
# HTTP request into the machine).
wait_for = functools.partial(du.wait_for, timeout=20, every=0.1)
npy = du.npy_load
Answer = du.Resp


def request(port, method, path, body=None, timeout=30):
    """One HTTP request on a new connection to 127.0.0.1:@port."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body)
        r = c.getresponse()
        return du.resp_from(r)
    finally:
        c.close()


def metric(port, name):
    """Sum of the /metrics samples whose name (with labels) starts with @name."""
    text = request(port, "GET", "/metrics").body.decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith(name))


# --------------------------------------------------------------------------
# The machine


def install_debs(vm, debs):
    """Copy every built .deb into the machine and dpkg -i them all at once."""
    for p in debs.values():
        dst = vm.path(DEB_DIR) / Path(p).name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst)
    t0 = time.monotonic()
    r = vm.sh(f"dpkg -i {DEB_DIR}/*.deb", timeout=300)
    return r.stdout + r.stderr, time.monotonic() - t0


@pytest.fixture(scope="module")
def vm(debs, tmp_path_factory, pkg_report):
    """The booted machine with the .debs installed, a user 'tester' in the group
    dvpp and a user 'outsider' not in it; .port is dvppd.socket's HTTP port."""
    t0 = time.monotonic()
    base = rootfs.base_root(rootfs.deb_dependencies(debs.values()))
    t_root = time.monotonic() - t0
    tmp = tmp_path_factory.mktemp("nspawn")
    with rootfs.scratch_root(base, tmp / "overlay") as root:
        with nspawn.Machine(root, tmp) as m:
            m.port = free_port()
            m.report = lambda line: pkg_report(f"systemd (nspawn): {line}")
            m.write(SOCKET_DROPIN, "[Socket]\n# an empty ListenStream= resets every listener\n"
                    f"ListenStream=\nListenStream=127.0.0.1:{m.port}\n"
                    f"ListenSequentialPacket={SOCK}\n")
            m.install_log, t_install = install_debs(m, debs)
            m.run(["useradd", "--create-home", "--groups", "dvpp", "tester"])
            m.run(["useradd", "--create-home", "outsider"])
            systemd = m.run(["systemctl", "--version"]).stdout.split("\n")[0]
            m.report(f"{systemd} booted in {m.boot_seconds:.1f} s on root {base.name} "
                     f"(mmdebstrap {rootfs.SUITE} {rootfs.VARIANT}, {t_root:.1f} s to get), "
                     f"dpkg -i of {len(debs)} packages {t_install:.1f} s")
            try:
                yield m
            finally:
                journal = m.run(["journalctl", "-b", "--no-pager", "-o", "short-monotonic"],
                                check=False).stdout
                (tmp / "journal.txt").write_text(journal)
                m.report(f"the machine's journal: {tmp / 'journal.txt'}")


def active(vm, unit):
    return vm.show(unit, "ActiveState")["ActiveState"]


def main_pid(vm):
    return int(vm.show("dvppd.service", "MainPID")["MainPID"])


def ensure_running(vm):
    """dvppd.service running and ready (a request through the socket starts it).
    A dvppd.socket an earlier test left
    failed is started again first, so that each test checks its own claim
    (the tests that stop the daemon assert that the socket survives)."""
    if active(vm, "dvppd.socket") != "active":
        vm.systemctl("reset-failed", "dvppd.socket", "dvppd.service", check=False)
        vm.systemctl("start", "dvppd.socket")
    assert request(vm.port, "GET", "/healthz").status == 200
    wait_for(lambda: request(vm.port, "GET", "/readyz").status == 200, "/readyz 200")
    wait_for(lambda: active(vm, "dvppd.service") == "active", "dvppd.service active")
    return main_pid(vm)


def dvppd_lines(entries, pid=None):
    """The journal entries written by dvppd itself (not by systemd about it)."""
    return [e for e in entries if e.get("SYSLOG_IDENTIFIER") == "dvppd" and
            (pid is None or e.get("_PID") == str(pid))]


def messages(entries):
    return [e.get("MESSAGE", "") for e in entries if isinstance(e.get("MESSAGE"), str)]


def edit_conf(vm, old, new):
    """Replace @old by @new (exactly once) in the machine's dvppd.conf; returns
    the previous text, to put back with restore_conf."""
    path = vm.path(CONF)
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not once in {CONF}"
    path.write_text(text.replace(old, new))
    return text


def reload_and_wait(vm, result):
    """systemctl reload dvppd, then wait for the daemon to count it as @result."""
    name = f'dvppd_reloads_total{{result="{result}"}}'
    before = metric(vm.port, name)
    vm.systemctl("reload", "dvppd.service")
    wait_for(lambda: metric(vm.port, name) >= before + 1, f"reload counted as {result}")


def remove_dropin(vm, path):
    vm.path(path).unlink(missing_ok=True)
    vm.systemctl("daemon-reload")


# --------------------------------------------------------------------------
# 1. Install, socket activation on both sockets


def test_install_enables_and_starts_only_the_socket(vm, debs):
    status = vm.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n",
                     *debs]).stdout.split("\n")
    assert sorted(line.strip() for line in status if line) == \
        sorted(f"{p} ii" for p in debs), vm.install_log
    assert vm.systemctl("is-enabled", "dvppd.socket").stdout.strip() == "enabled"
    assert active(vm, "dvppd.socket") == "active"
    svc = vm.show("dvppd.service", "ActiveState", "MainPID", "UnitFileState")
    assert svc["ActiveState"] == "inactive" and svc["MainPID"] == "0", svc
    listen = vm.show("dvppd.socket", "Listen")["Listen"]
    assert f"127.0.0.1:{vm.port} (Stream)" in listen and f"{SOCK} (SequentialPacket)" in listen
    # The packaged unit still says 8080; only the test's drop-in moved it.
    assert "ListenStream=127.0.0.1:8080" in vm.systemctl("cat", "dvppd.socket").stdout
    # sysusers and tmpfiles ran: the user, the group, the modes of the socket.
    modes = vm.run(["stat", "-c", "%a %U %G", "/run/dvppd", SOCK]).stdout.split("\n")
    assert modes[:2] == ["750 dvppd dvpp", "660 dvppd dvpp"], modes
    assert vm.run(["test", "-f", CONF], check=False).returncode == 0
    assert vm.run(["id", "-nG", "tester"]).stdout.split() == ["tester", "dvpp"]


def test_first_http_connection_starts_the_daemon(vm):
    assert active(vm, "dvppd.service") == "inactive"
    cursor = vm.cursor()
    # The first connection is a real request: a lossless PNG, decoded to
    # exactly its pixels by the daemon it starts.
    img = gradient(97, 61, 1)
    t0 = time.monotonic()
    r = request(vm.port, "POST", "/v1/decode?format=rgb", encode(img, "PNG"))
    took = time.monotonic() - t0
    assert r.status == 200, r
    assert np.array_equal(npy(r.body), img)
    assert active(vm, "dvppd.service") == "active"
    pid = main_pid(vm)
    assert pid > 0
    lines = messages(dvppd_lines(vm.journal("dvppd.service", after=cursor), pid))
    assert "systemd passed the HTTP socket and the Unix socket" in lines, lines
    assert "ready" in lines, lines
    assert request(vm.port, "GET", "/readyz").status == 200
    vm.report(f"first HTTP request answered {took:.2f} s after the connect")


def test_a_health_check_that_activates_the_daemon_finds_it_ready(vm):
    """A balancer's health check may be the very connection that starts the
    daemon: /readyz on that connection says 200 (HTTP is started last, ready
    from its first connection; it said 503 while the flag was set only after
    the start, under systemd's slower journal logging). Three times over."""
    statuses = []
    for _ in range(3):
        vm.systemctl("stop", "dvppd.service")
        assert active(vm, "dvppd.service") == "inactive"
        r = request(vm.port, "GET", "/readyz")
        statuses.append((r.status, r.body))
        assert active(vm, "dvppd.service") == "active"
    assert statuses == [(200, statuses[0][1])] * 3 and b"true" in statuses[0][1], statuses


@pytest.fixture(scope="module")
def host_dvppd(tmp_path_factory):
    """The host's build of dvppd ($DVPP_BUILD, default build/) on a free port,
    HTTP only: the reference for the packaged daemon's answers."""
    exe = REPO / os.environ.get("DVPP_BUILD", "build") / "dvppd"
    if not os.access(exe, os.X_OK):
        pytest.skip(f"no host build at {exe} to compare with (make all)")
    tmp = tmp_path_factory.mktemp("host-dvppd")
    port = free_port()
    cfg = tmp / "dvppd.conf"
    cfg.write_text(json.dumps({"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": ""},
                               "log": {"level": "warn"}}))
    with open(tmp / "log", "w") as log:
        proc = subprocess.Popen([str(exe), "--config", str(cfg)], stdout=log, stderr=log,
                                env={k: v for k, v in os.environ.items()
                                     if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID")})

    def ready():
        if proc.poll() is not None:
            pytest.fail(f"host dvppd exited: {(tmp / 'log').read_text()}")
        try:
            return request(port, "GET", "/readyz", timeout=2).status == 200
        except OSError:
            return False
    try:
        wait_for(ready, "host dvppd ready")
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


PREPROCESS = "/v1/preprocess?w=64&h=48&interp=bicubic&mean=0.485,0.456,0.406&std=0.229,0.224,0.225"


def test_http_answer_equals_the_host_build(vm, host_dvppd):
    ensure_running(vm)
    jpg = encode(gradient(320, 240, 2), "JPEG", quality=90)
    packaged = request(vm.port, "POST", PREPROCESS, jpg)
    reference = request(host_dvppd, "POST", PREPROCESS, jpg)
    assert packaged.status == 200 and reference.status == 200, (packaged, reference)
    a, b = npy(packaged.body), npy(reference.body)
    assert a.shape == (1, 3, 48, 64) and a.dtype == np.float32
    assert np.array_equal(a, b), float(np.abs(a - b).max())


def test_first_unix_socket_connection_starts_the_daemon(vm):
    cursor = vm.cursor()
    vm.systemctl("stop", "dvppd.service")
    assert active(vm, "dvppd.service") == "inactive"
    # The listeners are systemd's: stopping the daemon must leave them alone.
    assert active(vm, "dvppd.socket") == "active", \
        messages(vm.journal("dvppd.socket", after=cursor))
    jpg = encode(gradient(320, 240, 3), "JPEG", quality=90)
    vm.write("/home/tester/in.jpg", jpg)
    vm.run(["chown", "tester:tester", "/home/tester/in.jpg"])
    flags = ["preprocess", "/home/tester/in.jpg", "--size", "64x48", "--interp", "bicubic"]
    vm.run(["dvppctl", "--socket", SOCK, *flags, "-o", "/home/tester/sock.npy"], user="tester")
    assert active(vm, "dvppd.service") == "active"
    # The same job in-process inside the machine, and over HTTP.
    vm.run(["dvppctl", *flags, "-o", "/home/tester/local.npy"], user="tester")
    via_sock = np.load(vm.path("/home/tester/sock.npy"))
    local = np.load(vm.path("/home/tester/local.npy"))
    http_ = request(vm.port, "POST", "/v1/preprocess?w=64&h=48&interp=bicubic", jpg)
    assert via_sock.shape == (1, 3, 48, 64)
    assert np.array_equal(via_sock, local)
    assert np.array_equal(via_sock, npy(http_.body))
    # A user outside the group dvpp does not get in: /run/dvppd is 0750 dvppd:dvpp.
    r = vm.run(["dvppctl", "--socket", SOCK, "version"], user="outsider", check=False)
    assert r.returncode != 0 and "ermission denied" in r.stdout + r.stderr, r


# --------------------------------------------------------------------------
# 2. Reload under load

SOCK_LOAD = r"""
import json, os, sys, time
import dvpp
spec = json.loads(sys.argv[1]); data = open(sys.argv[2], "rb").read(); stop = sys.argv[3]
ok, bad = 0, []
with dvpp.Client("/run/dvppd/dvppd.sock", timeout=30) as c:
    print("connected", flush=True)
    while not os.path.exists(stop):
        try:
            r = c.submit(spec, data)
            if len(r.data) == 16 * 16 * 3:
                ok += 1
            else:
                bad.append("short")
        except dvpp.DvppError as e:
            bad.append(repr(e))
print(json.dumps({"ok": ok, "bad": bad[:10], "nbad": len(bad)}), flush=True)
"""


class HttpLoad:
    """Host threads posting small preprocess requests in a loop on keep-alive
    connections until stopped; every status recorded."""

    def __init__(self, port, body, threads=2):
        self.port, self.body = port, body
        self.stop = threading.Event()
        self.results = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.loop, daemon=True) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def loop(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.stop.is_set():
            try:
                c.request("POST", "/v1/preprocess?w=16&h=16&dtype=uint8&layout=nhwc",
                          body=self.body)
                r = c.getresponse()
                body = r.read()
                what = r.status if r.status != 200 or len(body) > 16 * 16 * 3 else "short"
            except (OSError, http.client.HTTPException) as e:
                what = repr(e)
                c.close()
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            with self.lock:
                self.results.append(what)
        c.close()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        return self.results


def test_reload_applies_a_changed_limit_under_load(vm):
    pid = ensure_running(vm)
    small = encode(gradient(64, 48, 4), "JPEG", quality=90)
    big = encode(gradient(320, 240, 5), "JPEG", quality=90)
    assert request(vm.port, "POST", "/v1/preprocess?w=16&h=16", big).status == 200
    vm.write("/home/tester/small.jpg", small)
    vm.write("/home/tester/load.py", SOCK_LOAD)
    stop = "/home/tester/stop-load"
    vm.path(stop).unlink(missing_ok=True)
    sock_load = vm.popen(["python3", "/home/tester/load.py", json.dumps(SPEC_SMALL),
                          "/home/tester/small.jpg", stop], user="tester",
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    load = HttpLoad(vm.port, small)
    old = None
    try:
        assert sock_load.stdout.readline().strip() == "connected", sock_load.stderr.read()
        time.sleep(0.5)
        old = edit_conf(vm, '"max_side": 16384', '"max_side": 200')
        vm.run(["dvppd", "--check-config", "--config", CONF])
        reload_and_wait(vm, "ok")
        info = request(vm.port, "GET", "/v1/info").json()
        assert info["limits"]["max_side"] == 200, info["limits"]
        r = request(vm.port, "POST", "/v1/preprocess?w=16&h=16", big)
        assert r.status == 422, r
        assert r.json()["error"]["code"] == "ELIMIT" and r.json()["error"]["field"] == "max_side"
        n = len(load.results)
        wait_for(lambda: len(load.results) >= n + 20, "HTTP answers after the reload")
    finally:
        results = load.finish()
        vm.path(stop).touch()
        try:
            out, err = sock_load.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            sock_load.kill()
            out, err = sock_load.communicate()
        if old is not None:
            vm.path(CONF).write_text(old)
            reload_and_wait(vm, "ok")
    assert main_pid(vm) == pid, "the reload restarted the daemon"
    bad = [x for x in results if x != 200]
    assert not bad and len(results) > 40, (len(results), bad[:5])
    sock = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"err": err}
    assert sock.get("nbad") == 0 and sock.get("ok", 0) > 20, (sock, err)
    vm.report(f"reload under load: {len(results)} HTTP and {sock['ok']} socket answers")


# --------------------------------------------------------------------------
# 3. Stop drains


def test_stop_answers_every_request_in_flight(vm):
    n, stall_ms = 4, 1000
    vm.write(STALL_DROPIN, f"[Service]\nEnvironment=DVPPD_FAULTS=stall_ms={stall_ms}\n")
    try:
        vm.systemctl("daemon-reload")
        vm.systemctl("restart", "dvppd.service")
        pid = ensure_running(vm)
        jpg = encode(gradient(320, 240, 6), "JPEG", quality=90)
        base = metric(vm.port, 'dvppd_http_requests_total{route="preprocess"') + \
            metric(vm.port, "dvppd_http_suspended")
        answers = [None] * (n + 1)

        def send(i):
            try:
                answers[i] = request(vm.port, "POST", "/v1/preprocess?w=16&h=16", jpg, timeout=60)
            except (OSError, http.client.HTTPException) as e:
                answers[i] = e
        threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        wait_for(lambda: metric(vm.port, 'dvppd_http_requests_total{route="preprocess"') +
                 metric(vm.port, "dvppd_http_suspended") >= base + n,
                 f"the {n} requests received", every=0.05)
        cursor = vm.cursor()
        t0 = time.monotonic()
        stopper = threading.Thread(target=vm.systemctl, args=("stop", "dvppd.service"))
        stopper.start()
        wait_for(lambda: active(vm, "dvppd.service") == "deactivating", "deactivating",
                 every=0.02)
        time.sleep(0.3)   # dvppd has closed its copy of the listener by now
        # A connection during the drain waits in dvppd.socket's queue and is
        # served by the daemon the socket starts next.
        late = threading.Thread(target=send, args=(n,))
        late.start()
        stopper.join(timeout=60)
        took = time.monotonic() - t0
        for t in threads + [late]:
            t.join(timeout=60)
    finally:
        remove_dropin(vm, STALL_DROPIN)
    assert not stopper.is_alive()
    assert active(vm, "dvppd.socket") == "active", \
        [m for m in messages(vm.journal("dvppd.socket", after=cursor))]
    for a in answers[:n]:
        assert isinstance(a, Answer) and a.status == 200, a
        assert npy(a.body).shape == (1, 3, 16, 16)
    assert 0.5 < took < 30, took
    lines = messages(dvppd_lines(vm.journal("dvppd.service", after=cursor), pid))
    assert "received Terminated, stopping" in lines and "stopped" in lines, lines
    assert not any("canceling their jobs" in m for m in lines), lines
    assert isinstance(answers[n], Answer) and answers[n].status == 200, answers[n]
    assert main_pid(vm) not in (0, pid)
    vm.report(f"stop with {n} requests in flight took {took:.1f} s")


# --------------------------------------------------------------------------
# 4. Watchdog


def test_watchdog_restarts_a_stalled_daemon(vm):
    vm.write(WATCHDOG_DROPIN, "[Service]\nWatchdogSec=3s\n")
    # ignore_cancel_ms, not stall_ms: a stall_ms task polls its cancellation
    # every millisecond, which is the proof of life the daemon's watchdog
    # rule counts (slow, not wedged); an ignore_cancel_ms task checks in with
    # nothing, as a worker stuck in a codec would.
    vm.write(STALL_DROPIN, "[Service]\nEnvironment=DVPPD_FAULTS=ignore_cancel_ms=60000\n")
    try:
        vm.systemctl("daemon-reload")
        vm.systemctl("restart", "dvppd.service")
        pid = ensure_running(vm)
        restarts = int(vm.show("dvppd.service", "NRestarts")["NRestarts"])
        # The restart after the watchdog must come up without the fault: the
        # running daemon keeps the environment it was started with.
        remove_dropin(vm, STALL_DROPIN)
        cursor = vm.cursor()
        wedged = {}

        def wedge():
            try:
                wedged["r"] = request(vm.port, "POST", "/v1/preprocess?w=16&h=16",
                                      encode(gradient(64, 48, 7), "JPEG"), timeout=60)
            except (OSError, http.client.HTTPException) as e:
                wedged["r"] = e
        t = threading.Thread(target=wedge)
        t0 = time.monotonic()
        t.start()
        wait_for(lambda: int(vm.show("dvppd.service", "NRestarts")["NRestarts"]) > restarts,
                 "a restart by the watchdog", timeout=40, every=0.2)
        took = time.monotonic() - t0
        new = ensure_running(vm)
        t.join(timeout=60)
    finally:
        remove_dropin(vm, STALL_DROPIN)
        remove_dropin(vm, WATCHDOG_DROPIN)
    assert new != pid
    entries = vm.journal("dvppd.service", after=cursor)
    # systemd 252's "Watchdog timeout" line carries no UNIT= field, so -u
    # misses it: PID 1's own lines are read from the whole journal.
    text = messages(e for e in vm.journal(after=cursor) if e.get("_PID") == "1")
    assert any(m.startswith("dvppd.service: Watchdog timeout (limit 3s)") for m in text), \
        "\n".join(text)
    assert "dvppd.service: Failed with result 'watchdog'." in text, "\n".join(text)
    new_lines = messages(dvppd_lines(entries, new))
    assert "ready" in new_lines and not any("DVPPD_FAULTS" in m for m in new_lines), new_lines
    assert 3 <= took < 40, took
    assert not (isinstance(wedged.get("r"), Answer) and wedged["r"].status == 200), wedged
    r = request(vm.port, "POST", "/v1/preprocess?w=16&h=16", encode(gradient(64, 48, 8), "JPEG"))
    assert r.status == 200 and npy(r.body).shape == (1, 3, 16, 16), r
    assert main_pid(vm) == new
    vm.systemctl("restart", "dvppd.service")   # back to the packaged WatchdogSec
    vm.report(f"watchdog (WatchdogSec=3s) restarted the wedged daemon {took:.1f} s after "
              f"the request that wedged it")


# --------------------------------------------------------------------------
# 5. Sandbox of the live unit


def test_security_exposure_of_the_live_unit(vm):
    ensure_running(vm)
    out = vm.run(["systemd-analyze", "security", "--no-pager", "dvppd.service"]).stdout
    m = re.search(r"Overall exposure level for dvppd\.service: ([0-9.]+)", out)
    assert m, out[-2000:]
    vm.report(f"systemd-analyze security dvppd.service: {m.group(1)}")
    assert float(m.group(1)) <= 2.0, out


def test_the_sandbox_is_in_force_on_the_daemon(vm):
    """The unit's sandbox really applies inside nspawn (no 226/NAMESPACE, no
    option silently dropped for the process itself)."""
    pid = ensure_running(vm)
    status = dict(line.split(":", 1) for line in
                  vm.run(["cat", f"/proc/{pid}/status"]).stdout.splitlines() if ":" in line)
    user = vm.run(["id", "-u", "dvppd"]).stdout.strip()
    assert status["Uid"].split()[:2] == [user, user]
    assert status["CapEff"].strip() == status["CapBnd"].strip() == "0000000000000000"
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"
    ns = {n: vm.run(["readlink", f"/proc/1/ns/{n}", f"/proc/{pid}/ns/{n}"]).stdout.split()
          for n in ("net", "mnt", "ipc", "uts")}
    assert all(a != b for a, b in ns.values()), ns
    mounts = vm.run(["cat", f"/proc/{pid}/mounts"]).stdout.splitlines()
    root = [m.split() for m in mounts if m.split()[1] == "/"]
    assert root and "ro" in root[-1][3].split(","), root


# --------------------------------------------------------------------------
# 6. Journal priorities


def test_journal_lines_carry_priorities(vm):
    pid = ensure_running(vm)
    cursor = vm.cursor()
    old = edit_conf(vm, '"max_side": 16384', '"max_side": "big"')
    try:
        r = vm.run(["dvppd", "--check-config", "--config", CONF], check=False)
        assert r.returncode != 0, r
        reload_and_wait(vm, "failed")
    finally:
        vm.path(CONF).write_text(old)
    assert main_pid(vm) == pid and active(vm, "dvppd.service") == "active"
    assert request(vm.port, "POST", "/v1/preprocess?w=16&h=16",
                   encode(gradient(64, 48, 9), "JPEG")).status == 200
    refused = [e for e in dvppd_lines(vm.journal("dvppd.service", after=cursor), pid)
               if "reload failed" in str(e.get("MESSAGE"))]
    assert refused and refused[0]["PRIORITY"] == "3", refused
    assert "max_side" in refused[0]["MESSAGE"], refused
    everything = dvppd_lines(vm.journal("dvppd.service"))
    by_msg = {e["MESSAGE"]: e["PRIORITY"] for e in everything if isinstance(e.get("MESSAGE"), str)}
    assert by_msg.get("ready") == "6", by_msg
    prios = {e["PRIORITY"] for e in everything}
    assert {"3", "6"} <= prios, prios   # err (the refused reload), info
    assert not any(str(e.get("MESSAGE", "")).startswith("<") for e in everything)


# --------------------------------------------------------------------------
# 7. Remove and purge on the running system (last: it takes the packages away)


def test_remove_stops_the_socket_and_the_daemon_purge_forgets_them(vm, debs, pkg_report):
    """The scripts' online branches, which a chroot never runs: `dpkg -r` stops
    dvppd.socket (prerm), which stops the running daemon after its drain
    (Requires=dvppd.socket), and RemoveOnStop= takes the socket file; nothing
    listens any more. `dpkg -P` then drops the conffile and the enablement,
    and systemd no longer knows the units."""
    pid = ensure_running(vm)
    assert vm.run(["test", "-d", f"/proc/{pid}"], check=False).returncode == 0
    order = ["python3-dvpp", "libdvppclient-dev", "libdvppclient1", "libdvpp-dev",
             "libdvpp-acl-dev", "dvppd-deploy", "dvppd"]
    assert sorted(order) == sorted(debs)
    t0 = time.monotonic()
    vm.run(["dpkg", "-r", *order], timeout=120)
    took = time.monotonic() - t0
    assert active(vm, "dvppd.socket") == "inactive"
    assert active(vm, "dvppd.service") == "inactive"
    assert vm.run(["test", "-d", f"/proc/{pid}"], check=False).returncode != 0, \
        "the daemon outlived the removal"
    assert vm.run(["pgrep", "-x", "dvppd"], check=False).returncode != 0
    assert vm.run(["test", "-e", SOCK], check=False).returncode != 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", vm.port), timeout=2).close()
    # Configuration is kept by remove: the conffile and the socket's enablement.
    assert vm.run(["test", "-f", CONF], check=False).returncode == 0
    wants = "/etc/systemd/system/sockets.target.wants/dvppd.socket"
    assert vm.run(["test", "-L", wants], check=False).returncode == 0
    vm.run(["dpkg", "-P", *order], timeout=120)
    assert vm.run(["test", "-e", CONF], check=False).returncode != 0
    assert vm.run(["test", "-e", "/etc/dvppd"], check=False).returncode != 0
    assert vm.run(["test", "-L", wants], check=False).returncode != 0
    units = vm.systemctl("list-unit-files", "--no-legend", "dvppd.*", check=False).stdout
    assert "dvppd" not in units, units
    pkg_report(f"systemd (nspawn): dpkg -r stopped the socket and the running daemon in "
               f"{took:.1f} s; dpkg -P left no conffile, enablement or unit")
