"""dvpp.torch._runner: sources, rings and jobs for the transforms, the
datasets and the loader.

A *source* is what a sample is made of: encoded bytes (JPEG or PNG), a
path to them, or a PIL image / an H x W x 3 uint8 array (sent as raw RGB
pixels). ``prepare(compose, source)`` reads it and plans it: (data, spec,
shape). Rings are opened per client and size (``RingPool``) and reused.
"""

import collections
import gc
import os
import threading
import time
import weakref

import torch

from ..errors import DvppError
from ..ring import Ring
from ..wire import FileInput
from ._probe import ProbeError, image_size
from ._tensor import as_tensor

RING_FULL_WAIT_S = 10.0   # how long a submit waits for the caller's tensors to go


class SourceError(DvppError):
    """A sample could not be read or is not an image the transforms can
    plan (unreadable file, not JPEG/PNG, a cut header): ``path`` names it."""

    def __init__(self, path, message):
        self.path = path
        super().__init__(-5, "ECORRUPT", f"{path}: {message}", "input")


HEAD_BYTES = 1 << 16   # what a file's size is read from, first (SOF after EXIF, mostly)


def read_source(source, by_path=False):
    """(data, width, height, kind) of @source: kind "jpeg" or "png", or
    None for raw RGB pixels. @by_path: a file's data is a dvpp.FileInput
    (the kernel copies it into the memfd) and only its header is read
    here; otherwise its bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = source
    elif isinstance(source, (str, os.PathLike)):
        try:
            if by_path:
                return _file_source(os.fspath(source))
            with open(source, "rb") as f:
                data = f.read()
        except OSError as e:
            raise SourceError(os.fspath(source), e.strerror or str(e)) from None
    else:
        return _raw_source(source)
    try:
        w, h, kind = image_size(data)
    except ProbeError as e:
        raise SourceError(_name(source), str(e)) from None
    if kind == "png-grey16":
        return _pil_quirk(data, w, h)
    return data, w, h, kind


def _pil_quirk(data, w, h):
    """A 16-bit greyscale PNG: what torchvision sees is PIL's I;16 ->
    RGB conversion, which clamps each sample at 255 (dvppd, as libpng,
    keeps the high byte). The pixels are made by PIL here, so that the
    tensor is torchvision's; without PIL, dvppd decodes it (high byte)."""
    try:
        import io

        from PIL import Image
    except ImportError:
        return data, w, h, "png"
    return _raw_source(Image.open(io.BytesIO(bytes(data))))

def _file_source(path):
    """(FileInput, w, h, kind) of the file at @path, from its first
    HEAD_BYTES (all of it when the frame header comes later)."""
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
        try:
            w, h, kind = image_size(head)
        except ProbeError:
            head += f.read()
            try:
                w, h, kind = image_size(head)
            except ProbeError as e:
                raise SourceError(path, str(e)) from None
        if kind == "png-grey16":
            return _pil_quirk(head + f.read(), w, h)
    return FileInput(path), w, h, kind


def source_bytes(data):
    """The bytes of a prepared sample's data (a FileInput's file read)."""
    if isinstance(data, FileInput):
        with open(data.path, "rb") as f:
            return f.read()
    return data


def _name(source):
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"<{len(memoryview(source))} bytes>"


def _raw_source(image):
    """A PIL image (converted to RGB as torchvision's loader does) or an
    H x W x 3 uint8 numpy array: raw RGB pixels."""
    import numpy as np

    if hasattr(image, "convert") and hasattr(image, "size"):
        image = image.convert("RGB")
        w, h = image.size
        return image.tobytes(), w, h, None
    a = np.asarray(image)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        raise TypeError(f"an image source is bytes, a path, a PIL image or an HxWx3 uint8 "
                        f"array, not {type(image).__name__} {getattr(a, 'shape', '')}")
    return np.ascontiguousarray(a).tobytes(), a.shape[1], a.shape[0], None


def prepare(compose, source, by_path=False, draft=None):
    """(data, spec, shape, dtype) of one sample of @compose (@by_path: see
    read_source; @draft: Compose.plan's)."""
    data, w, h, kind = read_source(source, by_path)
    plan = compose.plan(w, h, kind, draft)
    spec = plan.spec
    if kind is None:
        spec = dict(spec)
        del spec["decode"]
        spec["input"] = "raw"
        spec["raw"] = {"format": "rgb", "width": w, "height": h}
    return data, spec, plan.shape, plan.dtype


def tensor_bytes(shape, dtype, n=1):
    n_el = n
    for s in shape:
        n_el *= s
    return n_el * torch.empty((), dtype=dtype).element_size()


class RingPool:
    """The rings of one client, by slot size: ``get(nbytes)`` gives an open
    ring whose slots hold at least @nbytes (one per power-of-two size
    class, @slots slots), made on first use. When the connection may open
    no more rings (socket.max_rings), the pool's least recently used other
    ring is closed to make room: tensors over it keep their bytes (a closed
    ring is never written again), they just stop holding a lease."""

    def __init__(self, client, slots):
        self.client = client
        self.slots = slots
        self._rings = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, nbytes):
        size = 1 << max(16, (int(nbytes) - 1).bit_length())
        with self._lock:
            r = self._rings.get(size)
            if r is not None and not r.closed:
                self._rings.move_to_end(size)
                return r
            while True:
                try:
                    r = self.client.open_ring(self.slots, size)
                    break
                except DvppError as e:
                    if e.code != "ELIMIT" or e.field != "ring" or not self._evict(size):
                        raise
            self._rings[size] = r
            return r

    def _evict(self, keep):
        for size, r in list(self._rings.items()):
            if size != keep:
                del self._rings[size]
                try:
                    r.close()
                except DvppError:
                    pass
                return True
        return False

    def close(self):
        with self._lock:
            rings, self._rings = list(self._rings.values()), collections.OrderedDict()
        for r in rings:
            try:
                r.close()
            except DvppError:
                pass


def ring_full(e):
    """@e says the ring had no free slot (the caller still holds its
    tensors)."""
    return isinstance(e, DvppError) and e.code == "EAGAIN" and e.field == "ring"


def retry_ring_full(submit, what):
    """submit() until it is not refused for a full ring: in between, the
    garbage collector runs (collected tensors give their slots back) and
    the wait grows, up to RING_FULL_WAIT_S; then a DvppError that says why."""
    deadline = time.monotonic() + RING_FULL_WAIT_S
    pause = 0.0005
    while True:
        try:
            return submit()
        except DvppError as e:
            if not ring_full(e) or time.monotonic() > deadline:
                if ring_full(e):
                    raise DvppError(e.status, e.code,
                                    f"{what}: every ring slot is still held by a live "
                                    f"tensor after {RING_FULL_WAIT_S:.0f} s (tensors from "
                                    f"dvpp.torch view their slot until collected: .clone() "
                                    f"the ones you keep, or release() them)", e.field) from e
                raise
        gc.collect()
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


_POOLS = weakref.WeakKeyDictionary()
_POOLS_LOCK = threading.Lock()


def pool_of(client, slots=8):
    """The RingPool of @client for single samples."""
    with _POOLS_LOCK:
        p = _POOLS.get(client)
        if p is None:
            p = _POOLS[client] = RingPool(client, slots)
        return p


def run_one(compose, source, client=None, draft=None):
    """@compose on one @source: the C x H x W tensor (a view of its ring
    slot, holding the lease)."""
    if client is None:
        from ._daemon import default_client
        client = default_client()
    data, spec, shape, dtype = prepare(compose, source, draft=draft)
    ring = pool_of(client).get(tensor_bytes(shape, dtype))
    res = retry_ring_full(lambda: client.submit(spec, data, ring=ring), "transform")
    return as_tensor(res)[0]


__all__ = ["Ring", "SourceError", "prepare", "read_source", "run_one", "RingPool",
           "retry_ring_full", "tensor_bytes"]
