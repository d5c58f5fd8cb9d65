"""dvpp.client: Client, the requests of the protocol as methods.

Streams, rings, jobs and batches, video channels, notices and counters:
each method builds its request, sends it and turns the answer into a Ring,
Result, Batch, VideoDecode or EncodedVideo. The socket, the reader and the
filing of answers under request ids are dvpp.connection's.
"""

import collections
import fractions
import itertools
import json
import os

from . import dvpp_pb2 as pb
from .connection import _Connection
from .errors import DvppError, LeaseError, ProtocolError, _error_from
from .ring import Batch, Result, Ring, _ring_id
from .video import EncodedVideo, VideoDecode, _VideoEncoder, _frame_bytes, _frame_size
from .wire import (MAX_FDS, FileInput, _body, _close_fds, _kind, _spec_text, sealed_memfd,
                   sealed_memfd_of_file)


class Client(_Connection):
    """One connection to dvppd: ``Client(path)`` connects and does the
    Hello/Welcome handshake (``info`` is the Welcome). ``timeout`` (seconds,
    None = forever) is the default wait for every answer. ``guard`` (default:
    DVPP_GUARD=1 in the environment) is the debug mode of the package's
    "Leases": views of a result die (SIGSEGV) once its lease is over; it
    needs numpy and costs a mapping per result and a watchdog thread.
    ``notices_dropped`` counts the unsolicited notices dropped past
    MAX_NOTICES (their slots were given back). The constructor and the
    plumbing are _Connection's (dvpp.connection)."""

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
        try:
            opened = _body(ans, "ring_opened")
        except DvppError:
            _close_fds(fds)
            raise
        if len(fds) != 1:
            _close_fds(fds)
            raise ProtocolError(f"RingOpened came with {len(fds)} fds, want 1")
        try:
            ring = Ring(self, opened, fds[0], name)
        except BaseException:
            try:
                env = self._envelope()
                env.ring_close.ring = opened.ring
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
                     deadline_ms=0, trace=False):
        """Send a Submit; returns its id for ``wait``. The input is @data
        (inline when it fits Welcome.max_inline, else a sealed memfd; force
        either with @memfd True/False) or @input_fd, a memfd the caller
        sealed (borrowed). @trace: the daemon records the job's trace; the
        Result's ``trace_id`` names it for ``trace()``."""
        env = self._envelope()
        s = env.submit
        s.stream = stream
        s.kind = _kind(kind)
        s.spec = _spec_text(spec)
        if ring is not None:
            s.ring = _ring_id(ring)
        if aipp_config:
            s.aipp_config = aipp_config
        if deadline_ms:
            s.deadline_ms = deadline_ms
        s.trace = bool(trace)
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
            self._send_tracked(env, fds)
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
        _close_fds(fds)
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
                           aipp_config=None, timeout=None, item_specs=None, trace=False):
        """Send a BatchSubmit and wait for BatchAccepted: a Batch (wait on
        it for the Result). Inputs go inline when they fit Welcome.max_inline
        together, else (or with @memfd) as sealed memfds; an input that is a
        dvpp.FileInput(path) always goes as a memfd the kernel fills from
        the file (sendfile), never read into this process. @item_specs: one
        spec per input (item i runs item_specs[i], e.g. its own crop and
        flip), each making @spec's tensor; None or empty: all run @spec.
        @trace: record the batch's trace (every item in it); the Result's
        ``trace_id`` names it for ``trace()``."""
        env = self._envelope()
        b = env.batch_submit
        b.trace = bool(trace)
        b.spec = _spec_text(spec)
        b.item_specs.extend(_spec_text(s) for s in (item_specs or ()))
        b.ring = _ring_id(ring)
        b.strict = bool(strict)
        if aipp_config:
            b.aipp_config = aipp_config
        views = [None if isinstance(x, FileInput) else memoryview(x).cast("B")
                 for x in inputs]
        total = sum(v.nbytes for v in views if v is not None)
        fds = []
        try:
            if memfd or None in views or (memfd is None and total > self.info.max_inline):
                if len(views) > MAX_FDS:
                    raise ValueError(f"at most {MAX_FDS} memfd inputs per batch")
                for x, v in zip(inputs, views):
                    if v is None:       # a file: copied by the kernel
                        fd, n = sealed_memfd_of_file(x.path)
                    else:
                        fd, n = sealed_memfd(v), v.nbytes
                    fds.append(fd)
                    b.input_lens.append(n)
                b.input_fds = len(fds)
            else:
                for v in views:
                    b.inputs.append(v.tobytes())
            self._send_tracked(env, fds)
            try:
                seq, ans, got, ring = self._wait_answer(env.id, timeout, "BatchAccepted",
                                                        final=False)
            except BaseException:
                self._unfile(env.id)
                raise
        finally:
            _close_fds(fds)
        _close_fds(got)
        body = ans.WhichOneof("body")
        if body == "error":
            self._unfile(env.id)
            raise _error_from(ans.error)
        if body == "result":  # finished (or failed) before accepting: keep it
            with self._cv:
                self._answers.setdefault(env.id, collections.deque()).appendleft(
                    (seq, ans, [], ring))
            acc = pb.BatchAccepted(batch=ans.result.batch, items=len(views))
            return Batch(self, env.id, acc)
        if body != "batch_accepted":
            self._unfile(env.id)
            raise ProtocolError(f"expected batch_accepted, got {body}")
        return Batch(self, env.id, ans.batch_accepted)

    def batch_submit(self, spec, inputs, ring, strict=False, *, timeout=None, check=True,
                     **kw):
        """N inputs through one pipeline into one N x ... tensor in a slot of
        @ring; waits for the Result (``item_status`` per item; with
        @strict the first failure fails it; @item_specs: one spec per
        input, see batch_submit_async)."""
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

    # -- traces --------------------------------------------------------------

    def trace(self, trace_id, timeout=None):
        """The Chrome Trace JSON (a dict) of trace @trace_id (a Result's
        ``trace_id``, or an HTTP X-Dvpp-Trace-Id: the daemon keeps one
        store). DvppError ENOTFOUND for an unknown or dropped id, ELIMIT
        (field "trace") for one larger than Welcome.max_inline (fetch that
        one with GET /v1/traces/<id>)."""
        env = self._envelope()
        env.trace_get.id = int(trace_id)
        return json.loads(self._simple(env, "trace_data", timeout).json)

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
        vo.ring = _ring_id(ring)
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
