"""dvpp.wire: what the client and dvppd agree on byte for byte.

The protocol's constants (proto/PROTOCOL.md), the ring layout
(proto/dvpp_ring.h), how a spec and a kind go into a Submit, the sealed
memfds inputs travel in and the SCM_RIGHTS ancillary data that carries
file descriptors. No state: functions of their arguments only.
"""

import array
import fcntl
import json
import os
import socket
import struct

from . import dvpp_pb2 as pb
from .errors import ProtocolError, _error_from

# This client's version, sent in its Hello (dvpp.__version__).
VERSION = "0.1.0"

PROTOCOL = 1

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

_F_SEAL_ALL = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL


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


class FileInput:
    """A batch input that is a file, by its path: sent as a memfd the
    kernel fills from the file (Client.batch_submit_async)."""
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = os.fspath(path)

    def __repr__(self):
        return f"dvpp.FileInput({self.path!r})"


def sealed_memfd_of_file(path, name="dvpp-input"):
    """(fd, nbytes): a memfd holding the file at @path, copied by the
    kernel (sendfile: no pass through this process's memory), sealed as
    sealed_memfd's. The caller owns (closes) the fd."""
    src = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(src).st_size
        fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            off = 0
            while off < size:
                n = os.sendfile(fd, src, off, size - off)
                if n == 0:
                    break           # the file shrank meanwhile: what it holds now
                off += n
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _F_SEAL_ALL)
        except BaseException:
            os.close(fd)
            raise
        return fd, off
    finally:
        os.close(src)


def _close_fds(fds):
    """Close every fd of @fds (received ones nobody takes)."""
    for f in fds:
        os.close(f)


def _rights(fds):
    """The ancillary data that passes @fds (borrowed): [] for none."""
    if not fds:
        return []
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]


def _fds_of(anc):
    """The fds an ancillary list from recvmsg carries (the caller owns
    them)."""
    fds = []
    for level, kind, d in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(d[:len(d) - len(d) % a.itemsize])
            fds.extend(a)
    return fds


def _body(ans, want):
    """The @want body of answer @ans: the daemon's DvppError for an Error
    answer, ProtocolError for any other kind."""
    body = ans.WhichOneof("body")
    if body == "error":
        raise _error_from(ans.error)
    if body != want:
        raise ProtocolError(f"expected {want}, got {body}")
    return getattr(ans, want)


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
