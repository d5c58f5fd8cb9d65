#!/usr/bin/python3
"""A fleet of dvppd on loopback ports, for tests/scale/test_fleet.py and
bench/run_fleet.py: the daemons, the real balancers in front of them
(HAProxy and nginx, run from the shipped deploy/ configs with only the
addresses changed), and a fixed-rate HTTP load that records every answer.

Each daemon is a process of its own session with a pid file, so that a
command other than the test (deploy/rolling-restart's --restart-cmd, which
runs `fleet.py restart DIR NAME`) can stop and start it as systemctl would.

usage (the restart command): fleet.py restart DIR NAME
"""
import hashlib
import http.client
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# daemon_util (tests/e2e) for free_port and log_tail, also when this file runs
# as the restart command, outside pytest.
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from daemon_util import free_port, log_tail  # noqa: E402
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPD = os.path.join(ROOT, BUILD, "dvppd")
HAPROXY_CFG = os.path.join(ROOT, "deploy", "haproxy", "haproxy.cfg")
NGINX_CFG = os.path.join(ROOT, "deploy", "nginx", "dvppd.conf")
ROLLING_RESTART = os.path.join(ROOT, "deploy", "rolling-restart")


class FleetError(Exception):
    pass


def http_get(port, path, timeout=2.0):
    """(status, body) of GET @path on 127.0.0.1:@port, or (None, b"")."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException):
        return None, b""
    finally:
        c.close()


def gone(pid):
    """True once @pid has exited (a zombie not yet reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# --------------------------------------------------------------------------
# daemons


class Daemon:
    """dvppd NAME of the fleet in DIR: DIR/NAME.json (its config), .log, .pid."""

    def __init__(self, dir, name):
        self.dir, self.name = dir, name
        self.cfg_path = os.path.join(dir, f"{name}.json")
        self.log_path = os.path.join(dir, f"{name}.log")
        self.pid_path = os.path.join(dir, f"{name}.pid")
        with open(self.cfg_path) as f:
            self.port = int(json.load(f)["http"]["listen"].rsplit(":", 1)[1])
        self.proc = None  # the Popen when this process started it

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def pid(self):
        try:
            with open(self.pid_path) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def log(self, n=3000):
        return log_tail(self.log_path, n)

    def ready(self):
        return http_get(self.port, "/readyz")[0] == 200

    def start(self, timeout=20):
        """Start it; return once /readyz answers 200."""
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen([DVPPD, "--config", self.cfg_path], stdout=log,
                                         stderr=log, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        with open(self.pid_path, "w") as f:
            f.write(str(self.proc.pid))
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.proc.poll() is not None:
                raise FleetError(f"{self.name} exited {self.proc.returncode} at start:\n"
                                 f"{self.log()}")
            if time.monotonic() > deadline:
                raise FleetError(f"{self.name}: /readyz not 200 within {timeout} s:\n"
                                 f"{self.log()}")
            time.sleep(0.05)

    def send(self, sig):
        pid = self.pid()
        if pid and not gone(pid):
            os.kill(pid, sig)
        return pid

    def wait_gone(self, pid, timeout):
        deadline = time.monotonic() + timeout
        while not gone(pid):
            if time.monotonic() > deadline:
                raise FleetError(f"{self.name} (pid {pid}) still running after {timeout} s")
            time.sleep(0.05)

    def stop(self, sig=signal.SIGTERM, timeout=40):
        """Send @sig and wait until the process is gone: its exit status
        when this process started it, else None."""
        pid = self.send(sig)
        if not pid:
            return None
        if self.proc and self.proc.pid == pid:
            return self.proc.wait(timeout=timeout)
        self.wait_gone(pid, timeout)
        return None

    def restart(self):
        """What `systemctl restart` does: a graceful stop, then a start."""
        self.stop()
        self.start()


def daemon_config(port, drain_delay_s):
    return {"http": {"listen": f"127.0.0.1:{port}", "threads": 2},
            "socket": {"path": ""},
            "device": {"channels": 1},
            "service": {"drain_delay_s": drain_delay_s, "drain_timeout_s": 20},
            "log": {"level": "info"}}


def make_fleet(dir, n, drain_delay_s=3):
    """@n daemons named dvppd1..dvppdN in @dir, started."""
    daemons = []
    for i in range(1, n + 1):
        name = f"dvppd{i}"
        with open(os.path.join(dir, f"{name}.json"), "w") as f:
            json.dump(daemon_config(free_port(), drain_delay_s), f)
        d = Daemon(dir, name)
        d.start()
        daemons.append(d)
    return daemons


def stop_all(daemons):
    for d in daemons:
        try:
            d.stop(signal.SIGKILL, timeout=10)
        except (FleetError, OSError, subprocess.TimeoutExpired):
            pass


# --------------------------------------------------------------------------
# balancers, from the shipped configs with only the addresses changed


def _replace_servers(text, pattern, make_line, daemons):
    """@text with its server lines (matching @pattern) replaced by one per
    daemon, at the place of the first; the shipped file must have some."""
    lines = text.splitlines()
    idx = [i for i, line in enumerate(lines) if re.match(pattern, line)]
    if not idx:
        raise FleetError(f"no server lines ({pattern}) in the shipped config")
    indent = re.match(r"\s*", lines[idx[0]]).group(0)
    new = [indent + make_line(d) for d in daemons]
    keep = [line for i, line in enumerate(lines) if i not in idx[1:]]
    first = keep.index(lines[idx[0]])
    return "\n".join(keep[:first] + new + keep[first + 1:]) + "\n"


def _sub_once(text, pattern, repl):
    out, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    if n != 1:
        raise FleetError(f"the shipped config has no line matching {pattern!r}")
    return out


class Balancer:
    """A balancer process in front of the fleet: HAProxy or nginx."""

    kind = None

    def __init__(self, dir, daemons):
        self.dir, self.daemons = dir, daemons
        self.port = free_port()
        self.proc = None
        self.log_path = os.path.join(dir, f"{self.kind}.log")

    def log(self, n=4000):
        return log_tail(self.log_path, n)

    def _spawn(self, argv):
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                         start_new_session=True)

    def wait_serving(self, timeout=15):
        """Until the balancer answers /readyz 200 through every daemon
        (least-connections spreads the checks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise FleetError(f"{self.kind} exited {self.proc.returncode}:\n{self.log()}")
            if self.all_up() and http_get(self.port, "/readyz")[0] == 200:
                return
            time.sleep(0.1)
        raise FleetError(f"{self.kind} not serving within {timeout} s:\n{self.log()}")

    def all_up(self):
        return True

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class HAProxy(Balancer):
    kind = "haproxy"

    def __init__(self, dir, daemons):
        super().__init__(dir, daemons)
        self.stats_sock = os.path.join(dir, "haproxy.sock")
        with open(HAPROXY_CFG) as f:
            text = f.read()
        text = _sub_once(text, r"^(\s*)stats socket \S+", rf"\1stats socket {self.stats_sock}")
        text = _sub_once(text, r"^(\s*)bind \S+", rf"\1bind 127.0.0.1:{self.port}")
        text = _replace_servers(text, r"\s*server\s", lambda d: f"server {d.name} {d.url[7:]}",
                                daemons)
        self.cfg_path = os.path.join(dir, "haproxy.cfg")
        with open(self.cfg_path, "w") as f:
            f.write(text)

    def start(self):
        check = subprocess.run(["haproxy", "-c", "-f", self.cfg_path], capture_output=True,
                               text=True)
        if check.returncode != 0:
            raise FleetError(f"haproxy -c: {check.stdout}{check.stderr}")
        self._spawn(["haproxy", "-db", "-f", self.cfg_path])
        self.wait_serving()

    def stat(self):
        """`show stat` as {server name: {column: value}} for backend dvppd."""
        import socket
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.stats_sock)
            s.sendall(b"show stat\n")
            out = b""
            while chunk := s.recv(65536):
                out += chunk
        lines = out.decode().splitlines()
        cols = lines[0][2:].split(",")
        rows = {}
        for line in lines[1:]:
            f = dict(zip(cols, line.split(",")))
            if f.get("pxname") == "dvppd":
                rows[f["svname"]] = f
        return rows

    def all_up(self):
        try:
            st = self.stat()
        except (OSError, IndexError):
            return False
        return all(st.get(d.name, {}).get("status") == "UP" for d in self.daemons)


class Nginx(Balancer):
    kind = "nginx"

    def __init__(self, dir, daemons):
        super().__init__(dir, daemons)
        with open(NGINX_CFG) as f:
            text = f.read()
        text = _sub_once(text, r"^(\s*)listen \S+;", rf"\1listen 127.0.0.1:{self.port};")
        keep = re.search(r"^\s*server 10\.\S+ (.*);$", text, re.M)
        if not keep:
            raise FleetError("no upstream server line in deploy/nginx/dvppd.conf")
        text = _replace_servers(text, r"\s*server \d",
                                lambda d: f"server {d.url[7:]} {keep.group(1)};", daemons)
        site = os.path.join(dir, "dvppd-site.conf")
        with open(site, "w") as f:
            f.write(text)
        self.access_log = os.path.join(dir, "nginx-access.log")
        temp = os.path.join(dir, "nginx-temp")
        os.makedirs(temp, exist_ok=True)
        user = "user root root;\n" if os.geteuid() == 0 else ""
        main = f"""{user}worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {self.log_path} warn;
events {{ worker_connections 1024; }}
http {{
    log_format fleet '$status "$upstream_addr" "$upstream_status" $request_length';
    access_log {self.access_log} fleet;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {site};
}}
"""
        self.cfg_path = os.path.join(dir, "nginx.conf")
        with open(self.cfg_path, "w") as f:
            f.write(main)

    def start(self):
        check = subprocess.run(["nginx", "-t", "-p", self.dir, "-c", self.cfg_path],
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise FleetError(f"nginx -t: {check.stdout}{check.stderr}")
        self._spawn(["nginx", "-p", self.dir, "-c", self.cfg_path])
        self.wait_serving()

    def retried(self):
        """Requests nginx sent to more than one daemon, from its access log:
        (count, their upstream statuses)."""
        n, how = 0, []
        try:
            with open(self.access_log) as f:
                for line in f:
                    m = re.match(r'(\d+) "([^"]*)" "([^"]*)"', line)
                    if m and "," in m.group(2):
                        n += 1
                        how.append(m.group(3))
        except OSError:
            pass
        return n, how


# --------------------------------------------------------------------------
# load


class Template:
    """One kind of request: method, path, body, headers, and the exact
    answer body a single daemon gives (its sha256)."""

    def __init__(self, kind, path, body, headers=None):
        self.kind, self.path, self.body = kind, path, body
        self.headers = dict(headers or {})
        self.headers["Content-Length"] = str(len(body))
        self.expect = None

    def learn(self, port):
        """The answer of the daemon on @port alone: the reference."""
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            c.request("POST", self.path, body=self.body, headers=self.headers)
            r = c.getresponse()
            body = r.read()
        finally:
            c.close()
        if r.status != 200:
            raise FleetError(f"{self.kind} {self.path}: {r.status} {body[:300]!r}")
        self.expect = hashlib.sha256(body).hexdigest()
        return len(body)


class Record:
    __slots__ = ("i", "kind", "due", "sent", "done", "status", "error", "partial")

    def __init__(self, i, kind, due):
        self.i, self.kind, self.due = i, kind, due
        self.sent = self.done = None
        self.status = None
        self.error = None      # None: 200 with the reference bytes
        self.partial = False   # the answer began, then the connection was cut


def one_request(port, t, rec, timeout):
    """Send template @t on a fresh connection to the balancer; fill @rec."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    rec.sent = time.monotonic()
    try:
        c.request("POST", t.path, body=t.body, headers=t.headers)
        r = c.getresponse()
        rec.status = r.status
        body = r.read()
        if r.status != 200:
            rec.error = f"status {r.status}: {body[:200]!r}"
        elif hashlib.sha256(body).hexdigest() != t.expect:
            rec.error = f"answer differs from a single daemon's ({len(body)} bytes)"
    except http.client.IncompleteRead as e:
        rec.error, rec.partial = f"answer cut after {len(e.partial)} bytes", True
    except (OSError, http.client.HTTPException) as e:
        rec.error = f"{type(e).__name__}: {e}"
        rec.partial = rec.status is not None
    finally:
        rec.done = time.monotonic()
        c.close()


class Load:
    """@rate requests a second for @seconds, round-robin over @templates,
    sent at their due times by @workers threads (each on a new connection,
    so a request never fails for a stale client connection). Every request
    becomes a Record."""

    def __init__(self, port, templates, rate, seconds, workers=16, timeout=30):
        self.port, self.templates = port, templates
        self.rate, self.seconds, self.workers, self.timeout = rate, seconds, workers, timeout
        self.records = []
        self.t0 = None
        self.late = 0          # requests sent more than 0.5 s after their due time
        self._q = queue.Queue()
        self._threads = []

    def _worker(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            rec, t = item
            if time.monotonic() - rec.due > 0.5:
                self.late += 1
            one_request(self.port, t, rec, self.timeout)

    def start(self):
        self._threads = [threading.Thread(target=self._worker, daemon=True)
                         for _ in range(self.workers)]
        for th in self._threads:
            th.start()
        self.t0 = time.monotonic()
        self._pacer = threading.Thread(target=self._pace, daemon=True)
        self._pacer.start()

    def _pace(self):
        n = int(self.rate * self.seconds)
        for i in range(n):
            due = self.t0 + i / self.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = self.templates[i % len(self.templates)]
            rec = Record(i, t.kind, due)
            self.records.append(rec)
            self._q.put((rec, t))
        for _ in self._threads:
            self._q.put(None)

    def elapsed(self):
        return time.monotonic() - self.t0

    def join(self):
        self._pacer.join()
        for th in self._threads:
            th.join(self.timeout + 5)

    def failures(self):
        return [r for r in self.records if r.error is not None]


def main(argv):
    if len(argv) == 3 and argv[0] == "restart":
        Daemon(argv[1], argv[2]).restart()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
