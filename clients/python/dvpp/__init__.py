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

Modules (the API is what ``dvpp`` exports; import it from here):
errors (DvppError and its kinds, STATUS), wire (protocol and ring-layout
constants, sealed memfds, SCM_RIGHTS, spec text), ring (Ring, Result and
its lease, Batch), guard (guard mode), video (VideoFrame, VideoDecode,
EncodedVideo, the channels under them), connection (the socket, its reader,
answers filed by id), client (Client: the requests), daemon (the daemon a
process talks to: $DVPPD_SOCKET's, or a private one it starts). Imported on
their own, with their extra dependencies: dvpp.torch (PyTorch) and
dvpp.dask (Dask and Zarr; docs/python.md).
"""

# Every name this module had when it was one file stays reachable as
# dvpp.X, the private ones too (tests reach dvpp._Channel, dvpp.SLOT_READY).
# They are the submodules' own objects: rebinding one here (dvpp.X = ...)
# does not change what the submodules use.
from . import dvpp_pb2 as pb
from .client import Client
from .connection import MAX_NOTICES
from .errors import STATUS, Disconnected, DvppError, LeaseError, ProtocolError, _error_from
from .guard import _PROT_NONE, GUARD_POLL_S, _Guard, _Guards
from .ring import _LEASE_TEXT, Batch, Result, Ring
from .video import (VENC_STALL_S, VENC_WINDOW, VIDEO_INLINE_PACKETS, EncodedVideo,
                    VideoDecode, VideoFrame, _Channel, _frame_bytes, _frame_size,
                    _VideoEncoder)
from .wire import (_DESC_HEAD, FileInput, sealed_memfd_of_file, _F_SEAL_ALL, _ITEMSIZE, KINDS, MAX_FDS, NP_DTYPES, PROTOCOL,
                   RING_ALIGN, RING_DTYPES, RING_HEADER, RING_LAYOUTS, RING_MAGIC,
                   RING_MAX_DIMS, RING_SLOT, RING_VERSION, SLOT_FREE, SLOT_READY,
                   _kind, _prod, _spec_text, sealed_memfd)
from .wire import VERSION as __version__

__all__ = [
    "Client", "Ring", "Result", "Batch", "VideoFrame", "VideoDecode", "EncodedVideo",
    "DvppError", "Disconnected", "ProtocolError", "LeaseError", "sealed_memfd", "pb",
    "FileInput", "sealed_memfd_of_file",
    "PROTOCOL", "STATUS", "MAX_NOTICES",
]
