"""Letterboxes, crops and fills at odd offsets of chroma-subsampled outputs
(issue 21, "valid request, fails at run time"), through the real dvppctl and
dvppd, against an independent reference: cv2.resize, a numpy paste and
cv2.cvtColor (bit for bit).

  * A letterbox whose picture is centred on an odd column or row of a
    4:2:0 or 4:2:2 output planned fine and failed EINVAL at run time in the
    daemon ("paste origin (35, 0) must be even for nv12"), after admission;
    offline dvppctl refused some cases the daemon ran (an RGB or yuv400
    picture into nv12 at 97x20: the daemon pasted in the resize's format and
    converted the whole image, the offline VPC pasted into the nv12 output).
    One rule for both: the picture starts on the chroma grid of every format
    it is pasted or delivered in (rounded down from the centre), and the
    letterbox geometry reports where it really is.
  * A crop, or a fill's centre crop, at an odd origin of 4:2:0 / 4:2:2 was
    refused at run time ("crop origin must be even"): luma from the origin,
    chroma from the sample covering the crop's first pixel (numpy slicing
    of the planes); into RGB every pixel keeps its own colour (cv2.cvtColor
    of the whole image, then the slice).
  * What really cannot run (margins of one pixel on NV12) is refused by the
    planner, before admission, 400 naming the op and the rule.

Run with /usr/bin/python3; DVPP_BUILD (default "build") locates the tools.
"""
import json
import os
import tempfile

import cv2
import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ctl, free_port, start_daemon, stop_daemon  # noqa: E402

W, H = 64, 48
PAD = "1ea0f0"
PAD_RGB = (0x1E, 0xA0, 0xF0)


# --------------------------------------------------------------------------
# Inputs and the reference


@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    """A smooth RGB picture (.npy), the same as tight raw NV12 (its I420 by
    cv2, interleaved) and as raw YUV400; the planes for the references."""
    tmp = tmp_path_factory.mktemp("paste")
    rng = np.random.default_rng(2101)
    rgb = cv2.GaussianBlur(rng.integers(0, 256, (H, W, 3), np.uint8), (5, 5), 0)
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    y = i420[:H]
    u = i420[H:].ravel()[:H * W // 4].reshape(H // 2, W // 2)
    v = i420[H:].ravel()[H * W // 4:].reshape(H // 2, W // 2)
    uv = np.dstack([u, v])
    paths = {"rgb": str(tmp / "rgb.npy"), "nv12": str(tmp / "in.nv12"),
             "yuv400": str(tmp / "in.y")}
    np.save(paths["rgb"], rgb)
    np.concatenate([y.ravel(), uv.ravel()]).tofile(paths["nv12"])
    y.tofile(paths["yuv400"])
    return {"rgb": rgb, "y": y, "uv": uv, "paths": paths, "tmp": str(tmp)}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("paste-http"))
    port = free_port()
    d = start_daemon(tmp, {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": ""},
                           "device": {"channels": 2}}, "d", port)
    try:
        yield d
    finally:
        stop_daemon(d)


def fit(w, h, ow, oh):
    """The letterbox's picture size (dvpp_resize_geometry's rounding)."""
    if w * oh >= h * ow:
        return ow, (h * ow * 2 + w) // (2 * w)
    return (w * oh * 2 + h) // (2 * h), oh


def origin(ow, oh, nw, nh, gx, gy):
    """The centred origin rounded down to a grid of gx x gy."""
    return (ow - nw) // 2 // gx * gx, (oh - nh) // 2 // gy * gy


def pad_yuv():
    """Y, U, V of the pad colour by cv2 (BT.601 narrow)."""
    img = np.empty((2, 2, 3), np.uint8)
    img[:] = PAD_RGB
    p = cv2.cvtColor(img, cv2.COLOR_RGB2YUV_I420).ravel()
    return int(p[0]), int(p[4]), int(p[5])


def rgb_to_i420(canvas):
    """cv2's I420 planes of an RGB canvas of any size (odd sides: the
    canvas extended by its last column/row, which changes no sample of the
    wanted ones: chroma comes from each block's top-left pixel)."""
    h, w = canvas.shape[:2]
    c = np.pad(canvas, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")
    hh, ww = c.shape[:2]
    p = cv2.cvtColor(c, cv2.COLOR_RGB2YUV_I420)
    u = p[hh:].ravel()[:hh * ww // 4].reshape(hh // 2, ww // 2)
    v = p[hh:].ravel()[hh * ww // 4:].reshape(hh // 2, ww // 2)
    return p[:hh][:h, :w], u, v


def i420_to_rgb(y, uv):
    """cv2's RGB of NV12 planes of any size (extended as rgb_to_i420)."""
    h, w = y.shape
    yy = np.pad(y, ((0, h % 2), (0, w % 2)), mode="edge")
    nv12 = np.concatenate([yy.ravel(), uv.ravel()]).reshape(-1, yy.shape[1])
    return cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12)[:h, :w]


def read_420(path_or_bytes, fmt, w, h):
    """(Y, U, V) of a tight 4:2:0 image as dvppd lays it out (rows of an
    even number of pixels)."""
    b = (np.fromfile(path_or_bytes, np.uint8) if isinstance(path_or_bytes, str)
         else np.frombuffer(path_or_bytes, np.uint8))
    ws, cw, ch = w + w % 2, (w + 1) // 2, (h + 1) // 2
    assert b.size == ws * h + ws * ch, (b.size, fmt, w, h)
    y = b[:ws * h].reshape(h, ws)[:, :w]
    rest = b[ws * h:]
    if fmt in ("nv12", "nv21"):
        c = rest.reshape(ch, ws)[:, :2 * cw]
        u, v = (c[:, 0::2], c[:, 1::2]) if fmt == "nv12" else (c[:, 1::2], c[:, 0::2])
    else:
        a = rest[:ch * cw].reshape(ch, cw)
        b2 = rest[ch * cw:].reshape(ch, cw)
        u, v = (a, b2) if fmt == "i420" else (b2, a)
    return y, u, v


def letterbox_rgb_ref(rgb, ow, oh, gx, gy):
    """cv2.resize + numpy paste on the grid: the RGB canvas and the origin."""
    nw, nh = fit(rgb.shape[1], rgb.shape[0], ow, oh)
    px, py = origin(ow, oh, nw, nh, gx, gy)
    canvas = np.empty((oh, ow, 3), np.uint8)
    canvas[:] = PAD_RGB
    canvas[py:py + nh, px:px + nw] = cv2.resize(rgb, (nw, nh),
                                                interpolation=cv2.INTER_LINEAR)
    return canvas, (px, py)


def letterbox_nv12_ref(y, uv, ow, oh):
    """The letterbox in NV12's planes: cv2.resize of Y and of the UV plane,
    pasted at the 2x2 grid's origin, the bars the pad colour by cv2."""
    nw, nh = fit(y.shape[1], y.shape[0], ow, oh)
    px, py = origin(ow, oh, nw, nh, 2, 2)
    py_, pu, pv = pad_yuv()
    oy = np.full((oh, ow), py_, np.uint8)
    ouv = np.empty(((oh + 1) // 2, (ow + 1) // 2, 2), np.uint8)
    ouv[..., 0], ouv[..., 1] = pu, pv
    oy[py:py + nh, px:px + nw] = cv2.resize(y, (nw, nh), interpolation=cv2.INTER_LINEAR)
    ouv[py // 2:py // 2 + (nh + 1) // 2, px // 2:px // 2 + (nw + 1) // 2] = cv2.resize(
        uv, ((nw + 1) // 2, (nh + 1) // 2), interpolation=cv2.INTER_LINEAR)
    return oy, ouv, (px, py)


def max_diff(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


def geometry(r):
    return json.loads(r.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# dvppctl (offline): letterboxes


SIZES = ["97x20", "20x97", "51x47", "66x33"]


@pytest.mark.parametrize("fmt", ["nv12", "nv21", "i420", "yv12"])
@pytest.mark.parametrize("size", SIZES)
def test_letterbox_rgb_into_420_is_on_the_chroma_grid(pictures, tmp_path, fmt, size):
    """RGB into 4:2:0: cv2.resize, pasted on the 2x2 grid, cv2's I420 of
    the canvas. 97x20 centres the picture at x 35 (refused offline before:
    'paste origin (35, 0) must be even for nv12'): now 34, reported."""
    ow, oh = map(int, size.split("x"))
    out = str(tmp_path / "o.raw")
    r = ctl("resize", pictures["paths"]["rgb"], "--format", fmt, "--size", size,
            "--mode", "letterbox", "--pad", PAD, "-o", out)
    canvas, (px, py) = letterbox_rgb_ref(pictures["rgb"], ow, oh, 2, 2)
    g = geometry(r)
    assert (g["pad_x"], g["pad_y"]) == (px, py), g
    assert g["paste"][:2] == [px, py]
    if size in ("97x20", "20x97"):  # centred at x 35 / y 41: odd
        assert (px, py) == {"97x20": (34, 0), "20x97": (0, 40)}[size]
    want = rgb_to_i420(canvas)
    got = read_420(out, fmt, ow, oh)
    for k, name in enumerate("yuv"):
        assert max_diff(got[k], want[k]) == 0, f"{fmt} {size}: plane {name} differs"


@pytest.mark.parametrize("size", SIZES)
def test_letterbox_in_nv12_planes(pictures, tmp_path, size):
    """NV12 into NV12 (the paste runs in the planes): cv2.resize of Y and
    of UV, pasted at the grid's origin, bars of cv2's pad colour."""
    ow, oh = map(int, size.split("x"))
    out = str(tmp_path / "o.raw")
    r = ctl("resize", pictures["paths"]["nv12"], "--input", f"nv12:{W}x{H}", "--format",
            "nv12", "--size", size, "--mode", "letterbox", "--pad", PAD, "-o", out)
    wy, wuv, at = letterbox_nv12_ref(pictures["y"], pictures["uv"], ow, oh)
    g = geometry(r)
    assert (g["pad_x"], g["pad_y"]) == at, g
    y, u, v = read_420(out, "nv12", ow, oh)
    assert max_diff(y, wy) == 0
    assert max_diff(np.dstack([u, v]), wuv) == 0


def test_letterbox_yuv400_into_nv12_offline_and_in_the_daemon(srv, pictures, tmp_path):
    """The example of the report: yuv400 into nv12 at 97x20 was refused
    offline ('paste origin (35, 0) must be even for nv12') and ran in the
    daemon at x 35. Both put the picture at 34 now and write the same luma
    (cv2.resize of Y, pasted); the bars' chroma differs by design (a grey
    resize drops the pad's chroma in the daemon, which is why --socket
    keeps this case offline)."""
    out = str(tmp_path / "o.raw")
    r = ctl("resize", pictures["paths"]["yuv400"], "--input", f"yuv400:{W}x{H}",
            "--format", "nv12", "--size", "97x20", "--mode", "letterbox", "--pad", PAD,
            "-o", out)
    assert (geometry(r)["pad_x"], geometry(r)["pad_y"]) == (34, 0)
    wy, _, _ = letterbox_nv12_ref(pictures["y"], pictures["uv"], 97, 20)
    y, u, v = read_420(out, "nv12", 97, 20)
    assert max_diff(y, wy) == 0
    _, pu, pv = pad_yuv()
    assert (u[:, :17] == pu).all() and (v[:, :17] == pv).all()   # bars: the pad
    assert (u[:, 17:31] == 128).all() and (v[:, 17:31] == 128).all()  # grey picture
    body = open(pictures["paths"]["yuv400"], "rb").read()
    resp = srv.post(f"/v1/decode?input=raw&raw=yuv400:{W}x{H}&w=97&h=20&mode=letterbox"
                    f"&pad={PAD}&format=nv12&out=raw", body)
    assert resp.status == 200, resp
    dy, du, dv = read_420(resp.body, "nv12", 97, 20)
    assert max_diff(dy, y) == 0, "the daemon's picture is not where dvppctl's is"
    assert (du == 128).all() and (dv == 128).all()


# --------------------------------------------------------------------------
# dvppctl (offline): crops and fills at odd origins


CROPS = [(1, 1, 9, 7), (3, 2, 20, 11), (5, 0, 31, 23), (0, 3, 16, 16), (63, 47, 1, 1)]


@pytest.mark.parametrize("l,t,w,h", CROPS)
def test_crop_at_an_odd_origin(pictures, tmp_path, l, t, w, h):
    """NV12 kept: numpy slices of Y and of UV from the sample covering the
    crop's first pixel; into RGB: cv2.cvtColor of the whole image, sliced."""
    src = pictures["paths"]["nv12"]
    roi = f"{l},{t},{l + w - 1},{t + h - 1}"
    ctl("crop", src, "--input", f"nv12:{W}x{H}", "--roi", roi, "-o", str(tmp_path / "c.raw"))
    y, u, v = read_420(str(tmp_path / "c.raw"), "nv12", w, h)
    cw, ch = (w + 1) // 2, (h + 1) // 2
    assert max_diff(y, pictures["y"][t:t + h, l:l + w]) == 0
    assert max_diff(np.dstack([u, v]), pictures["uv"][t // 2:t // 2 + ch, l // 2:l // 2 + cw]) == 0
    ctl("crop", src, "--input", f"nv12:{W}x{H}", "--roi", roi, "--format", "rgb", "-o",
        str(tmp_path / "c.npy"))
    full = i420_to_rgb(pictures["y"], pictures["uv"])
    assert max_diff(np.load(str(tmp_path / "c.npy")), full[t:t + h, l:l + w]) == 0


@pytest.mark.parametrize("size", ["20x21", "21x20", "9x31"])
def test_fill_with_an_odd_centre_crop(pictures, tmp_path, size):
    """A fill of NV12 whose centre crop starts at an odd column or row
    (20x21 crops 46x48 at x 9): cv2.resize of the Y window and of the UV
    window that starts at the sample covering it."""
    ow, oh = map(int, size.split("x"))
    r = ctl("resize", pictures["paths"]["nv12"], "--input", f"nv12:{W}x{H}", "--size", size,
            "--mode", "fill", "-o", str(tmp_path / "f.raw"))
    l, t, right, bottom = geometry(r)["crop"]
    assert l % 2 or t % 2, "the case no longer has an odd crop"
    cw, ch = right - l + 1, bottom - t + 1
    y, u, v = read_420(str(tmp_path / "f.raw"), "nv12", ow, oh)
    wy = cv2.resize(pictures["y"][t:t + ch, l:l + cw], (ow, oh), interpolation=cv2.INTER_LINEAR)
    win = pictures["uv"][t // 2:t // 2 + (ch + 1) // 2, l // 2:l // 2 + (cw + 1) // 2]
    wuv = cv2.resize(win, ((ow + 1) // 2, (oh + 1) // 2), interpolation=cv2.INTER_LINEAR)
    assert max_diff(y, wy) == 0
    assert max_diff(np.dstack([u, v]), wuv) == 0


# --------------------------------------------------------------------------
# dvppd over HTTP


def test_http_letterbox_into_nv12(srv, pictures):
    """Raw NV12 letterboxed into 97x20 NV12 over HTTP (it planned, then
    failed EINVAL after admission): the cv2 reference, dvppctl's bytes; the
    PNG of /v1/image reports the picture's place (X-Dvpp-Pad 34,0)."""
    body = open(pictures["paths"]["nv12"], "rb").read()
    q = f"input=raw&raw=nv12:{W}x{H}&w=97&h=20&mode=letterbox&pad={PAD}"
    r = srv.post(f"/v1/decode?{q}&format=nv12&out=raw", body)
    assert r.status == 200, r
    wy, wuv, _ = letterbox_nv12_ref(pictures["y"], pictures["uv"], 97, 20)
    y, u, v = read_420(r.body, "nv12", 97, 20)
    assert max_diff(y, wy) == 0
    assert max_diff(np.dstack([u, v]), wuv) == 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o.raw")
        ctl("resize", pictures["paths"]["nv12"], "--input", f"nv12:{W}x{H}", "--format", "nv12",
            "--size", "97x20", "--mode", "letterbox", "--pad", PAD, "-o", out)
        assert open(out, "rb").read() == r.body
    r = srv.post(f"/v1/image?{q}&format=png", body)
    assert r.status == 200, r
    assert r.h("X-Dvpp-Pad") == "34,0", r.headers
    png = cv2.cvtColor(cv2.imdecode(np.frombuffer(r.body, np.uint8), cv2.IMREAD_COLOR),
                       cv2.COLOR_BGR2RGB)
    assert max_diff(png, i420_to_rgb(wy, wuv)) == 0


def test_http_jpeg_letterbox_into_nv12(srv, pictures):
    """A JPEG into NV12 is decoded to NV12 and letterboxed in its planes: at
    97x20 that failed at run time. The reference: the daemon's own NV12
    decode of the JPEG, cv2.resize of its planes, pasted at x 34."""
    ok, jpg = cv2.imencode(".jpg", cv2.cvtColor(pictures["rgb"], cv2.COLOR_RGB2BGR))
    assert ok
    jpg = jpg.tobytes()
    r = srv.post("/v1/decode?format=nv12&out=raw", jpg)
    assert r.status == 200, r
    y, u, v = read_420(r.body, "nv12", W, H)
    wy, wuv, _ = letterbox_nv12_ref(np.array(y), np.dstack([u, v]), 97, 20)
    r = srv.post(f"/v1/decode?w=97&h=20&mode=letterbox&pad={PAD}&format=nv12&out=raw", jpg)
    assert r.status == 200, r
    y, u, v = read_420(r.body, "nv12", 97, 20)
    assert max_diff(y, wy) == 0
    assert max_diff(np.dstack([u, v]), wuv) == 0


def test_http_refuses_what_cannot_run_in_the_planner(srv, pictures):
    """Margins of one pixel on NV12 cannot run (a 2x2 chroma sample would
    straddle the edge): 400 from the planner, field and message naming the
    op and the rule (it was refused at run time, field 'margins'). A JPEG
    decoded to NV12 for the output is told how to run it, and does with
    decode.format rgb: the RGB border, converted (cv2)."""
    spec = {"input": "raw", "raw": {"format": "nv12", "width": W, "height": H},
            "ops": [{"border": {"top": 1, "bottom": 0, "left": 0, "right": 0,
                                "type": "replicate"}}],
            "output": {"format": "nv12", "out": "raw"}}
    body = open(pictures["paths"]["nv12"], "rb").read()
    r = srv.post("/v1/decode", body, headers={"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 400, r
    e = r.json()["error"]
    assert e["field"] == "ops[0].border", e
    assert "margins must be even" in e["message"] and "nv12" in e["message"], e
    ok, png = cv2.imencode(".png", cv2.cvtColor(pictures["rgb"], cv2.COLOR_RGB2BGR))
    assert ok
    spec = {"ops": spec["ops"], "output": spec["output"]}
    r = srv.post("/v1/decode", png.tobytes(), headers={"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 200, r  # a PNG decodes to RGB: the border runs there
    want = rgb_to_i420(cv2.copyMakeBorder(pictures["rgb"], 1, 0, 0, 0, cv2.BORDER_REPLICATE))
    got = read_420(r.body, "nv12", W, H + 1)
    for k in range(3):
        assert max_diff(got[k], want[k]) == 0
    ok, jpg = cv2.imencode(".jpg", cv2.cvtColor(pictures["rgb"], cv2.COLOR_RGB2BGR))
    r = srv.post("/v1/decode", jpg.tobytes(), headers={"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 400, r
    e = r.json()["error"]
    assert e["field"] == "ops[0].border" and "set decode.format" in e["message"], e
    spec["decode"] = {"format": "rgb"}
    r = srv.post("/v1/decode", jpg.tobytes(), headers={"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 200, r
    assert len(r.body) == 64 * 49 + 64 * 25
