"""Offline `dvppctl aipp` takes an unset src_image_size from the image, as
the library's pipeline does (dvpp_aipp_op_for_image): a config with
`crop: true`, crop_size 0 (the rest of the image, 4d312bf) and no
src_image_size ran in the daemon but failed offline ('the op's output size
is unknown'), because dvppctl filled the source size only without a crop.
Every tensor is compared with numpy (crop by slicing, DTC by hand, padding
by np.pad).

Run with Debian's /usr/bin/python3 (numpy).
"""
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")

H, W = 19, 26
MIN = (12, 40, 7)        # min_chn: subtracted
VAR = (0.5, 2.0, 0.25)   # var_reci_chn: powers of two, exact in f32


def run(*args):
    return subprocess.run([DVPPCTL, *args], capture_output=True, text=True)


def image(tmp_path):
    rng = np.random.default_rng(21)
    img = rng.integers(0, 256, (H, W, 3), np.uint8)
    p = str(tmp_path / "img.npy")
    np.save(p, img)
    return img, p


def config(crop, pad=None):
    """An RGB888_U8 op without src_image_size: crop (x0, y0, cw, ch), pad
    (top, bottom, left, right, value) or None."""
    x0, y0, cw, ch = crop
    text = ("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n crop: true\n"
            f" load_start_pos_w: {x0}\n load_start_pos_h: {y0}\n")
    if cw:
        text += f" crop_size_w: {cw}\n"
    if ch:
        text += f" crop_size_h: {ch}\n"
    for i in range(3):
        text += f" min_chn_{i}: {MIN[i]}\n var_reci_chn_{i}: {VAR[i]}\n"
    if pad:
        t, b, l, r, v = pad
        text += (f" padding: true\n top_padding_size: {t}\n bottom_padding_size: {b}\n"
                 f" left_padding_size: {l}\n right_padding_size: {r}\n padding_value: {v}\n")
    return text + "}\n"


def reference(img, crop, pad=None):
    x0, y0, cw, ch = crop
    block = img[y0:y0 + ch if ch else H, x0:x0 + cw if cw else W].astype(np.float64)
    ref = (block - np.array(MIN)) * np.array(VAR)
    if pad:
        t, b, l, r, v = pad
        ref = np.pad(ref, ((t, b), (l, r), (0, 0)), constant_values=v)
    return ref.astype(np.float32)[None]


CASES = {
    "crop_size_0": ((5, 3, 0, 0), None),
    "crop_size_w_only": ((4, 2, 9, 0), None),
    "crop_size_h_only": ((0, 6, 0, 7), None),
    "crop_size_0_padded": ((7, 1, 0, 0), (2, 3, 4, 1, -6.5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crop_without_source_size_equals_numpy(tmp_path, name):
    crop, pad = CASES[name]
    img, p = image(tmp_path)
    cfg = tmp_path / "a.cfg"
    cfg.write_text(config(crop, pad))
    out = str(tmp_path / "o.npy")
    r = run("aipp", p, "--config", str(cfg), "--layout", "nhwc", "--dtype", "f32", "-o", out)
    assert r.returncode == 0, r.stderr
    got, ref = np.load(out), reference(img, crop, pad)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == np.float32
    assert np.array_equal(got, ref), np.abs(got - ref).max()


def test_crop_past_the_image_is_refused_naming_the_crop(tmp_path):
    """With the source size known from the image, a crop that leaves it is
    refused before anything runs (EINVAL naming the crop and the source)."""
    _, p = image(tmp_path)
    cfg = tmp_path / "a.cfg"
    cfg.write_text(config((20, 0, 10, 0)))
    r = run("aipp", p, "--config", str(cfg), "-o", str(tmp_path / "o.npy"))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "crop 20,0" in r.stderr and f"{W}x{H}" in r.stderr, r.stderr
    assert not (tmp_path / "o.npy").exists()


def test_a_source_size_that_differs_from_the_image_still_fails(tmp_path):
    """A src_image_size the config sets is the model's and is checked
    against the image (the rule fills only what is unset)."""
    _, p = image(tmp_path)
    cfg = tmp_path / "a.cfg"
    cfg.write_text(config((5, 3, 0, 0)).replace(" crop: true\n",
                                                f" crop: true\n src_image_size_w: {W + 2}\n"))
    r = run("aipp", p, "--config", str(cfg), "-o", str(tmp_path / "o.npy"))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert f"image is {W}x{H}, the config says {W + 2}x{H}" in r.stderr, r.stderr
