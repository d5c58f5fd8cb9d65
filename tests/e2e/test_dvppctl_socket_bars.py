"""`dvppctl resize --mode letterbox --socket` from an RGB-family image into
a YUV or grey output: since f0943ff the pad (R,G,B) is converted to the
format the bars are painted in, so the daemon (bars painted in RGB, the
whole image converted afterwards) writes the bytes the offline command
(bars painted in the output's format) writes. dvppctl still refused these
with 'the bars' colour is given in the output's format', the Y,U,V pad of
before f0943ff. The bars are also checked against cv2's RGB2YUV_I420 of the
pad; what still differs (a grey resize format, one YUV layout into
another) stays refused. A picture centred on an odd column or row of a
subsampled output goes on its chroma grid, offline and in the daemon.

Run with Debian's /usr/bin/python3 (numpy, cv2).
"""
import json
import os
import subprocess

import cv2
import numpy as np
import pytest

from daemon_util import DVPPCTL, CtlDaemon

W, H = 64, 48
PAD = "30a0f0"
OUTPUTS = ["nv12", "nv21", "i420", "yv12", "yuyv", "uyvy", "yuv422sp", "yuv444sp",
           "yuv444packed", "yuv400", "gray"]


@pytest.fixture(scope="module")
def daemon():
    d = CtlDaemon("dvppctl-bars-")
    try:
        d.wait_ready()
        yield d
    finally:
        d.stop()


def ctl(*args):
    return subprocess.run([DVPPCTL, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """{name: (path, extra args)}: an RGB .npy and the same pixels as raw BGRA."""
    tmp = tmp_path_factory.mktemp("bars")
    rgb = np.random.default_rng(7).integers(0, 256, (H, W, 3), np.uint8)
    np.save(str(tmp / "rgb.npy"), rgb)
    bgra = np.dstack([rgb[..., ::-1], np.full((H, W), 255, np.uint8)])
    bgra.tofile(str(tmp / "bgra.raw"))
    return {"rgb": (str(tmp / "rgb.npy"), []),
            "bgra": (str(tmp / "bgra.raw"), ["--input", f"bgra:{W}x{H}"])}


def both(daemon, tmp_path, src, *args):
    """Offline and remote runs; returns (offline, remote, offline bytes, remote bytes)."""
    a, b = str(tmp_path / "a.raw"), str(tmp_path / "b.raw")
    local = ctl("resize", src, *args, "-o", a)
    remote = ctl("resize", src, *args, "--socket", daemon.sock, "-o", b)
    read = lambda p: open(p, "rb").read() if os.path.exists(p) else None
    return local, remote, read(a), read(b)


@pytest.mark.parametrize("src", ["rgb", "bgra"])
@pytest.mark.parametrize("fmt", OUTPUTS)
@pytest.mark.parametrize("size", ["64x64", "50x50", "51x47", "40x90"])
def test_letterbox_from_rgb_family_is_the_offline_bytes(daemon, tmp_path, sources, src,
                                                        fmt, size):
    path, extra = sources[src]
    local, remote, a, b = both(daemon, tmp_path, path, *extra, "--format", fmt, "--size",
                               size, "--mode", "letterbox", "--pad", PAD)
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    assert a == b, f"{src} -> {fmt} {size}: the daemon's bytes differ"


def pad_yuv(rgb):
    """Y, U, V of a uniform @rgb picture by cv2 (BT.601 narrow)."""
    img = np.empty((4, 4, 3), np.uint8)
    img[:] = rgb
    i420 = cv2.cvtColor(img, cv2.COLOR_RGB2YUV_I420).ravel()
    return int(i420[0]), int(i420[16]), int(i420[20])


@pytest.mark.parametrize("fmt", ["nv12", "i420", "yuyv", "yuv444packed", "yuv400"])
def test_bars_from_the_daemon_are_the_pad_colour(daemon, tmp_path, sources, fmt):
    """64x48 into 64x64: 8 bar rows on top, in the pad colour as cv2 converts
    it (bit-exact)."""
    path, _ = sources["rgb"]
    out = str(tmp_path / "o.raw")
    r = ctl("resize", path, "--format", fmt, "--size", "64x64", "--mode", "letterbox",
            "--pad", PAD, "--socket", daemon.sock, "-o", out)
    assert r.returncode == 0, r.stderr
    buf = np.fromfile(out, np.uint8)
    y, u, v = pad_yuv(tuple(int(PAD[i:i + 2], 16) for i in (0, 2, 4)))
    planes = {"nv12": [(buf[:8 * W], [y]), (buf[W * 64:][:4 * W], [u, v])],
              "i420": [(buf[:8 * W], [y]), (buf[W * 64:][:4 * W // 2], [u]),
                       (buf[W * 64 + W * 32 // 2:][:4 * W // 2], [v])],
              "yuyv": [(buf[:8 * 2 * W], [y, u, y, v])],
              "yuv444packed": [(buf[:8 * 3 * W], [y, u, v])],
              "yuv400": [(buf[:8 * W], [y])]}[fmt]
    for got, pattern in planes:
        assert np.array_equal(got, np.resize(np.array(pattern, np.uint8), got.size)), \
            (fmt, got[:8].tolist(), pattern)


@pytest.mark.parametrize("fmt_in,fmt_out,size", [
    ("yuv400", "nv12", "64x64"),   # a grey resize: the pad's chroma is lost
    ("gray", "i420", "64x64"),
    ("nv12", "yuyv", "50x50"),     # one YUV layout into another
])
def test_bars_that_would_differ_stay_offline(daemon, tmp_path, sources, fmt_in, fmt_out,
                                             size):
    raw = str(tmp_path / f"{fmt_in}.raw")
    assert ctl("convert", sources["rgb"][0], "--format", fmt_in, "-o", raw).returncode == 0
    r = ctl("resize", raw, "--input", f"{fmt_in}:{W}x{H}", "--format", fmt_out, "--size",
            size, "--mode", "letterbox", "--pad", PAD, "--socket", daemon.sock,
            "-o", str(tmp_path / "x.raw"))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"--mode letterbox into {fmt_out} from {fmt_in}" in r.stderr, r.stderr
    assert "not available with --socket" in r.stderr
    assert not os.path.exists(str(tmp_path / "x.raw"))


@pytest.mark.parametrize("src", ["rgb", "bgra"])
@pytest.mark.parametrize("fmt,size,at", [("nv12", "97x20", (34, 0)), ("i420", "20x97", (0, 40)),
                                         ("yuyv", "97x20", (34, 0)), ("rgb", "97x20", (35, 0))])
def test_an_odd_paste_origin_goes_on_the_chroma_grid(daemon, tmp_path, sources, src, fmt,
                                                     size, at):
    """64x48 into 97x20 centres the picture at x 35, odd for NV12's chroma:
    offline refused it (EINVAL 'must be even for nv12') and --socket did not
    ask the daemon, which pasted at 35 in RGB and converted. Both now put it
    on the output's chroma grid (34; 20x97: row 41 -> 40), report it in the
    geometry, and write the same bytes; RGB keeps 35."""
    path, extra = sources[src]
    local, remote, a, b = both(daemon, tmp_path, path, *extra, "--format", fmt, "--size",
                               size, "--mode", "letterbox", "--pad", PAD)
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    geom = json.loads(local.stdout)
    assert (geom["pad_x"], geom["pad_y"]) == at, geom
    assert tuple(geom["paste"][:2]) == at
    assert a == b, f"{src} -> {fmt} {size}: the daemon's bytes differ"
