"""Regressions of the second review of the processing layers (issue 21),
through the real dvppctl, against OpenCV / numpy references.

  * Crops of packed YUV (4:2:2, 4:4:4) and YUV400 going to RGB that reach
    the last row with left > 0 failed with ENOSPC (the source view's last
    row is short of a whole stride): compared with cv2.cvtColor + slicing
    (+ cv2.resize) here, bit for bit.
  * Letterbox bars of YUV outputs: the R,G,B pad converted (cv2's
    RGB2YUV_I420 of the colour), not written as Y,U,V.
  * A video whose resolution changes mid-stream: a fixed-size tensor gets
    every frame with its own geometry (equal to decoding each part alone);
    an output that would change shape, or raw frames, a clear EUNSUPPORTED
    naming both sizes.

Run with /usr/bin/python3; DVPP_BUILD (default "build") locates dvppctl.
"""
import os
import subprocess

import cv2
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")

assert os.path.exists(DVPPCTL), f"{DVPPCTL}: run make BUILD={BUILD} first"


def run(*args):
    r = subprocess.run([DVPPCTL, *args], capture_output=True, text=True)
    assert r.returncode == 0, f"dvppctl {' '.join(args)}: {r.stderr}"
    return r


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


# ---------------------------------------------------------------------------
# Crops of single-plane YUV to RGB that reach the last row

W, H = 640, 480


def smooth(rng, h, w):
    return cv2.GaussianBlur(rng.integers(0, 256, (h, w), np.uint8), (5, 5), 0)


def single_plane_yuv(fmt):
    """(raw bytes of @fmt at W x H, the same picture as RGB by cv2)."""
    rng = np.random.default_rng(21)
    y = smooth(rng, H, W)
    # chroma per 2x2 block: 4:2:2 and 4:4:4 pictures that are also 4:2:0,
    # so cv2's I420 conversion is their reference (replication upsamples)
    u = smooth(rng, H // 2, W // 2)
    v = smooth(rng, H // 2, W // 2)
    i420 = np.concatenate([y.ravel(), u.ravel(), v.ravel()]).reshape(H * 3 // 2, W)
    if fmt == "yuv400":
        neutral = np.full(H * W // 2, 128, np.uint8)
        ref = cv2.cvtColor(np.concatenate([y.ravel(), neutral]).reshape(H * 3 // 2, W),
                           cv2.COLOR_YUV2RGB_I420)
        return y.tobytes(), ref
    ref = cv2.cvtColor(i420, cv2.COLOR_YUV2RGB_I420)
    u2 = np.repeat(u, 2, 0)  # 4:2:2 rows
    v2 = np.repeat(v, 2, 0)
    if fmt == "yuyv":
        pk = np.empty((H, W // 2, 4), np.uint8)
        pk[..., 0], pk[..., 1], pk[..., 2], pk[..., 3] = y[:, 0::2], u2, y[:, 1::2], v2
        assert max_diff(cv2.cvtColor(pk.reshape(H, W, 2), cv2.COLOR_YUV2RGB_YUYV), ref) == 0
        return pk.tobytes(), ref
    if fmt == "uyvy":
        pk = np.empty((H, W // 2, 4), np.uint8)
        pk[..., 0], pk[..., 1], pk[..., 2], pk[..., 3] = u2, y[:, 0::2], v2, y[:, 1::2]
        assert max_diff(cv2.cvtColor(pk.reshape(H, W, 2), cv2.COLOR_YUV2RGB_UYVY), ref) == 0
        return pk.tobytes(), ref
    assert fmt == "yuv444packed"
    u4 = np.repeat(u2, 2, 1)
    v4 = np.repeat(v2, 2, 1)
    return np.stack([y, u4, v4], -1).tobytes(), ref


@pytest.mark.parametrize("fmt", ["yuyv", "uyvy", "yuv444packed", "yuv400"])
def test_fill_crop_to_last_row_matches_cv2(tmp_path, fmt):
    """mode=fill on 640x480 -> 224x224 crops 480x480 at (80, 0): the crop
    ends on the last row with left 80."""
    raw, ref = single_plane_yuv(fmt)
    src = tmp_path / "in.yuv"
    src.write_bytes(raw)
    out = str(tmp_path / "o.npy")
    run("resize", str(src), "--input", f"{fmt}:{W}x{H}", "--size", "224x224",
        "--mode", "fill", "--format", "rgb", "-o", out)
    want = cv2.resize(ref[:, 80:560], (224, 224), interpolation=cv2.INTER_LINEAR)
    assert max_diff(np.load(out), want) == 0


@pytest.mark.parametrize("fmt", ["yuyv", "yuv444packed", "yuv400"])
@pytest.mark.parametrize("roi", [(10, 100, 329, 479), (2, 0, 639, 479), (600, 470, 639, 479)])
def test_crop_to_last_row_matches_slicing(tmp_path, fmt, roi):
    raw, ref = single_plane_yuv(fmt)
    src = tmp_path / "in.yuv"
    src.write_bytes(raw)
    out = str(tmp_path / "o.npy")
    l, t, r, b = roi
    run("crop", str(src), "--input", f"{fmt}:{W}x{H}", "--roi", f"{l},{t},{r},{b}",
        "--format", "rgb", "-o", out)
    assert max_diff(np.load(out), ref[t:b + 1, l:r + 1]) == 0


# ---------------------------------------------------------------------------
# Letterbox bars in YUV outputs: the R,G,B pad converted, not used as Y,U,V

PHOTO = os.path.join(ROOT, ".cache", "testdata", "photos", "photo1080.jpg")


def pad_yuv(rgb):
    """Y, U, V of a uniform @rgb picture by cv2 (BT.601 narrow)."""
    img = np.empty((4, 4, 3), np.uint8)
    img[:] = rgb
    i420 = cv2.cvtColor(img, cv2.COLOR_RGB2YUV_I420).ravel()
    return int(i420[0]), int(i420[16]), int(i420[20])


def bar_rows(buf, fmt, w, rows):
    """Per plane (name, the bytes of the bar rows [0, rows)) of a tight
    @fmt buffer @w wide."""
    cw = (w + 1) // 2
    if fmt in ("nv12", "nv21"):
        return [("y", buf[:rows * w]), ("uv", buf[w * 320:][:rows // 2 * 2 * cw])]
    if fmt == "i420":
        u0 = w * 320
        return [("y", buf[:rows * w]), ("u", buf[u0:][:rows // 2 * cw]),
                ("v", buf[u0 + cw * 160:][:rows // 2 * cw])]
    if fmt in ("yuv422sp", "yuv444sp"):
        cbytes = 2 * cw if fmt == "yuv422sp" else 2 * w
        return [("y", buf[:rows * w]), ("uv", buf[w * 320:][:rows * cbytes])]
    if fmt == "yuyv":
        return [("yuyv", buf[:rows * 4 * cw])]
    if fmt == "yuv444packed":
        return [("yuv", buf[:rows * 3 * w])]
    assert fmt == "yuv400"
    return [("y", buf[:rows * w])]


EXPECT = {"y": "Y", "uv": "UV", "u": "U", "v": "V", "yuyv": "YUYV", "yuv": "YUV"}


@pytest.mark.parametrize("fmt", ["nv12", "nv21", "i420", "yuv422sp", "yuv444sp", "yuyv",
                                 "yuv444packed", "yuv400"])
@pytest.mark.parametrize("pad", ["000000", "204080", "c81e5a"])
@pytest.mark.skipif(not os.path.exists(PHOTO),
                    reason="no photo1080.jpg in .cache/testdata (run tests/tools/fetch-test-data, or make test-data)")
def test_letterbox_bars_are_the_pad_colour(tmp_path, fmt, pad):
    out = tmp_path / "o.yuv"
    run("resize", PHOTO, "--size", "320x320", "--mode", "letterbox", "--format", fmt,
        "--pad", pad, "-o", str(out))
    rgb = tuple(int(pad[i:i + 2], 16) for i in (0, 2, 4))
    y, u, v = pad_yuv(rgb)
    if fmt == "nv21":
        u, v = v, u
    value = {"Y": [y], "U": [u], "V": [v], "UV": [u, v], "YUYV": [y, u, y, v],
             "YUV": [y, u, v]}
    buf = np.fromfile(out, np.uint8)
    # 1920x1080 in 320x320: a 320x180 picture at row 70, bars above and below
    for name, got in bar_rows(buf, fmt, 320, 70):
        pattern = np.array(value[EXPECT[name]], np.uint8)
        want = np.resize(pattern, got.size)
        assert got.size > 0 and np.array_equal(got, want), \
            (fmt, name, got[:8].tolist(), pattern.tolist())


# ---------------------------------------------------------------------------
# A video whose resolution changes mid-stream

def h264(w, h, frames, tmp_path, name):
    path = tmp_path / name
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
                    f"testsrc2=size={w}x{h}:rate=10", "-frames:v", str(frames),
                    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                    "-x264-params", "threads=1", "-f", "h264", str(path)], check=True)
    return path.read_bytes()


@pytest.mark.parametrize("first,second", [((320, 240), (160, 120)), ((160, 120), (320, 240))])
def test_video_resolution_change(tmp_path, first, second):
    a = h264(*first, 4, tmp_path, "a.h264")
    b = h264(*second, 3, tmp_path, "b.h264")
    for name, data in (("cat.h264", a + b), ("a2.h264", a), ("b2.h264", b)):
        (tmp_path / name).write_bytes(data)
    # a fixed-size tensor: every frame with its own geometry, slice t equal to
    # the decode of its own part
    outs = {}
    for name in ("cat.h264", "a2.h264", "b2.h264"):
        out = str(tmp_path / (name + ".npy"))
        run("video-decode", str(tmp_path / name), "--size", "64x48", "--mean", "0.5,0.5,0.5",
            "--std", "0.25,0.25,0.25", "-o", out)
        outs[name] = np.load(out)
    assert outs["cat.h264"].shape == (7, 3, 48, 64)
    assert np.array_equal(outs["cat.h264"],
                          np.concatenate([outs["a2.h264"], outs["b2.h264"]]))
    # frames as they are: one batch cannot hold two sizes, a clear refusal
    r = subprocess.run([DVPPCTL, "video-decode", str(tmp_path / "cat.h264"), "-o",
                        str(tmp_path / "f.npy")], capture_output=True, text=True)
    assert r.returncode != 0
    want = f"{second[0]}x{second[1]}, the first {first[0]}x{first[1]}"
    assert "EUNSUPPORTED" in r.stderr and want in r.stderr and "frame 4" in r.stderr, r.stderr


def test_video_resolution_change_with_a_following_output(tmp_path):
    """fit into 64x48 across aspect ratios: 320x240 -> 64x48, 160x160 -> 48x48; the
    batch cannot take the second shape: refused naming both sizes (it was EINVAL
    'tensor ... cannot take image')."""
    data = h264(320, 240, 3, tmp_path, "a.h264") + h264(160, 160, 3, tmp_path, "b.h264")
    (tmp_path / "cat.h264").write_bytes(data)
    r = subprocess.run([DVPPCTL, "video-decode", str(tmp_path / "cat.h264"), "--size", "64x48",
                        "--mode", "fit", "-o", str(tmp_path / "t.npy")],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "EUNSUPPORTED" in r.stderr and "160x160, the first 320x240" in r.stderr, r.stderr
    assert "64x48 -> 48x48" in r.stderr, r.stderr
