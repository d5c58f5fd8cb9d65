"""dvpp.guard: guard mode, the debug mode of the package's "Leases".

With ``Client(..., guard=True)`` (or DVPP_GUARD=1) each ring Result's views
come from a private mapping of its slot, made PROT_NONE when the lease
ends, so a view used afterwards dies with SIGSEGV instead of reading
another job's bytes. It needs numpy (for the mapping's address).
"""

import ctypes
import mmap
import os
import threading

# Guard mode: how often the watchdog reads the descriptors of the guarded
# leases (a slot the daemon took back is revoked within about this long).
GUARD_POLL_S = 0.002
_PROT_NONE = 0   # <sys/mman.h>; the mmap module does not export it


class _Guard:
    """Guard mode: one lease's private PROT_READ mapping of its slot, made
    PROT_NONE (revoked) when the lease ends."""

    __slots__ = ("mm", "addr", "size", "ring", "slot", "generation")

    def __init__(self, mm, addr, size, ring, slot, generation):
        self.mm = mm            # the mapping (strong: kept until revoked)
        self.addr = addr        # its address, for mprotect
        self.size = size
        self.ring = ring
        self.slot = slot
        self.generation = generation


class _Guards:
    """The guarded leases of a client and the watchdog thread that revokes
    each once the daemon took its slot back (a view used after release,
    expiry or the ring's close then dies with SIGSEGV instead of reading
    another job's bytes). Its own lock: the watchdog never takes the
    client's."""

    def __init__(self):
        self._mu = threading.Lock()
        self._live = {}                # id(guard) -> _Guard
        self._wake = threading.Event()
        self._stop = False
        self._thread = None
        self._libc = None

    def _mprotect(self, g):
        if self._libc is None:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            libc.mprotect.restype = ctypes.c_int
            self._libc = libc
        if self._libc.mprotect(g.addr, g.size, _PROT_NONE) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"mprotect(PROT_NONE) of a guarded slot: {os.strerror(e)}")

    def add(self, result, start, size):
        import numpy as np

        ring = result.ring
        mm = mmap.mmap(ring.fileno(), size, mmap.MAP_SHARED, mmap.PROT_READ, offset=start)
        probe = np.frombuffer(mm, np.uint8)
        addr = probe.__array_interface__["data"][0]
        del probe
        g = _Guard(mm, addr, size, ring, result.slot, result.generation)
        with self._mu:
            self._live[id(g)] = g
            if self._thread is None and not self._stop:
                self._thread = threading.Thread(target=self._watch, name="dvpp-guard",
                                                daemon=True)
                self._thread.start()
        # the lease may have ended while the mapping was made
        if not ring.lease_held(g.slot, g.generation):
            self.revoke(g)
        return g

    def revoke(self, g):
        with self._mu:
            if self._live.pop(id(g), None) is None:
                return
            self._mprotect(g)
        g.mm = None     # the mapping stays (PROT_NONE) while views hold it

    def revoke_ring(self, ring):
        with self._mu:
            gs = [g for g in self._live.values() if g.ring is ring]
        for g in gs:
            self.revoke(g)

    def close(self):
        with self._mu:
            self._stop = True
            gs = list(self._live.values())
        for g in gs:
            self.revoke(g)
        self._wake.set()

    def _watch(self):
        while True:
            self._wake.wait(GUARD_POLL_S)
            with self._mu:
                if self._stop:
                    return
                gs = list(self._live.values())
            for g in gs:
                try:
                    held = g.ring.lease_held(g.slot, g.generation)
                except ValueError:      # the ring's mapping is gone
                    held = False
                if not held:
                    self.revoke(g)
