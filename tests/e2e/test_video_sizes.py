"""The sizes of a stream whose resolution changes, as every user of
dvpp_video_probe and dvpp_video_scan_sizes (codecs/dvpp_video.h) sees them:
`dvppctl video-info`, offline `dvppctl video-decode`, HTTP
`/v1/video/decode` (raw frames and a fixed-size pipeline), the socket
(the Python client's decode_video) and `dvppctl video-decode --socket`.

The streams are parts made by ffmpeg (libx264/libx265) and concatenated as
Annex-B; the H.264 ones also remuxed by ffmpeg into MP4, MKV and MPEG-TS,
which carry the change (the later SPS in-band). libavformat's probing reads
several access units and its codec parameters end at whichever SPS it
parsed last, so the probe said 160x160 for 320x240 + 160x160 and 320x240
for 160x160 + 320x240 + 160x160 (3/4/3 frames), and dvppctl --socket sized
its slots from that. The probe's size is now the first frame's (its first
SPS, cropped as libavcodec crops it), and the scan lists every size.

References: each part decoded alone (offline dvppctl), ffmpeg's own
decode of each part (rgb24) and ffprobe's frame sizes, and by hand.
Also: 320x240 + 320x232 (H.264 codes 232 rows as 240 cropped by 8), whose
first part libavcodec cropped to 320x232 too when handed the probing's last
SPS as the container's size (8 rows of every frame lost); a left crop
(x264's crop-rect 8,0,0,0), which libavcodec gives back to keep its planes
aligned (frames 256 wide where the SPS says 248); an empty selection, whose
answer has the first frame's shape.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_video_sizes.py
"""
import json
import os
import re
import subprocess

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (DVPPCTL, FFMPEG, FFPROBE, free_port, pyclient,  # noqa: E402
                         sock_dir, stop_daemon)
import daemon_util  # noqa: E402

pytestmark = pytest.mark.skipif(not FFMPEG or not FFPROBE,
                                reason="ffmpeg makes the streams (make deps)")

dvpp = pyclient()

LB = ["--size", "64x48", "--mode", "letterbox"]
LB_Q = "w=64&h=48&mode=letterbox"

# name: codec, parts (w, h, frames), the containers it is remuxed into
STREAMS = {
    "h264-drop": ("h264", [(320, 240, 4), (160, 160, 3)], ["mp4", "mkv", "ts"]),
    "h264-rise": ("h264", [(160, 160, 3), (320, 240, 4), (160, 160, 3)], ["mp4", "mkv", "ts"]),
    "h264-cut": ("h264", [(320, 240, 4), (320, 232, 3)], ["ts"]),
    "h265-drop": ("h265", [(320, 240, 4), (160, 160, 3)], []),
    "h265-rise": ("h265", [(160, 160, 3), (320, 240, 4), (160, 160, 3)], []),
}
CASES = [(name, "annexb") for name in STREAMS] + \
    [(name, c) for name, (_, _, cs) in STREAMS.items() for c in cs]
IDS = [f"{n}-{c}" for n, c in CASES]


def encode(codec, w, h, frames, x264=""):
    lib, fmt = ("libx264", "h264") if codec == "h264" else ("libx265", "hevc")
    params = (["-x264-params", "threads=1" + (":" + x264 if x264 else "")] if codec == "h264"
              else ["-x265-params", "log-level=error:pools=1:frame-threads=1"])
    return subprocess.run(
        [FFMPEG, "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:rate=10",
         "-frames:v", str(frames), "-c:v", lib, "-preset", "ultrafast", "-pix_fmt", "yuv420p",
         *params, "-f", fmt, "-"], check=True, capture_output=True, timeout=60).stdout


class Clip:
    """One stream in one container: its file, its parts alone, every frame's
    size in order, the distinct sizes in order."""


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vsizes")
    out = {}
    for name, (codec, parts, containers) in STREAMS.items():
        blobs = [encode(codec, w, h, n) for w, h, n in parts]
        paths = []
        for k, b in enumerate(blobs):
            paths.append(str(tmp / f"{name}.{k}.{codec}"))
            with open(paths[-1], "wb") as f:
                f.write(b)
        annexb = str(tmp / f"{name}.{codec}")
        with open(annexb, "wb") as f:
            f.write(b"".join(blobs))
        for c in ["annexb"] + containers:
            clip = Clip()
            clip.codec, clip.parts, clip.part_paths = codec, parts, paths
            clip.path = annexb if c == "annexb" else str(tmp / f"{name}.{c}")
            if c != "annexb":
                subprocess.run([FFMPEG, "-v", "error", "-r", "10", "-i", annexb, "-c", "copy",
                                clip.path], check=True, timeout=60)
            with open(clip.path, "rb") as f:
                clip.data = f.read()
            clip.sizes = [(w, h) for w, h, n in parts for _ in range(n)]
            clip.distinct = list(dict.fromkeys((w, h) for w, h, _ in parts))
            clip.tmp = str(tmp)
            out[(name, c)] = clip
    return out


@pytest.fixture(params=CASES, ids=IDS)
def clip(request, clips):
    return clips[request.param]


def ctl(*args, timeout=120):
    return subprocess.run([DVPPCTL, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def ctl_decode(src, out, *flags):
    r = ctl("video-decode", src, *flags, "-o", out)
    assert r.returncode == 0, r.stderr
    return np.load(out)


def ctl_parts(clip, *flags):
    """Every frame of the offline decode of each part alone, in order."""
    out = os.path.join(clip.tmp, "part.npy")
    return [f for p in clip.part_paths for f in ctl_decode(p, out, *flags)]


def ffmpeg_rgb(path, w, h):
    """ffmpeg's own decode of @path (one size) as rgb24 frames."""
    raw = subprocess.run([FFMPEG, "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt",
                          "rgb24", "-"], check=True, capture_output=True, timeout=60).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


def ffprobe_sizes(path):
    r = subprocess.run([FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_frames",
                        "-show_entries", "frame=width,height", "-of", "json", path],
                       check=True, capture_output=True, text=True, timeout=60)
    return [(f["width"], f["height"]) for f in json.loads(r.stdout)["frames"]]


def change_words(clip):
    """Where the first change comes, as the library's refusal names it."""
    t = next(k for k, s in enumerate(clip.sizes) if s != clip.sizes[0])
    (w, h), (w0, h0) = clip.sizes[t], clip.sizes[0]
    return f"the resolution changes at frame {t} ({w}x{h}, the first {w0}x{h0})"


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    sdir = sock_dir("dvpps-")
    sock = os.path.join(sdir, "s.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600"}, "device": {"channels": 2}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("vsizes_d")), cfg, "vsizes", port,
                                 sock=sock, sock_dir=sdir)
    yield d
    stop_daemon(d)


def vpc_failed(srv):
    r = ctl("stats", "--socket", srv.sock)
    assert r.returncode == 0, r.stderr
    return next(e for e in json.loads(r.stdout)["engines"] if e["name"] == "vpc")["failed"]


# --------------------------------------------------------------------------
# video-info


def test_video_info_names_the_first_frame_and_every_size(clip):
    """width x height: the first frame's (before: 160x160 for the drop,
    320x240 for the 3/4/3 rise, 320x232 for the cut, in Annex-B, MKV and
    TS); sizes: every size in order, max_width x max_height the largest."""
    r = ctl("video-info", clip.path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert (info["width"], info["height"]) == clip.sizes[0], info
    assert [tuple(s) for s in info["sizes"]] == clip.distinct, info
    assert info["sizes_complete"] is True
    assert (info["max_width"], info["max_height"]) == \
        (max(w for w, _ in clip.distinct), max(h for _, h in clip.distinct))
    if "cut" not in clip.path:  # ffprobe crops the cut's first part too
        assert ffprobe_sizes(clip.path) == clip.sizes


# --------------------------------------------------------------------------
# offline dvppctl video-decode


def test_offline_frames_are_refused_at_the_change(clip):
    """Frames copied as they are: EUNSUPPORTED at the first frame of another
    size, both sizes named, no file (the cut was decoded as 7 frames of
    320x232 before: its first part lost 8 rows)."""
    out = os.path.join(clip.tmp, "refused.npy")
    if os.path.exists(out):
        os.unlink(out)
    r = ctl("video-decode", clip.path, "--format", "rgb", "-o", out)
    assert r.returncode == 1 and "(EUNSUPPORTED)" in r.stderr, r.stderr
    assert change_words(clip) in r.stderr, r.stderr
    assert not os.path.exists(out)


def test_offline_letterbox_equals_each_part(clip):
    """A fixed-size output: every frame with its own plan, equal to the
    decode of its part alone."""
    got = ctl_decode(clip.path, os.path.join(clip.tmp, "lb.npy"), *LB)
    want = ctl_parts(clip, *LB)
    assert got.shape == (len(clip.sizes), 3, 48, 64)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


# --------------------------------------------------------------------------
# HTTP


def test_http_raw_frames_are_refused_as_offline(srv, clip):
    r = srv.post("/v1/video/decode?format=rgb", clip.data, timeout=120)
    assert r.status == 415, r
    e = r.json()["error"]
    assert (e["code"], e["field"]) == ("EUNSUPPORTED", "video"), e
    assert change_words(clip) in e["message"], e


def test_http_letterbox_equals_each_part_and_names_the_first_size(srv, clip):
    """X-Dvpp-Video says the first frame's size (before: the probing's last
    SPS); the tensor is the offline one, part by part."""
    r = srv.post("/v1/video/decode?" + LB_Q, clip.data, timeout=120)
    assert r.status == 200, r
    w0, h0 = clip.sizes[0]
    assert r.h("x-dvpp-video").startswith(f"{clip.codec} {w0}x{h0} "), r.headers
    t = r.npy()
    want = ctl_parts(clip, *LB)
    assert t.shape == (len(clip.sizes), 3, 48, 64)
    assert all(np.array_equal(g, w) for g, w in zip(t, want))


# --------------------------------------------------------------------------
# The socket: every frame at its own size


@pytest.mark.parametrize("fmt", ["nv12", "rgb"])
def test_socket_frames_keep_their_own_size(srv, clip, fmt):
    """Each frame at its part's size, bytes equal to the offline decode of
    its part alone (nv12: the VDEC-strided slot) and, for rgb, to ffmpeg's
    decode of the part (before, the cut's first four came as 320x232)."""
    with srv.client(timeout=120) as c:
        ring = c.open_ring(4, 1 << 18)
        got = []
        try:
            for f in c.decode_video(clip.data, ring, format=fmt):
                with f:
                    got.append(((f.meta.width, f.meta.height), f.array().copy(),
                                f.planes()[0].copy() if fmt == "rgb" else None))
        finally:
            c.close_ring(ring)
    assert [g[0] for g in got] == clip.sizes
    parts = ctl_parts(clip, "--format", fmt)
    for k, ((size, a, rgb), want) in enumerate(zip(got, parts)):
        if fmt == "nv12":
            assert a.tobytes() == want.tobytes(), k
        else:
            assert np.array_equal(rgb, want), k
    if fmt == "rgb":
        ref = [f for p, (w, h, _) in zip(clip.part_paths, clip.parts)
               for f in ffmpeg_rgb(p, w, h)]
        assert all(np.array_equal(g[2], f) for g, f in zip(got, ref))


# --------------------------------------------------------------------------
# dvppctl video-decode --socket


def test_dvppctl_socket_sizes_its_slots_for_every_frame(srv, clip):
    """The first part's frames (--max-frames), then the whole stream, then a
    letterbox: the offline files and words, and no decode failed in the
    daemon. The slots were sized from the probe, which named another
    frame's size: a frame past them failed a decode with ENOSPC (counted by
    the VPC engine) and dvppctl decoded again to see it."""
    n0 = clip.parts[0][2]
    for tag, flags in (("first", ["--format", "rgb", "--max-frames", n0]),
                       ("all", ["--format", "rgb"]), ("lb", LB)):
        before = vpc_failed(srv)
        outs = []
        for remote in (False, True):
            dst = os.path.join(clip.tmp, f"sock-{tag}-{int(remote)}.npy")
            if os.path.exists(dst):
                os.unlink(dst)
            sock = ["--socket", srv.sock] if remote else []
            r = ctl("video-decode", clip.path, *flags, *sock, "-o", dst)
            outs.append((r.returncode, r.stderr, r.stdout,
                         open(dst, "rb").read() if os.path.exists(dst) else None))
        assert outs[1] == outs[0], (tag, outs[0][:2], outs[1][:2])
        assert outs[0][0] == (1 if tag == "all" else 0), (tag, outs[0][1])
        # no decode failed in the daemon (the refusal is dvppctl's own)
        assert vpc_failed(srv) == before, tag


# --------------------------------------------------------------------------
# An empty selection: the first frame's shape


@pytest.mark.parametrize("what", ["nv12", "rgb", "shorter"])
def test_an_empty_selection_has_the_first_frames_shape(srv, clips, what):
    """No frame at or after 100 s: T = 0 of the shape the first frame would
    give, by hand, offline, over HTTP and with --socket (before: the 3/4/3
    rise's 320x240: (0, 360, 320), (0, 240, 320, 3), (0, 3, 48, 64))."""
    clip = clips[("h264-rise", "annexb")]
    flags, query, want = {
        "nv12": ([], "", (0, 160 * 3 // 2, 160)),
        "rgb": (["--format", "rgb"], "format=rgb", (0, 160, 160, 3)),
        "shorter": (["--size", "48", "--mode", "shorter"], "w=48&mode=shorter",
                    (0, 3, 48, 48)),
    }[what]
    for sock in ([], ["--socket", srv.sock]):
        a = ctl_decode(clip.path, os.path.join(clip.tmp, "empty.npy"), *flags, "--start", 100,
                       *sock)
        assert a.shape == want, (sock, a.shape)
    r = srv.post(f"/v1/video/decode?start=100&{query}", clip.data, timeout=120)
    assert r.status == 200, r
    assert r.npy().shape == want
    assert r.h("x-dvpp-video").startswith("h264 160x160 "), r.headers


# --------------------------------------------------------------------------
# A left crop


def test_a_left_crop_is_given_back_as_libavcodec_gives_it(srv, tmp_path):
    """256x128 with crop-rect 8,0,0,0: the SPS says 248 wide; libavcodec
    keeps its planes 32-byte aligned and gives the 8 columns back: frames
    are 256 wide (ffprobe, ffmpeg). video-info says so (it said 248), the
    frames offline and over the socket equal ffmpeg's, and dvppctl --socket
    needs one decode (its rgb slots were sized for 248 columns)."""
    path = str(tmp_path / "left.h264")
    with open(path, "wb") as f:
        f.write(encode("h264", 256, 128, 2, x264="crop-rect=8,0,0,0"))
    assert ffprobe_sizes(path) == [(256, 128)] * 2
    r = ctl("video-info", path)
    info = json.loads(r.stdout)
    assert (info["width"], info["height"]) == (256, 128), info
    assert [tuple(s) for s in info["sizes"]] == [(256, 128)], info
    ref = ffmpeg_rgb(path, 256, 128)
    assert np.array_equal(ctl_decode(path, str(tmp_path / "a.npy"), "--format", "rgb"), ref)
    before = vpc_failed(srv)
    got = ctl_decode(path, str(tmp_path / "b.npy"), "--format", "rgb", "--socket", srv.sock)
    assert np.array_equal(got, ref)
    assert vpc_failed(srv) == before


def test_scan_errors_are_the_probes(tmp_path):
    """video-info of what is not a video: the probe's word, exit 1."""
    p = tmp_path / "junk.h264"
    p.write_bytes(b"this is not a video at all, just text" * 10)
    r = ctl("video-info", p)
    assert r.returncode == 1 and "(ECORRUPT)" in r.stderr, r.stderr
    assert re.match(r"dvppctl: .*junk\.h264: ", r.stderr), r.stderr
