"""One video on every free channel (docs/http-api.md, "One video on every
free channel"), end to end through the real daemon, HTTP and socket.

A decode that starts while the daemon's other VPC channels are idle runs
with libavcodec frame threads and each frame's pipeline overlapped with the
next frame's decode. These tests hold it to a one-channel daemon (one
thread, nothing overlapped) and to the offline `dvppctl video-decode` (one
thread, in process): the same frames in the same order, every byte equal,
for tensors, images and raw frames, every frame and sampled, on a clip
with B-frames (frame threads reorder and wait on references there), and
the headers say which way each decode ran.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_video_spread.py
"""
import os
import subprocess

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import DVPPCTL, FFMPEG, ctl, free_port, npy_load, run, stop_daemon  # noqa: E402
import daemon_util  # noqa: E402

if not FFMPEG:
    pytest.skip("ffmpeg is needed (apt-get install ffmpeg)", allow_module_level=True)

W, H, T = 320, 240, 48
NORM = {"mean": "0.485,0.456,0.406", "std": "0.229,0.224,0.225"}


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """H.264 with B-frames and a key frame every 12."""
    p = str(tmp_path_factory.mktemp("spread") / "bframes.mp4")
    run(FFMPEG, "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=30",
        "-frames:v", T, "-pix_fmt", "yuv420p", "-c:v", "libx264", "-bf", 3, "-g", 12, p)
    return p


def start(tmp_path_factory, channels):
    tmp = str(tmp_path_factory.mktemp(f"spread{channels}"))
    port = free_port()
    sock = os.path.join(tmp, "d.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "request_timeout_s": 60},
           "socket": {"path": sock, "mode": "0600"}, "device": {"channels": channels}}
    return daemon_util.start_daemon(tmp, cfg, f"c{channels}", port, sock=sock, timeout=60)


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    d = start(tmp_path_factory, 1)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    d = start(tmp_path_factory, 2)
    yield d
    stop_daemon(d)


CASES = [
    ("tensor", {"w": 64, "h": 48, **NORM}),
    ("tensor-every5", {"w": 64, "h": 48, "every": 5, **NORM}),
    ("letterbox-u8", {"w": 96, "h": 96, "mode": "letterbox", "dtype": "uint8",
                      "layout": "nhwc"}),
    ("image-rgb", {"w": 100, "h": 60, "format": "rgb", "out": "npy"}),
    ("frames-nv12", {}),
]


def decode(d, body, params):
    q = "&".join(f"{k}={v}" for k, v in params.items())
    r = d.post("/v1/video/decode" + ("?" + q if q else ""), body)
    assert r.status == 200, r
    return r


@pytest.mark.parametrize("name,params", CASES, ids=[c[0] for c in CASES])
def test_http_spread_is_byte_identical(one, two, clip, name, params):
    body = open(clip, "rb").read()
    a = decode(one, body, params)
    b = decode(two, body, params)
    piped = name != "frames-nv12"
    assert (a.h("x-dvpp-decode-threads"), a.h("x-dvpp-overlap")) == ("1", "0")
    # two channels, the other idle: a frame thread per channel, overlapped
    assert (b.h("x-dvpp-decode-threads"), b.h("x-dvpp-overlap")) == \
        ("2", "1" if piped else "0")
    for h in ("x-dvpp-frames", "x-dvpp-frame-index", "x-dvpp-frame-pts", "x-dvpp-shape",
              "x-dvpp-frame-scales", "x-dvpp-frame-pads"):
        assert a.h(h) == b.h(h), h
    want = T // params.get("every", 1) + (1 if T % params.get("every", 1) else 0)
    assert a.ints("x-dvpp-frame-index") == list(range(0, T, params.get("every", 1)))
    assert int(a.h("x-dvpp-frames")) == want
    assert a.body == b.body


def test_http_request_threads_kept(two, clip):
    """A request's own thread count stands; the overlap still comes."""
    body = open(clip, "rb").read()
    r = decode(two, body, {"w": 64, "h": 48, "threads": 2, **NORM})
    assert (r.h("x-dvpp-decode-threads"), r.h("x-dvpp-overlap")) == ("2", "1")
    ref = decode(two, body, {"w": 64, "h": 48, "threads": 1, **NORM})
    assert r.body == ref.body


@pytest.mark.parametrize("flags", [["--size", "64x48", "--mean", NORM["mean"], "--std",
                                    NORM["std"]],
                                   ["--size", "64x48", "--every", "3", "--dtype", "uint8"],
                                   []], ids=["tensor", "every3-u8", "frames"])
def test_socket_spread_is_byte_identical(one, two, clip, tmp_path, flags):
    """VideoOpen decodes (one frame per ring slot, notices in order)
    through both daemons and offline: the same array."""
    outs = []
    for where in (["--socket", one.sock], ["--socket", two.sock], []):
        o = tmp_path / f"{len(outs)}.npy"
        r = ctl("video-decode", clip, *flags, *where, "-o", o)
        assert r.returncode == 0, r.stderr
        outs.append(npy_load(open(o, "rb").read()))
    assert outs[0].shape[0] == (T + 2) // 3 if "--every" in flags else outs[0].shape[0] == T
    for o in outs[1:]:
        assert o.dtype == outs[0].dtype and o.shape == outs[0].shape
        assert np.array_equal(o, outs[0])
