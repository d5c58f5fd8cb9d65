"""The planner's byte-neutral fusions (device/dvpp_pipeline_plan.c
plan_fusions), through a real dvppd's HTTP API, against the same daemon
with DVPP_NO_FUSE=1 (every op run as written) and against Pillow 9.4:

  - a STRETCH resize followed by a crop computes only the pixels the crop
    keeps (dvpp_resize_plan_window), and as the first op on a JPEG the
    decode is limited to the source rectangle those pixels read: the
    answer equals PIL's img.resize((w, h), X).crop(box) for every pil
    filter (NEAREST, BILINEAR, BICUBIC, BOX, HAMMING, LANCZOS), down and
    up, crops on every border, whole and one pixel, and equals the unfused
    daemon's bytes for cv2 and tf parities too;
  - a crop as the first op on a JPEG (RandomResizedCrop's crop -> resize)
    decodes only the crop: equal to PIL's crop().resize();
  - JPEG 4:4:4, 4:2:2, 4:2:0, grey, progressive, odd sizes, cjpeg 4:4:0 /
    4:1:1 when cjpeg is installed, PNG (no decode window), a client's own
    decode.roi, EXIF orientation applied (no decode window) or ignored,
    the ImageNet eval chain's float32 tensor.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_fuse.py
"""
import io
import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, free_port, stop_daemon  # noqa: E402

CORPUS = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo")
PPM = os.path.join(CORPUS, "testorig.ppm")  # a real photo, 227x149
CJPEG = shutil.which("cjpeg")
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]

FILTERS = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR,
           "bicubic": Image.BICUBIC, "box": Image.BOX, "hamming": Image.HAMMING,
           "lanczos": Image.LANCZOS}


def _daemon(tmp_path_factory, name, no_fuse):
    port = free_port()
    sd = daemon_util.sock_dir(name)
    sock = os.path.join(sd, "dvppd.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2},
           "socket": {"path": sock, "mode": "0600"}}
    old = os.environ.get("DVPP_NO_FUSE")
    if no_fuse:
        os.environ["DVPP_NO_FUSE"] = "1"
    else:
        os.environ.pop("DVPP_NO_FUSE", None)
    try:
        return daemon_util.start_daemon(str(tmp_path_factory.mktemp(name)), cfg, name, port,
                                        sock=sock, sock_dir=sd)
    finally:
        if old is None:
            os.environ.pop("DVPP_NO_FUSE", None)
        else:
            os.environ["DVPP_NO_FUSE"] = old


@pytest.fixture(scope="module")
def fused(tmp_path_factory):
    d = _daemon(tmp_path_factory, "fused", False)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    d = _daemon(tmp_path_factory, "plain", True)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def photo():
    """The real photo at an odd, larger size (641x423: iMCU rows and
    columns that do not divide it)."""
    return Image.open(PPM).convert("RGB").resize((641, 423), Image.BICUBIC)


def jpeg(img, **kw):
    b = io.BytesIO()
    img.save(b, "JPEG", quality=90, **kw)
    return b.getvalue()


def png(img):
    b = io.BytesIO()
    img.save(b, "PNG")
    return b.getvalue()


def cjpeg(img, sample, tmp_path):
    src = tmp_path / "in.ppm"
    img.save(src)
    return subprocess.run([CJPEG, "-quality", "90", "-sample", sample, str(src)],
                          capture_output=True, check=True).stdout


def sources(photo, tmp_path):
    """(name, bytes) of every kind of input the fusions meet."""
    out = [("444", jpeg(photo, subsampling=0)), ("422", jpeg(photo, subsampling=1)),
           ("420", jpeg(photo, subsampling=2)),
           ("prog420", jpeg(photo, subsampling=2, progressive=True)),
           ("prog444", jpeg(photo, subsampling=0, progressive=True)),
           ("odd420", jpeg(photo.crop((3, 5, 3 + 317, 5 + 199)), subsampling=2)),
           ("png", png(photo.crop((0, 0, 300, 200))))]
    if CJPEG:
        out += [("440", cjpeg(photo, "1x2", tmp_path)), ("411", cjpeg(photo, "4x1", tmp_path))]
    return out


def post(srv, body, spec):
    r = srv.post("/v1/preprocess", body, {"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 200, r
    return r.npy()


def u8_spec(ops, decode=None):
    spec = {"decode": dict({"format": "rgb", "orient": False, "shrink_on_load": False},
                           **(decode or {})),
            "ops": ops, "normalize": {"dtype": "uint8", "layout": "nhwc", "scale": 1}}
    return spec


def resize(w, h, interp, parity="pil"):
    return {"resize": {"w": w, "h": h, "mode": "stretch", "interp": interp,
                       "parity": parity}}


def windows(w, h):
    """Crops of a w x h resize: every border, the whole, one pixel, inside."""
    return [(0, 0, w - 1, h - 1), (0, 0, w // 3, h // 2), (w - 1 - w // 4, h - 1 - h // 3,
                                                         w - 1, h - 1),
            (0, h // 3, w // 2, h - 1), (w // 2, 0, w - 1, h // 4),
            (w // 2, h // 2, w // 2, h // 2), (w // 5, h // 7, w - 1 - w // 6, h - 1 - h // 5)]


# (w, h) of the resize: down (the eval chain's shape), down strongly, up.
SIZES = [(455, 256), (97, 61), (1100, 707)]


@pytest.mark.parametrize("interp", list(FILTERS))
def test_resize_crop_equals_pil_and_unfused(fused, plain, photo, tmp_path, interp):
    for name, blob in sources(photo, tmp_path):
        img = Image.open(io.BytesIO(blob)).convert("RGB")
        for w, h in SIZES:
            full = np.asarray(img.resize((w, h), FILTERS[interp]))
            for box in windows(w, h):
                l, t, r, b = box
                spec = u8_spec([resize(w, h, interp), {"crop": list(box)}])
                got = post(fused, blob, spec)[0]
                ref = post(plain, blob, spec)[0]
                assert got.shape == (b - t + 1, r - l + 1, 3), (name, w, h, box)
                assert np.array_equal(got, ref), (name, interp, w, h, box)
                assert np.array_equal(got, full[t:b + 1, l:r + 1]), (name, interp, w, h, box)


@pytest.mark.parametrize("parity,interp", [("cv2", "nearest"), ("cv2", "bilinear"),
                                           ("cv2", "bicubic"), ("cv2", "area"),
                                           ("tf", "nearest"), ("tf", "bilinear")])
def test_resize_crop_other_parities_equal_unfused(fused, plain, photo, parity, interp):
    """cv2 (including its integer area path: 641x423 has no such factor,
    so a 2x case is added) and tf: the unfused daemon's bytes."""
    img = photo.crop((0, 0, 640, 422))
    blob = jpeg(img, subsampling=2)
    for w, h in SIZES + [(320, 211)]:
        for box in windows(w, h):
            spec = u8_spec([resize(w, h, interp, parity), {"crop": list(box)}])
            assert np.array_equal(post(fused, blob, spec), post(plain, blob, spec)), \
                (parity, interp, w, h, box)


@pytest.mark.parametrize("interp", list(FILTERS))
def test_first_crop_decodes_only_the_crop(fused, plain, photo, tmp_path, interp):
    """RandomResizedCrop's order: crop then resize; equal to PIL."""
    # fractions of the image: whole, corners and borders, one pixel, inside
    crops = [(0, 0, 1, 1), (0, 0, .16, .19), (.78, .71, 1, 1), (0, .47, .52, 1),
             (.5, 0, 1, .13), (.03, .02, .03, .02), (.16, .13, .62, .71)]
    for name, blob in sources(photo, tmp_path):
        img = Image.open(io.BytesIO(blob)).convert("RGB")
        for fl, ft, fr, fb in crops:
            l, t = int(fl * (img.width - 1)), int(ft * (img.height - 1))
            r, b = int(fr * (img.width - 1)), int(fb * (img.height - 1))
            spec = u8_spec([{"crop": [l, t, r, b]}, resize(224, 224, interp)])
            got = post(fused, blob, spec)[0]
            assert np.array_equal(got, post(plain, blob, spec)[0]), (name, interp, l, t)
            want = img.crop((l, t, r + 1, b + 1)).resize((224, 224), FILTERS[interp])
            assert np.array_equal(got, np.asarray(want)), (name, interp, l, t, r, b)


def test_client_decode_roi_still_works(fused, plain, photo):
    """decode.roi sent by the client: no decode window of the planner's,
    the resize + crop after it still fused and equal to PIL on the ROI."""
    blob = jpeg(photo, subsampling=2)
    img = Image.open(io.BytesIO(blob)).convert("RGB")
    for x, y, w, h in [(0, 0, 641, 423), (31, 17, 400, 300), (240, 122, 401, 301)]:
        roi = img.crop((x, y, x + w, y + h))
        for ops, want in [
                ([{"crop": [5, 7, 200, 150]}, resize(224, 224, "bilinear")],
                 roi.crop((5, 7, 201, 151)).resize((224, 224), Image.BILINEAR)),
                ([resize(300, 200, "bicubic"), {"crop": [38, 0, 261, 199]}],
                 roi.resize((300, 200), Image.BICUBIC).crop((38, 0, 262, 200)))]:
            spec = u8_spec(ops, {"roi": [x, y, x + w - 1, y + h - 1]})
            got = post(fused, blob, spec)[0]
            assert np.array_equal(got, post(plain, blob, spec)[0])
            assert np.array_equal(got, np.asarray(want)), (x, y, w, h, ops)


def exif_jpeg(img, orientation):
    ex = Image.Exif()
    ex[0x0112] = orientation
    return jpeg(img, exif=ex.tobytes())


@pytest.mark.parametrize("orientation", [1, 3, 6, 8])
def test_exif_orientation_applied_or_ignored(fused, plain, photo, orientation):
    """Orientation applied (no decode window unless it is 1) or ignored:
    the fused answers are the unfused ones and PIL's."""
    blob = exif_jpeg(photo, orientation)
    from PIL import ImageOps
    for orient in (True, False):
        img = Image.open(io.BytesIO(blob))
        img = (ImageOps.exif_transpose(img) if orient else img).convert("RGB")
        w, h = img.width // 2 + 1, img.height // 2 + 3
        box = (w // 4, h // 5, w - 1 - w // 3, h - 1)
        spec = u8_spec([resize(w, h, "bilinear"), {"crop": list(box)}], {"orient": orient})
        got = post(fused, blob, spec)[0]
        assert np.array_equal(got, post(plain, blob, spec)[0])
        want = img.resize((w, h), Image.BILINEAR).crop((box[0], box[1], box[2] + 1, box[3] + 1))
        assert np.array_equal(got, np.asarray(want)), (orientation, orient)
        spec = u8_spec([{"crop": list(box)}, resize(64, 48, "bicubic")], {"orient": orient})
        assert np.array_equal(post(fused, blob, spec), post(plain, blob, spec))


def test_eval_chain_float32_tensor(fused, plain, photo):
    """The ImageNet eval chain as dvpp.torch sends it, in float32 NCHW:
    the same bytes fused and unfused, within 1e-6 of
    Normalize(ToTensor(CenterCrop(Resize(img)))) computed in numpy."""
    big = photo.resize((1920, 1080), Image.BICUBIC)
    for sub in (0, 1, 2):
        blob = jpeg(big, subsampling=sub)
        spec = {"decode": {"format": "rgb", "orient": False, "shrink_on_load": False},
                "ops": [resize(455, 256, "bilinear"), {"crop": [115, 16, 338, 239]}],
                "normalize": {"mean": MEAN, "std": STD, "dtype": "float32",
                              "layout": "nchw"}}
        got = post(fused, blob, spec)
        assert got.dtype == np.float32 and got.shape == (1, 3, 224, 224)
        assert got.tobytes() == post(plain, blob, spec).tobytes()
        img = Image.open(io.BytesIO(blob)).convert("RGB")
        px = np.asarray(img.resize((455, 256), Image.BILINEAR).crop((115, 16, 339, 240)))
        want = ((px.astype(np.float32) / 255 - np.float32(MEAN)) / np.float32(STD))
        assert np.abs(got[0] - want.transpose(2, 0, 1)).max() <= 1e-6


def test_grey_jpeg(fused, plain, photo):
    blob = jpeg(photo.convert("L"))
    for fmt in ("rgb", "gray"):
        spec = {"decode": {"format": fmt, "orient": False, "shrink_on_load": False},
                "ops": [resize(300, 200, "lanczos"), {"crop": [0, 50, 299, 199]}],
                "normalize": {"dtype": "uint8", "layout": "nhwc", "scale": 1,
                              "channels": 1 if fmt == "gray" else 3}}
        got = post(fused, blob, spec)
        assert np.array_equal(got, post(plain, blob, spec)), fmt
        want = np.asarray(Image.open(io.BytesIO(blob)).convert(
            "RGB" if fmt == "rgb" else "L").resize((300, 200), Image.LANCZOS))[50:200]
        assert np.array_equal(got[0].reshape(want.shape), want), fmt
