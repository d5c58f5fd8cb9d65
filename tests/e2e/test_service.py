"""dvppd as a systemd service, with the real daemon and no systemd running:

- socket activation through Debian's systemd-socket-activate, for the HTTP
  TCP socket and the Unix seqpacket socket together, with names
  (--fdname=unix:http) and without (each fd sorted by its kind);
- the notifications (READY, STATUS, WATCHDOG, RELOADING + MONOTONIC_USEC,
  STOPPING) received on a NOTIFY_SOCKET this test owns;
- SIGHUP with valid and invalid configurations while HTTP and socket
  clients keep sending: no request fails, the valid changes take effect
  (named AIPP config, channels, limits), an invalid file changes nothing;
- SIGTERM under load: every request already received is answered 200, a
  new request on an open connection gets 503 + Connection: close, new
  connections are refused, the daemon exits 0.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

ACTIVATE = shutil.which("systemd-socket-activate")

SPEC_SMALL = {"ops": [{"resize": {"w": 16, "h": 16}}],
              "normalize": {"dtype": "uint8", "layout": "nhwc"}}


@pytest.fixture(scope="module")
def jpg():
    return du.to_jpeg(du.gradient(320, 240, 5))


@pytest.fixture(scope="module")
def big_jpg():
    return du.to_jpeg(du.gradient(1920, 1080, 9))


def base_config(sock=None, port=0, **extra):
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock or ""},
           "device": {"channels": 2},
           "log": {"level": "info"}}
    for section, keys in extra.items():
        cfg.setdefault(section, {}).update(keys)
    return cfg


def wait_for(pred, what, timeout=20):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout} s")
        time.sleep(0.05)


def connects(s, path):
    """True once @s is connected to @path; False while nothing listens yet."""
    try:
        s.connect(path)
        return True
    except (FileNotFoundError, ConnectionRefusedError):
        return False


def metric(d, name):
    """The value of an unlabelled or labelled sample line, e.g.
    'dvppd_reloads_total{result="ok"}'."""
    text = d.get("/metrics").body.decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {name} in /metrics")


# --------------------------------------------------------------------------
# Socket activation


def activated(tmp, cfg, port, sock, names, env=None):
    """dvppd started by two chained systemd-socket-activate: the outer one
    binds the Unix seqpacket socket, the inner one the TCP port and passes
    both (fd 3: unix, fd 4: http). Neither address is in @cfg: the daemon
    must serve the passed sockets. The first connection attempt starts it."""
    cfg_path = du.write_config(tmp, "act", cfg)
    log_path = os.path.join(tmp, "act.log")
    inner = [ACTIVATE, "-l", f"127.0.0.1:{port}"]
    if names:
        inner.append("--fdname=unix:http")
    cmd = [ACTIVATE, "--seqpacket", "-l", sock, "--"] + inner + ["--", du.DVPPD, "--config",
                                                                 cfg_path]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, env=env)
    d = du.Daemon(proc, log_path, cfg_path, port, sock)
    wait_for(lambda: os.path.exists(sock) or proc.poll() is not None,
             f"systemd-socket-activate did not bind {sock}")
    return d


@pytest.mark.skipif(ACTIVATE is None, reason="systemd-socket-activate (package systemd)")
@pytest.mark.parametrize("names", [True, False], ids=["named", "by-kind"])
def test_socket_activation_both_sockets(tmp_path, jpg, names):
    sdir = du.sock_dir("dvppd-act-")
    sock = os.path.join(sdir, "d.sock")
    port = du.free_port()
    # The daemon's own addresses point elsewhere: only passed sockets work.
    cfg = base_config(sock=os.path.join(sdir, "not-this.sock"), port=du.free_port())
    d = activated(str(tmp_path), cfg, port, sock, names)
    d.sock_dir = sdir
    try:
        # The first connection (the Python client's) starts the daemon.
        with d.client() as c:
            r = c.submit(SPEC_SMALL, jpg)
            assert r.meta.dtype == "uint8" and list(r.meta.shape) == [1, 16, 16, 3]
        wait_for(d.ready, "dvppd ready on the passed HTTP socket")
        r = d.post("/v1/preprocess?w=16&h=16&dtype=uint8&layout=nhwc", jpg)
        assert r.status == 200 and r.npy().shape == (1, 16, 16, 3), r
        assert r.npy().tobytes() == c_bytes(d, jpg)
        log = d.log()
        assert "systemd passed the HTTP socket and the Unix socket" in log, log
        assert not os.path.exists(os.path.join(sdir, "not-this.sock")), log
    finally:
        du.stop_daemon(d)


def c_bytes(d, jpg):
    with d.client() as c:
        return c.submit(SPEC_SMALL, jpg).data


# argv: TCP fd, Unix fd, program...: both moved to 3 and 4, then exec.
PASS_FDS = """
import fcntl, os, sys
given = [int(a) for a in sys.argv[1:3]]
high = [fcntl.fcntl(f, fcntl.F_DUPFD, 10) for f in given]   # out of 3 and 4's way
for f in given:
    os.close(f)
for want, f in zip((3, 4), high):
    os.dup2(f, want)
    os.close(f)
for f in (3, 4):
    os.set_inheritable(f, True)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="2", LISTEN_FDNAMES="http:unix")
os.execv(sys.argv[3], sys.argv[3:])
"""


def test_stop_leaves_the_passed_listeners_to_their_owner(tmp_path, jpg):
    """Under socket activation the listeners are systemd's: the daemon gets the
    very sockets (not copies), so a shutdown() of them at the drain would end
    them for systemd too (the socket unit fails with "Got POLLHUP on a
    listening socket" and activation is over). Here the test is the socket
    unit: it holds both listeners, passes them in (LISTEN_FDS), stops the
    daemon with SIGTERM, and both must still listen: a connection made after
    the daemon is gone is queued, and the test accepts it."""
    sdir = du.sock_dir("dvppd-own-")
    path = os.path.join(sdir, "d.sock")
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(16)
        unix.bind(path)
        unix.listen(16)
        port = tcp.getsockname()[1]
        cfg = base_config(sock=os.path.join(sdir, "not-this.sock"), port=du.free_port())
        cfg_path = du.write_config(str(tmp_path), "own", cfg)
        log_path = tmp_path / "own.log"
        # The listeners as fds 3 and 4, LISTEN_PID the daemon's own pid (the
        # wrapper's, kept by exec), as systemd passes them.
        with open(log_path, "w") as log:
            proc = subprocess.Popen([sys.executable, "-c", PASS_FDS, str(tcp.fileno()),
                                     str(unix.fileno()), du.DVPPD, "--config", cfg_path],
                                    stdout=log, stderr=log,
                                    pass_fds=(tcp.fileno(), unix.fileno()))
        d = du.Daemon(proc, str(log_path), cfg_path, port, path)
        try:
            wait_for(d.ready, "dvppd ready on the passed sockets")
            r = d.post("/v1/preprocess?w=16&h=16&dtype=uint8&layout=nhwc", jpg)
            assert r.status == 200 and r.npy().shape == (1, 16, 16, 3), r
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, d.log()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # Both listeners are intact: a new client is queued, and their owner
        # accepts it (a shut-down listener refuses the connect, or fails accept).
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            tcp.settimeout(5)
            conn, _ = tcp.accept()
            conn.close()
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as c:
            c.settimeout(5)
            c.connect(path)
            unix.settimeout(5)
            conn, _ = unix.accept()
            conn.close()
        assert "systemd passed the HTTP socket and the Unix socket" in d.log(), d.log()
    finally:
        tcp.close()
        unix.close()
        shutil.rmtree(sdir, ignore_errors=True)


@pytest.mark.skipif(ACTIVATE is None, reason="systemd-socket-activate (package systemd)")
def test_socket_activation_refuses_a_mislabelled_socket(tmp_path):
    """An fd whose name says http but which is the Unix socket: a clear
    start-up error, exit status 1."""
    sdir = du.sock_dir("dvppd-act-")
    sock = os.path.join(sdir, "d.sock")
    cfg_path = du.write_config(str(tmp_path), "bad", base_config())
    log_path = os.path.join(str(tmp_path), "bad.log")
    try:
        with open(log_path, "w") as log:
            proc = subprocess.Popen([ACTIVATE, "--seqpacket", "-l", sock, "--fdname=http", "--",
                                     du.DVPPD, "--config", cfg_path], stdout=log, stderr=log)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The file appears at bind(), before listen(): a connect in between
        # is refused, so retry until systemd-socket-activate listens.
        wait_for(lambda: connects(s, sock), "systemd-socket-activate listening")
        assert proc.wait(timeout=20) == 1
        s.close()
        text = du.log_tail(log_path)
        assert "named 'http' but is not a listening TCP socket" in text, text
    finally:
        shutil.rmtree(sdir, ignore_errors=True)


# --------------------------------------------------------------------------
# Notifications


class Notify:
    """A NOTIFY_SOCKET owned by the test: every datagram dvppd sends."""

    def __init__(self, tmp):
        self.path = os.path.join(du.sock_dir("dvppd-ntf-"), "notify")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(self.path)
        self.got = []

    def wait(self, pred, what, timeout=10):
        """The first message (a dict of its assignments) satisfying @pred."""
        deadline = time.monotonic() + timeout
        while True:
            for m in self.got:
                if pred(m):
                    self.got.remove(m)
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"no {what} notification within {timeout} s; got {self.got}")
            self.s.settimeout(left)
            try:
                data = self.s.recv(4096)
            except socket.timeout:
                continue
            self.got.append(dict(line.split("=", 1) for line in data.decode().splitlines()
                                 if "=" in line))

    def close(self):
        self.s.close()
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)


def start_notified(tmp, cfg, name, notify, watchdog_usec=None):
    env = dict(os.environ, NOTIFY_SOCKET=notify.path)
    if watchdog_usec:
        env["WATCHDOG_USEC"] = str(watchdog_usec)
    cfg_path = du.write_config(tmp, name, cfg)
    log_path = os.path.join(tmp, f"{name}.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([du.DVPPD, "--config", cfg_path], stdout=log, stderr=log,
                                env=env)
    return du.Daemon(proc, log_path, cfg_path, cfg_port(cfg))


def cfg_port(cfg):
    return int(cfg["http"]["listen"].rsplit(":", 1)[1])


def test_notifications_ready_watchdog_reload_stopping(tmp_path):
    notify = Notify(str(tmp_path))
    port = du.free_port()
    cfg = base_config(port=port)
    d = start_notified(str(tmp_path), cfg, "ntf", notify, watchdog_usec=2_000_000)
    try:
        ready = notify.wait(lambda m: m.get("READY") == "1", "READY=1")
        assert ready.get("MAINPID") == str(d.pid)
        assert "STATUS" in ready
        # Ready means serving: the HTTP socket answers at once.
        assert d.get("/readyz").status == 200
        # Pings at a quarter of WATCHDOG_USEC while idle.
        t0 = time.monotonic()
        for _ in range(3):
            notify.wait(lambda m: m.get("WATCHDOG") == "1", "WATCHDOG=1", timeout=3)
        assert time.monotonic() - t0 < 3.0
        notify.wait(lambda m: m.get("STATUS", "").startswith("serving:"), "STATUS=serving",
                    timeout=8)
        # Reload: RELOADING=1 with the monotonic clock, then READY=1.
        before = time.clock_gettime(time.CLOCK_MONOTONIC)
        d.proc.send_signal(signal.SIGHUP)
        rel = notify.wait(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
        usec = int(rel["MONOTONIC_USEC"])
        assert before * 1e6 <= usec <= time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
        again = notify.wait(lambda m: m.get("READY") == "1", "READY=1 after the reload")
        assert again.get("STATUS") == "configuration reloaded"
        # A failed reload also ends in READY=1, with the reason in STATUS.
        with open(d.cfg_path, "w") as f:
            f.write('{"device": {"channelz": 1}}')
        d.proc.send_signal(signal.SIGHUP)
        notify.wait(lambda m: m.get("RELOADING") == "1", "RELOADING=1 (invalid file)")
        bad = notify.wait(lambda m: m.get("READY") == "1", "READY=1 after a failed reload")
        assert "device.channelz: unknown key" in bad.get("STATUS", ""), bad
        d.proc.send_signal(signal.SIGTERM)
        notify.wait(lambda m: m.get("STOPPING") == "1", "STOPPING=1")
        assert d.proc.wait(timeout=25) == 0, d.log()
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()
        notify.close()


def test_no_watchdog_pings_without_watchdog_usec(tmp_path):
    notify = Notify(str(tmp_path))
    cfg = base_config(port=du.free_port())
    d = start_notified(str(tmp_path), cfg, "nowd", notify)
    try:
        notify.wait(lambda m: m.get("READY") == "1", "READY=1")
        time.sleep(1.5)
        notify.s.settimeout(0.1)
        try:
            while True:
                notify.got.append(notify.s.recv(4096).decode())
        except socket.timeout:
            pass
        assert not any("WATCHDOG=1" in str(m) for m in notify.got), notify.got
    finally:
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=25) == 0
        notify.close()


# --------------------------------------------------------------------------
# Reload under load


class Load:
    """HTTP and socket clients sending small preprocess requests in a loop
    until stopped; every answer is recorded."""

    def __init__(self, d, jpg, http_threads=2, sock_threads=1, path=None):
        self.d, self.jpg = d, jpg
        self.path = path or "/v1/preprocess?w=16&h=16&dtype=uint8&layout=nhwc"
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.results = []
        self.threads = [threading.Thread(target=self.http_loop, daemon=True)
                        for _ in range(http_threads)]
        self.threads += [threading.Thread(target=self.sock_loop, daemon=True)
                         for _ in range(sock_threads)]
        for t in self.threads:
            t.start()

    def note(self, what):
        with self.lock:
            self.results.append(what)

    def http_loop(self):
        c = self.d.conn(timeout=30)
        try:
            while not self.stop.is_set():
                try:
                    c.request("POST", self.path, body=self.jpg)
                    r = du.resp_from(c.getresponse())
                    self.note(("http", r.status, r.body[:200] if r.status != 200 else b""))
                except (OSError, http.client.HTTPException) as e:
                    self.note(("http", repr(e), b""))
                    c.close()
                    c = self.d.conn(timeout=30)
        finally:
            c.close()

    def sock_loop(self):
        dvpp = du.pyclient()
        with self.d.client() as c:
            while not self.stop.is_set():
                try:
                    r = c.submit(SPEC_SMALL, self.jpg)
                    self.note(("sock", 200 if len(r.data) == 16 * 16 * 3 else "short", b""))
                except dvpp.DvppError as e:
                    self.note(("sock", repr(e), b""))

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        return self.results


def test_reload_under_load_loses_no_request(tmp_path, jpg):
    tmp = str(tmp_path)
    sdir = du.sock_dir("dvppd-rl-")
    sock = os.path.join(sdir, "d.sock")
    port = du.free_port()
    aipp_path = os.path.join(tmp, "net.cfg")
    with open(aipp_path, "w") as f:
        f.write(du.aipp_rgb(16, 16))
    cfg = base_config(sock=sock, port=port)
    d = du.start_daemon(tmp, cfg, "rl", port, sock=sock, sock_dir=sdir)
    stoppers = []
    try:
        aipp_req = "/v1/preprocess?aipp=net&w=16&h=16"
        r = d.post(aipp_req, jpg)
        assert r.status == 400 and "no server-side aipp config named 'net'" in r.body.decode()
        load = Load(d, jpg)
        stoppers.append(load.finish)
        valid = [
            base_config(sock=sock, port=port, aipp={"configs": {"net": aipp_path}},
                        device={"channels": 1}, log={"level": "warn"}),
            base_config(sock=sock, port=port, aipp={"configs": {"net": aipp_path}},
                        device={"channels": 3}, limits={"max_side": 8000}),
        ]
        invalid = ['{"device": {"channels": "two"}}', "{ not json",
                   json.dumps(base_config(sock=sock, port=port,
                                          aipp={"configs": {"x": "/nonexistent.cfg"}}))]
        ok_reloads = failed_reloads = 0
        for i in range(6):
            time.sleep(0.3)
            with open(d.cfg_path, "w") as f:
                if i % 2 == 0:
                    json.dump(valid[(i // 2) % 2], f)
                    ok_reloads += 1
                else:
                    f.write(invalid[(i // 2) % 3])
                    failed_reloads += 1
            d.proc.send_signal(signal.SIGHUP)
            wait_for(lambda: metric(d, 'dvppd_reloads_total{result="ok"}') +
                     metric(d, 'dvppd_reloads_total{result="failed"}') >= i + 1,
                     f"reload {i + 1} counted")
            # The named AIPP config from the first valid reload stays usable,
            # through the invalid ones too.
            r = d.post(aipp_req, jpg)
            assert r.status == 200 and r.npy().shape == (1, 1, 16, 16, 16), r  # NC1HWC0
        # the load goes on past the last reload: some answers after it
        n = len(load.results)
        wait_for(lambda: len(load.results) >= n + 10, "answers after the last reload")
        results = load.finish()
        bad = [x for x in results if x[1] != 200]
        assert not bad, bad[:5]
        assert len([x for x in results if x[0] == "http"]) > 20, len(results)
        assert len([x for x in results if x[0] == "sock"]) > 10, len(results)
        assert metric(d, 'dvppd_reloads_total{result="ok"}') == ok_reloads
        assert metric(d, 'dvppd_reloads_total{result="failed"}') == failed_reloads
        assert metric(d, "dvppd_config_generation") == 1 + ok_reloads
        info = d.get("/v1/info").json()
        last = valid[((2 * (ok_reloads - 1)) // 2) % 2]
        want_channels = last["device"]["channels"]
        assert all(e["channels"] == want_channels for e in info["engines"]), info["engines"]
        assert info["aipp_configs"] == ["net"]
        log = d.log()
        assert "reload failed:" in log and "keeping the running configuration" in log, log
        assert "/nonexistent.cfg" in log, log
    finally:
        for f in stoppers:
            f()
        du.stop_daemon(d)


def test_reload_restart_only_keys_are_named_and_kept(tmp_path, jpg):
    tmp = str(tmp_path)
    port = du.free_port()
    d = du.start_daemon(tmp, base_config(port=port), "ro", port)
    try:
        with open(d.cfg_path, "w") as f:
            json.dump(base_config(port=du.free_port(), http={"threads": 5},
                                  limits={"max_side": 100}), f)
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: metric(d, 'dvppd_reloads_total{result="ok"}') == 1, "reload")
        # Still on the old port (this request proves it) with the old threads;
        # the live limit applies: a 320x240 image is now over max_side 100.
        info = d.get("/v1/info").json()
        assert info["http"]["threads"] == 2 and info["limits"]["max_side"] == 100, info
        r = d.post("/v1/preprocess?w=16&h=16", jpg)
        assert r.status == 422 and r.json()["error"]["code"] == "ELIMIT", r
        assert r.json()["error"]["field"] == "max_side", r
        log = d.log()
        assert "http.listen changed; it takes effect at the next restart" in log, log
        assert "http.threads changed; it takes effect at the next restart" in log, log
    finally:
        du.stop_daemon(d)


# --------------------------------------------------------------------------
# SIGTERM under load


def test_sigterm_under_load_completes_in_flight(tmp_path, jpg, big_jpg):
    tmp = str(tmp_path)
    port = du.free_port()
    d = du.start_daemon(tmp, base_config(port=port, device={"channels": 1}), "term", port)
    heavy = "/v1/preprocess?w=1024&h=1024&interp=lanczos&parity=pil"
    n = 6
    conns, idle = [], d.conn(timeout=60)
    try:
        assert d.get("/healthz", conn=idle).status == 200  # keep-alive, now idle
        for _ in range(n):
            c = d.conn(timeout=60)
            c.request("POST", heavy, body=big_jpg)
            conns.append(c)
        # Every request has reached the daemon (n + this /metrics one).
        wait_for(lambda: metric(d, "dvppd_http_inflight") >= n + 1, "requests in flight")
        d.proc.send_signal(signal.SIGTERM)

        def listener_closed():   # closed once the HTTP front end drains
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                return False
            except OSError:
                return True
        wait_for(listener_closed, "the listener closed by SIGTERM")
        # New work on an open connection: 503 and the connection closes.
        idle.request("POST", "/v1/preprocess?w=16&h=16", body=jpg)
        r = du.resp_from(idle.getresponse())
        assert r.status == 503 and r.h("connection", "").lower() == "close", r
        # New connections are refused: the listener is closed.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).recv(1)
        statuses = []
        for c in conns:
            r = du.resp_from(c.getresponse())
            statuses.append(r.status)
            assert r.status == 200 and r.npy().shape == (1, 3, 1024, 1024), r
        assert statuses == [200] * n
        assert d.proc.wait(timeout=25) == 0, d.log()
        assert "received Terminated, stopping" in d.log()
    finally:
        for c in conns + [idle]:
            c.close()
        if d.alive():
            d.proc.kill()
            d.proc.wait()


def _received(d, route="preprocess"):
    """Requests of @route answered or waiting on their job: their bodies are
    in. (dvppd_http_inflight counts a request from its headers on: one whose
    body is still arriving when a short drain ends has its connection
    closed, RemoteDisconnected, as seen under full-suite load.)"""
    text = d.get("/metrics").body.decode()
    n = 0
    for line in text.splitlines():
        if line.startswith(f'dvppd_http_requests_total{{route="{route}"') or \
                line.startswith("dvppd_http_suspended "):
            n += float(line.split()[-1])
    return n


def _stop_with_requests_in_flight(d, n, jpg):
    """@n small requests, all received, then SIGTERM: (their statuses and
    bodies, seconds from SIGTERM to the exit)."""
    conns = []
    try:
        base = _received(d)
        for _ in range(n):
            c = d.conn(timeout=60)
            c.request("POST", "/v1/preprocess?w=16&h=16", body=jpg)
            conns.append(c)
        wait_for(lambda: _received(d) >= base + n, f"the {n} requests received")
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        answers = [du.resp_from(c.getresponse()) for c in conns]
        assert d.proc.wait(timeout=25) == 0, d.log()
        return answers, time.monotonic() - t0
    finally:
        for c in conns:
            c.close()
        if d.alive():
            d.proc.kill()
            d.proc.wait()


def test_drain_timeout_bounds_the_stop(tmp_path, jpg):
    """service.drain_timeout_s: past it, the jobs still queued or running are
    canceled and answered (503), none is dropped, and the daemon exits 0
    soon after. Every device task stalls far longer than the drain time
    (DVPPD_FAULTS=stall_ms), so the drain surely runs out."""
    tmp = str(tmp_path)
    port = du.free_port()
    stall_s = 30
    d = du.start_daemon(tmp, base_config(port=port, device={"channels": 1},
                                         service={"drain_timeout_s": 1}), "dt", port,
                        faults=f"stall_ms={stall_s * 1000}")
    answers, took = _stop_with_requests_in_flight(d, 8, jpg)
    for r in answers:
        assert r.status == 503 and r.json()["error"]["code"] == "ECANCELED", r
        assert r.h("retry-after"), r.headers
    assert 1 <= took < 1 + 3 * du.SLOW and took < stall_s, (took, d.log())
    assert "canceling their jobs" in d.log(), d.log()


def test_drain_within_its_time_answers_everything(tmp_path, jpg):
    """The same stop with work that fits the drain time: every request
    answered 200, nothing canceled, the exit before the drain's end."""
    tmp = str(tmp_path)
    port = du.free_port()
    d = du.start_daemon(tmp, base_config(port=port, device={"channels": 1},
                                         service={"drain_timeout_s": 20}), "dw", port)
    answers, took = _stop_with_requests_in_flight(d, 8, jpg)
    for r in answers:
        assert r.status == 200 and r.npy().shape == (1, 3, 16, 16), r
    assert took < 20, took
    assert "canceling their jobs" not in d.log(), d.log()


def test_drain_delay_leaves_rotation_before_the_listener_closes(tmp_path, jpg):
    """service.drain_delay_s: from SIGTERM on, /readyz answers 503 at once,
    while for the delay everything is still served, on a new connection
    and on an open keep-alive one alike, each answer with Connection:
    close; then the listener closes and the daemon exits 0. A second
    SIGTERM ends the delay early."""
    tmp = str(tmp_path)
    port = du.free_port()
    delay = 3
    d = du.start_daemon(tmp, base_config(port=port, service={"drain_delay_s": delay}),
                        "dd", port)
    assert d.get("/readyz").status == 200
    ref = d.post("/v1/preprocess?w=16&h=16", jpg)
    assert ref.status == 200 and ref.h("connection") != "close", ref
    kept = d.conn(timeout=20)
    kept.request("GET", "/healthz")
    assert du.resp_from(kept.getresponse()).status == 200
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: d.get("/readyz").status == 503, "/readyz 503 after SIGTERM", timeout=2)
    assert time.monotonic() - t0 < 1.0
    fresh = d.post("/v1/preprocess?w=16&h=16", jpg)
    assert fresh.status == 200 and fresh.body == ref.body, fresh
    assert fresh.h("connection") == "close", fresh.headers
    kept.request("POST", "/v1/preprocess?w=16&h=16", body=jpg)
    on_kept = du.resp_from(kept.getresponse())
    kept.close()
    assert on_kept.status == 200 and on_kept.body == ref.body, on_kept
    assert on_kept.h("connection") == "close", on_kept.headers
    assert time.monotonic() - t0 < delay - 0.5, "the checks above outlasted the delay"
    assert d.proc.wait(timeout=delay + 10) == 0, d.log()
    assert time.monotonic() - t0 >= delay - 0.2
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert "drain_delay_s" in d.log(), d.log()

    # A second SIGTERM: the drain starts at once.
    port = du.free_port()
    d = du.start_daemon(tmp, base_config(port=port, service={"drain_delay_s": 60}), "dd2", port)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: d.get("/readyz").status == 503, "/readyz 503 after SIGTERM", timeout=2)
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=10) == 0, d.log()
    assert time.monotonic() - t0 < 10
    assert "draining now" in d.log(), d.log()
