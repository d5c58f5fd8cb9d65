"""dvpp.torch._daemon: the daemon a loader talks to.

``connect(socket=None)``: a Client of the running daemon at @socket, or at
$DVPPD_SOCKET; when neither is given, of a private dvppd started for it
(``PrivateDaemon``) and stopped when the client is closed or collected, or
at exit. ``default_client()`` is one such client shared by the module's
transforms and datasets when they are given none.

A private daemon is the dvppd binary found as $DVPPD, on PATH, in
/usr/sbin or /usr/local/sbin, or in the source tree's build/ (when this
package is imported from clients/python), run with a config in a private
temporary directory: no HTTP, its socket there (mode 0600), its channels
$DVPPD_CHANNELS or the CPU count, and a lease timeout of an hour (a
tensor's lease then lasts as long as the tensor, see dvpp.torch.as_tensor).
"""

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref

from ..client import Client
from ..errors import STATUS, DvppError

LEASE_TIMEOUT_MS = 3600 * 1000
START_TIMEOUT_S = 30.0


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
    tree = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
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
    path; ``stop()`` (also on collection and at exit) ends it with SIGTERM
    and removes its directory."""

    def __init__(self, channels=None, binary=None, config=None):
        self.binary = binary or find_dvppd()
        self.dir = tempfile.mkdtemp(prefix="dvpp-torch-")
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
        self._finalizer = weakref.finalize(self, _stop, self.proc, self.dir, self._log)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DvppError(STATUS["EIO"], "EIO", f"dvppd ({self.binary}) exited with status "
                                f"{self.proc.returncode} at start: {self.log_tail()}")
            if os.path.exists(self.socket):
                return
            time.sleep(0.01)
        raise DvppError(STATUS["ETIMEDOUT"], "ETIMEDOUT", f"dvppd made no socket within {START_TIMEOUT_S} s: "
                        f"{self.log_tail()}")

    def log_tail(self, n=2000):
        """The end of the daemon's log."""
        try:
            self._log.flush()
            with open(self._log.name, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    @property
    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self._finalizer()


def _stop(proc, path, log):
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
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


class _OwnedClient(Client):
    """A Client whose close() also stops the private daemon behind it."""
    daemon = None

    def close(self):
        try:
            super().close()
        finally:
            d, self.daemon = self.daemon, None
            if d is not None:
                d.stop()


def connect(socket=None, timeout=60.0, channels=None):
    """A Client of the daemon at @socket (or $DVPPD_SOCKET), or of a private
    one started now (see the module docstring). Close it when done: a
    private daemon stops with it."""
    path = socket or os.environ.get("DVPPD_SOCKET")
    if path:
        return Client(path, timeout=timeout, client_name="dvpp.torch")
    d = PrivateDaemon(channels=channels)
    try:
        c = _OwnedClient(d.socket, timeout=timeout, client_name="dvpp.torch")
    except BaseException:
        d.stop()
        raise
    c.daemon = d
    return c


class _Default:
    """The shared client of default_client (made on first use)."""
    lock = threading.Lock()
    client = None


def default_client():
    """The client the transforms and datasets use when given none: made on
    first use with connect(), remade when it was closed or lost."""
    with _Default.lock:
        c = _Default.client
        if c is None or c.closed:
            c = _Default.client = connect()
        return c


def _close_default():
    c, _Default.client = _Default.client, None
    if c is not None:
        c.close()


atexit.register(_close_default)
