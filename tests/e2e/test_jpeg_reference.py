"""JPEG decode against the real references, through the real dvppctl binary.

- RGB output is bit-identical to djpeg (libjpeg-turbo-progs) with the same
  DCT method, upsampling and scaling, on libjpeg-turbo's test images, the
  synthetic fixtures and real phone photos from Debian packages.
- YUV output equals libjpeg's raw component planes, read independently
  through TurboJPEG (libturbojpeg0, tjDecompressToYUV2).
- EXIF orientation equals Pillow's ImageOps.exif_transpose; CMYK equals
  Pillow's convert('RGB').

Run with Debian's /usr/bin/python3 (numpy, Pillow). Inputs: libjpeg-turbo's
test images in the tree (tests/data/corpus/libjpeg-turbo) and what `make
test-data` fetches into .cache/testdata; without the latter, the tests that
need it skip and say so (and fail the run when CI is set: conftest.py).
"""
import ctypes
import ctypes.util
import glob
import io
import json
import os
import subprocess

import numpy as np
import pytest
from PIL import Image, ImageFile, ImageOps

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")
CORPUS_DIR = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo")
DATA = os.path.join(ROOT, ".cache", "testdata")
NO_DATA = f"no test data in {DATA} (run tests/tools/fetch-test-data, or make test-data)"
needs_data = pytest.mark.skipif(not os.path.isdir(DATA), reason=NO_DATA)


def corpus(name):
    return os.path.join(CORPUS_DIR, name)


def data_files(paths, what):
    """@paths (files of .cache/testdata) as test parameters. When there are
    none, one parameter that skips and says why, so that a missing download
    shows as a skip with a reason (never as an empty parameter set, which
    pytest cannot even name, or as tests that silently vanish)."""
    if paths:
        return paths
    why = NO_DATA if not os.path.isdir(DATA) else \
        f"no {what} in {DATA} (tests/tools/fetch-test-data --force)"
    return [pytest.param(None, marks=pytest.mark.skip(reason=why), id=f"no-{what}")]


CORPUS = sorted(glob.glob(os.path.join(CORPUS_DIR, "test*.jpg")))
FIXTURES = sorted(f for f in glob.glob(os.path.join(DATA, "fixtures", "*.jpg"))
                  if not os.path.basename(f).startswith(("cmyk", "truncated")))
PHOTOS = sorted(glob.glob(os.path.join(DATA, "photos", "*.jp*g")) +
                glob.glob(os.path.join(DATA, "photos", "*.JPG")))
SKIMAGE = sorted(f for f in glob.glob(os.path.join(DATA, "skimage", "*.jpg"))
                 if "truncated" not in f)
AFL = sorted(glob.glob(os.path.join(DATA, "afl", "*.jpg")))
FETCHED = FIXTURES + SKIMAGE + AFL

pytestmark = pytest.mark.skipif(not os.path.exists(DVPPCTL),
                                reason="dvppctl not built (make)")


def test_corpus_present():
    """The in-tree corpus is part of the repository: it is always there."""
    names = sorted(os.path.basename(p) for p in CORPUS)
    assert names == ["testimgari.jpg", "testimgint.jpg", "testorig.jpg"], CORPUS_DIR
    assert os.path.isfile(corpus("monkey12.jpg")), CORPUS_DIR


@needs_data
def test_inputs_present():
    """The reference suite is only meaningful with its data: a partial
    download fails loudly."""
    assert len(PHOTOS) >= 8, "run tests/tools/fetch-test-data --force"
    assert len(FIXTURES) >= 25 and len(SKIMAGE) >= 3 and AFL


def dvppctl(*args, check=True):
    r = subprocess.run([DVPPCTL, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"dvppctl {' '.join(args)}: rc={r.returncode} {r.stderr}")
    return r


def ours(tmp_path, path, *args, fmt="rgb"):
    out = str(tmp_path / "out.npy")
    # Fixtures with 101 and 120 scans exceed the default scan limit on
    # purpose; the references decode them, so raise it here.
    dvppctl("decode", path, "--format", fmt, "--max-scans", "1000", "-o", out, *args)
    return np.load(out)


def djpeg(path, *args):
    """djpeg -ppm/-pnm output as an (H, W, 3) or (H, W) array."""
    data = subprocess.run(["djpeg", *args, "-pnm", path], capture_output=True,
                          check=True).stdout
    # Header: magic, width, height, maxval, then exactly one whitespace byte
    # (pixel data may itself start with bytes that look like whitespace).
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    magic, w, h = fields[0], int(fields[1]), int(fields[2])
    pix = data[pos + 1:]
    if magic == b"P6":
        return np.frombuffer(pix, np.uint8, w * h * 3).reshape(h, w, 3)
    return np.frombuffer(pix, np.uint8, w * h).reshape(h, w)


def same(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    diff = np.argwhere(a != b)
    assert diff.size == 0, f"{len(diff)} pixels differ, first at {diff[0]}"


DJPEG_CASES = [
    ((), ()),
    (("-scale", "1/2"), ("--scale", "4")),
    (("-scale", "1/4"), ("--scale", "2")),
    (("-scale", "1/8"), ("--scale", "1")),
    (("-scale", "3/8"), ("--scale", "3")),
    (("-scale", "7/8"), ("--scale", "7")),
    (("-dct", "fast"), ("--fast-dct",)),
    (("-nosmooth",), ("--nosmooth",)),
]


@pytest.mark.parametrize("path", CORPUS + data_files(FETCHED, "fixtures"),
                         ids=os.path.basename)
@pytest.mark.parametrize("case", DJPEG_CASES, ids=lambda c: " ".join(c[0]) or "default")
def test_rgb_bit_identical_to_djpeg(tmp_path, path, case):
    dj, dv = case
    same(ours(tmp_path, path, "--no-orient", *dv), djpeg(path, "-rgb", *dj))


@pytest.mark.parametrize("path", CORPUS + data_files(SKIMAGE, "skimage"), ids=os.path.basename)
def test_gray_bit_identical_to_djpeg_grayscale(tmp_path, path):
    same(ours(tmp_path, path, "--no-orient", fmt="gray"), djpeg(path, "-grayscale"))


@pytest.mark.parametrize("path", data_files(PHOTOS, "photos"), ids=os.path.basename)
@pytest.mark.parametrize("case", [DJPEG_CASES[0], DJPEG_CASES[2], DJPEG_CASES[7]],
                         ids=["default", "scale1/4", "nosmooth"])
def test_real_photos_bit_identical_to_djpeg(tmp_path, path, case):
    dj, dv = case
    same(ours(tmp_path, path, "--no-orient", *dv), djpeg(path, "-rgb", *dj))


@needs_data
def test_shrink_on_load_equals_djpeg_scale(tmp_path):
    photo = os.path.join(DATA, "photos", "photo1080.jpg")
    # 1920x1080 -> 224x224: 1/8 gives 240x135 (< 224 high), so 2/8 is the
    # smallest scale that keeps the later resize a downscale.
    got = ours(tmp_path, photo, "--shrink-on-load", "224x224")
    assert got.shape == (270, 480, 3)
    same(got, djpeg(photo, "-scale", "2/8"))


# --- raw YUV planes through TurboJPEG ----------------------------------------------

class TurboJPEG:
    """Minimal ctypes binding of TurboJPEG 2.1's YUV decode."""

    def __init__(self):
        name = ctypes.util.find_library("turbojpeg") or "libturbojpeg.so.0"
        self.lib = lib = ctypes.CDLL(name)
        lib.tjInitDecompress.restype = ctypes.c_void_p
        lib.tjDestroy.argtypes = [ctypes.c_void_p]
        lib.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong] + \
            [ctypes.POINTER(ctypes.c_int)] * 4
        lib.tjDecompressToYUV2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong,
                                           ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_int]
        lib.tjBufSizeYUV2.restype = ctypes.c_ulong

    def planes(self, path):
        data = open(path, "rb").read()
        h = self.lib.tjInitDecompress()
        try:
            w_, h_, s_, c_ = (ctypes.c_int() for _ in range(4))
            assert self.lib.tjDecompressHeader3(h, data, len(data), ctypes.byref(w_),
                                                ctypes.byref(h_), ctypes.byref(s_),
                                                ctypes.byref(c_)) == 0
            w, hh, ss = w_.value, h_.value, s_.value
            buf = ctypes.create_string_buffer(self.lib.tjBufSizeYUV2(w, 1, hh, ss))
            assert self.lib.tjDecompressToYUV2(h, data, len(data), buf, w, 1, hh, 0) == 0
        finally:
            self.lib.tjDestroy(h)
        a = np.frombuffer(buf.raw, np.uint8)
        out, off = [], 0
        # TJSAMP_444, 422, 420, GRAY, 440 -> (x, y) subsampling
        sx, sy = {0: (1, 1), 1: (2, 1), 2: (2, 2), 3: (1, 1), 4: (1, 2)}[ss]
        for i in range(1 if ss == 3 else 3):
            pw = self.lib.tjPlaneWidth(i, w, ss)
            ph = self.lib.tjPlaneHeight(i, hh, ss)
            cw, ch = (w, hh) if i == 0 else (-(-w // sx), -(-hh // sy))
            out.append(a[off:off + pw * ph].reshape(ph, pw)[:ch, :cw])
            off += pw * ph
        return out, ss


@pytest.fixture(scope="module")
def tj():
    return TurboJPEG()


def split_semiplanar(raw, w, h, chroma_rows, cw):
    """Y and the two interleaved chroma planes from the rows x width_stride
    .npy of a semi-planar image (full-width chroma rows span 2*stride)."""
    stride = raw.shape[1]
    flat = raw.reshape(-1)
    y = raw[:h, :w]
    cstride = stride if 2 * cw <= stride else 2 * stride
    uv = flat[stride * h:stride * h + cstride * chroma_rows].reshape(chroma_rows, cstride)
    return y, uv[:, 0:2 * cw:2], uv[:, 1:2 * cw:2]


RAW_FILES = CORPUS + data_files(
    [f for f in FIXTURES if "_411" not in f and "rgb_colorspace" not in f] +
    [f for f in PHOTOS if "photo1080" in f or "IMG_1054" in f or "d-debian" in f], "fixtures")


@pytest.mark.parametrize("path", RAW_FILES, ids=os.path.basename)
def test_yuv_equals_libjpeg_raw_planes(tmp_path, tj, path):
    planes, ss = tj.planes(path)
    h, w = planes[0].shape
    if ss == 3:  # grey: Y plane, chroma neutral
        raw = ours(tmp_path, path, "--no-orient", fmt="nv12")
        y, u, v = split_semiplanar(raw, w, h, (h + 1) // 2, (w + 1) // 2)
        same(y, planes[0])
        assert (u == 128).all() and (v == 128).all()
        return
    fmt = {0: "yuv444sp", 1: "yuv422sp", 2: "nv12", 4: "yuv440sp"}[ss]
    raw = ours(tmp_path, path, "--no-orient", fmt=fmt)
    ch, cw = planes[1].shape
    y, u, v = split_semiplanar(raw, w, h, ch, cw)
    same(y, planes[0])
    same(u, planes[1])
    same(v, planes[2])
    if ss == 2:  # 4:2:0 also as planar I420 and V-first NV21
        i420 = ours(tmp_path, path, "--no-orient", fmt="i420").reshape(-1)
        ws = w + (w & 1)
        same(i420[:ws * h].reshape(h, ws)[:, :w], planes[0])
        cs = ws // 2
        chroma = i420[ws * h:]
        same(chroma[:cs * ch].reshape(ch, cs)[:, :cw], planes[1])
        same(chroma[cs * ch:2 * cs * ch].reshape(ch, cs)[:, :cw], planes[2])
        nv21 = ours(tmp_path, path, "--no-orient", fmt="nv21")
        _, vv, uu = split_semiplanar(nv21, w, h, ch, cw)
        same(uu, planes[1])
        same(vv, planes[2])


def test_stride_alignment_128x16(tmp_path, tj):
    path = corpus("testorig.jpg")  # 227x149
    planes, _ = tj.planes(path)
    raw = ours(tmp_path, path, "--align", "128x16", fmt="nv12")
    assert raw.shape == (160 + 80, 256)
    same(raw[:149, :227], planes[0])
    same(raw[160:160 + 75, 0:2 * 114:2], planes[1])
    assert (raw[:, 228:] == 0).all() and (raw[149:160] == 0).all()


# --- orientation, CMYK, bad input -----------------------------------------------------

ORIENTED = data_files(sorted(glob.glob(os.path.join(DATA, "fixtures", "orient_*.jpg"))) +
                      sorted(glob.glob(os.path.join(DATA, "photos", "IMG_20200124_231153.jpg"))),
                      "orientation-fixtures")


@pytest.mark.parametrize("path", ORIENTED, ids=os.path.basename)
def test_exif_orientation_matches_pillow(tmp_path, path):
    with Image.open(path) as im:
        ref = np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
    same(ours(tmp_path, path), ref)
    # and the raw stored pixels when orientation is turned off
    with Image.open(path) as im:
        same(ours(tmp_path, path, "--no-orient"), np.asarray(im.convert("RGB")))


@needs_data
def test_real_photo_orientation_3_is_rotated(tmp_path):
    path = os.path.join(DATA, "photos", "IMG_20200124_231153.jpg")
    info = json.loads(dvppctl("info", path).stdout)
    assert info["orientation"] == 3
    a = ours(tmp_path, path, "--scale", "1")
    b = ours(tmp_path, path, "--scale", "1", "--no-orient")
    same(a, b[::-1, ::-1])


@needs_data
def test_cmyk_matches_pillow(tmp_path):
    path = os.path.join(DATA, "fixtures", "cmyk.jpg")
    with Image.open(path) as im:
        assert im.mode == "CMYK"
        ref = np.asarray(im.convert("RGB"))
    same(ours(tmp_path, path), ref)


def test_12bit_refused_with_clear_error(tmp_path):
    r = dvppctl("decode", corpus("monkey12.jpg"), "-o", str(tmp_path / "x.npy"), check=False)
    assert r.returncode == 1
    assert "12-bit JPEG" in r.stderr and "EUNSUPPORTED" in r.stderr


def test_arithmetic_native_and_ascend310(tmp_path):
    path = corpus("testimgari.jpg")
    dvppctl("decode", path, "--format", "nv12", "-o", str(tmp_path / "a.yuv"))
    r = dvppctl("decode", path, "--format", "nv12", "--profile", "ascend310",
                "-o", str(tmp_path / "b.yuv"), check=False)
    assert r.returncode == 1 and "arithmetic coding is not supported" in r.stderr


def test_ascend310_nv12_buffer_size(tmp_path):
    path = corpus("testorig.jpg")
    out = tmp_path / "a.yuv"
    dvppctl("decode", path, "--format", "nv12", "--profile", "ascend310", "-o", str(out))
    assert out.stat().st_size == 256 * 160 * 3 // 2


@needs_data
@pytest.mark.parametrize("name", ["truncated.jpg"])
def test_skimage_truncated_is_an_error(tmp_path, name):
    r = dvppctl("decode", os.path.join(DATA, "skimage", name), "-o",
                str(tmp_path / "x.npy"), check=False)
    assert r.returncode == 1 and "ECORRUPT" in r.stderr


@needs_data
def test_truncated_strict_and_partial(tmp_path, monkeypatch):
    path = os.path.join(DATA, "fixtures", "truncated_420.jpg")
    r = dvppctl("decode", path, "-o", str(tmp_path / "x.npy"), check=False)
    assert r.returncode == 1 and "Premature end of JPEG file" in r.stderr
    got = ours(tmp_path, path, "--allow-partial")
    # Pillow also decodes what is there once told to. The switch is a
    # process-wide global: monkeypatch puts it back whatever happens here,
    # so no later test decodes with it on.
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    with Image.open(path) as im:
        ref = np.asarray(im.convert("RGB"))
    same(got, ref)


@needs_data
def test_info_matches_fixture_manifest():
    manifest = json.load(open(os.path.join(DATA, "fixtures", "manifest.json")))["files"]
    for name, want in manifest.items():
        if not name.endswith(".jpg"):
            continue
        got = json.loads(dvppctl("info", os.path.join(DATA, "fixtures", name)).stdout)
        for key in ("width", "height", "sampling", "progressive", "arithmetic",
                    "scans", "orientation", "colorspace", "components"):
            if key in want:
                assert got[key] == want[key], (name, key, got[key], want[key])


@needs_data
def test_jpg_output_roundtrip_psnr(tmp_path):
    """decode -> .jpg at q95 -> decode: PSNR >= 40 dB against the first decode."""
    src = os.path.join(DATA, "photos", "photo1080.jpg")
    first = ours(tmp_path, src)
    out = str(tmp_path / "re.jpg")
    dvppctl("decode", src, "--format", "rgb", "--quality", "95", "-o", out)
    with Image.open(out) as im:
        again = np.asarray(im.convert("RGB")).astype(np.float64)
    mse = np.mean((first.astype(np.float64) - again) ** 2)
    assert 10 * np.log10(255 ** 2 / mse) >= 40.0
    buf = io.BytesIO(open(out, "rb").read())
    assert Image.open(buf).format == "JPEG"
