"""Regression tests for the review of dvppd's HTTP front end (issue 21):
each test failed on the code before its fix (the commit that added it says
how) and passes after.

- video decode frame lists: extreme container timestamps (a frame time of
  -9.2e15 s or 9e18 s) overflowed the header buffers;
- result buffers outside every budget: limits.max_output_bytes, results
  held against the device's byte budget while they wait to be sent or
  fetched, job results served without a copy;
- smaller: a ?ring= slot too small (500), multipart parts split by TCP
  segmentation, a GET body that skipped the request deadline, an HTTP stop
  that gave up on stuck requests freeing the socket front end under them,
  /v1/info's channel counts.

References are independent of dvppd: ffprobe for timestamps, numpy and
Pillow for pixels, the kernel's /proc for memory. Run with Debian's
/usr/bin/python3:

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_http_review.py
"""
import json
import os
import select
import signal
import socket
import struct
import subprocess
import time

import cv2
import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (BUILD, FFMPEG, FFPROBE, free_port, proc_kb, run,  # noqa: E402
                         stop_daemon)
import daemon_util  # noqa: E402

ASAN = "asan" in os.path.basename(BUILD.rstrip("/"))
# Sanitizer builds run several times slower: deadlines of waits scale.
SLOW = 4 if ASAN else 1

needs_ffmpeg = pytest.mark.skipif(not FFMPEG or not FFPROBE,
                                  reason="ffmpeg/ffprobe are needed (apt-get install ffmpeg)")


# --------------------------------------------------------------------------
# helpers


def start(tmp, name="d", http=None, limits=None, device=None, service=None, sock=None,
          env=None):
    """dvppd with HTTP on a free port (socket off unless @sock: a path)."""
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "request_timeout_s": 30 * SLOW,
                    "idle_timeout_s": 30 * SLOW},
           "socket": {"path": sock or ""}, "device": {"channels": 2}}
    cfg["http"].update(http or {})
    cfg["device"].update(device or {})
    if limits:
        cfg["limits"] = limits
    if service:
        cfg["service"] = service
    if env is None:
        return daemon_util.start_daemon(tmp, cfg, name, port, sock=sock, timeout=60 * SLOW)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return daemon_util.start_daemon(tmp, cfg, name, port, sock=sock, timeout=60 * SLOW)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def wait_for(cond, what, timeout=20):
    """Poll cond() until it returns a true value (returned), else fail."""
    deadline = time.monotonic() + timeout * SLOW
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout * SLOW} s (last: {v!r})")
        time.sleep(0.02)


def assert_error(r, status, code=None, field=None, mentions=None):
    assert r.status == status, r
    assert r.h("content-type", "").startswith("application/json"), r
    e = r.json()["error"]
    assert e["message"], e
    if code is not None:
        assert e["code"] == code, e
    if field is not None:
        assert e["field"] == field, e
    if mentions is not None:
        assert mentions in e["field"] or mentions in e["message"], e
    return e


# --------------------------------------------------------------------------
# 1. Video decode: frame lists of extreme timestamps


def _ebml(ident, payload):
    """An EBML element with an 8-byte size field."""
    return ident + b"\x01" + len(payload).to_bytes(7, "big") + payload


def _ebml_uint(ident, v, width=None):
    return _ebml(ident, v.to_bytes(width or max(1, (v.bit_length() + 7) // 8), "big"))


def _nal_units(annexb):
    """The NAL units of an Annex-B stream, start codes and trailing zeros off."""
    starts, i = [], 0
    while (j := annexb.find(b"\x00\x00\x01", i)) >= 0:
        starts.append(j + 3)
        i = j + 3
    out = []
    for k, s in enumerate(starts):
        nal = annexb[s:starts[k + 1] - 3 if k + 1 < len(starts) else len(annexb)]
        out.append(nal.rstrip(b"\x00"))
    return out


def h264_frames(n, w=64, h=48, gop=10):
    """@n frames of testsrc2 as H.264 (libx264, no B frames), Annex-B."""
    return run(FFMPEG, "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:rate=25",
               "-frames:v", n, "-c:v", "libx264", "-bf", "0", "-g", gop, "-pix_fmt",
               "yuv420p", "-f", "h264", "-").stdout


def mkv_with_stamps(annexb, w, h, stamps, scale_ns):
    """A Matroska file of the stream's frames, frame k in a cluster of its own
    whose timestamp is @stamps[k] ticks of @scale_ns ns (ffmpeg's muxer
    cannot write timestamps this large; the format can)."""
    nals = _nal_units(annexb)
    sps = next(x for x in nals if x[0] & 0x1f == 7)
    pps = next(x for x in nals if x[0] & 0x1f == 8)
    frames = [x for x in nals if x[0] & 0x1f in (1, 5)]
    assert len(frames) >= len(stamps)
    avcc = (bytes([1, sps[1], sps[2], sps[3], 0xff, 0xe1]) + struct.pack(">H", len(sps)) +
            sps + b"\x01" + struct.pack(">H", len(pps)) + pps)
    head = _ebml(b"\x1a\x45\xdf\xa3", _ebml_uint(b"\x42\x86", 1) + _ebml_uint(b"\x42\xf7", 1) +
                 _ebml_uint(b"\x42\xf2", 4) + _ebml_uint(b"\x42\xf3", 8) +
                 _ebml(b"\x42\x82", b"matroska") + _ebml_uint(b"\x42\x87", 4) +
                 _ebml_uint(b"\x42\x85", 2))
    info = _ebml(b"\x15\x49\xa9\x66", _ebml_uint(b"\x2a\xd7\xb1", scale_ns) +
                 _ebml(b"\x4d\x80", b"t") + _ebml(b"\x57\x41", b"t"))
    video = _ebml(b"\xe0", _ebml_uint(b"\xb0", w) + _ebml_uint(b"\xba", h))
    track = _ebml(b"\xae", _ebml_uint(b"\xd7", 1) + _ebml_uint(b"\x73\xc5", 1) +
                  _ebml_uint(b"\x83", 1) + _ebml(b"\x86", b"V_MPEG4/ISO/AVC") +
                  _ebml(b"\x63\xa2", avcc) + video)
    clusters = b""
    for k, f in enumerate(frames[:len(stamps)]):
        key = f[0] & 0x1f == 5
        block = b"\x81\x00\x00" + bytes([0x80 if key else 0]) + struct.pack(">I", len(f)) + f
        clusters += _ebml(b"\x1f\x43\xb6\x75", _ebml_uint(b"\xe7", stamps[k], 8) +
                          _ebml(b"\xa3", block))
    seg = info + _ebml(b"\x16\x54\xae\x6b", track) + clusters
    return head + b"\x18\x53\x80\x67\x01" + len(seg).to_bytes(7, "big") + seg


def ffprobe_frames(path):
    """(pts list, key flags, stream start pts, time base) as ffprobe sees them."""
    out = run(FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_entries",
              "frame=best_effort_timestamp,key_frame:stream=start_pts,time_base",
              "-of", "json", path).stdout
    j = json.loads(out)
    st = j["streams"][0]
    num, den = (int(x) for x in st["time_base"].split("/"))
    frames = j["frames"]
    return ([int(f["best_effort_timestamp"]) for f in frames],
            [int(f["key_frame"]) for f in frames], int(st.get("start_pts", 0)), num / den)


# (name, timestamps of the frames, Matroska tick in ns): frame times of
# 9e18 s ("%.6f" 26 characters and a comma, past the 24 a frame the lists
# assumed), and pts of 9.2e18 ms (times of 23 characters and the comma:
# exactly the width assumed). Frames before the stream's start (negative
# times such as -9.2e15 s) are not kept (start <= t), so they never reach
# the lists.
STAMPS = {
    "s": (lambda n: [0] + [9 * 10**18 + k for k in range(1, n)], 10**9),
    "ms": (lambda n: [0] + [9_200_000_000_000_000_000 + k for k in range(1, n)], 10**6),
}


@pytest.fixture(scope="module")
def vsrv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("vsrv"))
    d = start(tmp, "vsrv", http={"connection_memory": 65536})
    yield d, tmp
    stop_daemon(d)


def extreme_mkv(tmp, kind, n):
    stamps, scale = STAMPS[kind]
    path = os.path.join(tmp, f"{kind}-{n}.mkv")
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(mkv_with_stamps(h264_frames(n), 64, 48, stamps(n), scale))
    return path


@needs_ffmpeg
@pytest.mark.parametrize("kind", sorted(STAMPS))
def test_frame_lists_of_extreme_timestamps(vsrv, kind):
    """Every kept frame's index, pts, time and key flag, as ffprobe reads the
    file; before the fix the time list overran its buffer (ASan:
    heap-buffer-overflow in add_frame_lists; a plain build printed the time
    list into X-Dvpp-Key-Frames)."""
    d, tmp = vsrv
    path = extreme_mkv(tmp, kind, 40)
    with open(path, "rb") as f:
        r = d.post("/v1/video/decode", f.read())
    assert r.status == 200, r
    pts, keys, start_pts, tb = ffprobe_frames(path)
    assert len(pts) == 40
    assert r.h("X-Dvpp-Frames") == "40"
    assert r.ints("X-Dvpp-Frame-Index") == list(range(40))
    assert r.ints("X-Dvpp-Frame-Pts") == pts
    # dvppd's time is (pts - start) x time base in doubles, printed "%.6f"
    want = ["%.6f" % (float(p - start_pts) * tb) for p in pts]
    assert r.h("X-Dvpp-Frame-Time").split(",") == want
    assert max(len(t) for t in want) >= 23  # and the comma: 24 or more
    assert r.ints("X-Dvpp-Key-Frames") == [i for i, k in enumerate(keys) if k]
    assert r.h("X-Dvpp-Frame-Lists") is None
    assert r.npy().shape[0] == 40
    assert d.get("/healthz").status == 200


@needs_ffmpeg
def test_frame_lists_of_extreme_timestamps_as_jpeg_parts(vsrv):
    """out=jpeg: each part's X-Dvpp-Frame-Time and -Pts as ffprobe reads them."""
    d, tmp = vsrv
    path = extreme_mkv(tmp, "s", 40)
    with open(path, "rb") as f:
        r = d.post("/v1/video/decode?out=jpeg&max_frames=12", f.read())
    assert r.status == 200, r
    pts, _, start_pts, tb = ffprobe_frames(path)
    boundary = r.h("content-type").split("boundary=")[1].strip('"')
    parts = r.body.split(b"--" + boundary.encode())[1:-1]
    assert len(parts) == 12
    for i, p in enumerate(parts):
        head = p.split(b"\r\n\r\n", 1)[0].decode()
        hdr = dict(line.split(": ", 1) for line in head.strip().split("\r\n"))
        assert int(hdr["X-Dvpp-Frame-Pts"]) == pts[i]
        assert hdr["X-Dvpp-Frame-Time"] == "%.6f" % (float(pts[i] - start_pts) * tb)


@needs_ffmpeg
def test_frame_lists_too_large_for_the_headers_are_left_out_and_said(tmp_path):
    """400 frames of 27-character times pass a quarter of a 32 KiB
    connection memory: the lists are left out together, X-Dvpp-Frame-Lists
    names the limit, the frames are all there."""
    tmp = str(tmp_path)
    d = start(tmp, "small", http={"connection_memory": 32768})
    try:
        path = extreme_mkv(tmp, "s", 400)
        with open(path, "rb") as f:
            r = d.post("/v1/video/decode", f.read())
        assert r.status == 200, r
        assert r.h("X-Dvpp-Frames") == "400"
        for name in ("X-Dvpp-Frame-Index", "X-Dvpp-Frame-Pts", "X-Dvpp-Frame-Time",
                     "X-Dvpp-Key-Frames"):
            assert r.h(name) is None, name
        assert "http.connection_memory" in r.h("X-Dvpp-Frame-Lists"), r
        assert r.npy().shape[0] == 400
    finally:
        stop_daemon(d)


# --------------------------------------------------------------------------
# 2. Result buffers: limits.max_output_bytes, the device's byte budget


MB = 1 << 20
# A 3000 x 3000 float32 RGB tensor of a 1x1 PNG: 108 MB (+ the .npy header);
# scale=1 keeps the pixel's value, so every element is known.
BIG_Q = "w=3000&h=3000&dtype=float32&scale=1"
BIG_BYTES = 3 * 3000 * 3000 * 4


def one_pixel_png(v=77):
    return daemon_util.to_png(np.full((1, 1, 3), v, np.uint8))


def metric(d, name):
    for line in d.get("/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def address_space_cap():
    """preexec_fn: cap the daemon's address space at 8 GiB (not under ASan,
    whose shadow memory needs terabytes), so that the code before the fix
    fails these tests with ENOMEM instead of taking the machine's memory."""
    if ASAN:
        return None

    def cap():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    return cap


def start_capped(tmp, name, **kw):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "request_timeout_s": 60 * SLOW,
                    "idle_timeout_s": 60 * SLOW},
           "socket": {"path": ""}, "device": {"channels": 2}}
    for k, v in kw.items():
        cfg.setdefault(k, {}).update(v)
    return daemon_util.start_daemon(tmp, cfg, name, port, preexec_fn=address_space_cap(),
                                    timeout=120 * SLOW)


@pytest.fixture(scope="module")
def osrv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("osrv"))
    d = start_capped(tmp, "osrv")
    yield d
    stop_daemon(d)


def test_40_mpx_float_tensor_of_a_1x1_png_is_refused_before_allocation(osrv):
    """One 1x1 PNG asking for 8000 x 5000 float32 (480 MB, within max_pixels):
    422 naming limits.max_output_bytes; the daemon's peak memory stays far
    below the tensor (before the fix: 200 and a 480 MB answer)."""
    d = osrv
    base = proc_kb(d.pid, "VmHWM")
    r = d.post("/v1/preprocess?w=8000&h=5000&dtype=float32", one_pixel_png())
    assert_error(r, 422, "ELIMIT", "max_output_bytes", mentions="480000128")
    assert proc_kb(d.pid, "VmHWM") - base < 64 * 1024  # kB: nothing near 480 MB
    # the same geometry as uint8 (120 MB) is within the default 256 MiB
    r = d.post("/v1/preprocess?w=8000&h=5000&dtype=uint8&scale=1", one_pixel_png(9))
    assert r.status == 200, r
    a = r.npy()
    assert a.shape == (1, 3, 5000, 8000) and a.dtype == np.uint8
    assert (a == 9).all()


@pytest.mark.parametrize("path", ["/v1/batch", "/v1/jobs"])
def test_27_gb_batch_of_one_pixel_pngs_is_refused_before_allocation(osrv, path):
    """256 one-pixel PNGs at 3000 x 3000 float32: a 27.6 GB tensor. 422 naming
    limits.max_output_bytes, nothing big allocated (before the fix the
    buffer was allocated before admission, which charged 2 slices)."""
    d = osrv
    base = proc_kb(d.pid, "VmHWM")
    body, hdrs = daemon_util.multipart([(f"i{k}", one_pixel_png(k), f"{k}.png")
                                        for k in range(256)])
    r = d.post(f"{path}?{BIG_Q}", body, hdrs)
    e = assert_error(r, 422, "ELIMIT", "max_output_bytes")
    assert str(256 * BIG_BYTES + 128) in e["message"], e
    assert proc_kb(d.pid, "VmHWM") - base < 64 * 1024
    assert d.get("/healthz").status == 200


def test_a_batch_is_charged_its_whole_tensor(tmp_path):
    """32 x 3 x 512 x 512 float32 = 100 MB against a 64 MiB byte budget:
    refused (the tensor is larger than the whole budget); before the fix
    the batch was charged min(n, channels) slices (6 MB) and answered."""
    d = start_capped(str(tmp_path), "bud", device={"max_bytes_in_flight": 64 * MB})
    try:
        body, hdrs = daemon_util.multipart([(f"i{k}", one_pixel_png(k), f"{k}.png")
                                            for k in range(32)])
        r = d.post("/v1/batch?w=512&h=512&dtype=float32", body, hdrs)
        assert_error(r, 422, "ELIMIT", "too_large")
        body, hdrs = daemon_util.multipart([(f"i{k}", one_pixel_png(k), f"{k}.png")
                                            for k in range(16)])
        r = d.post("/v1/batch?w=512&h=512&dtype=float32&scale=1", body, hdrs)  # 50 MB fits
        assert r.status == 200, r
        a = r.npy()
        assert a.shape == (16, 3, 512, 512)
        assert all((a[k] == k).all() for k in range(16))
    finally:
        stop_daemon(d)


OPEN_SOCKETS = []


def close_sockets():
    """Close what slow_get left open (a failing test must not leave the
    daemon's stop waiting for a reader)."""
    while OPEN_SOCKETS:
        OPEN_SOCKETS.pop().close()


def slow_get(d, path, body=None):
    """Send a request and read only its status line and headers: the answer
    then waits in the daemon for a reader that does not come."""
    s = d.raw(timeout=60 * SLOW)
    OPEN_SOCKETS.append(s)
    method = "POST" if body is not None else "GET"
    head = f"{method} {path} HTTP/1.1\r\nHost: t\r\n"
    if body is not None:
        head += f"Content-Length: {len(body)}\r\n"
    s.sendall(head.encode() + b"\r\n" + (body or b""))
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(1024)
        assert chunk, buf
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    length = int([ln.split(b":")[1] for ln in head.split(b"\r\n")
                  if ln.lower().startswith(b"content-length:")][0])
    return s, status, length, rest


def read_rest(s, length, rest):
    parts = [rest]
    n = len(rest)
    while n < length:
        chunk = s.recv(1 << 20)
        assert chunk, f"closed after {n} of {length} bytes"
        parts.append(chunk)
        n += len(chunk)
    s.close()
    return b"".join(parts)


def test_a_slow_reader_holds_the_budget_until_it_has_read(tmp_path):
    """A 108 MB result that a reader does not read stays held against a
    160 MiB byte budget: the next 108 MB request is refused 503 (the
    budget, Retry-After), and once the reader has read the first the
    budget comes back. Before the fix the waiting answer was counted
    nowhere and the second was admitted."""
    d = start_capped(str(tmp_path), "slow", device={"max_bytes_in_flight": 160 * MB})
    try:
        s, status, length, rest = slow_get(d, f"/v1/preprocess?{BIG_Q}", one_pixel_png(5))
        assert status == 200 and length == BIG_BYTES + 128
        r = d.post(f"/v1/preprocess?{BIG_Q}", one_pixel_png(6))
        assert_error(r, 503, "EAGAIN", "bytes")
        assert r.h("retry-after") == "1"
        assert metric(d, "dvppd_held_bytes") >= BIG_BYTES
        a = daemon_util.npy_load(read_rest(s, length, rest))
        assert a.shape == (1, 3, 3000, 3000) and (a == 5).all()
        wait_for(lambda: metric(d, "dvppd_held_bytes") == 0, "the budget back")
        r = d.post(f"/v1/preprocess?{BIG_Q}", one_pixel_png(6))
        assert r.status == 200, r
        assert (r.npy() == 6).all()
    finally:
        close_sockets()
        stop_daemon(d)


def wait_job(d, loc):
    def done():
        j = d.get(loc).json()
        return j if j["state"] != "running" else None
    return wait_for(done, f"job {loc} finished", timeout=60)


def test_a_job_result_is_held_until_the_job_is_deleted(tmp_path):
    """A finished /v1/jobs result (108 MB) stays held against a 160 MiB
    budget until DELETE: a 108 MB preprocess is refused 503 meanwhile and
    served after. Before the fix finished results were counted nowhere."""
    d = start_capped(str(tmp_path), "jobs", device={"max_bytes_in_flight": 160 * MB})
    try:
        body, hdrs = daemon_util.multipart([("a", one_pixel_png(3), "a.png")])
        r = d.post(f"/v1/jobs?{BIG_Q}", body, hdrs)
        assert r.status == 202, r
        loc = r.h("location")
        assert wait_job(d, loc)["state"] == "done"
        r = d.post(f"/v1/preprocess?{BIG_Q}", one_pixel_png(4))
        assert_error(r, 503, "EAGAIN", "bytes")
        assert d.request("DELETE", loc).status == 200
        wait_for(lambda: metric(d, "dvppd_held_bytes") == 0, "the job's result freed")
        r = d.post(f"/v1/preprocess?{BIG_Q}", one_pixel_png(4))
        assert r.status == 200, r
    finally:
        stop_daemon(d)


def test_a_job_result_is_served_without_a_copy(tmp_path):
    """Two readers of one 108 MB job result at once, neither reading yet:
    the daemon's resident memory does not grow by a copy per GET (before
    the fix each GET copied the result: +216 MB), no result buffer is made
    for them, and both get the same bytes, equal to the reference."""
    d = start_capped(str(tmp_path), "copy")
    try:
        body, hdrs = daemon_util.multipart([("a", one_pixel_png(21), "a.png")])
        r = d.post(f"/v1/jobs?{BIG_Q}", body, hdrs)
        assert r.status == 202, r
        loc = r.h("location")
        assert wait_job(d, loc)["state"] == "done"
        made = metric(d, "dvppd_http_results_total")
        rss = proc_kb(d.pid, "VmRSS")
        readers = [slow_get(d, loc + "/result") for _ in range(2)]
        for _, status, length, _ in readers:
            assert status == 200 and length == BIG_BYTES + 128
        grown = proc_kb(d.pid, "VmRSS") - rss
        assert grown < 40 * 1024, f"resident memory grew by {grown} kB for two GETs"
        assert metric(d, "dvppd_http_results_total") == made
        blobs = [read_rest(rd[0], rd[2], rd[3]) for rd in readers]
        assert blobs[0] == blobs[1]
        a = daemon_util.npy_load(blobs[0])
        assert a.shape == (1, 3, 3000, 3000) and a.dtype == np.float32 and (a == 21).all()
        # deleted while a third reader waits: the result stays until it is read
        s, status, length, rest = slow_get(d, loc + "/result")
        assert status == 200
        assert d.request("DELETE", loc).status == 200
        assert read_rest(s, length, rest) == blobs[0]
        wait_for(lambda: metric(d, "dvppd_http_result_bytes") == 0, "the result freed")
    finally:
        close_sockets()
        stop_daemon(d)


@needs_ffmpeg
def test_a_video_answer_is_held_to_max_output_bytes(tmp_path):
    """40 NV12 frames of 64x48 are 184 KB: with limits.max_output_bytes at
    100 kB the decode stops with 422 naming the limit (before the fix the
    key did not exist)."""
    tmp = str(tmp_path)
    d = start(tmp, "vlim", limits={"max_output_bytes": 100000})
    try:
        video = h264_frames(40)
        r = d.post("/v1/video/decode", video)
        e = assert_error(r, 422, "ELIMIT")
        assert "max_output_bytes" in e["message"], e
        r = d.post("/v1/video/decode?max_frames=10", video)
        assert r.status == 200, r
        assert r.npy().shape[0] == 10
    finally:
        stop_daemon(d)


def test_max_output_bytes_is_a_reloadable_limit(tmp_path):
    """limits.max_output_bytes: in --check-config, checked at load, and a
    SIGHUP changes it for the next request."""
    tmp = str(tmp_path)
    bad = daemon_util.write_config(tmp, "bad", {"limits": {"max_output_bytes": 0}})
    r = subprocess.run([daemon_util.DVPPD, "--config", bad, "--check-config"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "limits.max_output_bytes" in r.stderr, r
    d = start(tmp, "rl")
    try:
        dump = subprocess.run([daemon_util.DVPPD, "--config", d.cfg_path, "--check-config"],
                              capture_output=True, text=True, check=True).stdout
        assert json.loads(dump)["limits"]["max_output_bytes"] == 256 << 20
        q = "/v1/preprocess?w=1000&h=1000&dtype=float32"  # 12 MB
        assert d.post(q, one_pixel_png()).status == 200
        with open(d.cfg_path) as f:
            cfg = json.load(f)
        cfg["limits"] = {"max_output_bytes": 4 * MB}
        with open(d.cfg_path, "w") as f:
            json.dump(cfg, f)
        gen = metric(d, "dvppd_config_generation")
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: metric(d, "dvppd_config_generation") != gen, "the reload")
        assert_error(d.post(q, one_pixel_png()), 422, "ELIMIT", "max_output_bytes")
        assert d.post("/v1/preprocess?w=500&h=500&dtype=float32", one_pixel_png()).status == 200
    finally:
        stop_daemon(d)


# --------------------------------------------------------------------------
# 3. Smaller: multipart split by TCP segmentation, GET bodies and the
# deadline, an HTTP stop with slow clients, /v1/info's channels


def small_png(w=8, h=6, seed=1):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (h, w, 3), np.uint8)
    return daemon_util.to_png(img), img


def chw_of(bgr):
    """The NCHW uint8 tensor of an image decoded by OpenCV (BGR) as RGB."""
    return bgr[:, :, ::-1].transpose(2, 0, 1)[None]


def send_in_pieces(d, head, body, cuts, pause=0.02):
    """POST @body cut at the offsets @cuts, each piece its own TCP segment
    (TCP_NODELAY, a pause between them); the answer as (status, headers,
    body)."""
    s = d.raw(timeout=30 * SLOW)
    try:
        s.sendall(head)
        last = 0
        for c in list(cuts) + [len(body)]:
            if c > last:
                s.sendall(body[last:c])
                time.sleep(pause)
            last = c
        r = daemon_util.read_raw_response(s, timeout=30 * SLOW)
    finally:
        s.close()
    assert r is not None, "no answer"
    return r


def multipart_head(path, body, boundary):
    return (f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; "
            f"boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n").encode()


@pytest.fixture(scope="module")
def msrv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("msrv"))
    d = start(tmp, "msrv")
    yield d
    stop_daemon(d)


def test_multipart_at_every_split_position(msrv):
    """One image part and a spec part, the body cut into two TCP segments
    at every offset: the same 200 and tensor each time (before the fix a
    cut right after a part's headers made libmicrohttpd report its first
    bytes at offset 0 twice and the part counted as two: 400 'one image
    part (named image) expected' or a spec split in half)."""
    d = msrv
    png, _ = small_png()
    want = chw_of(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR))
    spec = json.dumps({"normalize": {"scale": 1, "dtype": "uint8"}})
    body, hdrs = daemon_util.multipart([("image", png, "i.png", "image/png"), ("spec", spec)],
                                       boundary="dvppsplit")
    head = multipart_head("/v1/preprocess", body, "dvppsplit")
    bad = []
    for cut in range(1, len(body)):
        status, _, got = send_in_pieces(d, head, body, [cut], pause=0.01)
        if status != 200:
            bad.append((cut, status, got[:120]))
            continue
        a = daemon_util.npy_load(got)
        if a.shape != want.shape or not (a == want).all():
            bad.append((cut, "tensor differs"))
    assert not bad, f"{len(bad)} of {len(body) - 1} cuts failed, first: {bad[:3]}"


def test_multipart_batch_in_tiny_segments(msrv):
    """A batch of three images sent 7 bytes at a time: three slices, each
    the reference image (before the fix: parts split, 'items' miscounted)."""
    d = msrv
    imgs = [small_png(8, 6, seed=k) for k in range(3)]
    body, _ = daemon_util.multipart([(f"i{k}", p, f"{k}.png", "image/png")
                                     for k, (p, _) in enumerate(imgs)], boundary="dvpptiny")
    head = multipart_head("/v1/batch?w=8&h=6&dtype=uint8&scale=1", body, "dvpptiny")
    status, hdr, got = send_in_pieces(d, head, body, range(7, len(body), 7), pause=0.003)
    assert status == 200, (status, got[:200])
    assert hdr["x-dvpp-item-status"] == "OK,OK,OK"
    a = daemon_util.npy_load(got)
    assert a.shape == (3, 3, 6, 8)
    for k, (png, _) in enumerate(imgs):
        want = chw_of(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR))
        assert (a[k:k + 1] == want).all(), k


def trickle(d, head, seconds):
    """Send @head, then a body byte every 0.2 s for up to @seconds: (the
    time the daemon closed the connection or None, what it sent)."""
    s = d.raw(timeout=2)
    got = b""
    t0 = time.monotonic()
    try:
        s.sendall(head)
        while time.monotonic() - t0 < seconds:
            s.sendall(b"x")
            if select.select([s], [], [], 0.2)[0]:
                chunk = s.recv(65536)
                if not chunk:
                    return time.monotonic() - t0, got
                got += chunk
    except (BrokenPipeError, ConnectionResetError):
        return time.monotonic() - t0, got
    finally:
        s.close()
    return None, got


@pytest.mark.parametrize("path", ["/healthz", "/v1/info", "/v1/jobs/1"])
def test_a_get_body_is_held_to_the_request_deadline(tmp_path, path):
    """A GET whose 200-byte body trickles in a byte every 0.2 s (each byte
    resets the idle timeout): the connection is closed once
    http.request_timeout_s (2) has passed, unanswered, counted as a deadline
    rejection. Before the fix a GET's body skipped the deadline: the trickle
    went on for its 40 s and was answered."""
    d = start(str(tmp_path), "getb", http={"request_timeout_s": 2, "idle_timeout_s": 60})
    try:
        head = f"GET {path} HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\n\r\n".encode()
        cut, got = trickle(d, head, 10 * SLOW)
        assert cut is not None, f"the trickled GET body was never cut (got {got[:100]!r})"
        assert 2 <= cut < 2 + 3 * SLOW and got == b"", (cut, got)
        m = d.get("/metrics").body.decode()
        assert 'dvppd_rejections_total{reason="deadline"} 1' in m, m
        # a GET answered at once (405 on a POST route) is not kept open
        # either: libmicrohttpd (0.9.75) sends the early answer with
        # Connection: close and reads no more of the body, so the request
        # is counted once, as its 405, and reaches no deadline (a
        # libmicrohttpd that read on would be held to it and counted as a
        # deadline rejection: tests/unit/dvppd/test_http_body.c)
        cut, got = trickle(d, head.replace(path.encode(), b"/v1/preprocess"), 10 * SLOW)
        assert got.startswith(b"HTTP/1.1 405"), got
        assert b"\r\nConnection: close\r\n" in got, got
        assert cut is not None and cut < 1.5 * SLOW, cut
        m = d.get("/metrics").body.decode()
        assert 'dvppd_rejections_total{reason="deadline"} 1' in m, m
        assert 'dvppd_http_requests_total{route="preprocess",code="405"} 1' in m, m
        assert 'route="preprocess",code="408"' not in m, m
    finally:
        stop_daemon(d)


def start_with_socket(tmp, name, service=None, http=None, env=None):
    sdir = daemon_util.sock_dir("dvpph-", 0o755)
    sock = os.path.join(sdir, f"{name}.sock")
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "request_timeout_s": 120,
                    "idle_timeout_s": 120},
           "socket": {"path": sock, "mode": "0600"}, "device": {"channels": 2},
           "service": service or {}}
    cfg["http"].update(http or {})
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        return daemon_util.start_daemon(tmp, cfg, name, port, sock=sock, sock_dir=sdir,
                                        timeout=60 * SLOW)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def post_async(d, path, body, out):
    """POST in a thread; (status, json or None) appended to @out."""
    import threading

    def run_one():
        try:
            r = d.post(path, body, timeout=60 * SLOW)
            out.append((r.status, r.json() if r.h("content-type", "").startswith(
                "application/json") else None))
        except (OSError, http_client_errors()) as e:
            out.append((None, repr(e)))
    t = threading.Thread(target=run_one)
    t.start()
    return t


def http_client_errors():
    import http.client
    return http.client.HTTPException


def sigterm_and_wait(d):
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    rc = d.proc.wait(60 * SLOW)
    return rc, time.monotonic() - t0


def assert_clean_stop(d, rc, took):
    log = d.log()
    assert rc == 0, f"exit status {rc}:\n{log}"
    assert "AddressSanitizer" not in log and "LeakSanitizer" not in log, log
    assert "did not end" not in log and "leaving them" not in log, log
    # drain_timeout_s is 1: the stop ends soon after it, not 5 s of grace later
    assert took < 4, f"the stop took {took:.1f} s:\n{log}"


def test_stop_with_ring_requests_on_stalled_workers_and_a_trickled_body(tmp_path):
    """SIGTERM with a short drain (1 s) while two ?ring= requests wait on
    workers stalled for 60 s (DVPPD_FAULTS) and a third ?ring= request's
    body is still trickling in: the stalled jobs are canceled and answered
    503, the trickled request's connection is closed, and only then are the
    socket front end and the device freed: exit 0 in about the drain time,
    clean under ASan. Before the fix the stop waited 5 s more, gave up on
    the trickled request ('did not end; leaving them to the process exit')
    and freed the socket front end and the device while libmicrohttpd
    still served it."""
    d = start_with_socket(str(tmp_path), "stop", service={"drain_timeout_s": 1},
                          env={"DVPPD_FAULTS": "stall_ms=60000"})
    c = None
    s = None
    stopped = False
    try:
        c = d.client(timeout=30 * SLOW)
        c.open_ring(4, 1 << 20, name="stopring", http=True)
        png, _ = small_png()
        q = "/v1/preprocess?w=8&h=6&dtype=uint8&scale=1&ring=stopring"
        out = []
        threads = [post_async(d, q, png, out) for _ in range(2)]
        # both bodies read and both jobs on the stalled workers: the requests
        # wait on them (a request counts in dvppd_http_inflight from its
        # headers on, so that gauge could reach 3 with one body still on
        # its way, whose connection the stop then closed: RemoteDisconnected)
        wait_for(lambda: metric(d, "dvppd_http_suspended") == 2, "two requests on the workers")
        s = d.raw(timeout=30 * SLOW)
        s.sendall(f"POST {q} HTTP/1.1\r\nHost: t\r\nContent-Length: {len(png)}\r\n\r\n".encode()
                  + png[:10])
        # the two, the trickled request (counted at its headers) and this GET
        wait_for(lambda: metric(d, "dvppd_http_inflight") >= 4, "the trickled request in")
        rc, took = sigterm_and_wait(d)
        stopped = True
        for t in threads:
            t.join(30 * SLOW)
        assert len(out) == 2 and all(st == 503 for st, _ in out), out
        assert all(j["error"]["code"] == "ECANCELED" for _, j in out), out
        # the trickled request was cut: the rest of its body goes nowhere
        try:
            s.sendall(png[10:])
            tail = s.recv(65536)
        except (BrokenPipeError, ConnectionResetError):
            tail = b""
        assert tail == b"", tail
        assert_clean_stop(d, rc, took)
    finally:
        if s:
            s.close()
        if c:
            c.close()
        stop_daemon(d, check=not stopped)


def test_stop_with_a_slow_reader(tmp_path):
    """SIGTERM while a reader takes nothing of a 108 MB answer: its
    connection is closed at the end of the 1 s drain and the daemon exits 0
    (before the fix: 5 s more, then 'did not end; leaving them to the
    process exit' with libmicrohttpd still running on freed front ends)."""
    d = start_with_socket(str(tmp_path), "slowstop", service={"drain_timeout_s": 1})
    stopped = False
    try:
        s, status, length, rest = slow_get(d, f"/v1/preprocess?{BIG_Q}", one_pixel_png(5))
        assert status == 200
        rc, took = sigterm_and_wait(d)
        stopped = True
        n = len(rest)
        try:
            while True:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                n += len(chunk)
        except (ConnectionResetError, socket.timeout):
            pass
        assert n < length, "the slow reader got the whole answer"
        assert_clean_stop(d, rc, took)
    finally:
        close_sockets()
        stop_daemon(d, check=not stopped)


def test_info_reports_each_engines_channels(tmp_path):
    """/v1/info's channels per engine, as the configuration sets them
    (device.channels 2, device.engine_channels: vdec 1, jpege 3), and after
    a reload that changes them. Before the fix every engine reported the
    VPC engine's count (and device.engine_channels did not exist)."""
    tmp = str(tmp_path)
    d = start(tmp, "info", device={"channels": 2, "engine_channels": {"vdec": 1, "jpege": 3}})
    try:
        def channels():
            return {e["name"]: e["channels"] for e in d.get("/v1/info").json()["engines"]}
        want = {"jpegd": 2, "jpege": 3, "pngd": 2, "vpc": 2, "aipp": 2, "vdec": 1, "venc": 2}
        assert channels() == want
        with open(d.cfg_path) as f:
            cfg = json.load(f)
        cfg["device"] = {"channels": 3, "engine_channels": {"venc": 1}}
        with open(d.cfg_path, "w") as f:
            json.dump(cfg, f)
        gen = metric(d, "dvppd_config_generation")
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: metric(d, "dvppd_config_generation") != gen, "the reload")
        want = {"jpegd": 3, "jpege": 3, "pngd": 3, "vpc": 3, "aipp": 3, "vdec": 3, "venc": 1}
        wait_for(lambda: channels() == want, f"channels {want}")
        # a name that is no engine is refused naming it
        bad = daemon_util.write_config(tmp, "bad", {"device": {"engine_channels": {"gpu": 1}}})
        r = subprocess.run([daemon_util.DVPPD, "--config", bad, "--check-config"],
                           capture_output=True, text=True)
        assert r.returncode == 1 and "engine_channels.gpu" in r.stderr, r
    finally:
        stop_daemon(d)
