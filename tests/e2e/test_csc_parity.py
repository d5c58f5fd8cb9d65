"""dvppctl convert / make-border compared with cv2.cvtColor and
cv2.copyMakeBorder (Debian's OpenCV 4.6).

Every case runs the real binary:

    dvppctl convert IN --format F [--csc bt601|bt709] [--range narrow|full]
                       [--input FMT[:WxH]] -o OUT
    dvppctl make-border IN --margins T,B,L,R --border-type T [--value a,b,c,d]
                       [--input FMT[:WxH]] -o OUT

Inputs are .npy (uint8 (H,W,3) = rgb, (H,W,4) = rgba, (H,W) = gray, or what
--input names) or raw files in the tight layout (--input fmt:WxH). Packed
outputs are read from .npy; convert's YUV outputs from the raw buffer
(.yuv); make-border's YUV outputs from the .npy flattened (the raw buffer).

Contracts checked (max |diff| asserted; the worst diff of each group is
printed with -s):
  * NV12/NV21/I420/YV12 -> RGB/BGR/RGBA/BGRA and YUYV/UYVY/YVYU -> RGB/BGR/
    RGBA, BT.601 narrow: bit-exact with cvtColor (OpenCV's 20-bit constants).
  * RGB/BGR/RGBA -> I420/YV12 (and NV12/NV21, compared with the I420 planes
    interleaved): bit-exact with COLOR_RGB2YUV_I420.
  * RGB/BGR/RGBA -> GRAY: bit-exact with COLOR_*2GRAY; reorders exact.
  * Odd sizes, which OpenCV's 4:2:0 paths refuse: the same formulas in numpy.
  * BT.709 and full range: within 1 of the float formulas.
  * copyMakeBorder: all four types on 1, 3 and 4 channels, margins wider
    than the image, constants rounded like cv::Scalar; NV12 and I420 planes
    against copyMakeBorder of each plane with halved chroma margins.

Run with /usr/bin/python3. DVPP_BUILD (default "build", relative to the
repository root) locates dvppctl; the module is skipped only when that
dvppctl has no `convert` subcommand.
"""

import os
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _from_repo(value):
    path = Path(value)
    return path if path.is_absolute() else REPO / path


BUILD = _from_repo(os.environ.get("DVPP_BUILD", "build"))
DVPPCTL = BUILD / "dvppctl"


def _has_convert():
    if not DVPPCTL.exists():
        return False
    out = subprocess.run([str(DVPPCTL), "help"], capture_output=True, text=True)
    return "convert" in out.stdout + out.stderr


pytestmark = pytest.mark.skipif(not _has_convert(),
                                reason="dvppctl has no convert subcommand")

cv2.setNumThreads(1)
RNG = np.random.default_rng(20240611)
EVEN_SIZES = [(2, 2), (4, 6), (16, 16), (34, 64), (62, 130), (240, 320), (720, 1280)]
ODD_SIZES = [(1, 1), (1, 7), (3, 5), (7, 3), (17, 33), (33, 67), (101, 99)]
WORST = {}


def _note(group, diff):
    WORST[group] = max(WORST.get(group, 0), int(diff))


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    for group, diff in sorted(WORST.items()):
        print(f"worst |diff| {group}: {diff}")


# ---------------------------------------------------------------------------
# Running dvppctl.

def _run(args):
    res = subprocess.run([str(DVPPCTL)] + [str(a) for a in args],
                         capture_output=True, text=True)
    assert res.returncode == 0, f"dvppctl {args}: {res.stderr}"


def _opts(csc, rng, inp):
    out = []
    if csc:
        out += ["--csc", csc]
    if rng:
        out += ["--range", rng]
    if inp:
        out += ["--input", inp]
    return out


def convert_npy(tmp_path, arr, fmt, csc=None, rng=None, inp=None):
    """Packed image in (as .npy), packed image out (as .npy)."""
    src, dst = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(src, np.ascontiguousarray(arr))
    _run(["convert", src, "--format", fmt, "-o", dst] + _opts(csc, rng, inp))
    return np.load(dst)


def convert_raw(tmp_path, data, infmt, w, h, fmt, csc=None, rng=None,
                out_ext=".yuv"):
    """Raw tight buffer in; raw bytes (.yuv) or an array (.npy) out."""
    src, dst = tmp_path / "in.yuv", tmp_path / ("out" + out_ext)
    src.write_bytes(np.ascontiguousarray(data).tobytes())
    _run(["convert", src, "--format", fmt, "-o", dst] +
         _opts(csc, rng, f"{infmt}:{w}x{h}"))
    if out_ext == ".npy":
        return np.load(dst)
    return np.frombuffer(dst.read_bytes(), np.uint8)


def npy_to_raw(tmp_path, arr, fmt, inp=None):
    """Packed .npy in, raw YUV bytes out."""
    src, dst = tmp_path / "in.npy", tmp_path / "out.yuv"
    np.save(src, np.ascontiguousarray(arr))
    _run(["convert", src, "--format", fmt, "-o", dst] + _opts(None, None, inp))
    return np.frombuffer(dst.read_bytes(), np.uint8)


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max()) if a.size else 0


# ---------------------------------------------------------------------------
# Test images and tight layouts.

def smooth_rgb(h, w, c=3):
    """Gradients plus noise: realistic chroma, every value reachable."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)),
                     ((x + y) * 127 // max(w + h - 2, 1))], -1)
    noise = RNG.integers(-20, 21, (h, w, 3))
    img = np.clip(base + noise, 0, 255).astype(np.uint8)
    if c == 4:
        img = np.concatenate([img, RNG.integers(0, 256, (h, w, 1), dtype=np.uint8)], -1)
    return img


def random_u8(*shape):
    return RNG.integers(0, 256, shape, dtype=np.uint8)


def i420_planes(buf, h, w):
    """Y, U, V of a tight I420 buffer (chroma ceil(w/2) x ceil(h/2))."""
    ws = w + (w & 1)
    cw, ch = ws // 2, (h + 1) // 2
    y = buf[:ws * h].reshape(h, ws)[:, :w]
    u = buf[ws * h:ws * h + cw * ch].reshape(ch, cw)
    v = buf[ws * h + cw * ch:ws * h + 2 * cw * ch].reshape(ch, cw)
    return y, u[:, :(w + 1) // 2], v[:, :(w + 1) // 2]


def nv12_planes(buf, h, w):
    ws = w + (w & 1)
    ch = (h + 1) // 2
    y = buf[:ws * h].reshape(h, ws)[:, :w]
    uv = buf[ws * h:ws * h + ws * ch].reshape(ch, ws // 2, 2)[:, :(w + 1) // 2]
    return y, uv[..., 0], uv[..., 1]


def yuv_ref_rgb(Y, U, V):
    """OpenCV's BT.601 narrow YUV->RGB on full-resolution planes."""
    Y, U, V = (a.astype(np.int64) for a in (Y, U, V))
    y = np.maximum(Y - 16, 0) * 1220542
    U, V = U - 128, V - 128
    half = 1 << 19
    r = (y + 1673527 * V + half) >> 20
    g = (y - 852492 * V - 409993 * U + half) >> 20
    b = (y + 2116026 * U + half) >> 20
    return np.clip(np.stack([r, g, b], -1), 0, 255).astype(np.uint8)


def up2(c, h, w):
    return np.repeat(np.repeat(c, 2, 0), 2, 1)[:h, :w]


# ---------------------------------------------------------------------------
# YUV -> RGB.

YUV420_CASES = {
    "nv12": (cv2.COLOR_YUV2RGB_NV12, cv2.COLOR_YUV2BGR_NV12,
             cv2.COLOR_YUV2RGBA_NV12, cv2.COLOR_YUV2BGRA_NV12),
    "nv21": (cv2.COLOR_YUV2RGB_NV21, cv2.COLOR_YUV2BGR_NV21,
             cv2.COLOR_YUV2RGBA_NV21, cv2.COLOR_YUV2BGRA_NV21),
    "i420": (cv2.COLOR_YUV2RGB_I420, cv2.COLOR_YUV2BGR_I420,
             cv2.COLOR_YUV2RGBA_I420, cv2.COLOR_YUV2BGRA_I420),
    "yv12": (cv2.COLOR_YUV2RGB_YV12, cv2.COLOR_YUV2BGR_YV12,
             cv2.COLOR_YUV2RGBA_YV12, cv2.COLOR_YUV2BGRA_YV12),
}


@pytest.mark.parametrize("infmt", sorted(YUV420_CASES))
@pytest.mark.parametrize("h,w", EVEN_SIZES)
def test_yuv420_to_rgb_matches_cv2(tmp_path, infmt, h, w):
    yuv = random_u8(h * 3 // 2, w)
    for outfmt, code in zip(("rgb", "bgr", "rgba", "bgra"), YUV420_CASES[infmt]):
        got = convert_raw(tmp_path, yuv, infmt, w, h, outfmt, out_ext=".npy")
        d = max_diff(got, cv2.cvtColor(yuv, code))
        _note(f"{infmt}->{outfmt} vs cv2", d)
        assert d == 0, (infmt, outfmt, h, w)


@pytest.mark.parametrize("infmt,code", [
    ("yuyv", cv2.COLOR_YUV2RGB_YUYV), ("uyvy", cv2.COLOR_YUV2RGB_UYVY),
    ("yvyu", cv2.COLOR_YUV2RGB_YVYU)])
@pytest.mark.parametrize("h,w", [(1, 2), (3, 6), (16, 64), (31, 130), (240, 320)])
def test_packed422_to_rgb_matches_cv2(tmp_path, infmt, code, h, w):
    src = random_u8(h, w, 2)
    got = convert_raw(tmp_path, src, infmt, w, h, "rgb", out_ext=".npy")
    d = max_diff(got, cv2.cvtColor(src, code))
    _note(f"{infmt}->rgb vs cv2", d)
    assert d == 0
    bgr = convert_raw(tmp_path, src, infmt, w, h, "bgr", out_ext=".npy")
    assert max_diff(bgr, got[..., ::-1]) == 0
    rgba = convert_raw(tmp_path, src, infmt, w, h, "rgba", out_ext=".npy")
    assert max_diff(rgba[..., :3], got) == 0 and (rgba[..., 3] == 255).all()


@pytest.mark.parametrize("h,w", ODD_SIZES)
def test_odd_nv12_i420_follow_the_same_formula(tmp_path, h, w):
    ws, ch, cw = w + (w & 1), (h + 1) // 2, (w + 1) // 2
    buf = random_u8(ws * h + ws * ch)
    y, u, v = nv12_planes(buf, h, w)
    want = yuv_ref_rgb(y, up2(u, h, w), up2(v, h, w))
    got = convert_raw(tmp_path, buf, "nv12", w, h, "rgb", out_ext=".npy")
    _note("nv12->rgb odd vs formula", max_diff(got, want))
    assert max_diff(got, want) == 0
    i420 = np.concatenate([np.pad(y, ((0, 0), (0, ws - w))).ravel(),
                           u.ravel(), v.ravel()])
    got = convert_raw(tmp_path, i420, "i420", w, h, "bgr", out_ext=".npy")
    assert max_diff(got, want[..., ::-1]) == 0
    assert cw == u.shape[1]


def float_yuv2rgb(Y, U, V, kr, kb, full):
    kg = 1 - kr - kb
    Y, U, V = (a.astype(np.float64) for a in (Y, U, V))
    ys, cs = (1.0, 1.0) if full else (255 / 219, 255 / 224)
    y = (Y if full else np.maximum(Y - 16, 0)) * ys
    U, V = (U - 128) * cs, (V - 128) * cs
    r = y + 2 * (1 - kr) * V
    g = y - 2 * kb * (1 - kb) / kg * U - 2 * kr * (1 - kr) / kg * V
    b = y + 2 * (1 - kb) * U
    return np.clip(np.floor(np.stack([r, g, b], -1) + 0.5), 0, 255)


@pytest.mark.parametrize("csc,kr,kb", [("bt601", 0.299, 0.114), ("bt709", 0.2126, 0.0722)])
@pytest.mark.parametrize("rng", ["narrow", "full"])
def test_other_matrices_follow_float_formulas(tmp_path, csc, kr, kb, rng):
    h, w = 34, 66
    buf = random_u8(h * 3 // 2, w).ravel()
    y, u, v = nv12_planes(buf, h, w)
    got = convert_raw(tmp_path, buf, "nv12", w, h, "rgb", csc, rng, out_ext=".npy")
    want = float_yuv2rgb(y, up2(u, h, w), up2(v, h, w), kr, kb, rng == "full")
    d = max_diff(got, want.astype(np.uint8))
    _note(f"nv12->rgb {csc} {rng} vs float", d)
    # BT.601 narrow uses OpenCV's 3-decimal constants: within 2 of exact.
    assert d <= (2 if (csc, rng) == ("bt601", "narrow") else 1)


# ---------------------------------------------------------------------------
# RGB -> YUV.

@pytest.mark.parametrize("h,w", EVEN_SIZES[:-1])
@pytest.mark.parametrize("inp,code,c", [
    (None, cv2.COLOR_RGB2YUV_I420, 3), ("bgr", cv2.COLOR_BGR2YUV_I420, 3),
    (None, cv2.COLOR_RGBA2YUV_I420, 4)])
def test_rgb_to_i420_matches_cv2(tmp_path, h, w, inp, code, c):
    img = smooth_rgb(h, w, c) if h > 4 else random_u8(h, w, c)
    want = cv2.cvtColor(img, code).ravel()
    got = npy_to_raw(tmp_path, img, "i420", inp)
    d = max_diff(got, want)
    _note("rgb->i420 vs cv2", d)
    assert d == 0
    # YV12: the same planes, V first.
    want12 = cv2.cvtColor(img, {cv2.COLOR_RGB2YUV_I420: cv2.COLOR_RGB2YUV_YV12,
                                cv2.COLOR_BGR2YUV_I420: cv2.COLOR_BGR2YUV_YV12,
                                cv2.COLOR_RGBA2YUV_I420: cv2.COLOR_RGBA2YUV_YV12}[code])
    d = max_diff(npy_to_raw(tmp_path, img, "yv12", inp), want12.ravel())
    _note("rgb->yv12 vs cv2", d)
    assert d == 0
    # NV12 / NV21: the I420 planes interleaved.
    y, u, v = i420_planes(want, h, w)
    for fmt, pair in (("nv12", (u, v)), ("nv21", (v, u))):
        want_sp = np.concatenate([y.ravel(), np.stack(pair, -1).ravel()])
        d = max_diff(npy_to_raw(tmp_path, img, fmt, inp), want_sp)
        _note(f"rgb->{fmt} vs cv2 i420", d)
        assert d == 0


@pytest.mark.parametrize("h,w", [(1, 1)] + ODD_SIZES + EVEN_SIZES[:-1])
@pytest.mark.parametrize("inp,code,c", [
    (None, cv2.COLOR_RGB2GRAY, 3), ("bgr", cv2.COLOR_BGR2GRAY, 3),
    (None, cv2.COLOR_RGBA2GRAY, 4), ("bgra", cv2.COLOR_BGRA2GRAY, 4)])
def test_rgb_to_gray_matches_cv2(tmp_path, h, w, inp, code, c):
    img = random_u8(h, w, c)
    got = convert_npy(tmp_path, img, "gray", inp=inp)
    d = max_diff(got, cv2.cvtColor(img, code))
    _note("rgb->gray vs cv2", d)
    assert d == 0


def test_round_trip_rgb_nv12_rgb_is_close(tmp_path):
    h, w = 96, 130
    img = cv2.GaussianBlur(smooth_rgb(h, w), (7, 7), 2)
    src, mid, out = tmp_path / "a.npy", tmp_path / "b.yuv", tmp_path / "c.npy"
    np.save(src, img)
    _run(["convert", src, "--format", "nv12", "-o", mid])
    _run(["convert", mid, "--input", f"nv12:{w}x{h}", "--format", "rgb", "-o", out])
    d = max_diff(np.load(out), img)
    _note("rgb->nv12->rgb round trip (blurred)", d)
    assert d <= 8  # chroma subsampling of a blurred image (6 measured)


# ---------------------------------------------------------------------------
# Reorders, grey, YUV -> YUV.

@pytest.mark.parametrize("h,w", ODD_SIZES + [(64, 64)])
def test_reorders_match_cv2(tmp_path, h, w):
    rgb, rgba, gray = random_u8(h, w, 3), random_u8(h, w, 4), random_u8(h, w)
    cases = [
        (rgb, None, "bgr", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)),
        (rgb, None, "rgba", cv2.cvtColor(rgb, cv2.COLOR_RGB2RGBA)),
        (rgb, None, "bgra", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGRA)),
        (rgba, None, "bgr", cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGR)),
        (rgba, None, "bgra", cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGRA)),
        (rgba, None, "rgb", cv2.cvtColor(rgba, cv2.COLOR_RGBA2RGB)),
        (rgba, None, "argb", rgba[..., [3, 0, 1, 2]]),
        (rgb, "bgr", "rgb", cv2.cvtColor(rgb, cv2.COLOR_BGR2RGB)),
        (gray, None, "rgb", cv2.cvtColor(gray, cv2.COLOR_GRAY2RGB)),
        (gray, None, "bgra", cv2.cvtColor(gray, cv2.COLOR_GRAY2BGRA)),
    ]
    for src, inp, fmt, want in cases:
        d = max_diff(convert_npy(tmp_path, src, fmt, inp=inp), want)
        _note("reorders vs cv2", d)
        assert d == 0, (inp, fmt)


@pytest.mark.parametrize("h,w", [(2, 2), (6, 10), (34, 64)])
def test_yuv_to_gray_is_the_y_plane(tmp_path, h, w):
    yuv = random_u8(h * 3 // 2, w)
    got = convert_raw(tmp_path, yuv, "nv12", w, h, "gray", out_ext=".npy")
    assert max_diff(got, cv2.cvtColor(yuv, cv2.COLOR_YUV2GRAY_NV12)) == 0


@pytest.mark.parametrize("h,w", [(2, 2), (5, 7), (34, 66)])
def test_yuv_to_yuv_never_goes_through_rgb(tmp_path, h, w):
    ws, ch = w + (w & 1), (h + 1) // 2
    buf = random_u8(ws * h + ws * ch)
    y, u, v = nv12_planes(buf, h, w)
    i420 = convert_raw(tmp_path, buf, "nv12", w, h, "i420")
    y2, u2, v2 = i420_planes(i420, h, w)
    assert (y2 == y).all() and (u2 == u).all() and (v2 == v).all()
    nv21 = convert_raw(tmp_path, buf, "nv12", w, h, "nv21")
    y3, v3, u3 = nv12_planes(nv21, h, w)
    assert (y3 == y).all() and (u3 == u).all() and (v3 == v).all()
    # 4:4:4 replicates each sample; back to 4:2:0 averages four equal ones.
    yuv444 = convert_raw(tmp_path, buf, "nv12", w, h, "yuv444sp")
    uv = yuv444[w * h:].reshape(h, w, 2)  # 4:4:4 rows are not even-rounded
    assert (uv[..., 0] == up2(u, h, w)).all() and (uv[..., 1] == up2(v, h, w)).all()
    back = convert_raw(tmp_path, yuv444, "yuv444sp", w, h, "nv12")
    for a, b in zip(nv12_planes(back, h, w), (y, u, v)):
        assert max_diff(a, b) == 0
    # YUYV gets each pair's chroma as the rounded mean of the two rows.
    yuyv = convert_raw(tmp_path, buf, "nv12", w, h, "yuyv")
    rows = yuyv.reshape(h, -1)
    assert (rows[:, 1::4][:, :(w + 1) // 2] == np.repeat(u, 2, 0)[:h]).all()


# ---------------------------------------------------------------------------
# make-border.

BORDER_TYPES = {
    "constant": cv2.BORDER_CONSTANT, "replicate": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT, "reflect101": cv2.BORDER_REFLECT_101,
}
MARGINS = [(0, 0, 0, 0), (1, 2, 3, 4), (2, 0, 0, 2), (7, 9, 11, 13), (40, 33, 50, 27)]


def make_border(tmp_path, arr, margins, btype, value=None, raw=None):
    """Packed .npy in and out, or (raw = "fmt:WxH") raw bytes in and the
    flattened buffer of the output .npy (a 2-D (rows, width_stride) array
    for planar/semi-planar YUV) out."""
    src = tmp_path / ("in.yuv" if raw else "in.npy")
    dst = tmp_path / "out.npy"
    if raw:
        src.write_bytes(np.ascontiguousarray(arr).tobytes())
    else:
        np.save(src, np.ascontiguousarray(arr))
    args = ["make-border", src, "--margins", ",".join(map(str, margins)),
            "--border-type", btype, "-o", dst]
    if value is not None:
        args += ["--value", ",".join(repr(float(v)) for v in value)]
    if raw:
        args += ["--input", raw]
    _run(args)
    out = np.load(dst)
    return out.ravel() if raw else out


@pytest.mark.parametrize("btype", sorted(BORDER_TYPES))
@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (3, 2), (5, 7), (16, 31)])
@pytest.mark.parametrize("c", [1, 3, 4])
def test_copy_make_border_matches_cv2(tmp_path, btype, shape, c):
    img = random_u8(*shape, c) if c > 1 else random_u8(*shape)
    value = (12.5, 200.7, -3.0, 300.0)  # rounds to 12, 201, 0, 255 as cv::Scalar
    for t, b, l, r in MARGINS:
        got = make_border(tmp_path, img, (t, b, l, r), btype, value)
        want = cv2.copyMakeBorder(img, t, b, l, r, BORDER_TYPES[btype], value=value)
        d = max_diff(got, want)
        _note(f"copyMakeBorder {btype}", d)
        assert d == 0, (btype, shape, c, (t, b, l, r))


@pytest.mark.parametrize("btype", sorted(BORDER_TYPES))
@pytest.mark.parametrize("fmt", ["nv12", "i420"])
def test_yuv420_border_is_planewise_cv2(tmp_path, btype, fmt):
    h, w = 10, 14
    t, b, l, r = 4, 6, 2, 8
    ws, ch, cw = w, h // 2, w // 2
    buf = random_u8(ws * h + ws * ch)
    value = (16.0, 100.0, 200.0, 0.0)
    got = make_border(tmp_path, buf, (t, b, l, r), btype, value,
                      raw=f"{fmt}:{w}x{h}")
    H, W = h + t + b, w + l + r
    kind = BORDER_TYPES[btype]
    y = cv2.copyMakeBorder(buf[:w * h].reshape(h, w), t, b, l, r, kind, value=value[:1])
    assert max_diff(got[:W * H].reshape(H, W), y) == 0
    m = (t // 2, b // 2, l // 2, r // 2)
    if fmt == "nv12":
        uv = buf[w * h:].reshape(ch, cw, 2)
        want = cv2.copyMakeBorder(uv, *m, kind, value=value[1:3])
        assert max_diff(got[W * H:].reshape(H // 2, W // 2, 2), want) == 0
    else:
        u = buf[w * h:w * h + cw * ch].reshape(ch, cw)
        v = buf[w * h + cw * ch:].reshape(ch, cw)
        n = (W // 2) * (H // 2)
        wu = cv2.copyMakeBorder(u, *m, kind, value=value[1:2])
        wv = cv2.copyMakeBorder(v, *m, kind, value=value[2:3])
        assert max_diff(got[W * H:W * H + n].reshape(H // 2, W // 2), wu) == 0
        assert max_diff(got[W * H + n:].reshape(H // 2, W // 2), wv) == 0
    _note(f"copyMakeBorder {fmt} {btype}", 0)


def test_odd_margins_on_420_are_refused(tmp_path):
    src = tmp_path / "in.yuv"
    src.write_bytes(bytes(6 * 4 * 3 // 2))
    res = subprocess.run([str(DVPPCTL), "make-border", str(src), "--input", "nv12:6x4",
                          "--margins", "1,0,0,0", "--border-type", "constant",
                          "-o", str(tmp_path / "o.npy")], capture_output=True, text=True)
    assert res.returncode != 0
    assert "even" in res.stderr
