"""A video whose resolution changes mid-stream (two H.264 streams of
different sizes, concatenated), decoded by the daemon over HTTP
(/v1/video/decode) and over the socket (the Python client's decode_video),
against the offline `dvppctl video-decode` of the same bytes and against
hand-computed geometry.

The rule is the library's (device/dvpp_videojob.h, dvpp_video_shape): with
a resize to a fixed size every frame runs with its own plan and its own
geometry (letterbox 64x48: 320x240 frames are scaled by 0.2 with no pad,
160x160 ones by 0.3 with 8-pixel bars left and right); when the output would
follow the frame (no resize, a fit across aspect ratios, frames copied as
they are) the decode is refused at the changing frame with EUNSUPPORTED
naming it and both sizes. HTTP gives each frame's geometry in
X-Dvpp-Frame-Scales / X-Dvpp-Frame-Pads (and each JPEG part's X-Dvpp-Scale /
X-Dvpp-Pad); the socket in each frame's Result.geom and its slot's
descriptor.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_video_resolution.py
"""
import json
import os
import re
import subprocess

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (DVPPCTL, FFMPEG, free_port, pyclient, sock_dir,  # noqa: E402
                         stop_daemon)
import daemon_util  # noqa: E402

pytestmark = pytest.mark.skipif(not FFMPEG, reason="ffmpeg makes the streams (make deps)")

dvpp = pyclient()

FIRST, SECOND = (320, 240), (160, 160)
N1, N2 = 4, 3
MEAN, STD = 0.5, 0.25
Q = f"w=64&h=48&mode=letterbox&mean={MEAN},{MEAN},{MEAN}&std={STD},{STD},{STD}"
CTL = ["--size", "64x48", "--mode", "letterbox", "--mean", f"{MEAN},{MEAN},{MEAN}",
       "--std", f"{STD},{STD},{STD}"]
SPEC = {"ops": [{"resize": {"w": 64, "h": 48, "mode": "letterbox"}}],
        "normalize": {"mean": [MEAN] * 3, "std": [STD] * 3}}
# letterbox 64x48, by hand: 320x240 -> scale 64/320 = 48/240 = 0.2, no pad;
# 160x160 -> scale min(64, 48)/160 = 0.3, a 48x48 picture, (64 - 48) / 2 = 8
GEOM = [(0.2, 0.2, 0.0, 0.0)] * N1 + [(0.3, 0.3, 8.0, 0.0)] * N2
# the refusal: frame 4 (the first of the second part), both sizes
REFUSED = f"at frame {N1} ({SECOND[0]}x{SECOND[1]}, the first {FIRST[0]}x{FIRST[1]})"


def h264(w, h, frames):
    return subprocess.run(
        [FFMPEG, "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:rate=10",
         "-frames:v", str(frames), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt",
         "yuv420p", "-x264-params", "threads=1", "-f", "h264", "-"],
        check=True, capture_output=True).stdout


class Clip:
    pass


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vres")
    c = Clip()
    c.tmp = str(tmp)
    c.data = h264(*FIRST, N1) + h264(*SECOND, N2)
    c.path = os.path.join(c.tmp, "cat.h264")
    with open(c.path, "wb") as f:
        f.write(c.data)
    c.fit = h264(*FIRST, 3) + h264(*SECOND, 3)  # fit 64x48: 64x48, then 48x48
    c.fit_path = os.path.join(c.tmp, "fit.h264")
    with open(c.fit_path, "wb") as f:
        f.write(c.fit)
    c.ref = ctl_decode(c, c.path, *CTL)
    assert c.ref.shape == (N1 + N2, 3, 48, 64)
    return c


def ctl_decode(c, src, *flags):
    out = os.path.join(c.tmp, "ctl.npy")
    r = subprocess.run([DVPPCTL, "video-decode", src, *flags, "-o", out],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return np.load(out)


def ctl_refusal(src, *flags):
    r = subprocess.run([DVPPCTL, "video-decode", src, *flags, "-o", os.devnull],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "EUNSUPPORTED" in r.stderr, r.stderr
    m = re.search(r"the resolution changes .*to take it", r.stderr)
    assert m, r.stderr
    return m.group(0)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    sdir = sock_dir("dvppr-")
    sock = os.path.join(sdir, "r.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600"}, "device": {"channels": 2}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("vres_d")), cfg, "vres", port,
                                 sock=sock, sock_dir=sdir)
    yield d
    stop_daemon(d)


def pairs(header):
    return [tuple(float(x) for x in e.split(",")) for e in header.split(";")]


def check_bars(t, geom):
    """Frames of the second part: 8 columns of pad (black, normalised) on
    each side, picture in between; the first part's fill the tensor. The
    geometry really was each frame's (the first frame's plan would have
    no bars)."""
    bar = (0 - MEAN) / STD
    for k, (_, _, px, _) in enumerate(geom):
        if px:
            assert (t[k][:, :, :8] == bar).all() and (t[k][:, :, 56:] == bar).all(), k
            assert (t[k][:, :, 8:56] != bar).any(), k
        else:
            assert (t[k][:, :, :8] != bar).any(), k


# --------------------------------------------------------------------------
# HTTP


def test_http_tensor_per_frame_geometry(srv, clip):
    r = srv.post("/v1/video/decode?" + Q, clip.data, timeout=120)
    assert r.status == 200, r
    t = r.npy()
    assert t.shape == (N1 + N2, 3, 48, 64)
    assert np.array_equal(t, clip.ref)
    check_bars(t, GEOM)
    assert r.ints("x-dvpp-frame-index") == list(range(N1 + N2))
    scales, pads = pairs(r.h("x-dvpp-frame-scales")), pairs(r.h("x-dvpp-frame-pads"))
    assert len(scales) == len(pads) == N1 + N2, r.headers
    for k, (sx, sy, px, py) in enumerate(GEOM):
        assert scales[k] == pytest.approx((sx, sy), abs=1e-12), (k, scales)
        assert pads[k] == pytest.approx((px, py), abs=1e-12), (k, pads)
    # X-Dvpp-Scale / -Pad: the first frame's, as before
    assert pairs(r.h("x-dvpp-scale"))[0] == pytest.approx((0.2, 0.2), abs=1e-12)
    assert pairs(r.h("x-dvpp-pad"))[0] == pytest.approx((0.0, 0.0), abs=1e-12)


def test_http_one_geometry_needs_no_lists(srv, clip):
    """A stream of one size: every frame maps back alike, no lists (the
    frame lists' budget is left to the frames)."""
    r = srv.post("/v1/video/decode?" + Q, h264(*SECOND, 3), timeout=120)
    assert r.status == 200, r
    assert r.h("x-dvpp-frame-scales") is None and r.h("x-dvpp-frame-pads") is None, r.headers
    assert pairs(r.h("x-dvpp-scale"))[0] == pytest.approx((0.3, 0.3), abs=1e-12)


def test_http_jpeg_parts_carry_their_geometry(srv, clip):
    from test_http_video import parse_multipart
    r = srv.post("/v1/video/decode?out=jpeg&w=64&h=48&mode=letterbox", clip.data,
                 timeout=120)
    assert r.status == 200, r
    parts = parse_multipart(r)
    assert len(parts) == N1 + N2
    for k, (hdr, body) in enumerate(parts):
        sx, sy, px, py = GEOM[k]
        assert pairs(hdr["x-dvpp-scale"])[0] == pytest.approx((sx, sy), abs=1e-12), hdr
        assert pairs(hdr["x-dvpp-pad"])[0] == pytest.approx((px, py), abs=1e-12), hdr
        assert body[:2] == b"\xff\xd8"
    assert len(pairs(r.h("x-dvpp-frame-scales"))) == N1 + N2


@pytest.mark.parametrize("what,query,flags", [
    ("fit", "w=64&h=48&mode=fit", ["--size", "64x48", "--mode", "fit"]),
    ("frames", "", []),
])
def test_http_refusals_as_offline(srv, clip, what, query, flags):
    src, data = (clip.fit_path, clip.fit) if what == "fit" else (clip.path, clip.data)
    want = ctl_refusal(src, *flags)
    n1 = 3 if what == "fit" else N1
    assert f"at frame {n1} ({SECOND[0]}x{SECOND[1]}, the first {FIRST[0]}x{FIRST[1]})" in want
    r = srv.post("/v1/video/decode?" + query, data, timeout=120)
    assert r.status == 415, r
    e = r.json()["error"]
    assert (e["code"], e["field"]) == ("EUNSUPPORTED", "video"), e
    assert want in e["message"], (want, e)


# --------------------------------------------------------------------------
# The socket (Python client)


def socket_frames(c, data, spec, format="nv12"):
    """[(tensor copy, Result.geom, the slot descriptor's geometry)]."""
    ring = c.open_ring(4, 1 << 16)
    out = []
    try:
        for f in c.decode_video(data, ring, spec=spec, format=format):
            with f:
                d = ring.descriptor(f.slot)
                out.append((f.array().copy(),
                            (f.geom.scale_x, f.geom.scale_y, f.geom.pad_x, f.geom.pad_y),
                            (d["scale_x"], d["scale_y"], d["pad_x"], d["pad_y"])))
    finally:
        c.close_ring(ring)
    return out


def test_socket_tensor_per_frame_geometry(srv, clip):
    """A fixed-size output: every frame in its slot with its own geometry,
    the tensors those of the offline decode. (The socket ran these before
    the fix too: dvpp_pipeline_run plans each call; what its single plan
    broke is the refusals below.)"""
    with srv.client(timeout=120) as c:
        got = socket_frames(c, clip.data, SPEC)
    assert len(got) == N1 + N2
    t = np.concatenate([a for a, _, _ in got])
    assert t.shape == clip.ref.shape and np.array_equal(t, clip.ref)
    check_bars(t, GEOM)
    for k, (_, geom, slot) in enumerate(got):
        assert geom == pytest.approx(GEOM[k], abs=1e-12), (k, geom)
        assert slot == pytest.approx(GEOM[k], abs=1e-6), (k, slot)  # float32 in the ring


@pytest.mark.parametrize("what", ["fit", "frames"])
def test_socket_refusals_as_offline(srv, clip, what):
    """The refusal offline dvppctl and HTTP give, after the frames before
    the change. Before the fix: fit failed with EINVAL 'tensor 1x3x48x64
    float32 NCHW cannot take image 0 of 3x48x48', and frames of two sizes
    were delivered as they came (where HTTP and dvppctl refuse them)."""
    if what == "fit":
        src, data, n1 = clip.fit_path, clip.fit, 3
        flags = ["--size", "64x48", "--mode", "fit"]
        spec = {"ops": [{"resize": {"w": 64, "h": 48, "mode": "fit"}}],
                "normalize": {"mean": [MEAN] * 3, "std": [STD] * 3}}
    else:
        src, data, n1, flags, spec = clip.path, clip.data, N1, [], None
    want = ctl_refusal(src, *flags)
    with srv.client(timeout=120) as c:
        ring = c.open_ring(4, 1 << 18)
        kept = 0
        with pytest.raises(dvpp.DvppError) as ei:
            for f in c.decode_video(data, ring, spec=spec):
                f.release()
                kept += 1
        daemon_util.assert_refused(ei, "EUNSUPPORTED", "video")
        assert want in str(ei.value), (want, str(ei.value))
        assert kept == n1  # the frames before the change were delivered
        # the connection goes on
        assert c.stats()["connections"] >= 1
