"""Shared pieces of the bench/run_*.py scripts and bench/soak.py: timing
(reference/anchors.md method), logging, the environment daemons and peers
run with, free ports."""
import http.client
import json
import os
import signal
import socket
import subprocess
import time


def log(msg):
    print(msg, flush=True)


def clean_env():
    """The environment for the programs a benchmark starts: without the
    tuning variables a caller's shell may set for its own numpy."""
    env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GLIBC_TUNABLES"):
        env.pop(k, None)
    return env


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def calibrated(fn, target, runs, warm=2, probe=0.2):
    """@warm warm-up calls, a loop count doubling until one probe takes
    min(@probe, @target) seconds, scaled to ~@target seconds per run, then
    @runs timed runs. Returns (seconds per call of each run, loop count)."""
    for _ in range(warm):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min(probe, target):
            break
        n *= 2
    iters = max(1, int(round(n * target / dt)))
    per = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        per.append((time.perf_counter() - t0) / iters)
    return per, iters


class Dvppd:
    """$DVPP_BUILD/dvppd on a temp config (HTTP on a free port, the socket in
    @tmp, two channels, @extra merged per section); stop() returns its exit
    status."""

    def __init__(self, tmp, build, extra=None, prefix=None, name="dvppd"):
        self.tmp, self.build = tmp, build
        self.prefix = list(prefix or [])   # e.g. ["taskset", "-c", "0"]: execs dvppd
        self.name = name                   # of its files in @tmp: NAME.json, .sock, .log
        self.proc = None
        self.port = free_port()
        self.sock = os.path.join(tmp, f"{name}.sock")
        self.log_path = os.path.join(tmp, f"{name}.log")
        self.config = {"http": {"listen": f"127.0.0.1:{self.port}"},
                       "socket": {"path": self.sock, "mode": "0600"},
                       "device": {"channels": 2}}
        for section, keys in (extra or {}).items():
            self.config.setdefault(section, {}).update(keys)

    def ready(self):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            c.request("GET", "/readyz")
            status = c.getresponse().status
            c.close()
        except (OSError, http.client.HTTPException):
            return False
        return status == 200 and os.path.exists(self.sock)

    def start(self):
        exe = os.path.join(self.build, "dvppd")
        if not os.access(exe, os.X_OK):
            raise RuntimeError(f"{exe} missing (make)")
        conf = os.path.join(self.tmp, f"{self.name}.json")
        with open(conf, "w") as f:
            json.dump(self.config, f)
        with open(self.log_path, "wb") as lf:
            self.proc = subprocess.Popen(self.prefix + [exe, "--config", conf], stdout=lf,
                                         stderr=lf,
                                         stdin=subprocess.DEVNULL, env=clean_env(),
                                         start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dvppd exited {self.proc.returncode}: {self.tail()}")
            if self.ready():
                return
            time.sleep(0.1)
        raise RuntimeError(f"dvppd: not ready (GET /readyz 200 and {self.sock}) within 30 s; "
                           f"log: {self.tail()}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def tail(self, n=3000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")[-n:].strip()
        except OSError:
            return ""

    def stop(self):
        """SIGTERM, wait; the exit status (None if it had to be killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=25)  # dvppd drains up to 20 s
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                self.proc.wait(timeout=5)
                return None
        return self.proc.returncode
