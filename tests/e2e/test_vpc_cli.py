"""dvppctl's VPC commands end to end, against OpenCV where a reference exists.

Engine parity on raw arrays lives in test_resize_parity.py and
test_csc_parity.py; this file checks the chains users run: decode + resize
+ convert, the named resize modes and their printed geometry, crop, batch
crop, make-border and the ascend profile's refusals through the CLI.
Run with Debian's /usr/bin/python3 (numpy, OpenCV).
"""
import json
import os
import subprocess

import cv2
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")
DATA = os.path.join(ROOT, ".cache", "testdata")
PHOTO = os.path.join(DATA, "photos", "photo1080.jpg")
needs_photo = pytest.mark.skipif(not os.path.exists(PHOTO),
                                 reason="no photo1080.jpg in .cache/testdata (run tests/tools/fetch-test-data, or make test-data)")


def has_vpc():
    if not os.path.exists(DVPPCTL):
        return False
    r = subprocess.run([DVPPCTL, "help"], capture_output=True, text=True)
    return "resize IN" in r.stdout


pytestmark = pytest.mark.skipif(not has_vpc(), reason="dvppctl without VPC commands")


def run(*args, check=True):
    r = subprocess.run([DVPPCTL, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"dvppctl {' '.join(args)}: {r.stderr}")
    return r


def npy(tmp_path, name, arr):
    p = str(tmp_path / name)
    np.save(p, np.ascontiguousarray(arr))
    return p


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


@needs_photo
def test_jpeg_decode_resize_matches_cv2(tmp_path):
    out = str(tmp_path / "o.npy")
    run("resize", PHOTO, "--size", "224x224", "--interp", "bilinear",
        "--parity", "cv2", "--format", "bgr", "-o", out)
    ref = cv2.resize(cv2.imread(PHOTO), (224, 224), interpolation=cv2.INTER_LINEAR)
    assert max_diff(np.load(out), ref) == 0


def test_nv12_to_resized_rgb_matches_cvtcolor_then_resize(tmp_path):
    rng = np.random.default_rng(7)
    rgb = cv2.GaussianBlur(rng.integers(0, 256, (120, 160, 3), np.uint8), (5, 5), 0)
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    h, w = 120, 160
    nv12 = np.empty_like(i420)
    nv12[:h] = i420[:h]
    u = i420[h:h + h // 4].reshape(-1)
    v = i420[h + h // 4:].reshape(-1)
    uv = nv12[h:].reshape(-1)
    uv[0::2], uv[1::2] = u, v
    raw = str(tmp_path / "in.yuv")
    nv12.tofile(raw)
    out = str(tmp_path / "o.npy")
    run("resize", raw, "--input", "nv12:160x120", "--size", "64x48",
        "--format", "rgb", "-o", out)
    ref = cv2.resize(cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12), (64, 48),
                     interpolation=cv2.INTER_LINEAR)
    assert max_diff(np.load(out), ref) == 0


def test_letterbox_prints_geometry_and_pads(tmp_path):
    img = np.full((90, 160, 3), 200, np.uint8)
    out = str(tmp_path / "o.npy")
    r = run("resize", npy(tmp_path, "in.npy", img), "--size", "64x64", "--mode",
            "letterbox", "--pad", "727272", "-o", out)
    g = json.loads(r.stdout)
    assert (g["out_w"], g["out_h"]) == (64, 64)
    assert g["scale_x"] == 0.4 and g["scale_y"] == 0.4
    assert (g["pad_x"], g["pad_y"]) == (0, 14)
    assert g["paste"] == [0, 14, 63, 49]
    o = np.load(out)
    assert (o[:14] == 0x72).all() and (o[50:] == 0x72).all()
    assert (o[14:50] == 200).all()


@pytest.mark.parametrize("mode,size,shape", [
    ("fit", "224x224", (126, 224, 3)),
    ("fill", "224x224", (224, 224, 3)),
    ("shorter", "256", (256, 455, 3)),
    ("longer", "640", (360, 640, 3)),
    ("stretch", "33x17", (17, 33, 3)),
])
@needs_photo
def test_named_modes_shapes(tmp_path, mode, size, shape):
    out = str(tmp_path / "o.npy")
    run("resize", PHOTO, "--size", size, "--mode", mode, "-o", out)
    assert np.load(out).shape == shape


@needs_photo
def test_fill_equals_centre_crop_then_resize(tmp_path):
    out = str(tmp_path / "o.npy")
    run("resize", PHOTO, "--size", "224x224", "--mode", "fill", "--format", "bgr",
        "-o", out)
    ref = cv2.resize(cv2.imread(PHOTO)[:, 420:1500], (224, 224),
                     interpolation=cv2.INTER_LINEAR)
    assert max_diff(np.load(out), ref) == 0


def test_crop_is_inclusive_and_scaled(tmp_path):
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (50, 70, 3), np.uint8)
    p = npy(tmp_path, "in.npy", img)
    out = str(tmp_path / "o.npy")
    run("crop", p, "--roi", "5,6,24,35", "-o", out)
    assert (np.load(out) == img[6:36, 5:25]).all()
    run("crop", p, "--roi", "5,6,24,35", "--size", "40x60", "-o", out)
    ref = cv2.resize(img[6:36, 5:25], (40, 60), interpolation=cv2.INTER_LINEAR)
    assert max_diff(np.load(out), ref) == 0


def test_batch_crop_stacks_in_input_major_order(tmp_path):
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (60, 80, 3), np.uint8)
    b = rng.integers(0, 256, (60, 80, 3), np.uint8)
    pa, pb = npy(tmp_path, "a.npy", a), npy(tmp_path, "b.npy", b)
    out = str(tmp_path / "o.npy")
    run("batch-crop", pa, pb, "--roi", "1:0,0,19,19", "--roi", "0:10,10,29,29",
        "--roi", "0:40,20,59,39", "--size", "20x20", "-o", out)
    o = np.load(out)
    assert o.shape == (3, 20, 20, 3)
    assert (o[0] == a[10:30, 10:30]).all()
    assert (o[1] == a[20:40, 40:60]).all()
    assert (o[2] == b[0:20, 0:20]).all()
    run("batch-crop", pa, "--roi", "0,0,19,19", "--roi", "20,0,39,19", "--size",
        "10x10", "-o", str(tmp_path / "c_%d.npy"))
    assert np.load(str(tmp_path / "c_1.npy")).shape == (10, 10, 3)


@pytest.mark.parametrize("btype,cvtype", [
    ("constant", cv2.BORDER_CONSTANT), ("replicate", cv2.BORDER_REPLICATE),
    ("reflect", cv2.BORDER_REFLECT), ("reflect101", cv2.BORDER_REFLECT_101)])
def test_make_border_equals_cv2(tmp_path, btype, cvtype):
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (9, 13, 3), np.uint8)
    out = str(tmp_path / "o.npy")
    run("make-border", npy(tmp_path, "in.npy", img), "--margins", "3,4,20,2",
        "--border-type", btype, "--value", "10,20,30", "-o", out)
    ref = cv2.copyMakeBorder(img, 3, 4, 20, 2, cvtype, value=(10, 20, 30))
    assert (np.load(out) == ref).all()


def test_convert_rgb_to_nv12_and_back(tmp_path):
    rng = np.random.default_rng(4)
    rgb = cv2.GaussianBlur(rng.integers(0, 256, (48, 64, 3), np.uint8), (7, 7), 0)
    p = npy(tmp_path, "in.npy", rgb)
    yuv = str(tmp_path / "o.yuv")
    run("convert", p, "--format", "i420", "-o", yuv)
    mine = np.fromfile(yuv, np.uint8).reshape(72, 64)
    assert max_diff(mine, cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)) == 0


@needs_photo
def test_ascend310_refusals_through_cli(tmp_path):
    out = str(tmp_path / "o.yuv")
    r = run("crop", PHOTO, "--profile", "ascend310", "--parity", "ascend",
            "--format", "nv12", "--roi", "0,0,1918,1079", "--size", "224x224",
            "-o", out, check=False)
    assert r.returncode == 1
    assert "inputArea rightOffset is 1918, it should be odd!" in r.stderr
    r = run("resize", PHOTO, "--profile", "ascend310", "--parity", "ascend",
            "--format", "rgb", "--size", "224x224", "-o", out, check=False)
    assert r.returncode == 1 and "output format rgb is not supported" in r.stderr
    r = run("resize", PHOTO, "--profile", "ascend310", "--parity", "ascend",
            "--format", "nv12", "--size", "224x224", "-o", out)
    assert os.path.getsize(out) == 224 * 224 * 3 // 2


def test_bad_requests_are_clear_errors(tmp_path):
    img = npy(tmp_path, "in.npy", np.zeros((10, 10, 3), np.uint8))
    out = str(tmp_path / "o.npy")
    r = run("resize", img, "--size", "4x4", "--interp", "lanczos", "--parity",
            "cv2", "-o", out, check=False)
    assert r.returncode == 1 and "EINVAL" in r.stderr
    r = run("crop", img, "--roi", "5,5,20,20", "-o", out, check=False)
    assert r.returncode == 1 and "not inside" in r.stderr
    r = run("resize", img, "-o", out, check=False)
    assert r.returncode == 2


@pytest.mark.parametrize("filt,flag", [("bilinear", 2), ("bicubic", 3), ("lanczos", 1)])
def test_pil_rgba_resize_premultiplies_like_pillow(tmp_path, filt, flag):
    """Pillow resizes RGBA as premultiplied RGBa; pil parity must too."""
    from PIL import Image
    rng = np.random.default_rng(9)
    img = rng.integers(0, 256, (37, 53, 4), np.uint8)
    img[..., 3] = rng.choice([0, 1, 60, 128, 200, 255], (37, 53))
    out = str(tmp_path / "o.npy")
    run("resize", npy(tmp_path, "in.npy", img), "--size", "23x31", "--parity", "pil",
        "--interp", filt, "-o", out)
    ref = np.asarray(Image.fromarray(img, "RGBA").resize((23, 31), flag))
    assert max_diff(np.load(out), ref) == 0
