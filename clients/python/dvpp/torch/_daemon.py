"""dvpp.torch._daemon: the daemon a loader talks to.

``connect(socket=None)``: a Client of the running daemon at @socket, or at
$DVPPD_SOCKET; when neither is given, of a private dvppd started for it
(``PrivateDaemon``) and stopped when the client is closed or collected, or
at exit (also when this process is killed: see dvpp.daemon, which holds
the code shared with dvpp.dask). ``default_client()`` is one such client
shared by the module's transforms and datasets when they are given none.
"""

import atexit
import threading

from .. import daemon as _daemon
from ..daemon import LEASE_TIMEOUT_MS, START_TIMEOUT_S, PrivateDaemon, find_dvppd  # noqa: F401

_OwnedClient = _daemon.OwnedClient


def connect(socket=None, timeout=60.0, channels=None):
    """A Client of the daemon at @socket (or $DVPPD_SOCKET), or of a private
    one started now (see the module docstring). Close it when done: a
    private daemon stops with it."""
    return _daemon.connect(socket, timeout=timeout, channels=channels,
                           client_name="dvpp.torch", prefix="dvpp-torch-")


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
