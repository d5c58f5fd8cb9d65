"""dvpp.video: video channels (proto/PROTOCOL.md "Video channels").

A channel is one stream, as an aclvdec/aclvenc channel is: VideoDecode
iterates the VideoFrames a decode channel delivers into ring slots,
_VideoEncoder feeds an encode channel frames and collects its VideoData
into an EncodedVideo. _Channel is what both share: the requests of one
channel, filed under one key. Client.decode_video and Client.encode_video
(dvpp.client) open them.
"""

import os

from .errors import STATUS, DvppError, ProtocolError, _error_from
from .ring import Result
from .wire import _body, _close_fds, sealed_memfd

# Video channels (the C client's values, dvppclient.h): a stream of up to
# this many max_inline packets goes inline, a larger one as one memfd ...
VIDEO_INLINE_PACKETS = 16
# ... and an encoder keeps at most this many frames waiting for their
# packet (half of Welcome.max_inflight at most), waiting this long for one
# before it sends anyway (the encoder's look-ahead holds frames back).
VENC_WINDOW = 64
VENC_STALL_S = 2.0


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
        _close_fds(fds)
        try:
            opened = _body(ans, "video_opened")
        except DvppError:
            self.forget()
            raise
        self.channel = opened.channel

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

    def packet_memfd(self, mv, name, **fields):
        """Send a VideoPacket whose bytes, @mv, travel as a sealed memfd
        (made here, closed once sent: a sealed memfd cannot be reused); its
        id."""
        fd = sealed_memfd(mv, name)
        try:
            return self.packet([fd], data_fd=True, data_len=mv.nbytes, **fields)
        finally:
            os.close(fd)

    @staticmethod
    def error_of(env, where):
        """What an answer other than the channel's frames or data stands
        for: the daemon's Error, None for an Ack, else a ProtocolError
        ("<body> on @where", e.g. "a decode channel")."""
        body = env.WhichOneof("body")
        if body == "error":
            return _error_from(env.error)
        if body != "ack":
            return ProtocolError(f"{body} on {where}")
        return None

    def next(self, timeout, what):
        """The channel's next answer (seq, Envelope); TimeoutError."""
        seq, env, _ = self.next_pinned(timeout, what)
        return seq, env

    def next_pinned(self, timeout, what):
        """next(), with the Ring a frame was filed under on arrival."""
        c = self.client
        seq, env, fds, ring = c._wait_for(lambda: c._take_answer(self.key), timeout, what)
        _close_fds(fds)
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

    def drain(self, last_id, what):
        """Drop the channel's answers (giving their slots back) up to and
        including the one to request @last_id."""
        while True:
            _, env, ring = self.next_pinned(self.timeout, what)
            self.drop(env, ring)
            if env.id == last_id:
                return

    def close(self):
        """VideoClose and its Ack (what is still queued before it is
        dropped), then forget the channel."""
        try:
            if self.channel is not None and not self.client.closed:
                env = self._envelope()
                env.video_close.channel = self.channel
                self.client._send(env)
                self.drain(env.id, "Ack of VideoClose")
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
            _close_fds(fds)
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
            return self._ch.packet_memfd(mv, "dvpp-video", eos=True)
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
            self._error = self._error or self._ch.error_of(env, "a decode channel")
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
            self._ch.drain(self._eos_id, "end of the stream")
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
        self.error = self.error or self.ch.error_of(env, "an encode channel")
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
            self.ch.packet_memfd(mv, "dvpp-frame", pts=self.sent, force_idr=bool(idr))
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
