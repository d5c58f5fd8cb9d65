"""dvppctl batch: the device model end to end, in-process."""
import glob
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DVPPCTL = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"), "dvppctl")
DATA = os.path.join(ROOT, ".cache", "testdata")
# 64 mixed JPEG and PNG inputs (files repeat when there are fewer).
_POOL = sorted(glob.glob(os.path.join(DATA, "skimage", "*.png")))[:16] + \
    sorted(f for f in glob.glob(os.path.join(DATA, "fixtures", "*.jpg"))
           if "truncated" not in f and "scans1" not in f and "cmyk" not in f)[:24]
INPUTS = [_POOL[i % len(_POOL)] for i in range(64)] if _POOL else []
FLAGS = ["--size", "48x40", "--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225"]


def has_batch():
    return os.path.exists(DVPPCTL) and "batch FILES" in subprocess.run(
        [DVPPCTL, "help"], capture_output=True, text=True).stdout


pytestmark = [
    pytest.mark.skipif(not has_batch(), reason="dvppctl without batch"),
    pytest.mark.skipif(not _POOL, reason="no skimage/fixtures in .cache/testdata "
                       "(run tests/tools/fetch-test-data, or make test-data)"),
]


def batch(tmp_path, name, *args, env=None, inputs=INPUTS):
    out = str(tmp_path / name)
    r = subprocess.run([DVPPCTL, "batch", *inputs, *FLAGS, *args, "-o", out],
                       capture_output=True, text=True, env=env)
    return r, out


def test_same_bytes_with_1_and_8_channels_and_every_simd_level(tmp_path):
    assert len(INPUTS) == 64 and len(_POOL) >= 30
    r, ref = batch(tmp_path, "c1.npy", "--channels", "1")
    assert r.returncode == 0, r.stderr
    want = np.load(ref)
    assert want.shape == (len(INPUTS), 3, 40, 48)
    r, out = batch(tmp_path, "c8.npy", "--channels", "8")
    assert (np.load(out) == want).all()
    for level in ("scalar", "sse41", "avx2", "avx512"):
        env = dict(os.environ, DVPP_SIMD=level)
        r, out = batch(tmp_path, f"{level}.npy", "--channels", "2", env=env)
        assert r.returncode == 0 and (np.load(out).view(np.uint32) ==
                                       want.view(np.uint32)).all(), level


def test_item_equals_a_single_preprocess(tmp_path):
    r, out = batch(tmp_path, "b.npy", "--channels", "2")
    b = np.load(out)
    one = str(tmp_path / "one.npy")
    subprocess.run([DVPPCTL, "preprocess", INPUTS[5], *FLAGS, "-o", one], check=True,
                   capture_output=True)
    assert (np.load(one)[0] == b[5]).all()


def test_corrupt_item_reported_at_its_index(tmp_path):
    bad = os.path.join(DATA, "fixtures", "truncated_420.jpg")
    inputs = INPUTS[:5] + [bad] + INPUTS[5:9]
    r, out = batch(tmp_path, "b.npy", "--channels", "4", inputs=inputs)
    assert r.returncode == 0
    assert "item 5 (" in r.stderr and "ECORRUPT" in r.stderr
    b = np.load(out)
    assert (b[5] == 0).all() and (b[4] != 0).any()
    r, out = batch(tmp_path, "s.npy", "--channels", "1", "--strict", inputs=inputs)
    assert r.returncode == 1 and "ECORRUPT" in r.stderr


def test_fit_mode_cannot_batch(tmp_path):
    r, _ = batch(tmp_path, "f.npy", "--mode", "fit")
    assert r.returncode == 1 and "fit" in r.stderr
