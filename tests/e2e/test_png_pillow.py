"""dvppctl's PNG decode compared with Pillow, pixel for pixel, on PngSuite.

Every valid PngSuite file is decoded by `dvppctl decode FILE --format F -o
OUT.npy` for F in rgb, rgba, gray and bgr, and the result must equal what
Pillow 9.4 gives for the same conversion (im.convert('RGB'|'RGBA'|'L'), BGR
being RGB reversed) exactly: no tolerance.

Where Pillow's answer is not the PNG's content, the expectation is computed
with numpy from the rule dvppd follows instead (each case is explained in
`expected()`):

  * 16-bit greyscale opens in Pillow as mode 'I' and convert() clips it to
    0..255; dvppd keeps the high byte (v >> 8), as Pillow itself does for
    every other 16-bit mode.
  * tRNS on greyscale below 8 bits: Pillow keeps the tRNS value unscaled
    (15 for a 4-bit file) and compares it with samples already scaled to 8
    bits, so nothing ever becomes transparent. PNG (and libpng) compare at
    the file's bit depth: sample == tRNS value.
  * tRNS on 16-bit greyscale: part of the mode 'I' case; PNG compares all
    16 bits of the sample.
  * tRNS on 16-bit RGB: Pillow compares only the high bytes of the tRNS
    colour with its 8-bit pixels, so a pixel 0xff00 would turn transparent
    for a tRNS of 0xffff. PNG (and dvppd) compare all 16 bits; the 16-bit
    samples come from OpenCV's IMREAD_UNCHANGED. On PngSuite both rules
    give the same pixels, but the test asserts PNG's.

Also: each of the 14 corrupt PngSuite files (x*.png) must make dvppctl exit
1 with a one-line error, and the 14 messages must be pairwise distinct.

Run with Debian's interpreter (/usr/bin/python3: numpy, Pillow, OpenCV).
Environment: DVPP_BUILD (default "build", relative to the repository root)
locates dvppctl. The corpus is in the tree: tests/data/corpus/pngsuite.
"""

import os
import struct
import subprocess
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
SUITE = REPO / "tests" / "data" / "corpus" / "pngsuite"

CORRUPT_NAMES = [
    "xc1n0g08", "xc9n2c08", "xcrn0g04", "xcsn0g01", "xd0n2c08", "xd3n2c08",
    "xd9n2c08", "xdtn0g01", "xhdn0g08", "xlfn0g04", "xs1n0g01", "xs2n0g01",
    "xs4n0g01", "xs7n0g01",
]
VALID = sorted(p for p in SUITE.glob("*.png") if not p.name.startswith("x"))
CORRUPT = [SUITE / f"{name}.png" for name in CORRUPT_NAMES]
FORMATS = ["rgb", "rgba", "gray", "bgr"]

pytestmark = [
    pytest.mark.skipif(not DVPPCTL.exists(), reason=f"dvppctl not built at {DVPPCTL}"),
    # tm3n3p02 (palette + tRNS): Pillow suggests converting to RGBA, which
    # is exactly what the test does.
    pytest.mark.filterwarnings("ignore:Palette images with Transparency"),
]


# --- running dvppctl --------------------------------------------------------

def run_dvppctl(*args):
    """Run dvppctl with a timeout; return the CompletedProcess (text mode)."""
    return subprocess.run(
        [str(DVPPCTL), *map(str, args)],
        capture_output=True, text=True, timeout=60, check=False,
    )


def dvpp_decode(path, fmt, tmp_path):
    out = tmp_path / f"{path.stem}.{fmt}.npy"
    proc = run_dvppctl("decode", path, "--format", fmt, "-o", out)
    assert proc.returncode == 0, (
        f"dvppctl decode {path.name} --format {fmt} exited "
        f"{proc.returncode}: {proc.stderr.strip()}"
    )
    arr = np.load(out)
    assert arr.dtype == np.uint8, f"{path.name} {fmt}: dtype {arr.dtype}"
    return arr


# --- the Pillow side ---------------------------------------------------------

def ihdr(path):
    """(bit depth, colour type) straight from the IHDR bytes."""
    head = path.read_bytes()[:26]
    return head[24], head[25]


def l24(rgb):
    """Pillow's L conversion (Convert.c L24), for arrays Pillow can't make."""
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    return ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16).astype(np.uint8)


def with_alpha(rgb, opaque_mask):
    alpha = np.where(opaque_mask, 255, 0).astype(np.uint8)
    return np.dstack([rgb, alpha])


def expected(path, fmt):
    """The uint8 array dvppctl must produce for @path in @fmt."""
    im = Image.open(path)
    depth, ctype = ihdr(path)
    trns = im.info.get("transparency")

    if im.mode in ("I", "I;16", "I;16B"):
        # 16-bit greyscale: Pillow's convert() clips mode I to 0..255; the
        # documented rule is the high byte. tRNS compares all 16 bits.
        v16 = np.asarray(im).astype(np.uint32)
        grey = (v16 >> 8).astype(np.uint8)
        rgb = np.dstack([grey] * 3)
        opaque = np.ones(grey.shape, bool) if trns is None else v16 != trns
        return finish(fmt, rgb, with_alpha(rgb, opaque), grey)

    if im.mode == "L" and trns is not None and depth < 8:
        # Low-bit grey with tRNS: Pillow compares the unscaled tRNS value
        # (0..2^depth-1) with 8-bit samples; PNG compares at the file depth.
        # Samples were scaled by 255 / (2^depth - 1), so compare scaled.
        grey = np.asarray(im)
        scaled_trns = trns * (255 // ((1 << depth) - 1))
        rgb = np.dstack([grey] * 3)
        return finish(fmt, rgb, with_alpha(rgb, grey != scaled_trns), grey)

    if im.mode == "RGB" and trns is not None and depth == 16:
        # 16-bit RGB with tRNS: Pillow matches on the high bytes only; PNG
        # compares all 16 bits of each sample, so compute that rule.
        bgr16 = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)[..., :3]
        rgb16 = bgr16[..., ::-1].astype(np.uint32)
        rgb = np.asarray(im.convert("RGB"))
        assert np.array_equal((rgb16 >> 8).astype(np.uint8), rgb), (
            f"{path.name}: OpenCV's 16-bit samples disagree with Pillow's"
        )
        opaque = ~np.all(rgb16 == np.array(trns, np.uint32), axis=2)
        return finish(fmt, rgb, with_alpha(rgb, opaque), l24(rgb))

    # Everything else: Pillow is the reference as it stands (8-bit tRNS on
    # L, RGB and P included: convert('RGBA') applies it).
    rgb = np.asarray(im.convert("RGB"))
    rgba = np.asarray(im.convert("RGBA")) if fmt == "rgba" else None
    grey = np.asarray(im.convert("L")) if fmt == "gray" else None
    return finish(fmt, rgb, rgba, grey)


def finish(fmt, rgb, rgba, grey):
    if fmt == "rgb":
        return rgb
    if fmt == "bgr":
        return np.ascontiguousarray(rgb[..., ::-1])
    if fmt == "rgba":
        return rgba
    return grey


def assert_same(path, fmt, got, want):
    assert got.shape == want.shape, (
        f"{path.name} {fmt}: shape {got.shape}, Pillow {want.shape}"
    )
    diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
    assert not diff.any(), (
        f"{path.name} {fmt}: {int(np.count_nonzero(diff))} samples differ, "
        f"max |diff| {int(diff.max())}, first at "
        f"{tuple(int(i) for i in np.argwhere(diff)[0])}"
    )


# --- tests --------------------------------------------------------------------

def test_corpus_present():
    # A missing corpus must fail loudly, not turn the suite into no tests.
    assert len(VALID) >= 150, f"only {len(VALID)} valid PngSuite files in {SUITE}"
    assert all(p.exists() for p in CORRUPT), f"corrupt PngSuite files missing in {SUITE}"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_decode_matches_pillow(path, fmt, tmp_path):
    got = dvpp_decode(path, fmt, tmp_path)
    assert_same(path, fmt, got, expected(path, fmt))


def corrupt_message(path, tmp_path):
    proc = run_dvppctl("decode", path, "--format", "rgb", "-o", tmp_path / "x.npy")
    assert proc.returncode == 1, (
        f"{path.name}: dvppctl exited {proc.returncode}, expected 1 "
        f"(stderr: {proc.stderr.strip()!r})"
    )
    message = proc.stderr.strip()
    assert message, f"{path.name}: no error message on stderr"
    assert "\n" not in message, f"{path.name}: error is not one line: {message!r}"
    assert not (tmp_path / "x.npy").exists(), f"{path.name}: output written on error"
    # The file name alone must not be what makes two messages differ.
    return message.replace(str(path), "<file>").replace(path.name, "<file>")


@pytest.mark.parametrize("path", CORRUPT, ids=lambda p: p.stem)
def test_corrupt_file_is_rejected(path, tmp_path):
    corrupt_message(path, tmp_path)


def test_corrupt_messages_are_distinct(tmp_path):
    messages = {p.name: corrupt_message(p, tmp_path) for p in CORRUPT}
    seen = {}
    for name, message in messages.items():
        assert message not in seen, (
            f"{name} and {seen.get(message)} share the message {message!r}"
        )
        seen[message] = name
    assert len(seen) == 14


def test_trns_rules_are_exercised():
    # The numpy rules above must really be in use, or a corpus change could
    # silently turn them into dead code.
    names = {p.name for p in VALID}
    for name in ("tbbn0g04.png", "tbbn2c16.png", "tbgn2c16.png", "tbwn0g16.png",
                 "basn0g16.png", "tbrn2c08.png", "tm3n3p02.png"):
        assert name in names, f"{name} missing from {SUITE}"
    # tbbn0g04 really has transparent pixels under the PNG rule.
    rgba = expected(SUITE / "tbbn0g04.png", "rgba")
    assert (rgba[..., 3] == 0).any() and (rgba[..., 3] == 255).any()
    for name in ("tbbn2c16.png", "tbwn0g16.png"):
        rgba16 = expected(SUITE / name, "rgba")
        assert (rgba16[..., 3] == 0).any() and (rgba16[..., 3] == 255).any()
