"""dvppctl resize compared with OpenCV, Pillow and TensorFlow 1's legacy rules.

Each case writes a uint8 array to IN.npy ((H,W,3) rgb, (H,W,4) rgba,
(H,W) gray), runs

    dvppctl resize IN.npy --size WxH --interp I --parity P -o OUT.npy

and compares OUT.npy with the library the parity names:

  cv2  cv2.resize(img, (W, H), interpolation=INTER_NEAREST | INTER_LINEAR |
       INTER_CUBIC | INTER_AREA), OpenCV 4.6 with cv2.setNumThreads(1).
  pil  Image.resize((W, H), NEAREST | BILINEAR | BICUBIC | LANCZOS | BOX),
       Pillow 9.4. Pillow premultiplies alpha when it filters an RGBA image
       (it converts to 'RGBa' and back); dvppd's pil parity does the same in
       the VPC layer (the engine itself treats channels alike), so RGBA is
       compared with Pillow's RGBA resize directly.
  tf   TensorFlow is not packaged in Debian, so TF1's legacy kernels
       (align_corners=False, half_pixel_centers=False) are re-implemented
       below in numpy, in float32 exactly as resize_bilinear_op.cc and
       resize_nearest_neighbor_op.cc compute them:
         scale = in_size / float(out_size)            (float32)
         in    = out_index * scale                    (float32)
         bilinear: lower = max(floor(in), 0), upper = min(ceil(in), in - 1),
                   lerp = in - floor(in);
                   top    = tl + (tr - tl) * x_lerp
                   bottom = bl + (br - bl) * x_lerp
                   out    = top + (bottom - top) * y_lerp
                   then rounded half to even (tf.round) and clipped to u8,
                   since TF returns float32 and dvppd returns u8
         nearest:  min(floor(in), in_size - 1)

The engine's contract is max |diff| <= 1; every mode is bit-exact today, so
every case asserts 0. The worst difference seen per mode is printed at the
end of the module's run.

Sizes cover downscales and upscales, odd sizes, 1xN and Nx1 sources and
destinations, one-pixel images, 1/32 and 16x factors, one axis at a time,
exact 1/2 and 1/3 (OpenCV's integer-factor area path), with 1, 3 and 4
channels, plus a real photo when the test data is fetched.

Run with Debian's interpreter (/usr/bin/python3: numpy, Pillow, OpenCV).
Environment: DVPP_BUILD (default "build", relative to the repository root)
locates dvppctl; the module is skipped when that dvppctl has no resize
command. DVPP_TESTDATA (default ".cache/testdata") locates the photo.
"""

import os
import subprocess
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[2]


def _from_repo(value):
    path = Path(value)
    return path if path.is_absolute() else REPO / path


BUILD = _from_repo(os.environ.get("DVPP_BUILD", "build"))
DVPPCTL = BUILD / "dvppctl"
PHOTO = _from_repo(os.environ.get("DVPP_TESTDATA", ".cache/testdata")) / "photos" / "photo1080.jpg"

cv2.setNumThreads(1)

CV2 = {
    "nearest": cv2.INTER_NEAREST,
    "bilinear": cv2.INTER_LINEAR,
    "bicubic": cv2.INTER_CUBIC,
    "area": cv2.INTER_AREA,
}
PIL = {
    "nearest": Image.NEAREST,
    "bilinear": Image.BILINEAR,
    "bicubic": Image.BICUBIC,
    "lanczos": Image.LANCZOS,
    "box": Image.BOX,
}
MODES = ([("cv2", m) for m in CV2] + [("pil", m) for m in PIL]
         + [("tf", "nearest"), ("tf", "bilinear")])

# Largest |diff| each mode may show; 0 = bit-exact (all of them today).
ALLOWED = {mode: 0 for mode in MODES}

# (source W, H) -> (destination W, H)
SIZES = [
    ((53, 37), (20, 11)),     # down, odd sizes
    ((20, 11), (53, 37)),     # up, odd sizes
    ((64, 48), (32, 24)),     # exactly 1/2
    ((90, 60), (30, 20)),     # exactly 1/3
    ((97, 61), (96, 60)),     # slightly down
    ((1, 17), (5, 9)),        # 1xN source
    ((17, 1), (9, 5)),        # Nx1 source
    ((23, 19), (1, 6)),       # 1xN destination
    ((23, 19), (6, 1)),       # Nx1 destination
    ((13, 9), (1, 1)),        # to one pixel
    ((1, 1), (7, 3)),         # from one pixel
    ((320, 96), (10, 3)),     # 1/32
    ((7, 5), (112, 80)),      # 16x
    ((224, 160), (224, 100)), # height only
    ((100, 224), (61, 224)),  # width only
    ((641, 479), (224, 224)), # a typical model input
]
CHANNELS = (1, 3, 4)

WORST = {}


def _has_resize():
    if not DVPPCTL.exists():
        return False
    out = subprocess.run([str(DVPPCTL), "--help"], capture_output=True, text=True)
    return "resize" in out.stdout + out.stderr


pytestmark = pytest.mark.skipif(
    not _has_resize(), reason=f"{DVPPCTL} has no resize command")


@pytest.fixture(scope="module", autouse=True)
def worst_table(request):
    """Print the worst difference of every mode once the module is done."""
    yield
    plugins = request.config.pluginmanager
    reporter = plugins.get_plugin("terminalreporter")
    capture = plugins.get_plugin("capturemanager")
    lines = ["", "resize parity: worst |diff| per mode (cases)"]
    for mode in MODES:
        if mode in WORST:
            diff, cases, where = WORST[mode]
            lines.append(f"  {mode[0]:3s} {mode[1]:8s} {diff}  ({cases} cases)"
                         + (f"  worst at {where}" if diff else ""))
    if reporter is None or capture is None:
        print("\n".join(lines))
        return
    with capture.global_and_fixture_disabled():
        for line in lines:
            reporter.write_line(line)


# --- references ---------------------------------------------------------------

def _tf_axis(n_in, n_out):
    scale = np.float32(n_in) / np.float32(n_out)
    pos = np.arange(n_out, dtype=np.float32) * scale
    floor = np.floor(pos)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(pos).astype(np.int64), n_in - 1)
    return lower, upper, (pos - floor).astype(np.float32)


def tf_legacy_bilinear(img, w, h):
    f = img.astype(np.float32)
    if f.ndim == 2:
        f = f[..., None]
    x0, x1, xl = _tf_axis(img.shape[1], w)
    y0, y1, yl = _tf_axis(img.shape[0], h)
    xl = xl[None, :, None]
    top = f[y0][:, x0] + (f[y0][:, x1] - f[y0][:, x0]) * xl
    bottom = f[y1][:, x0] + (f[y1][:, x1] - f[y1][:, x0]) * xl
    out = top + (bottom - top) * yl[:, None, None]
    out = np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return out[..., 0] if img.ndim == 2 else out


def tf_legacy_nearest(img, w, h):
    def index(n_in, n_out):
        scale = np.float32(n_in) / np.float32(n_out)
        pos = np.floor(np.arange(n_out, dtype=np.float32) * scale)
        return np.minimum(pos.astype(np.int64), n_in - 1)

    return img[index(img.shape[0], h)][:, index(img.shape[1], w)]


def _pil_resize(img, w, h, interp):
    return np.asarray(Image.fromarray(img).resize((w, h), PIL[interp]))


def reference(parity, interp, img, w, h):
    if parity == "cv2":
        return cv2.resize(img, (w, h), interpolation=CV2[interp])
    if parity == "pil":
        return _pil_resize(img, w, h, interp)
    if interp == "bilinear":
        return tf_legacy_bilinear(img, w, h)
    return tf_legacy_nearest(img, w, h)


# --- driving dvppctl --------------------------------------------------------------

def dvpp_resize(tmp_path, img, w, h, parity, interp):
    src, dst = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(src, img)
    run = subprocess.run(
        [str(DVPPCTL), "resize", str(src), "--size", f"{w}x{h}",
         "--interp", interp, "--parity", parity, "-o", str(dst)],
        capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = np.load(dst)
    assert out.dtype == np.uint8
    assert out.shape == (h, w) + img.shape[2:]
    return out


def _record(mode, diff, where):
    old = WORST.get(mode, (0, 0, ""))
    if diff > old[0]:
        WORST[mode] = (diff, old[1] + 1, where)
    else:
        WORST[mode] = (old[0], old[1] + 1, old[2])


def _image(rng, w, h, cn):
    shape = (h, w) if cn == 1 else (h, w, cn)
    img = rng.integers(0, 256, shape, dtype=np.uint8)
    # Flat and saturated patches so clamping and exact halves occur.
    img[: h // 3, : w // 3] = 255
    img[h - h // 4:, w - w // 4:] = 0
    return img


def _check(tmp_path, parity, interp, img, w, h):
    got = dvpp_resize(tmp_path, img, w, h, parity, interp)
    want = reference(parity, interp, img, w, h)
    diff = int(np.abs(got.astype(np.int16) - want.astype(np.int16)).max())
    where = f"{img.shape[1]}x{img.shape[0]}x{1 if img.ndim == 2 else img.shape[2]}->{w}x{h}"
    _record((parity, interp), diff, where)
    assert diff <= ALLOWED[(parity, interp)], \
        f"{parity}/{interp} {where}: max |diff| {diff}"


@pytest.mark.parametrize("parity,interp", MODES, ids=[f"{p}-{i}" for p, i in MODES])
def test_parity(tmp_path, parity, interp):
    rng = np.random.default_rng(zlib.crc32(f"{parity}/{interp}".encode()))
    for (sw, sh), (dw, dh) in SIZES:
        for cn in CHANNELS:
            _check(tmp_path, parity, interp, _image(rng, sw, sh, cn), dw, dh)


@pytest.mark.skipif(not PHOTO.exists(), reason="no photo1080.jpg (make test-data)")
@pytest.mark.parametrize("parity,interp", MODES, ids=[f"{p}-{i}" for p, i in MODES])
def test_photo_to_224(tmp_path, parity, interp):
    img = np.asarray(Image.open(PHOTO).convert("RGB"))
    _check(tmp_path, parity, interp, img, 224, 224)
