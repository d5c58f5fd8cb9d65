"""A video whose resolution changes mid-stream (two H.264 streams of
different sizes, concatenated), decoded by the daemon over HTTP
(/v1/video/decode), over the socket (the Python client's decode_video, the
C client through tests/e2e/video_client) and by `dvppctl video-decode
--socket`, against the offline `dvppctl video-decode` of the same bytes, of
each part alone, and against hand-computed geometry.

One answer that holds every frame in one array (an HTTP .npy, dvppctl's
-o frames.npy) follows the library's rule (device/dvpp_videojob.h,
dvpp_video_shape): with a resize to a fixed size every frame runs with its
own plan and its own geometry (letterbox 64x48: 320x240 frames are scaled
by 0.2 with no pad, 160x160 ones by 0.3 with 8-pixel bars left and right);
when the output would follow the frame (no resize, a fit across aspect
ratios, frames copied as they are) the decode is refused at the changing
frame with EUNSUPPORTED naming it and both sizes; `dvppctl --socket` refuses
with offline's words and exit status. HTTP gives each frame's geometry in
X-Dvpp-Frame-Scales / X-Dvpp-Frame-Pads (and each JPEG part's X-Dvpp-Scale /
X-Dvpp-Pad).

Over the socket every frame is a ring slot with its own descriptor: every
frame is delivered with its own shape (its pixels, or the tensor its own
plan makes) and geometry, each equal byte for byte to the offline decode of
its part alone; a frame whose bytes pass the ring's slots ends the decode
with ENOSPC 'ring' before anything is written.

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


def write(c, name, data):
    path = os.path.join(c.tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """The streams, each also as its parts alone (the same bytes)."""
    tmp = tmp_path_factory.mktemp("vres")
    c = Clip()
    c.tmp = str(tmp)
    # (data, path, the parts' paths) of each stream
    for name, parts in (("data", [h264(*FIRST, N1), h264(*SECOND, N2)]),
                        ("fit", [h264(*FIRST, 3), h264(*SECOND, 3)]),  # fit 64x48: 64x48, 48x48
                        # 160x160, 320x240, 160x160 again: its first frame (as
                        # dvpp_video_probe reads it) is 160x160
                        ("rise", [h264(*SECOND, 3), h264(*FIRST, 2), h264(*SECOND, 3)])):
        data = b"".join(parts)
        setattr(c, name, data)
        setattr(c, "path" if name == "data" else name + "_path",
                write(c, name + ".h264", data))
        setattr(c, name + "_parts", [write(c, f"{name}{k}.h264", p) for k, p in enumerate(parts)])
    c.ref = ctl_decode(c, c.path, *CTL)
    assert c.ref.shape == (N1 + N2, 3, 48, 64)
    return c


def ctl_decode(c, src, *flags):
    out = os.path.join(c.tmp, "ctl.npy")
    r = subprocess.run([DVPPCTL, "video-decode", src, *flags, "-o", out],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return np.load(out)


def ctl_parts(c, paths, *flags):
    """Every frame of the offline decode of each part alone, in order."""
    return [frame for p in paths for frame in ctl_decode(c, p, *flags)]


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
# The socket: every frame its own slot, its own shape


NORM_SPEC = SPEC["normalize"]
NORM_CTL = CTL[4:]
# outputs that follow the frame (fit/shorter across aspect ratios): 320x240
# -> 64x48 and 160x160 -> 48x48, both with no pad, by hand
FOLLOW = {
    "fit": ({"ops": [{"resize": {"w": 64, "h": 48, "mode": "fit"}}], "normalize": NORM_SPEC},
            ["--size", "64x48", "--mode", "fit", *NORM_CTL]),
    "shorter": ({"ops": [{"resize": {"w": 48, "mode": "shorter"}}], "normalize": NORM_SPEC},
                ["--size", "48", "--mode", "shorter", *NORM_CTL]),
}
FOLLOW_SHAPES = [(1, 3, 48, 64)] * 3 + [(1, 3, 48, 48)] * 3
FOLLOW_GEOM = [(0.2, 0.2, 0.0, 0.0)] * 3 + [(0.3, 0.3, 0.0, 0.0)] * 3
VIDEO_CLIENT = daemon_util.build_path("tests", "e2e", "video_client")


class Frame:
    pass


def socket_frames(c, data, spec, slot_bytes=1 << 16, format="nv12"):
    """Every frame of a decode: its payload (a copy), shape, meta, Result.geom
    and the slot descriptor's geometry."""
    ring = c.open_ring(4, slot_bytes)
    out = []
    try:
        for f in c.decode_video(data, ring, spec=spec, format=format):
            with f:
                d = ring.descriptor(f.slot)
                g = Frame()
                g.a, g.shape = f.array().copy(), f.shape
                g.size = (f.meta.width, f.meta.height)
                g.format = f.meta.format
                g.planes = [p.copy() for p in f.planes()] if not spec else None
                g.geom = (f.geom.scale_x, f.geom.scale_y, f.geom.pad_x, f.geom.pad_y)
                g.slot = (d["scale_x"], d["scale_y"], d["pad_x"], d["pad_y"])
                out.append(g)
    finally:
        c.close_ring(ring)
    return out


def test_socket_tensor_per_frame_geometry(srv, clip):
    """A fixed-size output: every frame in its slot with its own geometry,
    the tensors those of the offline decode, of the whole and of each part;
    meta.width x height is the frame's size."""
    with srv.client(timeout=120) as c:
        got = socket_frames(c, clip.data, SPEC)
    assert len(got) == N1 + N2
    t = np.concatenate([g.a for g in got])
    assert t.shape == clip.ref.shape and np.array_equal(t, clip.ref)
    parts = ctl_parts(clip, clip.data_parts, *CTL)
    assert all(g.a[0].tobytes() == p.tobytes() for g, p in zip(got, parts))
    check_bars(t, GEOM)
    for k, g in enumerate(got):
        assert g.geom == pytest.approx(GEOM[k], abs=1e-12), (k, g.geom)
        assert g.slot == pytest.approx(GEOM[k], abs=1e-6), (k, g.slot)  # float32 in the ring
        assert g.size == (FIRST if k < N1 else SECOND), (k, g.size)


@pytest.mark.parametrize("fmt", ["nv12", "rgb"])
def test_socket_frames_keep_their_own_size(srv, clip, fmt):
    """Frames without a spec: the 320x240 ones, then the 160x160 ones, each
    of its own size and bytes, equal to the offline decode of its part alone
    (nv12: the whole VDEC-strided slot; rgb: the picture). Refused with
    EUNSUPPORTED before (179e227 took the rule of one batch)."""
    with srv.client(timeout=120) as c:
        got = socket_frames(c, clip.data, None, slot_bytes=1 << 18, format=fmt)
    parts = ctl_parts(clip, clip.data_parts, "--format", fmt)
    assert len(got) == len(parts) == N1 + N2
    for k, (g, want) in enumerate(zip(got, parts)):
        assert g.size == (FIRST if k < N1 else SECOND) and g.format == fmt, (k, g.size)
        if fmt == "nv12":
            assert g.shape == (want.nbytes,) and g.a.tobytes() == want.tobytes(), k
        else:
            assert g.planes[0].shape == want.shape and np.array_equal(g.planes[0], want), k


@pytest.mark.parametrize("what", sorted(FOLLOW))
def test_socket_tensors_follow_the_frame(srv, clip, what):
    """An output that follows the frame: each frame's tensor is the shape its
    own plan makes (1x3x48x64, then 1x3x48x48), equal byte for byte to the
    offline decode of its part alone, with its own geometry. Refused with
    EUNSUPPORTED before (and before 179e227: EINVAL 'tensor 1x3x48x64
    float32 NCHW cannot take image 0 of 3x48x48')."""
    spec, flags = FOLLOW[what]
    with srv.client(timeout=120) as c:
        got = socket_frames(c, clip.fit, spec)
    parts = ctl_parts(clip, clip.fit_parts, *flags)
    assert [g.shape for g in got] == FOLLOW_SHAPES
    for k, (g, want) in enumerate(zip(got, parts)):
        assert g.a[0].shape == want.shape and g.a.tobytes() == want.tobytes(), k
        assert g.geom == pytest.approx(FOLLOW_GEOM[k], abs=1e-12), (k, g.geom)
        assert g.slot == pytest.approx(FOLLOW_GEOM[k], abs=1e-6), (k, g.slot)
        assert g.size == (FIRST if k < 3 else SECOND), (k, g.size)


@pytest.mark.parametrize("what", ["frames", "fit"])
def test_socket_a_frame_past_the_slot_is_refused_before_it_is_written(srv, clip, what):
    """A rise (160x160, then 320x240) into slots sized for the first frames:
    ENOSPC 'ring' naming the frame, the ring and both sizes, after the frames
    before it. The refused frame would have gone into slot 0, below the two
    held slots: they are intact (nothing was written past the slot) and the
    connection goes on."""
    spec, flags = (None, []) if what == "frames" else FOLLOW["fit"]
    small, big = ((160 * 160 * 3 // 2, 320 * 240 * 3 // 2) if what == "frames"
                  else (3 * 48 * 48 * 4, 3 * 48 * 64 * 4))
    want = ctl_decode(clip, clip.rise_parts[0], *flags)
    with srv.client(timeout=120) as c:
        ring = c.open_ring(3, small)
        assert small <= ring.slot_bytes < big, ring
        dec = c.decode_video(clip.rise, ring, spec=spec)
        # three slots taken: the decoder waits for a free one
        frames = [next(dec) for _ in range(3)]
        kept = [f.tobytes() for f in frames]
        frames[0].release()  # slot 0: where the frame past the slots goes
        with pytest.raises(dvpp.DvppError) as ei:
            next(dec)
        e = daemon_util.assert_refused(ei, "ENOSPC", "ring")
        for part in (f"frame 3 ({FIRST[0]}x{FIRST[1]})", f"{big} bytes",
                     f"ring {ring.id} holds {ring.slot_bytes}"):
            assert part in str(e), (part, str(e))
        assert [f.slot for f in frames] == [0, 1, 2]
        for k in range(3):
            assert kept[k] == want[k].tobytes(), k
        for k in (1, 2):
            assert frames[k].tobytes() == want[k].tobytes(), k
            frames[k].release()
        dec.close()
        assert c.stats()["connections"] >= 1
        c.close_ring(ring)


def run_video_client(*args):
    r = subprocess.run([VIDEO_CLIENT, *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    return r, [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]


@pytest.mark.parametrize("what", ["frames", "fit"])
def test_c_client_frames_keep_their_own_shape(srv, clip, what):
    """libdvppclient's dvppc_video_decode hands each frame with its own
    meta: video_client writes each slot's bytes, equal to the offline decode
    of each part alone."""
    assert os.access(VIDEO_CLIENT, os.X_OK), VIDEO_CLIENT
    spec, flags = (None, []) if what == "frames" else FOLLOW["fit"]
    src = clip.path if what == "frames" else clip.fit_path
    parts = ctl_parts(clip, clip.data_parts if what == "frames" else clip.fit_parts, *flags)
    out = os.path.join(clip.tmp, f"vc-{what}.bin")
    extra = ["--spec", json.dumps(spec)] if spec else []
    r, lines = run_video_client(srv.sock, "decode", src, out, "--slots", 4,
                                "--slot-bytes", 1 << 18, *extra)
    assert r.returncode == 0, (r.stdout, r.stderr)
    frames, end = lines[:-1], lines[-1]
    assert end["frames"] == len(parts) and len(frames) == len(parts), lines
    n1 = N1 if what == "frames" else 3
    for k, (f, want) in enumerate(zip(frames, parts)):
        assert (f["width"], f["height"]) == (FIRST if k < n1 else SECOND), (k, f)
        assert f["bytes"] == want.nbytes, (k, f)
    with open(out, "rb") as fh:
        assert fh.read() == b"".join(p.tobytes() for p in parts)


# --------------------------------------------------------------------------
# dvppctl video-decode --socket: one .npy, offline's rule and words


def ctl_both(srv, clip, src, flags, tag):
    """(returncode, stderr, whether -o was written) offline and --socket."""
    out = []
    for remote in (False, True):
        dst = os.path.join(clip.tmp, f"both-{tag}-{int(remote)}.npy")
        if os.path.exists(dst):
            os.unlink(dst)
        sock = ["--socket", srv.sock] if remote else []
        r = subprocess.run([DVPPCTL, "video-decode", src, *flags, *sock, "-o", dst],
                           capture_output=True, text=True, timeout=120)
        out.append((r.returncode, r.stderr, os.path.exists(dst), r.stdout))
    return out


@pytest.mark.parametrize("what", ["frames", "fit", "shorter", "rise-frames", "rise-fit"])
def test_dvppctl_socket_refuses_as_offline(srv, clip, what):
    """A change the one .npy cannot hold: the same line on stderr (the
    library's words, naming the frame and both sizes) and exit status 1,
    after the frames before it, no file written. dvppctl sizes its slots
    for every frame size the stream's parameter sets make
    (dvpp_video_scan_sizes: 320x240 for both streams here, whose first
    frames are 320x240 and 160x160), so the daemon delivers the changing
    frame and dvppctl refuses it in offline's words."""
    flags = {"frames": [], "fit": FOLLOW["fit"][1], "shorter": FOLLOW["shorter"][1],
             "rise-frames": [], "rise-fit": FOLLOW["fit"][1]}[what]
    src = {"frames": clip.path, "fit": clip.fit_path, "shorter": clip.fit_path}.get(
        what, clip.rise_path)
    if what.startswith("rise"):  # the first frame is 160x160, a later one 320x240
        r = subprocess.run([DVPPCTL, "video-info", src], capture_output=True, text=True)
        info = json.loads(r.stdout)
        assert (info["width"], info["height"]) == SECOND, r
        assert (info["max_width"], info["max_height"]) == FIRST, r
    (rc0, err0, wrote0, _), (rc1, err1, wrote1, _) = ctl_both(srv, clip, src, flags, what)
    assert rc0 == 1 and "EUNSUPPORTED" in err0 and "the resolution changes at frame" in err0, \
        err0
    assert (rc1, err1) == (rc0, err0)
    assert not wrote0 and not wrote1


def test_dvppctl_socket_letterbox_as_offline(srv, clip):
    """A fixed-size output: dvppctl --socket writes the offline file."""
    (rc0, err0, _, out0), (rc1, err1, _, out1) = ctl_both(srv, clip, clip.path, CTL, "lb")
    assert rc0 == rc1 == 0, (err0, err1)
    assert out0 == out1
    a, b = (os.path.join(clip.tmp, f"both-lb-{k}.npy") for k in (0, 1))
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read()
    assert np.array_equal(np.load(b), clip.ref)
