"""dvppd's HTTP video endpoints (docs/http-api.md) end to end, through the
real daemon: POST /v1/video/decode and POST /v1/video/encode.

Frames are compared with the ffmpeg command line (`-pix_fmt nv12` /
`rgb24` rawvideo, byte for byte: codecs/dvpp_video converts as the CLI
does) and with `dvppctl video-decode` when this build has it; tensors with
/v1/preprocess run on every frame; encoded streams are decoded back with
ffmpeg. Fixture videos are made with Debian's ffmpeg (testsrc2, 320x240,
30 frames, libx264 and libx265, MP4, Annex-B, MKV, TS) plus
.cache/testdata/video/movie-hello.mp4 (1280x720, 250 frames) when fetched.
Run with Debian's /usr/bin/python3 (numpy, cv2):

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \
        tests/e2e/test_http_video.py
"""
import json
import os
import random
import re
import socket

import numpy as np
import pytest

import cv2  # python3-opencv (make deps): a hard dependency, so an import, not a skip

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (DVPPCTL, FFMPEG, FFPROBE, ROOT, Data, aipp_rgb,  # noqa: E402
                         ctl, ff_key_frames, free_port, h264_rbsp, multipart, npy_bytes,
                         nv12_unpad, psnr, run, stop_daemon)
import daemon_util  # noqa: E402

MOVIE = os.path.join(ROOT, ".cache", "testdata", "video", "movie-hello.mp4")

if not FFMPEG or not FFPROBE:
    pytest.skip("ffmpeg/ffprobe are needed (apt-get install ffmpeg)",
                allow_module_level=True)

W, H, T, GOP = 320, 240, 30, 10
MEAN = "0.485,0.456,0.406"
STD = "0.229,0.224,0.225"
# Small limits so the tests can pass them: a video body above
# MAX_VIDEO_BYTES is 413 from its Content-Length; image bodies stop at
# MAX_BODY (so a 4 MB video proves the video limit is the one used).
MAX_VIDEO_BYTES = 6_000_000
MAX_BODY = 1_000_000


# --------------------------------------------------------------------------
# HTTP and daemon helpers (the rest are daemon_util's)


def start_daemon(tmp, name="d", limits=None):
    port = free_port()
    lim = {"max_video_bytes": MAX_VIDEO_BYTES}
    lim.update(limits or {})
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "request_timeout_s": 60,
                    "idle_timeout_s": 10, "max_body_bytes": MAX_BODY,
                    "max_batch_bytes": 64 << 20},
           "socket": {"path": ""}, "device": {"channels": 2}, "limits": lim}
    return daemon_util.start_daemon(tmp, cfg, name, port, timeout=60)


def assert_error(r, status, code=None, field=None):
    assert r.status == status, r
    assert r.h("content-type", "").startswith("application/json"), r
    e = r.json()["error"]
    assert e["message"], e
    if code is not None:
        assert e["code"] == code, e
    if field is not None:
        assert e["field"] == field, e
    return e


# --------------------------------------------------------------------------
# ffmpeg / dvppctl references


def ff_frames(path, pix_fmt, w, h, vf=None, frames=None):
    """The frames ffmpeg decodes: nv12 as T x (h*3/2) x w, rgb24 as
    T x h x w x 3."""
    cmd = [FFMPEG, "-v", "error", "-i", path]
    if vf:
        cmd += ["-vf", vf, "-vsync", "0"]
    if frames:
        cmd += ["-frames:v", frames]
    raw = run(*cmd, "-f", "rawvideo", "-pix_fmt", pix_fmt, "-").stdout
    if pix_fmt == "nv12":
        return np.frombuffer(raw, np.uint8).reshape(-1, h * 3 // 2, w)
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


def have_ctl_video():
    if not os.path.exists(DVPPCTL):
        return False
    r = ctl("video-decode", check=False, timeout=None)
    return "unknown command" not in r.stderr


def ctl_video_decode(tmp, src, *flags):
    out = os.path.join(tmp, "ctl_%d.npy" % random.getrandbits(32))
    r = run(DVPPCTL, "video-decode", src, *flags, "-o", out)
    return np.load(out), json.loads(r.stdout.decode().strip().splitlines()[-1])


def parse_multipart(r):
    """multipart/mixed -> [(headers, body)], checking the framing."""
    m = re.match(r'multipart/mixed;\s*boundary="?([^";]+)"?', r.h("content-type", ""))
    assert m, r.headers
    delim = b"--" + m.group(1).encode()
    body = r.body
    if body == delim + b"--\r\n":
        return []
    assert body.startswith(delim + b"\r\n") and body.endswith(delim + b"--\r\n"), body[-80:]
    parts, pos = [], 0
    while body.startswith(delim + b"\r\n", pos):
        head_end = body.index(b"\r\n\r\n", pos)
        lines = body[pos + len(delim) + 2:head_end].decode("latin-1").split("\r\n")
        hdr = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
        n = int(hdr["content-length"])
        data = body[head_end + 4:head_end + 4 + n]
        assert body[head_end + 4 + n:head_end + 6 + n] == b"\r\n"
        parts.append((hdr, data))
        pos = head_end + 6 + n
    assert body[pos:] == delim + b"--\r\n"
    return parts


# --------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def vids(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("http_video"))
    v = Data(tmp)
    src = ["-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=30", "-frames:v", T,
           "-pix_fmt", "yuv420p"]

    def p(name):
        return os.path.join(tmp, name)

    run(FFMPEG, "-v", "error", *src, "-c:v", "libx264", "-g", GOP, "-keyint_min", GOP,
        "-sc_threshold", 0, p("h264.mp4"))
    run(FFMPEG, "-v", "error", *src, "-c:v", "libx265", "-x265-params",
        f"keyint={GOP}:min-keyint={GOP}:scenecut=0:log-level=error", p("h265.mp4"))
    run(FFMPEG, "-v", "error", "-i", p("h264.mp4"), "-c", "copy", "-bsf:v",
        "h264_mp4toannexb", "-f", "h264", p("h264.h264"))
    run(FFMPEG, "-v", "error", "-i", p("h265.mp4"), "-c", "copy", "-bsf:v",
        "hevc_mp4toannexb", "-f", "hevc", p("h265.hevc"))
    run(FFMPEG, "-v", "error", "-i", p("h264.mp4"), "-c", "copy", p("h264.mkv"))
    run(FFMPEG, "-v", "error", "-i", p("h264.mp4"), "-c", "copy", "-f", "mpegts",
        p("h264.ts"))
    run(FFMPEG, "-v", "error", *src, "-c:v", "mpeg4", p("mpeg4.mp4"))
    v.path = {k: p(f) for k, f in [("h264-mp4", "h264.mp4"), ("h265-mp4", "h265.mp4"),
                                    ("h264-annexb", "h264.h264"),
                                    ("h265-annexb", "h265.hevc"),
                                    ("h264-mkv", "h264.mkv"), ("h264-ts", "h264.ts"),
                                    ("mpeg4", "mpeg4.mp4")]}
    v.bytes = {k: open(f, "rb").read() for k, f in v.path.items()}
    v.nv12 = ff_frames(v.path["h264-mp4"], "nv12", W, H)
    v.rgb = ff_frames(v.path["h264-mp4"], "rgb24", W, H)
    assert v.nv12.shape == (T, H * 3 // 2, W) and v.rgb.shape == (T, H, W, 3)
    v.ctl = have_ctl_video()
    return v


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    d = start_daemon(str(tmp_path_factory.mktemp("http_video_srv")))
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    """A daemon with a frame budget of 20 decoded frames."""
    d = start_daemon(str(tmp_path_factory.mktemp("http_video_tight")), name="tight",
                     limits={"max_video_frames": 20})
    yield d
    stop_daemon(d)


@pytest.fixture
def tmp(tmp_path):
    return str(tmp_path)


def decode(srv, body, query=""):
    return srv.post("/v1/video/decode" + ("?" + query if query else ""), body)


# --------------------------------------------------------------------------
# Decode: frames


@pytest.mark.parametrize("kind", ["h264-mp4", "h264-annexb", "h265-mp4", "h265-annexb",
                                  "h264-mkv", "h264-ts"])
def test_decode_nv12_equals_ffmpeg(srv, vids, tmp, kind):
    r = decode(srv, vids.bytes[kind])
    assert r.status == 200, r
    assert r.h("content-type") == "application/x-npy"
    a = r.npy()
    assert a.dtype == np.uint8 and a.shape == (T, 360, 320), a.shape  # T x rows x stride
    assert r.h("x-dvpp-shape") == "30,360,320" and r.h("x-dvpp-dtype") == "uint8"
    assert r.h("x-dvpp-layout") == "NV12" and r.h("x-dvpp-format") == "nv12"
    assert int(r.h("x-dvpp-frames")) == T
    assert r.ints("x-dvpp-frame-index") == list(range(T))
    codec = "h265" if "h265" in kind else "h264"
    assert r.h("x-dvpp-video") == f"{codec} 320x240 30", r.headers
    ref = vids.nv12 if codec == "h264" else ff_frames(vids.path[kind], "nv12", W, H)
    assert np.array_equal(nv12_unpad(a, W, H), ref)
    assert r.ints("x-dvpp-key-frames") == ff_key_frames(vids.path[kind]) == [0, 10, 20]
    if vids.ctl:
        c, meta = ctl_video_decode(tmp, vids.path[kind])
        assert np.array_equal(a, c)
        assert meta["index"] == r.ints("x-dvpp-frame-index")
        assert meta["pts"] == r.ints("x-dvpp-frame-pts")


def test_decode_rgb_bgr_and_raw(srv, vids, tmp):
    r = decode(srv, vids.bytes["h264-mp4"], "format=rgb")
    assert r.status == 200, r
    a = r.npy()
    assert a.shape == (T, H, W, 3) and r.h("x-dvpp-layout") == "NHWC"
    assert np.array_equal(a, vids.rgb)
    b = decode(srv, vids.bytes["h264-mp4"], "format=bgr&every=3").npy()
    assert np.array_equal(b, vids.rgb[::3, :, :, ::-1])
    raw = decode(srv, vids.bytes["h264-mp4"], "out=raw&max_frames=4")
    assert raw.status == 200 and raw.h("content-type") == "application/octet-stream"
    assert raw.body == vids.nv12[:4].tobytes()
    # align: rows of 128 pixels, 32-row height stride
    al = decode(srv, vids.bytes["h264-mp4"], "align=128x32&max_frames=2").npy()
    assert al.shape == (2, 384, 384), al.shape
    assert np.array_equal(al[:, :H, :W], vids.nv12[:2, :H])
    assert np.array_equal(al[:, 256:256 + H // 2, :W], vids.nv12[:2, H:])
    if vids.ctl:
        c, _ = ctl_video_decode(tmp, vids.path["h264-mp4"], "--format", "rgb")
        assert np.array_equal(a, c)


def test_decode_movie_max_frames(srv, vids, tmp):
    if not os.path.exists(MOVIE):
        pytest.skip("tests/tools/fetch-test-data has not fetched movie-hello.mp4")
    body = open(MOVIE, "rb").read()
    assert MAX_BODY < len(body) < MAX_VIDEO_BYTES  # the video limit is the one used
    r = decode(srv, body, "max_frames=5&every=2")
    assert r.status == 200, r
    a = r.npy()
    assert a.shape == (5, 1080, 1280), a.shape
    assert r.ints("x-dvpp-frame-index") == [0, 2, 4, 6, 8]
    assert r.h("x-dvpp-video").startswith("h264 1280x720 30")
    ref = ff_frames(MOVIE, "nv12", 1280, 720, frames=9)
    assert np.array_equal(nv12_unpad(a, 1280, 720), ref[::2])
    t = decode(srv, body, f"max_frames=3&w=224&h=224&mean={MEAN}&std={STD}")
    assert t.status == 200 and t.npy().shape == (3, 3, 224, 224), t
    if vids.ctl:
        c, meta = ctl_video_decode(tmp, MOVIE, "--max-frames", 5, "--every", 2)
        assert np.array_equal(a, c) and meta["index"] == [0, 2, 4, 6, 8]
        c, _ = ctl_video_decode(tmp, MOVIE, "--max-frames", 3, "--size", "224x224",
                                "--mean", MEAN, "--std", STD)
        assert np.array_equal(t.npy(), c)


# --------------------------------------------------------------------------
# Decode: tensors


@pytest.mark.parametrize("params", [
    {"w": 64, "h": 48, "mean": MEAN, "std": STD},
    {"w": 96, "h": 96, "mode": "letterbox", "dtype": "uint8", "layout": "nhwc"},
    {"w": 40, "h": 40, "mode": "fill", "interp": "area", "dtype": "float16",
     "order": "bgr"},
])
def test_decode_tensor_equals_per_frame_preprocess(srv, vids, tmp, params):
    q = "&".join(f"{k}={v}" for k, v in params.items())
    r = decode(srv, vids.bytes["h264-mp4"], q + "&every=7")
    assert r.status == 200, r
    t = r.npy()
    assert r.ints("x-dvpp-frame-index") == [0, 7, 14, 21, 28]
    assert t.shape[0] == 5 and r.h("x-dvpp-shape") == ",".join(map(str, t.shape))
    assert r.h("x-dvpp-dtype") == {"<f4": "float32", "<f2": "float16",
                                   "|u1": "uint8"}[t.dtype.str]
    assert r.h("x-dvpp-scale") and r.h("x-dvpp-pad")
    for i, n in enumerate([0, 7, 14, 21, 28]):
        one = srv.post(f"/v1/preprocess?raw=nv12:{W}x{H}&" + q, vids.nv12[n].tobytes())
        assert one.status == 200, one
        assert np.array_equal(one.npy()[0], t[i]), f"frame {n}"
    if vids.ctl:
        flags = ["--size", f"{params['w']}x{params['h']}", "--every", 7]
        names = {"mode": "--mode", "interp": "--interp", "mean": "--mean", "std": "--std",
                 "dtype": "--dtype", "layout": "--layout", "order": "--order"}
        for k, v in params.items():
            if k in names:
                flags += [names[k], v]
        c, _ = ctl_video_decode(tmp, vids.path["h264-mp4"], *flags)
        assert np.array_equal(t, c)


def test_decode_tensor_json_spec(srv, vids):
    spec = json.dumps({"ops": [{"resize": {"w": 32, "h": 32}}],
                       "normalize": {"dtype": "uint8", "layout": "nhwc"}})
    r = srv.post("/v1/video/decode?max_frames=2", vids.bytes["h264-mp4"],
                 headers={"X-Dvpp-Spec": spec})
    assert r.status == 200, r
    q = decode(srv, vids.bytes["h264-mp4"], "max_frames=2&w=32&h=32&dtype=uint8&layout=nhwc")
    assert np.array_equal(r.npy(), q.npy()) and r.npy().shape == (2, 32, 32, 3)


AIPP_RGB = aipp_rgb(W, H)


def test_decode_multipart_spec_and_aipp(srv, vids):
    spec = json.dumps({"ops": [{"resize": {"w": 48, "h": 32}}]})
    body, hdr = multipart([("video", vids.bytes["h264-mp4"]), ("spec", spec)], as_files=True)
    r = srv.post("/v1/video/decode?every=15", body, headers=hdr)
    assert r.status == 200, r
    q = decode(srv, vids.bytes["h264-mp4"], "every=15&w=48&h=32")
    assert np.array_equal(r.npy(), q.npy()) and r.npy().shape == (2, 3, 32, 48)
    # an inline AIPP config on RGB frames: each slice is /v1/preprocess's
    body, hdr = multipart([("video", vids.bytes["h264-mp4"]), ("aipp", AIPP_RGB)],
                          as_files=True)
    r = srv.post("/v1/video/decode?format=rgb&every=15", body, headers=hdr)
    assert r.status == 200, r
    t = r.npy()
    assert t.shape[0] == 2 and t.dtype == np.float16, (t.shape, t.dtype)
    for i, n in enumerate([0, 15]):
        b1, h1 = multipart([("image", vids.rgb[n].tobytes()), ("aipp", AIPP_RGB)],
                           as_files=True)
        one = srv.post(f"/v1/preprocess?raw=rgb:{W}x{H}", b1, headers=h1)
        assert one.status == 200, one
        assert np.array_equal(one.npy()[0], t[i])


# --------------------------------------------------------------------------
# Decode: sampling


def test_sampling_headers(srv, vids):
    b = vids.bytes["h264-mp4"]
    cases = [("every=4", list(range(0, T, 4))),
             ("keyframes=1", [0, 10, 20]),
             ("start=0.28&end=0.55", list(range(9, 17))),
             ("max_frames=3", [0, 1, 2]),
             ("start=0.38&end=0.62", list(range(12, 19))),  # no key frame kept
             ("every=2&start=0.5&max_frames=4", [16, 18, 20, 22])]
    for q, want in cases:
        r = decode(srv, b, q)
        assert r.status == 200, (q, r)
        got = r.ints("x-dvpp-frame-index")
        assert got == want, (q, got)
        assert int(r.h("x-dvpp-frames")) == len(want) == r.npy().shape[0]
        times = [float(x) for x in r.h("x-dvpp-frame-time").split(",")]
        assert np.allclose(times, [n / 30 for n in want], atol=1e-5), (q, times)
        assert r.ints("x-dvpp-frame-pts") == [512 * n for n in want]  # 1/15360 s
        assert set(r.ints("x-dvpp-key-frames")) == {n for n in want if n % GOP == 0}
        assert np.array_equal(nv12_unpad(r.npy(), W, H), vids.nv12[want])
    # fps: a kept frame is the first one at least 1/fps after the last kept
    for fps in (10, 7.5):
        r = decode(srv, b, f"fps={fps}")
        assert r.status == 200, r
        times = [float(x) for x in r.h("x-dvpp-frame-time").split(",")]
        gaps = np.diff(times)
        assert times[0] == 0 and len(times) >= int(fps * T / 30) - 1, times
        assert (gaps >= 1 / fps - 1e-6).all() and (gaps <= 1 / fps + 1 / 30 + 1e-6).all()


def test_annexb_frame_times(srv, vids):
    r = decode(srv, vids.bytes["h264-annexb"], "max_frames=3")
    assert r.status == 200, r
    times = [float(x) for x in r.h("x-dvpp-frame-time").split(",")]
    assert np.allclose(times, [0, 1 / 30, 2 / 30], atol=1e-5), times


def test_sampling_nothing_kept(srv, vids):
    r = decode(srv, vids.bytes["h264-mp4"], "start=100")
    assert r.status == 200, r
    assert r.npy().shape == (0, 360, 320) and r.h("x-dvpp-frames") == "0"
    t = decode(srv, vids.bytes["h264-mp4"], "start=100&w=32&h=16")
    assert t.status == 200 and t.npy().shape == (0, 3, 16, 32), t
    j = decode(srv, vids.bytes["h264-mp4"], "start=100&out=jpeg")
    assert j.status == 200 and parse_multipart(j) == []
    raw = decode(srv, vids.bytes["h264-mp4"], "start=100&out=raw")
    assert raw.status == 200 and raw.body == b"", raw
    assert_error(decode(srv, b""), 400, "EINVAL", field="body")
    assert_error(srv.post("/v1/video/encode", b""), 400, "EINVAL", field="body")


# --------------------------------------------------------------------------
# Decode: JPEG frames


def test_decode_jpeg_multipart(srv, vids):
    r = decode(srv, vids.bytes["h264-mp4"], "out=jpeg&every=10")
    assert r.status == 200, r
    parts = parse_multipart(r)
    assert [int(h["x-dvpp-frame-index"]) for h, _ in parts] == [0, 10, 20]
    assert r.ints("x-dvpp-frame-index") == [0, 10, 20]
    for (h, data), n in zip(parts, [0, 10, 20]):
        assert h["content-type"] == "image/jpeg" and h["x-dvpp-key-frame"] == "1"
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert img is not None and img.shape == (H, W, 3)
        # as close to the frame as OpenCV's own JPEG of it (quality 95, 4:2:0)
        ok, ref = cv2.imencode(".jpg", vids.rgb[n][:, :, ::-1],
                               [cv2.IMWRITE_JPEG_QUALITY, 95])
        ref = cv2.imdecode(ref, cv2.IMREAD_COLOR)
        assert psnr(img, vids.rgb[n][:, :, ::-1]) >= psnr(ref, vids.rgb[n][:, :, ::-1]) - 1
    small = decode(srv, vids.bytes["h264-mp4"], "out=jpeg&max_frames=2&w=160&h=120")
    assert small.status == 200, small
    for h, data in parse_multipart(small):
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert img.shape == (120, 160, 3)
    lo = decode(srv, vids.bytes["h264-mp4"], "out=jpeg&max_frames=2&quality=20")
    hi = decode(srv, vids.bytes["h264-mp4"], "out=jpeg&max_frames=2&quality=95")
    assert lo.status == hi.status == 200
    assert len(lo.body) < len(hi.body) * 0.7


# --------------------------------------------------------------------------
# Encode


@pytest.mark.parametrize("codec,container", [("h264", "annexb"), ("h265", "annexb"),
                                             ("h264", "mp4"), ("h265", "mp4")])
def test_encode_roundtrip(srv, vids, tmp, codec, container):
    r = srv.post(f"/v1/video/encode?codec={codec}&container={container}&gop={GOP}&crf=16",
                 npy_bytes(vids.rgb))
    assert r.status == 200, r
    ctype = "video/mp4" if container == "mp4" else f"video/{codec}"
    assert r.h("content-type") == ctype
    assert int(r.h("x-dvpp-frames")) == T and int(r.h("x-dvpp-packets")) == T
    assert int(r.h("x-dvpp-key-frames")) == 3
    out = os.path.join(tmp, "enc." + ("mp4" if container == "mp4" else codec))
    with open(out, "wb") as f:
        f.write(r.body)
    back = ff_frames(out, "rgb24", W, H)
    assert back.shape == vids.rgb.shape
    worst = min(psnr(a, b) for a, b in zip(back, vids.rgb))
    assert worst >= 35, worst
    assert ff_key_frames(out) == [0, 10, 20]
    # the stream decodes through dvppd too
    d = decode(srv, r.body, "format=rgb")
    assert d.status == 200 and np.array_equal(d.npy(), back), d


def test_encode_nv12_idr_bgr(srv, vids, tmp):
    r = srv.post("/v1/video/encode?format=nv12&gop=30&idr=0,5,17", npy_bytes(vids.nv12))
    assert r.status == 200, r
    assert int(r.h("x-dvpp-key-frames")) == 3 and r.h("content-type") == "video/h264"
    out = os.path.join(tmp, "idr.h264")
    with open(out, "wb") as f:
        f.write(r.body)
    assert ff_key_frames(out) == [0, 5, 17]
    assert psnr(ff_frames(out, "rgb24", W, H), vids.rgb) > 33
    # BGR frames: the same pictures as the RGB ones
    bgr = srv.post("/v1/video/encode?gop=10&format=bgr&crf=16",
                   npy_bytes(np.ascontiguousarray(vids.rgb[:6, :, :, ::-1])))
    assert bgr.status == 200, bgr
    back = decode(srv, bgr.body, "format=rgb")
    assert back.status == 200 and psnr(back.npy(), vids.rgb[:6]) >= 35, back
    cbr = srv.post("/v1/video/encode?rc=cbr&bitrate=300&fps=25", npy_bytes(vids.rgb))
    assert cbr.status == 200 and cbr.h("x-dvpp-video") == "h264 320x240 25", cbr


@pytest.mark.parametrize("query,body,status,field", [
    ("codec=vp9", "rgb", 415, "codec"),
    ("rc=bogus", "rgb", 400, "rc"),
    ("gop=0", "rgb", 400, "gop"),
    ("crf=60", "rgb", 400, "crf"),
    ("bitrate=1000&rc=crf", "rgb", 400, "bitrate"),
    ("crf=20&rc=cbr", "rgb", 400, "crf"),
    ("idr=30", "rgb", 400, "idr"),
    ("idr=a", "rgb", 400, "idr"),
    ("container=avi", "rgb", 400, "container"),
    ("fps=0", "rgb", 400, "fps"),
    ("profile=bogus", "rgb", 400, "profile"),
    ("preset=warp", "rgb", 400, "preset"),
    ("threads=99", "rgb", 400, "threads"),
    ("w=64", "rgb", 400, "w"),
    ("format=nv12", "rgb", 400, "body"),
    ("", "f32", 400, "body"),
    ("", "rgba", 400, "body"),
    ("", "odd", 400, "size"),
    ("", "text", 422, None),
])
def test_encode_errors(srv, vids, query, body, status, field):
    bodies = {"rgb": lambda: npy_bytes(vids.rgb[:2]),
              "f32": lambda: npy_bytes(vids.rgb[:2].astype(np.float32)),
              "rgba": lambda: npy_bytes(np.zeros((2, 32, 32, 4), np.uint8)),
              "odd": lambda: npy_bytes(np.zeros((2, 33, 32, 3), np.uint8)),
              "text": lambda: b"not a numpy file at all"}
    r = srv.post("/v1/video/encode?" + query, bodies[body]())
    assert_error(r, status, field=field)


# --------------------------------------------------------------------------
# Decode errors and limits


def _flip(blob, seed, n=40):
    """@n bytes inverted in the middle of the stream (past the headers,
    before an MP4's trailing moov): slice data."""
    b = bytearray(blob)
    rng = random.Random(seed)
    for _ in range(n):
        b[rng.randrange(len(b) // 10, len(b) * 7 // 10)] ^= 0xFF
    return bytes(b)


def test_decode_corrupt(srv, vids):
    for kind in ("h264-mp4", "h264-annexb", "h265-annexb"):
        whole = vids.bytes[kind]
        assert_error(decode(srv, whole[:len(whole) * 3 // 5]), 422, "ECORRUPT")
        assert_error(decode(srv, _flip(whole, 7)), 422, "ECORRUPT")
    assert_error(decode(srv, b"hello, this is not a video" * 40), 422, "ECORRUPT")
    assert srv.get("/healthz").status == 200


def _sps_stream(mbs_w, mbs_h):
    """An H.264 Annex-B stream whose SPS declares (16 mbs_w) x (16 mbs_h)."""
    class Bits:
        def __init__(self):
            self.b = []

        def u(self, n, v):
            self.b += [(v >> i) & 1 for i in range(n - 1, -1, -1)]

        def ue(self, v):
            v += 1
            self.u(v.bit_length() - 1, 0)
            self.u(v.bit_length(), v)

        def nal(self, head):
            return b"\x00\x00\x00\x01" + bytes([head]) + h264_rbsp("".join(map(str, self.b)))

    s = Bits()
    s.u(8, 66), s.u(8, 0), s.u(8, 51), s.ue(0), s.ue(0), s.ue(2), s.ue(1), s.u(1, 0)
    s.ue(mbs_w - 1), s.ue(mbs_h - 1), s.u(1, 1), s.u(1, 1), s.u(1, 0), s.u(1, 0)
    p = Bits()
    for f in (p.ue, p.ue):
        f(0)
    p.u(1, 0), p.u(1, 0), p.ue(0), p.ue(0), p.ue(0), p.u(1, 0), p.u(2, 0)
    p.ue(0), p.ue(0), p.ue(0), p.u(1, 1), p.u(1, 0), p.u(1, 0)
    sl = Bits()
    sl.ue(0), sl.ue(7), sl.ue(0), sl.u(4, 0), sl.ue(0), sl.ue(0), sl.u(1, 0), sl.u(1, 0)
    sl.ue(0), sl.ue(1)
    return s.nal(0x67) + p.nal(0x68) + (sl.nal(0x65) + b"\x88" * 64) * 3


def test_decode_limits(srv, tight, vids):
    e = assert_error(decode(srv, _sps_stream(512, 512)), 422, "ELIMIT")  # 8192 x 8192
    assert e["field"] == "max_pixels", e
    e = assert_error(decode(srv, _sps_stream(1030, 1)), 422, "ELIMIT")  # 16480 wide
    assert e["field"] == "max_side", e
    # 16384 x 16384: the SPS pre-check refuses it before libavcodec sees it
    e = assert_error(decode(srv, _sps_stream(1024, 1024)), 422, "ELIMIT")
    assert e["field"] == "max_pixels", e
    # the frame budget counts decoded frames, not kept ones
    e = assert_error(decode(tight, vids.bytes["h264-mp4"], "every=10"), 422, "ELIMIT")
    assert e["field"] == "max_video_frames", e
    assert decode(tight, vids.bytes["h264-mp4"], "max_frames=5").status == 200
    e = assert_error(tight.post("/v1/video/encode", npy_bytes(vids.rgb)), 422, "ELIMIT")
    assert e["field"] == "max_video_frames", e


def test_decode_body_limit_413_before_reading(srv):
    """Content-Length above limits.max_video_bytes is answered at once: the
    body is never sent."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(b"POST /v1/video/decode HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                  % (MAX_VIDEO_BYTES + 1))
        r = daemon_util.read_raw_response(s)   # the body is never sent
    finally:
        s.close()
    assert r is not None and r[0] == 413, r
    e = json.loads(r[2])["error"]
    assert e["code"] == "ELIMIT" and e["field"] == "body", e
    # below the video limit but above max_body_bytes: read and decoded
    r = decode(srv, b"\x00" * (MAX_BODY + 10))
    assert_error(r, 422, "ECORRUPT")


@pytest.mark.parametrize("query,field", [
    ("every=0", "every"), ("fps=-1", "fps"), ("fps=0", "fps"), ("keyframes=2", "keyframes"),
    ("start=-1", "start"), ("end=0", "end"), ("max_frames=0", "max_frames"),
    ("format=yuv444sp", "format"), ("format=i420", "format"), ("align=0x2", "align"),
    ("out=png", "out"), ("quality=50", "quality"), ("threads=99", "threads"),
    ("foo=1", "foo"), ("input=raw", "input"), ("raw=nv12:2x2", "raw"), ("ring=r", "ring"),
    ("w=64", "h"), ("w=64&h=64&mode=bogus", "mode"), ("out=jpeg&mean=0.5", "mean"),
    ("w=64&h=64&spec=%7B%7D", "w"), ("end=0.2&start=0.5", "end"),
])
def test_decode_bad_params(srv, vids, query, field):
    r = decode(srv, vids.bytes["h264-mp4"], query)
    assert_error(r, 400, "EINVAL", field=field)


def test_decode_unsupported_codec_415(vids, tmp):
    d = start_daemon(tmp, name="codec")
    try:
        assert_error(decode(d, vids.bytes["mpeg4"]), 415, "EUNSUPPORTED", field="codec")
        assert d.get("/healthz").status == 200
    finally:
        stop_daemon(d)


def test_methods_and_info(srv):
    for path in ("/v1/video/decode", "/v1/video/encode"):
        r = srv.get(path)
        assert r.status == 405 and r.h("allow") == "POST", r
    j = srv.get("/v1/info").json()
    assert {"h264-decode", "h265-decode", "h264-encode", "h265-encode"} <= set(j["codecs"])
    assert j["limits"]["max_video_bytes"] == MAX_VIDEO_BYTES


def _requests(srv):
    out = {}
    for line in srv.get("/metrics").body.decode().splitlines():
        m = re.match(r'dvppd_http_requests_total\{route="([^"]+)",code="(\d+)"\} (\S+)', line)
        if m:
            out[(m.group(1), int(m.group(2)))] = float(m.group(3))
    return out


def test_metrics_count_video_routes(srv, vids):
    before = _requests(srv)
    assert decode(srv, vids.bytes["h264-mp4"], "max_frames=1").status == 200
    assert decode(srv, vids.bytes["h264-mp4"], "every=0").status == 400
    assert decode(srv, b"junk" * 100).status == 422
    assert srv.post("/v1/video/encode?gop=5", npy_bytes(vids.rgb[:2])).status == 200
    assert srv.post("/v1/video/encode?codec=vp9", npy_bytes(vids.rgb[:2])).status == 415
    after = _requests(srv)
    for key in [("video_decode", 200), ("video_decode", 400), ("video_decode", 422),
                ("video_encode", 200), ("video_encode", 415)]:
        assert after.get(key, 0) >= before.get(key, 0) + 1, (key, before, after)
