"""dvpp: the pure-Python client of dvppd's Unix socket.

Protocol: proto/PROTOCOL.md (one protobuf ``Envelope`` per SOCK_SEQPACKET
packet, file descriptors as SCM_RIGHTS), messages: proto/dvpp.proto (compiled
by ``make`` into ``dvpp_pb2.py`` beside this file), ring layout:
proto/dvpp_ring.h.

    import dvpp
    with dvpp.Client("/run/dvppd/dvppd.sock") as c:
        ring = c.open_ring(slots=8, slot_bytes=3 * 224 * 224 * 4)
        spec = {"ops": [{"resize": {"w": 224, "h": 224}}],
                "normalize": {"mean": [0.485, 0.456, 0.406],
                              "std": [0.229, 0.224, 0.225]}}
        with c.submit(spec, jpeg_bytes, ring=ring) as r:
            x = r.array()        # a read-only numpy view of the ring slot
            model(x)             # use it before the slot goes back
        # leaving the block sent SlotRelease: x must not be used any more

Video (proto/PROTOCOL.md "Video channels"):

    with c.decode_video(h264_bytes, ring, every=5) as frames:
        for f in frames:                 # VideoFrame: a Result + index, time_s, key
            with f:
                y, uv = f.planes()       # NV12 planes cropped to the picture
    mp4 = c.encode_video(rgb_frames, codec="h265", mp4=True)   # bytes

Thread-safety: a ``Client`` may be shared by threads. One lock (a
``threading.Condition``) guards its state; every request is one
``sendmsg``; at any time one waiting thread reads the socket and files each
answer under its request id (unsolicited HTTP deliveries in a queue), then
wakes the others. ``Ring`` and ``Result`` objects belong to their client.

Leases: a ring Result holds its slot from its arrival until ``release()``,
the daemon's lease timeout (Welcome.lease_timeout_ms) or the ring's close,
whichever comes first; after that the daemon may write the slot's next job
into the same bytes. A Result is bound to the Ring object (not the ring id,
which the daemon may give a later ring) and to its generation: once its
lease is over, ``buffer()``, ``array()`` and ``tobytes()`` raise
LeaseError, ``release()`` of a closed ring's result sends nothing, and
``check()`` says whether views taken earlier were the caller's the whole
time (read the slot's descriptor). Numpy arrays already handed out cannot
be revoked cheaply: they are valid only during the lease. ``Client(...,
guard=True)`` (or DVPP_GUARD=1 in the environment) is the debug mode that
makes their use fail loudly: each result's views come from a private
mapping of its slot that is made PROT_NONE when the lease ends, so the
first touch afterwards is a SIGSEGV (run with ``python3 -X faulthandler``
for the line).

Requires Python 3.8+ on Linux (memfd_create, F_ADD_SEALS) and the protobuf
runtime; numpy only for ``Result.array()``.
"""

import array
import collections
import ctypes
import errno
import fcntl
import fractions
import itertools
import json
import mmap
import os
import select
import socket
import struct
import threading
import time

from . import dvpp_pb2 as pb

__all__ = [
    "Client", "Ring", "Result", "Batch", "VideoFrame", "VideoDecode", "EncodedVideo",
    "DvppError", "Disconnected", "ProtocolError", "LeaseError", "sealed_memfd", "pb",
    "PROTOCOL", "STATUS", "MAX_NOTICES",
]

__version__ = "0.1.0"

PROTOCOL = 1

# core/dvpp_status.h
STATUS = {
    "OK": 0, "EINVAL": -1, "ENOMEM": -2, "EAGAIN": -3, "ELIMIT": -4, "ECORRUPT": -5,
    "EUNSUPPORTED": -6, "EFORMAT": -7, "EOVERFLOW": -8, "ECODEC": -9, "EIO": -10,
    "ESYS": -11, "ESTRIDE": -12, "ENOSPC": -13, "ECANCELED": -14, "ETIMEDOUT": -15,
    "ENOTFOUND": -16, "EBUSY": -17, "EPROFILE": -18,
}

KINDS = {"tensor": pb.TENSOR, "image": pb.IMAGE, "pixels": pb.PIXELS}

# proto/dvpp_ring.h
RING_MAGIC = 0x474E495250505644  # "DVPPRING"
RING_VERSION = 1
RING_ALIGN = 4096
RING_MAX_DIMS = 5
RING_HEADER = struct.Struct("<QIIIIQQQ16s")
RING_SLOT = struct.Struct("<QIIIIII5qQQdddd8x")
assert RING_HEADER.size == 64 and RING_SLOT.size == 128
_DESC_HEAD = struct.Struct("<QII")   # a descriptor's sequence, generation, status
SLOT_FREE, SLOT_READY = 0, 1
RING_DTYPES = {0: "uint8", 1: "int8", 2: "float16", 3: "float32"}
RING_LAYOUTS = {0: "NCHW", 1: "NHWC", 2: "NC1HWC0", 255: "IMAGE"}

# numpy dtype strings of TensorMeta.dtype (little-endian, as the ring is)
NP_DTYPES = {"float32": "<f4", "float16": "<f2", "uint8": "u1", "int8": "i1"}

_ITEMSIZE = {"float32": 4, "float16": 2, "uint8": 1, "int8": 1}

MAX_FDS = 64  # ipc/ipc_msg.h IPC_MAX_FDS

# Unsolicited notices kept for next_notice() (the C client's
# DVPPC_MAX_NOTICES): beyond this the newest are dropped, counted in
# Client.notices_dropped, and their slots given back at once, so a consumer
# that never asks cannot grow the queue (or hold the ring) without bound.
MAX_NOTICES = 1024

# Guard mode: how often the watchdog reads the descriptors of the guarded
# leases (a slot the daemon took back is revoked within about this long).
GUARD_POLL_S = 0.002
_PROT_NONE = 0   # <sys/mman.h>; the mmap module does not export it

# Video channels (the C client's values, dvppclient.h): a stream of up to
# this many max_inline packets goes inline, a larger one as one memfd ...
VIDEO_INLINE_PACKETS = 16
# ... and an encoder keeps at most this many frames waiting for their
# packet (half of Welcome.max_inflight at most), waiting this long for one
# before it sends anyway (the encoder's look-ahead holds frames back).
VENC_WINDOW = 64
VENC_STALL_S = 2.0
_F_SEAL_ALL = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL


class DvppError(Exception):
    """A refusal or failure reported by dvppd (an ``Error`` message or a
    failed ``Result``), or by this library. ``status`` is the negative
    dvpp_status, ``code`` its name ("EINVAL", "EAGAIN", ...), ``field`` the
    message field or spec key at fault; ``result`` the failed Result, if
    any."""

    def __init__(self, status, code, message="", field="", result=None):
        self.status = int(status)
        self.code = code or ""
        self.message = message or ""
        self.field = field or ""
        self.result = result
        text = f"{self.code or self.status}: {self.message}"
        if self.field:
            text += f" (field {self.field})"
        super().__init__(text)


class ProtocolError(DvppError):
    """The daemon sent something this client cannot accept (an undecodable
    packet, a bad ring, an unexpected answer)."""

    def __init__(self, message, field=""):
        super().__init__(STATUS["EIO"], "EIO", message, field)


class LeaseError(DvppError, ValueError):
    """A ring result's payload asked for when the slot is no longer the
    caller's: ``reason`` is "released" (``release()`` was called),
    "expired" (the daemon took the slot back after its lease timeout: the
    descriptor shows another generation or a free slot) or "closed" (the
    ring, or the client, was closed). A ValueError too, as the "slot was
    released" error before it."""

    def __init__(self, reason, message):
        self.reason = reason
        super().__init__(STATUS["EINVAL"], "EINVAL", message, "lease")


class Disconnected(DvppError):
    """The connection is gone (closed by dvppd, refused, or closed here).
    ``last_error`` is the Error dvppd sent before dropping it, if any."""

    def __init__(self, message, last_error=None):
        self.last_error = last_error
        if last_error is not None:
            message += f" (last error: {last_error})"
        super().__init__(STATUS["EIO"], "EIO", message)


def _error_from(msg, result=None):
    return DvppError(msg.status, msg.code, msg.message, msg.field, result)


def sealed_memfd(data, name="dvpp-input"):
    """A memfd holding @data, sealed
    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL (what dvppd
    wants as Submit.input_fd). The caller owns (closes) the returned fd."""
    mv = memoryview(data).cast("B")
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        off = 0
        while off < len(mv):
            off += os.write(fd, mv[off:off + (1 << 24)])
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _F_SEAL_ALL)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _spec_text(spec):
    if spec is None:
        return ""
    if isinstance(spec, (bytes, bytearray)):
        return bytes(spec).decode()
    if isinstance(spec, str):
        return spec
    return json.dumps(spec, separators=(",", ":"))


def _kind(kind):
    if isinstance(kind, int):
        return kind
    try:
        return KINDS[kind.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"kind must be one of {sorted(KINDS)}, not {kind!r}") from None


def _prod(xs):
    n = 1
    for x in xs:
        n *= int(x)
    return n


# --------------------------------------------------------------------------
# Rings


class Ring:
    """A ring the daemon made and this client maps read-only
    (proto/dvpp_ring.h). ``header`` is the parsed header; ``descriptor(i)``
    reads slot i's descriptor (the Result is authoritative)."""

    def __init__(self, client, opened, fd, name=None):
        self._client = client
        self.id = opened.ring
        self.slots = opened.slots
        self.slot_bytes = opened.slot_bytes
        self.map_bytes = opened.map_bytes
        self.data_offset = opened.data_offset
        self.name = name or None
        self.fd = fd
        self.closed = False
        self._closing = False          # RingClose sent: results no longer map here
        self._mm = None
        try:
            size = os.fstat(fd).st_size
            if size != self.map_bytes:
                raise ProtocolError(f"ring memfd is {size} bytes, RingOpened says "
                                    f"{self.map_bytes}", "map_bytes")
            if self.map_bytes < RING_HEADER.size:
                raise ProtocolError("ring smaller than its header", "map_bytes")
            self._mm = mmap.mmap(fd, self.map_bytes, mmap.MAP_SHARED, mmap.PROT_READ)
            self.header = self._check_header()
        except BaseException:
            self._unmap()
            raise

    def _check_header(self):
        (magic, version, header_bytes, slot_count, desc_bytes, slot_bytes, data_offset,
         map_bytes, _) = RING_HEADER.unpack_from(self._mm, 0)
        h = {"magic": magic, "version": version, "header_bytes": header_bytes,
             "slot_count": slot_count, "desc_bytes": desc_bytes, "slot_bytes": slot_bytes,
             "data_offset": data_offset, "map_bytes": map_bytes}
        want = {"magic": RING_MAGIC, "version": RING_VERSION,
                "header_bytes": RING_HEADER.size, "desc_bytes": RING_SLOT.size,
                "slot_count": self.slots, "slot_bytes": self.slot_bytes,
                "data_offset": self.data_offset, "map_bytes": self.map_bytes}
        for k, v in want.items():
            if h[k] != v:
                raise ProtocolError(f"ring header {k} is {h[k]:#x}, want {v:#x}", k)
        if slot_bytes % RING_ALIGN or data_offset % RING_ALIGN:
            raise ProtocolError("ring slot_bytes/data_offset not 4096-aligned", "slot_bytes")
        if data_offset < RING_HEADER.size + slot_count * RING_SLOT.size:
            raise ProtocolError("ring descriptors overlap the payloads", "data_offset")
        if data_offset + slot_count * slot_bytes > map_bytes:
            raise ProtocolError("ring payloads pass the end of the memfd", "map_bytes")
        return h

    def slot_offset(self, slot):
        if not 0 <= slot < self.slots:
            raise IndexError(slot)
        return self.data_offset + slot * self.slot_bytes

    def descriptor(self, slot):
        """Slot @slot's descriptor as a dict (read from the shared pages)."""
        if not 0 <= slot < self.slots:
            raise IndexError(slot)
        (seq, gen, status, dtype, layout, ndim, _, s0, s1, s2, s3, s4, nbytes, off, sx, sy,
         px, py) = RING_SLOT.unpack_from(self._map(), RING_HEADER.size + slot * RING_SLOT.size)
        shape = (s0, s1, s2, s3, s4)[:min(ndim, RING_MAX_DIMS)]
        return {"sequence": seq, "generation": gen, "status": status,
                "dtype": RING_DTYPES.get(dtype, dtype), "layout": RING_LAYOUTS.get(layout, layout),
                "ndim": ndim, "shape": tuple(shape), "byte_length": nbytes,
                "payload_offset": off, "scale_x": sx, "scale_y": sy, "pad_x": px, "pad_y": py}

    def region(self, offset, slot=None):
        """[start, end) of the part of the memfd @offset lies in: the
        header and descriptors ([0, data_offset)) or one slot's payload
        (slot @slot's, when given, whatever @offset says). ValueError when
        @offset is in none of them."""
        if slot is not None:
            if not 0 <= slot < self.slots:
                raise ValueError(f"slot {slot} is not one of the ring's {self.slots}")
            start = self.slot_offset(slot)
            return start, start + self.slot_bytes
        if 0 <= offset < self.data_offset:
            return 0, self.data_offset
        if offset >= self.data_offset and self.slot_bytes:
            i = (offset - self.data_offset) // self.slot_bytes
            if i < self.slots:
                start = self.slot_offset(i)
                return start, start + self.slot_bytes
        raise ValueError(f"offset {offset} is outside the ring ({self.slots} slots of "
                         f"{self.slot_bytes} bytes from {self.data_offset})")

    def view(self, offset, nbytes, slot=None):
        """A read-only memoryview of @nbytes at @offset of the memfd (no
        copy), which must lie within one region: the header and descriptors,
        or one slot's payload (slot @slot's, when given). A view never
        crosses into a neighbouring slot, whose lease is someone else's."""
        start, end = self.region(offset, slot)
        if nbytes < 0 or offset < start or offset + nbytes > end:
            where = f"slot {slot}" if slot is not None else "its region"
            raise ValueError(f"[{offset}, {offset + nbytes}) is not within {where} "
                             f"[{start}, {end}) of the ring")
        return memoryview(self._map())[offset:offset + nbytes]

    def lease_held(self, slot, generation):
        """True while slot @slot holds lease @generation: the descriptor the
        daemon writes says READY with that generation (it frees it there
        when the lease ends: release, expiry, the ring's close)."""
        mm = self._mm
        if mm is None or not 0 <= slot < self.slots:
            return False
        try:
            _, gen, status = _DESC_HEAD.unpack_from(mm, RING_HEADER.size +
                                                    slot * RING_SLOT.size)
        except ValueError:      # unmapped meanwhile (closed)
            return False
        return status == SLOT_READY and gen == generation

    def _map(self):
        if self._mm is None:
            raise ValueError("ring is closed")
        return self._mm

    @property
    def mmap(self):
        """The read-only mapping of the whole memfd."""
        return self._map()

    def fileno(self):
        return self.fd

    def _unmap(self):
        mm, self._mm = self._mm, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                pass  # arrays still view it: unmapped when they are gone
        if self.fd is not None and self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1

    def close(self, timeout=None):
        """RingClose, then unmap. Results still viewing the ring keep the
        mapping alive until they are garbage."""
        if not self.closed:
            self._client.close_ring(self, timeout=timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<dvpp.Ring {self.id}{' ' + repr(self.name) if self.name else ''} "
                f"{self.slots}x{self.slot_bytes}{' closed' if self.closed else ''}>")


# --------------------------------------------------------------------------
# Results


class Result:
    """A finished job (or an unsolicited HTTP delivery, ``id`` 0, ``origin``
    "http"). For ring results the payload stays in the ring slot until
    ``release()`` (or the end of a ``with`` block) sends SlotRelease, the
    lease times out, or the ring closes; ``array()``/``buffer()`` views are
    valid only during that lease (see the module's "Leases"). Inline
    results own their bytes (``data``).

    ``ring`` is the Ring object the result was filed under when it arrived
    (None when that ring was already gone): the result keeps to it even
    when a later ring gets the same id."""

    def __init__(self, client, env_id, msg, seq, ring=None):
        self._client = client
        self.id = env_id
        self.seq = seq                 # arrival order on this connection
        self.status = msg.status
        self.code = msg.code
        self.message = msg.message
        self.field = msg.field
        self.meta = msg.meta
        self.ring_id = msg.ring
        self.ring = ring if msg.ring else None
        self.slot = msg.slot
        self.generation = msg.generation
        self.offset = msg.offset
        self.data = msg.data if not msg.ring else None
        self.geom = msg.geom
        self.timings = msg.timings
        self.batch = msg.batch
        self.item_status = list(msg.item_status)
        self.origin = msg.origin
        self._released = not (msg.ring and msg.status == 0)
        self._guard = None             # guard mode: the slot's private mapping

    @property
    def ok(self):
        return self.status == 0

    @property
    def dtype(self):
        return self.meta.dtype

    @property
    def shape(self):
        return tuple(self.meta.shape)

    @property
    def nbytes(self):
        """Payload bytes: meta.bytes (or, for a ring result whose meta leaves
        it 0, the shape's element count times the dtype's size)."""
        if not self.ring_id:
            return len(self.data or b"")
        if self.meta.bytes or not self.meta.shape:
            return self.meta.bytes
        return _prod(self.meta.shape) * _ITEMSIZE.get(self.meta.dtype or "uint8", 1)

    @property
    def released(self):
        return self._released

    def _lease_lost(self):
        """Why the slot is no longer this result's ("released", "closed",
        "expired"), or None while the lease holds (or for inline results)."""
        if not self.ring_id:
            return None
        if self._released and self.status == 0:
            return "released"
        ring = self.ring
        if ring is None or ring.closed or ring._closing or \
                self._client._rings.get(self.ring_id) is not ring:
            return "closed"
        if not ring.lease_held(self.slot, self.generation):
            return "expired"
        return None

    @property
    def valid(self):
        """True while the slot is still this result's (an inline result
        always is)."""
        return self._lease_lost() is None

    def check(self):
        """Raise LeaseError when the slot is no longer this result's. Called
        after using views of it, this proves the bytes they showed were
        this job's the whole time (the daemon frees the descriptor before
        it lets another job write the slot)."""
        why = self._lease_lost()
        if why is not None:
            raise LeaseError(why, _LEASE_TEXT[why].format(self))

    def buffer(self):
        """The payload without a copy: a read-only memoryview of the ring
        slot (valid only during the lease), or of the inline bytes.
        LeaseError once the lease is over."""
        if self.status != 0:
            raise _error_from(self, self)
        if not self.ring_id:
            return memoryview(self.data)
        if self.ring is None and not self._released:
            raise LeaseError("closed", f"result names ring {self.ring_id}, which was "
                             f"closed (or unknown) when it arrived")
        self.check()
        n = self.nbytes
        try:
            start, end = self.ring.region(self.offset, self.slot)
        except ValueError:
            start = end = 0
        if end == 0 or self.offset < start or self.offset + n > end:
            raise ProtocolError(f"dvppd named {n} bytes at {self.offset} in slot "
                                f"{self.slot}, outside the slot", "offset")
        if self._client.guard:
            if self._guard is None:
                self._guard = self._client._guards.add(self, start, end - start)
            mm = self._guard.mm
            if mm is None:      # revoked: the lease ended just now
                self.check()
                raise LeaseError("expired", _LEASE_TEXT["expired"].format(self))
            return memoryview(mm)[self.offset - start:self.offset - start + n]
        return self.ring.view(self.offset, n, self.slot)

    def tobytes(self):
        """A copy of the payload; LeaseError when the lease ended before the
        copy was complete (it may have caught another job's bytes)."""
        out = bytes(self.buffer())
        self.check()
        return out

    def array(self):
        """The payload as a numpy array of the meta's dtype and shape: a
        read-only view of the ring slot (no copy; valid only during the
        lease), or of the inline bytes. LeaseError once the lease is over."""
        import numpy as np

        buf = self.buffer()
        dt = np.dtype(NP_DTYPES.get(self.meta.dtype or "uint8", self.meta.dtype))
        count = len(buf) // dt.itemsize
        a = np.frombuffer(buf, dtype=dt, count=count)
        shape = self.shape
        if shape and _prod(shape) == count:
            a = a.reshape(shape)
        return a

    def release(self):
        """Give the ring slot back (SlotRelease; once). No-op for inline or
        failed results, and for a result whose ring was closed (the daemon
        freed the slot with it: a SlotRelease by its id could free a slot of
        a later ring that got the same id). In guard mode the views stop
        being readable here."""
        if self._released:
            return
        self._released = True
        if self._guard is not None:
            self._client._guards.revoke(self._guard)
        ring = self.ring
        if ring is None or not self._client._ring_live(ring):
            return
        self._client._release_lease(ring, self.slot, self.generation)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self):
        if self.status:
            return f"<dvpp.Result id={self.id} {self.code} {self.message!r}>"
        where = (f"ring={self.ring_id} slot={self.slot} gen={self.generation}"
                 if self.ring_id else f"inline {self.nbytes} B")
        return (f"<dvpp.Result id={self.id} {self.meta.dtype} {list(self.meta.shape)} "
                f"{where}{' origin=' + self.origin if self.origin else ''}>")


_LEASE_TEXT = {
    "released": "slot {0.slot} of ring {0.ring_id} was released",
    "closed": "ring {0.ring_id} was closed: slot {0.slot} went back with it",
    "expired": "the lease of slot {0.slot} (generation {0.generation}) of ring "
               "{0.ring_id} expired: the daemon took the slot back",
}


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


class Batch:
    """A BatchSubmit the daemon accepted: ``id`` (the request id: wait on
    it), ``batch`` (the daemon's batch id), ``items``."""

    def __init__(self, client, req_id, accepted):
        self._client = client
        self.id = req_id
        self.batch = accepted.batch
        self.items = accepted.items

    def query(self, timeout=None):
        return self._client.batch_query(self.batch, timeout=timeout)

    def cancel(self, timeout=None):
        return self._client.batch_cancel(self.batch, timeout=timeout)

    def wait(self, timeout=None, check=True):
        return self._client.wait(self.id, timeout=timeout, check=check)

    def __repr__(self):
        return f"<dvpp.Batch id={self.id} batch={self.batch} items={self.items}>"


# --------------------------------------------------------------------------
# Video channels


class VideoFrame(Result):
    """One decoded frame in a ring slot (``Client.decode_video``): a Result
    (``array()``, ``buffer()``, ``meta``, ``release()``, a context manager)
    plus ``index`` (decoded frame number), ``pts`` (stream time base;
    -2**63 when the stream has none, as Annex-B), ``time_s`` (without pts:
    index / frame rate) and ``key``. Without a spec its payload is the frame's
    pixels (``meta.format``, ``width``, ``height``, ``width_stride`` = bytes of
    a row of plane 0, ``height_stride`` = its rows); with one, the tensor
    (``meta.width``/``height``: the frame it was made of). Every frame has its
    own meta, shape and ``geom``: in a stream whose resolution changes each
    comes at its own size (or as the tensor its own plan makes)."""

    def __init__(self, client, env_id, vf, seq, ring=None):
        super().__init__(client, env_id, vf.result, seq, ring)
        self.channel = vf.channel
        self.index = vf.index
        self.pts = vf.pts
        self.time_s = vf.time_s
        self.key = vf.key

    def planes(self):
        """The pixels as numpy views cropped to the picture (no copy):
        ``[Y (h, w), UV (h/2, w)]`` for nv12/nv21, ``[RGB (h, w, 3)]`` for
        rgb/bgr."""
        m = self.meta
        a = self.array().reshape(-1)
        ws, hs, w, h = m.width_stride, m.height_stride, m.width, m.height
        if m.format in ("nv12", "nv21"):
            y = a[:ws * hs].reshape(hs, ws)[:h, :w]
            uv = a[ws * hs:ws * hs + ws * (hs // 2)].reshape(hs // 2, ws)[:(h + 1) // 2, :w]
            return [y, uv]
        if m.format in ("rgb", "bgr"):
            return [a[:ws * hs].reshape(hs, ws)[:h, :w * 3].reshape(h, w, 3)]
        raise ValueError(f"no planes for a {m.format or m.dtype!r} frame")

    def __repr__(self):
        return (f"<dvpp.VideoFrame index={self.index} t={self.time_s:.3f}"
                f"{' key' if self.key else ''} {self.meta.format or self.meta.dtype} "
                f"{list(self.meta.shape)} slot={self.slot}>")


class EncodedVideo(bytes):
    """The bytes of ``Client.encode_video`` (an Annex-B stream or an MP4),
    with the daemon's ``packets`` and ``keyframes`` counts."""

    packets = 0
    keyframes = 0


class _Channel:
    """A video channel's requests: the VideoOpen's id is the key under
    which every answer of the channel is filed (VideoFrame and VideoData
    echo it; the packets' and the VideoClose's ids are aliased to it), so
    one queue holds them in the order the daemon sent them."""

    def __init__(self, client, env, timeout, what):
        self.client = client
        self.key = env.id
        self.timeout = timeout
        self.ids = [env.id]
        self.channel = None
        try:
            ans, fds = client._call(env, timeout=timeout, what=what, final=False)
        except BaseException:
            self.forget()
            raise
        for f in fds:
            os.close(f)
        body = ans.WhichOneof("body")
        if body != "video_opened":
            self.forget()
            if body == "error":
                raise _error_from(ans.error)
            raise ProtocolError(f"expected video_opened, got {body}")
        self.channel = ans.video_opened.channel

    def _envelope(self):
        env = self.client._envelope()
        with self.client._cv:
            self.client._alias[env.id] = self.key
            self.ids.append(env.id)
        return env

    def packet(self, fds=(), **fields):
        """Send a VideoPacket; its id."""
        env = self._envelope()
        p = env.video_packet
        p.channel = self.channel
        for k, v in fields.items():
            setattr(p, k, v)
        self.client._send(env, fds)
        return env.id

    def next(self, timeout, what):
        """The channel's next answer (seq, Envelope); TimeoutError."""
        seq, env, _ = self.next_pinned(timeout, what)
        return seq, env

    def next_pinned(self, timeout, what):
        """next(), with the Ring a frame was filed under on arrival."""
        c = self.client
        seq, env, fds, ring = c._wait_for(lambda: c._take_answer(self.key), timeout, what)
        for f in fds:
            os.close(f)
        return seq, env, ring

    def drop(self, env, ring):
        """Give back the slot of a VideoFrame nobody will see (not when its
        ring, @ring, was closed meanwhile: the slot went with it)."""
        if env.WhichOneof("body") != "video_frame":
            return
        r = env.video_frame.result
        if r.ring and r.status == 0 and ring is not None and self.client._ring_live(ring):
            try:
                self.client._release_lease(ring, r.slot, r.generation)
            except DvppError:
                pass

    def close(self):
        """VideoClose and its Ack (what is still queued before it is
        dropped), then forget the channel."""
        try:
            if self.channel is not None and not self.client.closed:
                env = self._envelope()
                env.video_close.channel = self.channel
                self.client._send(env)
                while True:
                    _, ans, ring = self.next_pinned(self.timeout, "Ack of VideoClose")
                    self.drop(ans, ring)
                    if ans.id == env.id:
                        break
        except (DvppError, TimeoutError):
            pass
        finally:
            self.forget()

    def forget(self):
        c = self.client
        with c._cv:
            for i in self.ids:
                c._alias.pop(i, None)
            c._pending.discard(self.key)
            left = c._answers.pop(self.key, ())
        for _, env, fds, ring in left:
            for f in fds:
                os.close(f)
            self.drop(env, ring)


class VideoDecode:
    """The frames of one decode channel (``Client.decode_video``), an
    iterator of VideoFrame in presentation order. The iteration ends after
    the last frame, or raises the daemon's DvppError (ECORRUPT for a
    damaged stream, after the frames decoded before the damage). Leaving
    early: ``close()`` (or the end of a ``with`` block) gives the frames not
    taken back and waits for the daemon to finish the stream."""

    def __init__(self, client, env, data, memfd, timeout):
        self._client = client
        self._timeout = timeout
        self._error = None
        self._done = False
        mv = memoryview(data).cast("B")
        if not mv.nbytes:
            raise ValueError("no stream bytes")
        self._ch = _Channel(client, env, timeout, "VideoOpened")
        try:
            self._eos_id = self._send(mv, memfd)
        except BaseException:
            self._done = True
            self._ch.close()
            raise

    def _send(self, mv, memfd):
        n, chunk = mv.nbytes, max(int(self._client.info.max_inline), 1)
        if memfd or (memfd is None and n > chunk * VIDEO_INLINE_PACKETS):
            fd = sealed_memfd(mv, "dvpp-video")
            try:
                return self._ch.packet([fd], data_fd=True, data_len=n, eos=True)
            finally:
                os.close(fd)
        off = 0
        while True:
            part = mv[off:off + chunk]
            off += part.nbytes
            pid = self._ch.packet(data=part.tobytes(), eos=off >= n)
            if off >= n:
                return pid

    def __iter__(self):
        return self

    def __next__(self):
        return self.next_frame(self._timeout)

    def next_frame(self, timeout=None):
        """The next frame, waiting up to @timeout seconds (None: the
        decode's timeout): TimeoutError when none came (the decode goes on),
        StopIteration after the last, the daemon's DvppError."""
        while not self._done:
            seq, env, ring = self._ch.next_pinned(
                timeout if timeout is not None else self._timeout, "VideoFrame")
            body = env.WhichOneof("body")
            if body == "video_frame":
                if self._error is not None:
                    self._ch.drop(env, ring)
                    continue
                return VideoFrame(self._client, env.id, env.video_frame, seq, ring)
            if body == "error":
                self._error = self._error or _error_from(env.error)
            elif body != "ack":
                self._error = self._error or ProtocolError(f"{body} on a decode channel")
            if env.id == self._eos_id:
                self._done = True
                self._ch.close()
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        raise StopIteration

    def close(self):
        """Stop: frames not taken yet go back unseen; returns once the
        daemon has finished the stream and the channel is closed."""
        if self._done:
            return
        self._done = True
        try:
            while True:
                _, env, ring = self._ch.next_pinned(self._timeout, "end of the stream")
                self._ch.drop(env, ring)
                if env.id == self._eos_id:
                    break
        except (DvppError, TimeoutError):
            pass
        finally:
            self._ch.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if not self._done and not self._client.closed:
                self.close()
        except Exception:
            pass


def _frame_bytes(fmt, w, h):
    """A tight frame's bytes, None for a format this client does not know."""
    if fmt in ("nv12", "nv21", "i420", "", None):
        return w * h * 3 // 2
    if fmt in ("rgb", "bgr"):
        return w * h * 3
    return None


def _frame_size(a, fmt):
    """(width, height) of a frame array: (h, w, 3) for rgb/bgr, (h*3/2, w)
    for the 4:2:0 formats."""
    shape = getattr(a, "shape", None)
    if not shape or len(shape) < 2:
        raise ValueError("width and height are needed for frames without a 2-D shape")
    if fmt in ("rgb", "bgr"):
        return int(shape[1]), int(shape[0])
    return int(shape[1]), int(shape[0]) * 2 // 3


class _VideoEncoder:
    """An encode channel: frames out, VideoData in (see Client.encode_video)."""

    def __init__(self, client, env, frame_bytes, sink, timeout):
        self.client = client
        self.frame_bytes = frame_bytes
        self.sink = sink
        self.timeout = timeout
        self.sent = 0
        self.packets = 0
        self.keyframes = 0
        self.eos_id = None
        self.done = False
        self.error = None
        half = int(client.info.max_inflight) // 2
        self.window = min(VENC_WINDOW, half) if half else VENC_WINDOW
        self.ch = _Channel(client, env, timeout, "VideoOpened")

    def _take(self, env):
        body = env.WhichOneof("body")
        if body == "video_data":
            vd = env.video_data
            self.packets, self.keyframes = vd.packets, vd.keyframes
            if self.error is None and vd.data:
                self.sink(vd.data)
            return
        if body == "error":
            self.error = self.error or _error_from(env.error)
        elif body != "ack":
            self.error = self.error or ProtocolError(f"{body} on an encode channel")
        if env.id == self.eos_id:
            self.done = True

    def _pump(self, timeout):
        """One answer if it comes within @timeout s: True, else False."""
        try:
            _, env = self.ch.next(timeout, "VideoData")
        except TimeoutError:
            return False
        self._take(env)
        return True

    def _raise(self):
        if self.error is not None:
            raise self.error

    def frame(self, f, idr=False):
        try:
            mv = memoryview(f).cast("B")
        except TypeError:  # not C-contiguous
            import numpy as np
            mv = memoryview(np.ascontiguousarray(f)).cast("B")
        if self.frame_bytes is not None and mv.nbytes != self.frame_bytes:
            raise ValueError(f"frame {self.sent} has {mv.nbytes} bytes, the format and size "
                             f"need {self.frame_bytes}")
        while self._pump(0):   # what came meanwhile
            pass
        while self.error is None and self.sent - min(self.packets, self.sent) >= self.window:
            if not self._pump(VENC_STALL_S):
                break
        self._raise()
        if mv.nbytes > self.client.info.max_inline:
            fd = sealed_memfd(mv, "dvpp-frame")   # sealed: one per frame
            try:
                self.ch.packet([fd], data_fd=True, data_len=mv.nbytes, pts=self.sent,
                               force_idr=bool(idr))
            finally:
                os.close(fd)
        else:
            self.ch.packet(data=mv.tobytes(), pts=self.sent, force_idr=bool(idr))
        self.sent += 1

    def _rest(self):
        """Every answer up to the eos packet's (TimeoutError after the
        timeout without one)."""
        while self.eos_id is not None and not self.done:
            _, env = self.ch.next(self.timeout, "end of the stream")
            self._take(env)

    def finish(self):
        self._raise()
        self.eos_id = self.ch.packet(eos=True)
        self._rest()
        self._raise()

    def close(self):
        """End the stream if frames were sent (the channel is closed only
        once none of its jobs runs: a VideoClose that overtakes a running
        job crashes dvppd 0.1.0), wait for the eos answer, VideoClose."""
        try:
            if self.eos_id is None and self.sent and not self.client.closed:
                self.error = self.error or DvppError(STATUS["ECANCELED"], "ECANCELED",
                                                     "the encode was abandoned")
                self.eos_id = self.ch.packet(eos=True)
            self._rest()
        except (DvppError, TimeoutError):
            pass
        finally:
            self.ch.close()


# --------------------------------------------------------------------------
# The connection


class Client:
    """One connection to dvppd: ``Client(path)`` connects and does the
    Hello/Welcome handshake (``info`` is the Welcome). ``timeout`` (seconds,
    None = forever) is the default wait for every answer. ``guard`` (default:
    DVPP_GUARD=1 in the environment) is the debug mode of the module's
    "Leases": views of a result die (SIGSEGV) once its lease is over; it
    needs numpy and costs a mapping per result and a watchdog thread.
    ``notices_dropped`` counts the unsolicited notices dropped past
    MAX_NOTICES (their slots were given back)."""

    def __init__(self, path, timeout=None, client_name=None, guard=None):
        self.path = path
        self.timeout = timeout
        if guard is None:
            guard = os.environ.get("DVPP_GUARD", "") not in ("", "0")
        self.guard = bool(guard)
        self._guards = _Guards() if self.guard else None
        self.notices_dropped = 0
        self._cv = threading.Condition()
        self._next_id = 1
        self._reading = False
        self._pending = set()            # ids whose answers are filed
        self._answers = {}               # id -> deque[(seq, Envelope, fds, Ring)]
        self._notices = collections.deque()
        self.release_errors = collections.deque(maxlen=256)  # Errors to SlotRelease
        self._release_ids = set()
        self._rings = {}
        self._alias = {}                 # video packet id -> its channel's key
        self._seq = 0
        self._dead = None                # the Disconnected once gone
        self._last_error = None          # an unsolicited Error (before a drop)
        self._recv_cap = 1 << 20
        self.info = None
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        try:
            self._sock.connect(path)
            env = self._envelope()
            env.hello.protocol = PROTOCOL
            env.hello.client = client_name or f"dvpp-python {__version__}"
            ans, _ = self._call(env, timeout=timeout if timeout is not None else 30.0,
                                what="Welcome")
            if ans.WhichOneof("body") != "welcome":
                raise ProtocolError(f"answer to Hello is {ans.WhichOneof('body')}, not Welcome")
            if ans.welcome.protocol != PROTOCOL:
                raise ProtocolError(f"dvppd speaks protocol {ans.welcome.protocol}, "
                                    f"this client {PROTOCOL}", "protocol")
            self.info = ans.welcome
            # a packet is at most max_inline + 64 KiB (PROTOCOL.md)
            self._recv_cap = int(self.info.max_inline) + (128 << 10)
        except Disconnected as e:
            self._sock.close()
            raise Disconnected(f"dvppd closed the connection before its Welcome "
                               f"(peer not allowed?): {e.message}", e.last_error) from None
        except BaseException:
            self._sock.close()
            raise

    # -- plumbing ------------------------------------------------------------

    def fileno(self):
        return self._sock.fileno()

    @property
    def closed(self):
        return self._dead is not None

    def _envelope(self):
        env = pb.Envelope()
        env.protocol = PROTOCOL
        with self._cv:
            env.id = self._next_id
            self._next_id += 1
        return env

    def _send(self, env, fds=()):
        """Send @env with @fds (borrowed)."""
        self._sendmsg(env, fds, 0)

    def _send_nowait(self, env):
        """Send @env unless the socket buffer is full (then drop it and
        return False): for the reading thread, which must never block."""
        try:
            self._sendmsg(env, (), socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        return True

    def _sendmsg(self, env, fds, flags):
        if self._dead is not None:
            raise self._dead
        data = env.SerializeToString()
        try:
            if fds:
                self._sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                             array.array("i", fds))], flags)
            else:
                self._sock.sendmsg([data], [], flags)
        except BlockingIOError:
            raise
        except OSError as e:
            if e.errno in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.EBADF):
                self._mark_dead(Disconnected(f"send: {e.strerror}", self._last_error))
                raise self._dead from None
            raise

    def _mark_dead(self, exc):
        with self._cv:
            if self._dead is None:
                self._dead = exc
            self._cv.notify_all()

    def _recv_packet(self, timeout):
        """One packet, or None after @timeout seconds. Called by the one
        reading thread, without the lock."""
        if self._sock.fileno() < 0:
            raise Disconnected("the client was closed")
        p = select.poll()
        p.register(self._sock, select.POLLIN)
        ms = None if timeout is None else max(0, int(timeout * 1000 + 0.999))
        if not p.poll(ms):
            return None
        try:
            data, anc, flags, _ = self._sock.recvmsg(
                self._recv_cap, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC)
        except (ConnectionResetError, BrokenPipeError) as e:
            raise Disconnected(f"recv: {e.strerror}", self._last_error) from None
        fds = []
        for level, kind, d in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(d[:len(d) - len(d) % a.itemsize])
                fds.extend(a)
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            for f in fds:
                os.close(f)
            raise ProtocolError("truncated packet from dvppd")
        if not data and not anc:
            raise Disconnected("dvppd closed the connection", self._last_error)
        env = pb.Envelope()
        try:
            env.ParseFromString(data)
        except Exception as e:  # google.protobuf.message.DecodeError
            for f in fds:
                os.close(f)
            raise ProtocolError(f"undecodable packet from dvppd: {e}") from None
        return env, fds

    def _pin(self, env, body):
        """The Ring a Result or VideoFrame names, as the connection stands
        now (lock held): ids may be given to a later ring after a
        RingClose, so the ring is pinned in the socket's order, on arrival,
        not when someone collects the answer. None for no ring, an unknown
        one, or one being closed."""
        if body == "result":
            rid = env.result.ring
        elif body == "video_frame":
            rid = env.video_frame.result.ring
        else:
            return None
        ring = self._rings.get(rid) if rid else None
        return ring if ring is not None and self._ring_live(ring) else None

    def _file(self, env, fds):
        """File one received packet (lock held)."""
        self._seq += 1
        body = env.WhichOneof("body")
        ring = self._pin(env, body)
        if env.id == 0:
            if body == "result":
                self._notice(env.result, ring)
            elif body == "error":
                self._last_error = _error_from(env.error)
            for f in fds:
                os.close(f)
            return
        key = self._alias.get(env.id, env.id)
        if key in self._pending:
            self._answers.setdefault(key, collections.deque()).append(
                (self._seq, env, fds, ring))
            return
        for f in fds:
            os.close(f)
        if body == "error":
            if env.id in self._release_ids:
                self._release_ids.discard(env.id)
                self.release_errors.append(_error_from(env.error))
            else:
                self._last_error = _error_from(env.error)

    def _notice(self, msg, ring):
        """Queue an unsolicited Result (lock held), or past MAX_NOTICES
        drop it, count it and give its slot back at once (without blocking:
        this is the reading thread; a full socket leaves the slot to its
        lease timeout)."""
        if len(self._notices) < MAX_NOTICES:
            self._notices.append(Result(self, 0, msg, self._seq, ring))
            return
        self.notices_dropped += 1
        if msg.ring and msg.status == 0 and ring is not None:
            try:
                self._release_lease(ring, msg.slot, msg.generation, nowait=True)
            except DvppError:
                pass

    def _wait_for(self, take, timeout, what):
        """Read packets until take() (called with the lock held) returns
        something; one thread reads at a time. @timeout 0: read only what
        has already arrived (no waiting)."""
        if timeout is None:
            timeout = self.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        idle = False   # timeout 0: the socket had nothing more
        with self._cv:
            while True:
                got = take()
                if got is not None:
                    return got
                if self._dead is not None:
                    raise self._dead
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    if timeout != 0 or idle or self._reading:
                        raise TimeoutError(f"no {what} from dvppd within {timeout} s")
                    left = 0
                if self._reading:
                    self._cv.wait(left)
                    continue
                self._reading = True
                self._cv.release()
                pkt, exc = None, None
                try:
                    pkt = self._recv_packet(left)
                except DvppError as e:
                    exc = e
                finally:
                    self._cv.acquire()
                    self._reading = False
                    self._cv.notify_all()
                if exc is not None:
                    if isinstance(exc, Disconnected):
                        # answers already filed stay there for their waiters
                        self._dead = exc
                        got = take()
                        if got is not None:
                            return got
                    raise exc
                if pkt is not None:
                    self._file(*pkt)
                else:
                    idle = True

    def _take_answer(self, req_id):
        q = self._answers.get(req_id)
        if not q:
            return None
        item = q.popleft()
        if not q:
            del self._answers[req_id]
        return item

    def _wait_answer(self, req_id, timeout, what, final=True):
        """(seq, Envelope, fds, pinned Ring) of @req_id's next answer."""
        try:
            seq, env, fds, ring = self._wait_for(lambda: self._take_answer(req_id),
                                                 timeout, what)
        except TimeoutError:
            raise  # still filed when it comes: wait again
        except BaseException:
            if final:
                with self._cv:
                    self._pending.discard(req_id)
            raise
        if final:
            with self._cv:
                self._pending.discard(req_id)
        return seq, env, fds, ring

    def _call(self, env, fds=(), timeout=None, what="answer", final=True):
        with self._cv:
            self._pending.add(env.id)
        try:
            self._send(env, fds)
        except BaseException:
            with self._cv:
                self._pending.discard(env.id)
            raise
        seq, ans, got_fds, _ = self._wait_answer(env.id, timeout, what, final)
        return ans, got_fds

    def _simple(self, env, want, timeout=None):
        """Send, wait, raise an Error answer, check the body kind."""
        ans, fds = self._call(env, timeout=timeout, what=want)
        for f in fds:
            os.close(f)
        body = ans.WhichOneof("body")
        if body == "error":
            raise _error_from(ans.error)
        if body != want:
            raise ProtocolError(f"expected {want}, got {body}")
        return getattr(ans, want)

    def close(self):
        """Close the connection (the daemon closes its rings and frees
        their slots) and unmap every ring."""
        with self._cv:
            if self._dead is None:
                self._dead = Disconnected("the client was closed")
            rings = list(self._rings.values())
            self._rings.clear()
            for q in self._answers.values():
                for _, _, fds, _ in q:
                    for f in fds:
                        os.close(f)
            self._answers.clear()
            self._cv.notify_all()
        if self._guards is not None:
            self._guards.close()
        for r in rings:
            r.closed = True
            r._unmap()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a thread polling it
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if self._dead is None:
                self.close()
        except Exception:
            pass

    # -- streams -------------------------------------------------------------

    def create_stream(self, timeout=None):
        """A new stream: jobs submitted on it run (and answer) in order."""
        env = self._envelope()
        env.stream_create.SetInParent()
        return self._simple(env, "stream_created", timeout).stream

    def sync_stream(self, stream, timeout=None):
        """Wait until every job submitted on @stream before now has its
        Result sent (those Results are then already received: ``wait`` on
        them returns at once). Raises the first job error since the
        previous sync."""
        env = self._envelope()
        env.stream_sync.stream = stream
        self._simple(env, "ack", timeout)

    def destroy_stream(self, stream, timeout=None):
        env = self._envelope()
        env.stream_destroy.stream = stream
        self._simple(env, "ack", timeout)

    # -- rings ---------------------------------------------------------------

    def open_ring(self, slots, slot_bytes, name=None, timeout=None, *, http=False):
        """A ring of @slots slots of @slot_bytes (rounded up to 4096 by the
        daemon), mapped read-only. @name (at most 63 bytes, no '@', unique
        among this uid's rings) with @http lets HTTP requests deliver into
        it (?ring=NAME, or ?ring=NAME@UID with this process's uid); without
        @http no HTTP request can."""
        env = self._envelope()
        env.ring_open.slots = slots
        env.ring_open.slot_bytes = slot_bytes
        if name:
            env.ring_open.name = name
        if http:
            env.ring_open.http = True
        ans, fds = self._call(env, timeout=timeout, what="RingOpened")
        body = ans.WhichOneof("body")
        if body != "ring_opened":
            for f in fds:
                os.close(f)
            if body == "error":
                raise _error_from(ans.error)
            raise ProtocolError(f"expected ring_opened, got {body}")
        if len(fds) != 1:
            for f in fds:
                os.close(f)
            raise ProtocolError(f"RingOpened came with {len(fds)} fds, want 1")
        try:
            ring = Ring(self, ans.ring_opened, fds[0], name)
        except BaseException:
            try:
                env = self._envelope()
                env.ring_close.ring = ans.ring_opened.ring
                self._send(env)
            except DvppError:
                pass
            raise
        with self._cv:
            self._rings[ring.id] = ring
        return ring

    def close_ring(self, ring, timeout=None):
        """RingClose (answered once slots being written finish), then unmap.
        Results of the ring stop being valid at once (their release() is
        a no-op: the daemon frees the slots with the ring)."""
        if isinstance(ring, Ring):
            if ring.closed or ring._closing:
                return
            rid, r = ring.id, ring
        else:
            rid = int(ring)
            r = self._rings.get(rid)
        env = self._envelope()
        env.ring_close.ring = rid
        if r is not None:
            with self._cv:
                r._closing = True   # answers from now on do not map here
            if self._guards is not None:
                self._guards.revoke_ring(r)
        try:
            self._simple(env, "ack", timeout)
        finally:
            if r is not None:
                with self._cv:
                    if self._rings.get(rid) is r:
                        del self._rings[rid]
                r.closed = True
                r._unmap()

    def _ring_live(self, ring):
        """@ring is open on this connection and still the ring of its id."""
        return not ring.closed and not ring._closing and self._rings.get(ring.id) is ring

    def _release_lease(self, ring, slot, generation, nowait=False):
        self._send_release(ring.id, slot, generation, nowait)

    def _send_release(self, ring_id, slot, generation, nowait=False):
        """SlotRelease by bare id: its id is remembered so that an Error
        answering it lands in ``release_errors``."""
        env = self._envelope()
        env.slot_release.ring = ring_id
        env.slot_release.slot = slot
        env.slot_release.generation = generation
        with self._cv:
            self._release_ids.add(env.id)
            if len(self._release_ids) > 4096:
                self._release_ids = set(sorted(self._release_ids)[-2048:])
        if nowait:
            self._send_nowait(env)
        else:
            self._send(env)

    def release_slot(self, ring, slot, generation):
        """SlotRelease (no answer; an invalid one is answered with an Error,
        filed in ``release_errors``). Prefer ``Result.release()``. @ring a
        Ring object: LeaseError when it is closed (its id may be another
        ring's now); a bare id is sent as it is (the caller vouches)."""
        if isinstance(ring, Ring):
            if not self._ring_live(ring):
                raise LeaseError("closed", f"ring {ring.id} is closed: its slots went "
                                 f"back with it")
            self._release_lease(ring, slot, generation)
            return
        self._send_release(int(ring), slot, generation)

    # -- jobs ----------------------------------------------------------------

    def submit_async(self, spec=None, data=b"", kind="tensor", ring=None, stream=0, *,
                     input_fd=None, input_len=None, memfd=None, aipp_config=None,
                     deadline_ms=0):
        """Send a Submit; returns its id for ``wait``. The input is @data
        (inline when it fits Welcome.max_inline, else a sealed memfd; force
        either with @memfd True/False) or @input_fd, a memfd the caller
        sealed (borrowed)."""
        env = self._envelope()
        s = env.submit
        s.stream = stream
        s.kind = _kind(kind)
        s.spec = _spec_text(spec)
        if ring is not None:
            s.ring = ring.id if isinstance(ring, Ring) else int(ring)
        if aipp_config:
            s.aipp_config = aipp_config
        if deadline_ms:
            s.deadline_ms = deadline_ms
        fds, own = [], None
        try:
            if input_fd is not None:
                s.input_fd = True
                s.input_len = input_len if input_len is not None else os.fstat(input_fd).st_size
                fds = [input_fd]
            else:
                n = memoryview(data).nbytes
                big = n > (self.info.max_inline if self.info else 0)
                if memfd or (memfd is None and big):
                    own = sealed_memfd(data)
                    s.input_fd = True
                    s.input_len = n
                    fds = [own]
                else:
                    s.input = bytes(data)
            with self._cv:
                self._pending.add(env.id)
            try:
                self._send(env, fds)
            except BaseException:
                with self._cv:
                    self._pending.discard(env.id)
                raise
        finally:
            if own is not None:
                os.close(own)
        return env.id

    def ready(self, req_id):
        """True when the answer to @req_id has been received (``wait`` will
        not block)."""
        with self._cv:
            return bool(self._answers.get(req_id))

    def wait(self, req_id, timeout=None, check=True):
        """The Result of request @req_id (a Submit or a BatchSubmit). A
        failed job raises DvppError (its ``result`` set) unless @check is
        False."""
        seq, env, fds, ring = self._wait_answer(req_id, timeout,
                                                f"Result of request {req_id}")
        for f in fds:
            os.close(f)
        body = env.WhichOneof("body")
        if body == "error":
            raise _error_from(env.error)
        if body == "batch_accepted":  # wait() right after batch_submit_async's id
            with self._cv:
                self._pending.add(req_id)
            return self.wait(req_id, timeout, check)
        if body != "result":
            raise ProtocolError(f"expected result, got {body}")
        res = Result(self, env.id, env.result, seq, ring)
        if check and res.status != 0:
            raise _error_from(env.result, res)
        return res

    def submit(self, spec=None, data=b"", kind="tensor", ring=None, stream=0, *,
               timeout=None, check=True, **kw):
        """Submit and wait: the Result (release ring results, or use them as
        a context manager). Raises DvppError on refusal (e.g. code "EAGAIN",
        field "ring": the ring is full; submits never block) or failure."""
        rid = self.submit_async(spec, data, kind, ring, stream, **kw)
        return self.wait(rid, timeout=timeout, check=check)

    def batch_submit_async(self, spec, inputs, ring, strict=False, *, memfd=None,
                           aipp_config=None, timeout=None):
        """Send a BatchSubmit and wait for BatchAccepted: a Batch (wait on
        it for the Result). Inputs go inline when they fit Welcome.max_inline
        together, else (or with @memfd) as sealed memfds."""
        env = self._envelope()
        b = env.batch_submit
        b.spec = _spec_text(spec)
        b.ring = ring.id if isinstance(ring, Ring) else int(ring)
        b.strict = bool(strict)
        if aipp_config:
            b.aipp_config = aipp_config
        views = [memoryview(x).cast("B") for x in inputs]
        total = sum(v.nbytes for v in views)
        fds = []
        try:
            if memfd or (memfd is None and total > self.info.max_inline):
                if len(views) > MAX_FDS:
                    raise ValueError(f"at most {MAX_FDS} memfd inputs per batch")
                for v in views:
                    fds.append(sealed_memfd(v))
                    b.input_lens.append(v.nbytes)
                b.input_fds = len(fds)
            else:
                for v in views:
                    b.inputs.append(v.tobytes())
            with self._cv:
                self._pending.add(env.id)
            try:
                self._send(env, fds)
                seq, ans, got, ring = self._wait_answer(env.id, timeout, "BatchAccepted",
                                                        final=False)
            except BaseException:
                with self._cv:
                    self._pending.discard(env.id)
                raise
        finally:
            for f in fds:
                os.close(f)
        for f in got:
            os.close(f)
        body = ans.WhichOneof("body")
        if body == "error":
            with self._cv:
                self._pending.discard(env.id)
            raise _error_from(ans.error)
        if body == "result":  # finished (or failed) before accepting: keep it
            with self._cv:
                self._answers.setdefault(env.id, collections.deque()).appendleft(
                    (seq, ans, [], ring))
            acc = pb.BatchAccepted(batch=ans.result.batch, items=len(views))
            return Batch(self, env.id, acc)
        if body != "batch_accepted":
            with self._cv:
                self._pending.discard(env.id)
            raise ProtocolError(f"expected batch_accepted, got {body}")
        return Batch(self, env.id, ans.batch_accepted)

    def batch_submit(self, spec, inputs, ring, strict=False, *, timeout=None, check=True,
                     **kw):
        """N inputs through one pipeline into one N x ... tensor in a slot of
        @ring; waits for the Result (``item_status`` per item; with
        @strict the first failure fails it)."""
        return self.batch_submit_async(spec, inputs, ring, strict, timeout=timeout,
                                       **kw).wait(timeout=timeout, check=check)

    def batch_query(self, batch, timeout=None):
        env = self._envelope()
        env.batch_query.batch = batch
        return self._simple(env, "batch_progress", timeout)

    def batch_cancel(self, batch, timeout=None):
        env = self._envelope()
        env.batch_cancel.batch = batch
        self._simple(env, "ack", timeout)

    # -- video ---------------------------------------------------------------

    def decode_video(self, data, ring, spec=None, format="nv12", every=1, fps=0,
                     keyframes=False, start=0, end=0, max_frames=0, *, memfd=None,
                     timeout=None, deadline_ms=0):
        """Decode the video in @data (an Annex-B H.264/H.265 stream, or an
        MP4, MKV or MPEG-TS file) into slots of @ring: a VideoDecode, an
        iterator of VideoFrame (Results holding a slot each, with ``index``,
        ``pts``, ``time_s``, ``key``) in presentation order.

        Sampling: every @every-th decoded frame, at most @fps frames a
        second (0: all), @keyframes only, times in [@start, @end] seconds
        (@end 0: to the end), at most @max_frames (0: no cap). @format: the
        frames' pixels, "nv12" (VDEC strides ALIGN(w,16) x ALIGN(h,2)),
        "nv21", "rgb", "bgr"; with @spec (a tensor spec, dict or JSON) each
        frame goes through that pipeline instead and the slot holds the
        tensor. The channel is opened and the bytes are sent at once
        (inline packets of max_inline bytes, or one sealed memfd for more
        than 16 of them; force either with @memfd); a refusal (bad spec, no
        such ring) raises here. A full ring holds the daemon's decoder back
        (without holding a worker): release frames to go on; none is
        dropped. The decode must end within @deadline_ms of its start (0,
        or more than Welcome.video_deadline_ms: that), waits included, else
        it fails with ETIMEDOUT. @timeout: the wait for each frame (None:
        the client's default)."""
        env = self._envelope()
        vo = env.video_open
        vo.ring = ring.id if isinstance(ring, Ring) else int(ring)
        vo.spec = _spec_text(spec)
        vo.format = format or ""
        vo.every = int(every or 0)
        vo.fps = float(fps or 0)
        vo.keyframes_only = bool(keyframes)
        vo.start_s = float(start or 0)
        vo.end_s = float(end or 0)
        vo.max_frames = int(max_frames or 0)
        vo.deadline_ms = int(deadline_ms or 0)
        return VideoDecode(self, env, data, memfd, timeout)

    def encode_video(self, frames, codec="h264", width=None, height=None, fps=30, gop=30,
                     rc="crf", bitrate=2000, crf=23, profile="", mp4=False,
                     input_format="rgb", idr=(), *, sink=None, timeout=None):
        """Encode @frames (an iterable of numpy arrays or other buffers of
        tight rows: (h, w, 3) for rgb/bgr, (h*3/2, w) for nv12/nv21/i420) to
        H.264 or H.265 (@codec) through an encode channel; returns the
        stream as EncodedVideo (bytes with ``packets`` and ``keyframes``),
        an Annex-B stream or, with @mp4, an MP4 file.

        @width/@height default to the first frame's shape; @fps may be a
        fraction (29.97); @gop is the key frame interval; @rc "crf" (with
        @crf), "cbr" or "vbr" (with @bitrate, kbit/s); @profile e.g.
        "baseline", "main", "high"; @idr the indices of frames forced to be
        IDR frames. Frames travel as sealed memfds (one each) when larger
        than max_inline. With @sink (a callable) the bytes go to it as they
        come and the returned EncodedVideo is empty. At most 64 frames (or
        half of Welcome.max_inflight) wait for their packet at a time."""
        it = iter(frames)
        first = next(it, None)
        if first is None:
            raise ValueError("no frames")
        if width is None or height is None:
            width, height = _frame_size(first, input_format)
        rate = fractions.Fraction(fps).limit_denominator(1001)
        env = self._envelope()
        vo = env.video_open
        vo.encode = True
        vo.codec = codec or ""
        vo.width, vo.height = int(width), int(height)
        vo.fps_num, vo.fps_den = rate.numerator, rate.denominator
        vo.gop = int(gop or 0)
        vo.rc = rc or ""
        vo.bitrate_kbps = int(bitrate or 0)
        vo.crf = int(crf or 0)
        vo.profile = profile or ""
        vo.mp4 = bool(mp4)
        vo.input_format = input_format or ""
        out = []
        enc = _VideoEncoder(self, env, _frame_bytes(input_format, int(width), int(height)),
                            sink or out.append, timeout)
        idrs = set(int(i) for i in idr)
        try:
            for i, f in enumerate(itertools.chain([first], it)):
                enc.frame(f, i in idrs)
            enc.finish()
        finally:
            enc.close()
        res = EncodedVideo(b"".join(out))
        res.packets, res.keyframes = enc.packets, enc.keyframes
        return res

    # -- notices, stats --------------------------------------------------------

    def next_notice(self, timeout=None):
        """The next unsolicited Result (an HTTP request with ?ring=NAME that
        delivered into one of this connection's rings: ``id`` 0, ``origin``
        "http"), or None after @timeout seconds (None: the client's
        default)."""
        def take():
            return self._notices.popleft() if self._notices else None
        try:
            return self._wait_for(take, timeout, "notice")
        except TimeoutError:
            return None

    def stats(self, timeout=None):
        """The daemon's counters (Stats) as a dict; ``engines`` is a list of
        dicts."""
        env = self._envelope()
        env.stats_query.SetInParent()
        st = self._simple(env, "stats", timeout)
        out = {}
        for f in pb.Stats.DESCRIPTOR.fields:
            if f.name == "engines":
                out["engines"] = [{g.name: getattr(e, g.name) for g in
                                   pb.EngineStats.DESCRIPTOR.fields} for e in st.engines]
            else:
                out[f.name] = getattr(st, f.name)
        return out

    def __repr__(self):
        v = self.info.version if self.info else "?"
        return f"<dvpp.Client {self.path!r} dvppd {v}{' closed' if self.closed else ''}>"
