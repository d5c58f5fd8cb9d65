"""dvpp.ring: rings, the Results that lease their slots, and batches.

A Ring is the read-only mapping of a ring memfd the daemon made
(proto/dvpp_ring.h); a Result is one job's answer, whose payload is either
inline or a lease of one ring slot (the package docstring's "Leases":
bound to the Ring object and its generation, LeaseError once over). Guard
mode's private mappings live in dvpp.guard; the requests that make rings
and results, in dvpp.client.
"""

import mmap
import os
import threading
import weakref

from .errors import LeaseError, ProtocolError, _error_from
from .wire import (_DESC_HEAD, _ITEMSIZE, NP_DTYPES, RING_ALIGN, RING_DTYPES, RING_HEADER,
                   RING_LAYOUTS, RING_MAGIC, RING_MAX_DIMS, RING_SLOT, RING_VERSION,
                   SLOT_READY, _prod)


def _ring_id(ring):
    """The id a request names @ring by: a Ring's, or a bare id."""
    return ring.id if isinstance(ring, Ring) else int(ring)


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
        self._pmm = None               # copy-on-write mapping (leased arrays)
        self._pgen = {}                # slot -> generation its private pages belong to
        # reentrant: a leased array collected while this thread holds it
        # (the collector runs at any allocation) releases under it too
        self._plock = threading.RLock()
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

    def private_view(self, offset, nbytes, slot, generation):
        """A writable memoryview of @nbytes at @offset in slot @slot, for
        lease @generation, from the ring's copy-on-write mapping
        (MAP_PRIVATE, read-write; made on first use). No copy: until
        someone writes, its pages are the daemon's own; a write copies the
        page it touches into this process only (the seals allow private
        mappings; the daemon and other consumers never see it). Pages a
        former lease of the slot wrote are dropped first, so the view shows
        this lease's bytes."""
        start, end = self.region(offset, slot)
        if nbytes < 0 or offset < start or offset + nbytes > end:
            raise ValueError(f"[{offset}, {offset + nbytes}) is not within slot {slot} "
                             f"[{start}, {end}) of the ring")
        with self._plock:
            if self._pmm is None:
                if self._mm is None or self.fd is None or self.fd < 0:
                    raise ValueError("ring is closed")
                self._pmm = mmap.mmap(self.fd, self.map_bytes, mmap.MAP_PRIVATE,
                                      mmap.PROT_READ | mmap.PROT_WRITE)
            if self._pgen.get(slot) != generation:
                self._drop_private_locked(slot)
                self._pgen[slot] = generation
            return memoryview(self._pmm)[offset:offset + nbytes]

    def private_address(self, slot):
        """The address of slot @slot's payload in the copy-on-write
        mapping (None before the first private view): what a tensor over
        the slot points at."""
        import ctypes

        with self._plock:
            if self._pmm is None:
                return None
            return ctypes.addressof(ctypes.c_char.from_buffer(self._pmm)) + \
                self.slot_offset(slot)

    def drop_private(self, slot, generation):
        """Lease @generation of slot @slot ended: drop the private copies of
        its pages (MADV_DONTNEED; the next view of the slot reads the
        daemon's bytes again and the memory goes back), unless a later
        lease of the slot has its own view by now."""
        with self._plock:
            if self._pgen.get(slot) == generation:
                self._drop_private_locked(slot)
                del self._pgen[slot]

    def _drop_private_locked(self, slot):
        """Drop the pages of slot @slot that a write made private. Only
        those: dropping the untouched ones too would make the next tensor
        in the slot fault every page in again (a minor fault per 4 KiB, the
        cost of a first touch), where their mappings of the daemon's pages
        stay valid as they are. /proc/self/pagemap tells them apart; where
        it cannot be read, the whole slot is dropped."""
        if self._pmm is None:
            return
        start = self.slot_offset(slot)
        try:
            for off, n in _private_runs(self._pmm, start, self.slot_bytes):
                self._pmm.madvise(mmap.MADV_DONTNEED, off, n)
        except (ValueError, OSError):
            pass  # closed meanwhile

    @property
    def mmap(self):
        """The read-only mapping of the whole memfd."""
        return self._map()

    def fileno(self):
        return self.fd

    def _unmap(self):
        mm, self._mm = self._mm, None
        with self._plock:
            pmm, self._pmm = self._pmm, None
            self._pgen.clear()
        for m in (mm, pmm):
            if m is None:
                continue
            try:
                m.close()
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


class Result:
    """A finished job (or an unsolicited HTTP delivery, ``id`` 0, ``origin``
    "http"). For ring results the payload stays in the ring slot until
    ``release()`` (or the end of a ``with`` block) sends SlotRelease, the
    lease times out, or the ring closes; ``array()``/``buffer()`` views are
    valid only during that lease (see the package's "Leases"). Inline
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
        self.trace_id = msg.trace_id   # Submit(trace=True): Client.trace(id); 0 = none
        self._released = not (msg.ring and msg.status == 0)
        self._guard = None             # guard mode: the slot's private mapping
        self._holders = 0              # live leased arrays (leased_array)

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

    def leased_array(self):
        """The payload as a *writable* numpy array that holds the lease:
        no copy (it views the slot through the ring's copy-on-write
        mapping, see Ring.private_view), and the slot stays this result's
        until the array and everything viewing its memory (numpy views, a
        torch tensor from ``torch.from_numpy``, a DLPack capsule) are
        collected, or ``release()`` is called (then the array must not be
        used any more), or the daemon's lease timeout passes. In-place
        writes stay in this process: they reach neither the daemon, nor
        another consumer of the ring, nor the next result in this slot.
        Inline results give a writable copy of their bytes (no lease)."""
        import numpy as np

        if self.status != 0:
            raise _error_from(self, self)
        dt = np.dtype(NP_DTYPES.get(self.meta.dtype or "uint8", self.meta.dtype))
        if not self.ring_id:
            a = np.frombuffer(bytearray(self.data or b""), dtype=dt)
            return self._shaped(a)
        if self.ring is None and not self._released:
            raise LeaseError("closed", f"result names ring {self.ring_id}, which was "
                             f"closed (or unknown) when it arrived")
        self.check()
        n = self.nbytes
        try:
            mv = self.ring.private_view(self.offset, n, self.slot, self.generation)
        except ValueError:
            raise ProtocolError(f"dvppd named {n} bytes at {self.offset} in slot "
                                f"{self.slot}, outside the slot", "offset") from None
        flat = np.frombuffer(mv, dtype=dt, count=n // dt.itemsize)
        with self.ring._plock:
            self._holders += 1
        # Every numpy view, torch tensor or DLPack capsule of the memory
        # keeps @flat (the base of them all) alive: its collection is the
        # moment nothing can read the slot through it any more.
        fin = weakref.finalize(flat, _array_collected, self)
        fin.atexit = False
        return self._shaped(flat)

    def _shaped(self, a):
        shape = self.shape
        if shape and _prod(shape) == a.size:
            a = a.reshape(shape)
        return a

    def _holder_gone(self):
        """A leased array was collected (called by its finalizer, in any
        thread, possibly inside the garbage collector): the last one ends
        the lease."""
        ring = self.ring
        if ring is None:
            return
        with ring._plock:
            self._holders -= 1
            last = self._holders == 0
        if last and not self._released:
            self._released = True
            ring.drop_private(self.slot, self.generation)
            if self._client._ring_live(ring):
                self._client._release_from_gc(ring, self.slot, self.generation)

    def __dlpack__(self, stream=None):
        """DLPack export (``torch.from_dlpack(result)``,
        ``numpy.from_dlpack(result)``): the capsule views the slot as
        ``leased_array()`` does and holds the lease while it lives."""
        if stream is not None:
            raise BufferError("dvpp results are host memory: no stream")
        return self.leased_array().__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

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
        if ring is not None and self.ring_id:
            ring.drop_private(self.slot, self.generation)
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


_PAGE = mmap.PAGESIZE
_PM_PRESENT, _PM_SWAPPED, _PM_FILE = 1 << 63, 1 << 62, 1 << 61


def _private_runs(mm, start, nbytes):
    """[(offset, length)] of the runs of pages of @mm in [@start, @start +
    @nbytes) that are this process's own copies (present and not file or
    shared pages, or swapped out: written since they were mapped), read
    from /proc/self/pagemap; the whole range when it cannot be read."""
    import ctypes

    import numpy as np

    whole = [(start, nbytes)]
    try:
        base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
        fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, TypeError, ValueError):
        return whole
    try:
        pages = nbytes // _PAGE
        raw = os.pread(fd, pages * 8, (base + start) // _PAGE * 8)
    except OSError:
        return whole
    finally:
        os.close(fd)
    if len(raw) != pages * 8:
        return whole
    v = np.frombuffer(raw, dtype=np.uint64)
    own = (((v & np.uint64(_PM_PRESENT)) != 0) & ((v & np.uint64(_PM_FILE)) == 0)) | \
        ((v & np.uint64(_PM_SWAPPED)) != 0)
    if not own.any():
        return []
    edges = np.flatnonzero(np.diff(np.concatenate(([0], own.view(np.int8), [0]))))
    return [(start + int(a) * _PAGE, int(b - a) * _PAGE)
            for a, b in zip(edges[0::2], edges[1::2])]


def _array_collected(result):
    """weakref.finalize callback of a leased array (module level: the
    finalizer must not keep the array alive)."""
    try:
        result._holder_gone()
    except Exception:  # never raise out of the garbage collector
        pass


_LEASE_TEXT = {
    "released": "slot {0.slot} of ring {0.ring_id} was released",
    "closed": "ring {0.ring_id} was closed: slot {0.slot} went back with it",
    "expired": "the lease of slot {0.slot} (generation {0.generation}) of ring "
               "{0.ring_id} expired: the daemon took the slot back",
}


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
