"""dvpp.daemon: the daemon a process talks to, running or started for it.

``connect(socket=None)``: a Client of the running daemon at @socket, or at
$DVPPD_SOCKET; when neither is given, of a private dvppd started for it
(``PrivateDaemon``) and stopped when the client is closed or collected, or
at exit. dvpp.torch (its loader and transforms) and dvpp.dask (one daemon
per Dask worker process) both use it.

A private daemon is the dvppd binary found as $DVPPD, on PATH, in
/usr/sbin or /usr/local/sbin, or in the source tree's build/ ($DVPP_BUILD
when set) when this package is imported from clients/python, run with a
config in a private temporary directory: no HTTP, its socket there (mode
0600), its channels $DVPPD_CHANNELS or the CPU count, and a lease timeout
of an hour (a tensor's lease then lasts as long as the tensor, see
dvpp.torch.as_tensor).

"At exit" includes a SIGKILL of the owner: a watchdog process (one small
Python process per private daemon, in its own session) holds the read end
of a pipe whose write end only the owner holds; when the owner is gone,
however it went, the pipe reads EOF and the watchdog stops the daemon
(SIGTERM, SIGKILL after 20 s) and removes its directory, so that no
orphaned dvppd outlives a killed training process or Dask worker.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref

from .client import Client
from .errors import STATUS, DvppError

LEASE_TIMEOUT_MS = 3600 * 1000
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0

# The watchdog (see the module docstring): argv[1] the daemon's process
# group (its own session), argv[2] its directory. It waits for EOF on
# stdin, which comes when every copy of the pipe's write end is closed.
_WATCHDOG = r"""
import os, shutil, signal, sys, time
pgid, path = int(sys.argv[1]), sys.argv[2]
sys.stdin.buffer.read()
def gone():
    try:
        os.killpg(pgid, 0)
        return False
    except ProcessLookupError:
        return True
try:
    os.killpg(pgid, signal.SIGTERM)
except ProcessLookupError:
    pass
deadline = time.monotonic() + %f
while not gone() and time.monotonic() < deadline:
    time.sleep(0.05)
if not gone():
    os.killpg(pgid, signal.SIGKILL)
shutil.rmtree(path, ignore_errors=True)
""" % STOP_TIMEOUT_S


def find_dvppd():
    """The dvppd binary a private daemon runs (see the module docstring);
    FileNotFoundError naming the places tried."""
    tried = []
    env = os.environ.get("DVPPD")
    if env:
        if os.access(env, os.X_OK):
            return env
        tried.append(env)
    which = shutil.which("dvppd")
    if which:
        return which
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.normpath(os.path.join(here, "..", "..", ".."))
    build = os.environ.get("DVPP_BUILD", "build")
    for p in ("/usr/sbin/dvppd", "/usr/local/sbin/dvppd",
              os.path.join(build if os.path.isabs(build) else os.path.join(tree, build),
                           "dvppd")):
        if os.access(p, os.X_OK):
            return p
        tried.append(p)
    raise FileNotFoundError("no dvppd to start (set DVPPD_SOCKET to use a running daemon, "
                            "or DVPPD to the binary); tried PATH, " + ", ".join(tried))


class PrivateDaemon:
    """A dvppd of this process's own: started at once, ``socket`` is its
    path, ``pid`` its process id; ``stop()`` (also on collection, at exit,
    and by the watchdog when this process dies) ends it with SIGTERM and
    removes its directory. @prefix names the temporary directory."""

    def __init__(self, channels=None, binary=None, config=None, prefix="dvpp-"):
        self.binary = binary or find_dvppd()
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.socket = os.path.join(self.dir, "dvppd.sock")
        cfg = {"http": {"listen": "127.0.0.1:0"},
               "socket": {"path": self.socket, "mode": "0600",
                          "lease_timeout_ms": LEASE_TIMEOUT_MS},
               "device": {"channels": int(channels or os.environ.get("DVPPD_CHANNELS", 0)
                                          or os.cpu_count() or 1)}}
        for k, v in (config or {}).items():
            cfg.setdefault(k, {}).update(v)
        path = os.path.join(self.dir, "dvppd.conf")
        with open(path, "w") as f:
            json.dump(cfg, f)
        self._log = open(os.path.join(self.dir, "dvppd.log"), "w+b")
        self.proc = subprocess.Popen([self.binary, "--config", path], stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     close_fds=True, start_new_session=True)
        self._watch = _Watch()      # not self: the finalizer must not keep self alive
        self._finalizer = weakref.finalize(self, _stop, self.proc, self.dir, self._log,
                                           self._watch)
        try:
            self._start_watchdog()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _start_watchdog(self):
        r, w = os.pipe()    # both close-on-exec: only the watchdog gets r (as stdin)
        try:
            wd = subprocess.Popen(
                [sys.executable, "-S", "-c", _WATCHDOG, str(self.proc.pid), self.dir],
                stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True, start_new_session=True)
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
        self._watch.proc, self._watch.fd = wd, w

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DvppError(STATUS["EIO"], "EIO", f"dvppd ({self.binary}) exited with status "
                                f"{self.proc.returncode} at start: {self.log_tail()}")
            if os.path.exists(self.socket):
                return
            time.sleep(0.01)
        raise DvppError(STATUS["ETIMEDOUT"], "ETIMEDOUT",
                        f"dvppd made no socket within {START_TIMEOUT_S} s: {self.log_tail()}")

    def log_tail(self, n=2000):
        """The end of the daemon's log."""
        try:
            self._log.flush()
            with open(self._log.name, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    @property
    def pid(self):
        return self.proc.pid

    @property
    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self._finalizer()


class _Watch:
    """A private daemon's watchdog process and the pipe end that keeps it
    waiting."""
    proc = None
    fd = None


def _stop(proc, path, log, watch):
    # The watchdog first: stopped here, it must not signal a process group
    # that no longer is the daemon's.
    wd, fd = watch.proc, watch.fd
    watch.proc = watch.fd = None
    if wd is not None:
        wd.kill()
        wd.wait()
    if fd is not None:
        os.close(fd)
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except OSError:
            pass
    try:
        log.close()
    except OSError:
        pass
    shutil.rmtree(path, ignore_errors=True)


class OwnedClient(Client):
    """A Client whose close() also stops the private daemon behind it
    (``daemon``)."""
    daemon = None

    def close(self):
        try:
            super().close()
        finally:
            d, self.daemon = self.daemon, None
            if d is not None:
                d.stop()


def connect(socket=None, timeout=60.0, channels=None, client_name="dvpp", prefix="dvpp-"):
    """A Client of the daemon at @socket (or $DVPPD_SOCKET), or of a private
    one started now (an OwnedClient: see the module docstring). Close it
    when done: a private daemon stops with it."""
    path = socket or os.environ.get("DVPPD_SOCKET")
    if path:
        return Client(path, timeout=timeout, client_name=client_name)
    d = PrivateDaemon(channels=channels, prefix=prefix)
    try:
        c = OwnedClient(d.socket, timeout=timeout, client_name=client_name)
    except BaseException:
        d.stop()
        raise
    c.daemon = d
    return c
