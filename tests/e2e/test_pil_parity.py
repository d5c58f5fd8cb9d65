"""The PIL parity dvpp.torch.transforms relies on (issue 20), against Pillow
9.4 and torchvision 0.14 through a real dvppd's HTTP API:

  - {"crop": [L,T,R,B]} then {"resize": {"parity": "pil", "interp": X}}
    equals PIL img.crop((L,T,R+1,B+1)).resize((w,h), X) for NEAREST,
    BILINEAR, BICUBIC, BOX, HAMMING, LANCZOS (torchvision InterpolationMode
    names), down and up (RandomResizedCrop's small crops), crops touching
    the borders: the resize reads only the cropped pixels;
  - decode to RGB equals Image.open(f).convert('RGB') for JPEG 4:4:4,
    4:2:2, 4:2:0, 4:4:0, 4:1:1 (cjpeg -sample), grey and progressive
    JPEG, PNG RGB, RGBA (alpha dropped), L, LA, P, P + tRNS, 16-bit RGB,
    and EXIF-rotated JPEGs with {"decode": {"orient": false}} (torchvision's
    loader ignores EXIF orientation);
  - the border op equals torchvision's Pad on PIL for padding_mode
    constant (fill), edge (replicate), reflect (reflect101), symmetric
    (reflect);
  - normalize (mean, std) is within 1e-6 of torchvision's
    Normalize(ToTensor(img)) in float32, and {"dtype": "uint8", "scale": 1}
    in NCHW equals PILToTensor.

Real photos: libjpeg-turbo's testorig (tests/data/corpus) re-encoded at
each sampling, and /usr/share/forensics-samples/original-files/ when the
package forensics-samples-files is installed (skipped otherwise).

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_pil_parity.py
"""
import glob
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

torch = pytest.importorskip("torch")
TF = pytest.importorskip("torchvision.transforms.functional")
T = pytest.importorskip("torchvision.transforms")
IM = T.InterpolationMode

CORPUS = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo")
PPM = os.path.join(CORPUS, "testorig.ppm")       # a real photo, 227x149
FORENSICS = "/usr/share/forensics-samples/original-files"
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CJPEG = shutil.which("cjpeg")

# torchvision InterpolationMode -> dvppd interp name (pil parity)
MODES = {IM.NEAREST: "nearest", IM.BILINEAR: "bilinear", IM.BICUBIC: "bicubic",
         IM.BOX: "box", IM.HAMMING: "hamming", IM.LANCZOS: "lanczos"}
PIL_FILTER = {IM.NEAREST: Image.NEAREST, IM.BILINEAR: Image.BILINEAR,
              IM.BICUBIC: Image.BICUBIC, IM.BOX: Image.BOX, IM.HAMMING: Image.HAMMING,
              IM.LANCZOS: Image.LANCZOS}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("pilpar")), cfg, "pilpar", port)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def photo():
    return Image.open(PPM).convert("RGB")


encode = daemon_util.encode_image
post = daemon_util.post_spec


def rgb(srv, body, spec=None):
    """/v1/decode to RGB: H x W x 3."""
    spec = dict(spec or {})
    spec["decode"] = dict(spec.get("decode", {}), format="rgb")
    spec["output"] = {"format": "rgb"}
    return post(srv, "/v1/decode", body, spec).npy()


def u8(srv, body, ops, layout="nhwc"):
    spec = {"ops": ops, "normalize": {"dtype": "uint8", "layout": layout, "scale": 1}}
    return post(srv, "/v1/preprocess", body, spec).npy()[0]


def crop_resize(l, t, r, b, w, h, mode):
    return [{"crop": [l, t, r, b]},
            {"resize": {"w": w, "h": h, "parity": "pil", "interp": MODES[mode]}}]


# --------------------------------------------------------------------------
# crop + resize


CROPS = [
    (0, 0, 226, 148, 100, 66),     # whole image, down
    (13, 7, 190, 131, 61, 97),     # inside, down x / up y
    (0, 20, 80, 148, 224, 224),    # left and bottom borders, up
    (150, 0, 226, 40, 224, 224),   # right and top borders, up (a small crop)
    (101, 60, 109, 66, 37, 29),    # 9x7 -> up 4x
    (5, 5, 221, 143, 7, 5),        # strong down
    (30, 100, 200, 148, 64, 32),   # the last rows, not from the left edge
]


@pytest.mark.parametrize("mode", list(MODES), ids=[m.value for m in MODES])
@pytest.mark.parametrize("box", CROPS, ids=[f"{c[0]},{c[1]},{c[2]},{c[3]}->{c[4]}x{c[5]}"
                                            for c in CROPS])
def test_crop_resize_equals_pil(srv, photo, mode, box):
    l, t, r, b, w, h = box
    want = photo.crop((l, t, r + 1, b + 1)).resize((w, h), PIL_FILTER[mode])
    got = u8(srv, encode(photo), crop_resize(l, t, r, b, w, h, mode))
    assert np.array_equal(got, np.asarray(want))
    # torchvision's resized_crop on the PIL image is the same thing
    tv = TF.resized_crop(photo, t, l, b - t + 1, r - l + 1, [h, w], mode)
    assert np.array_equal(got, np.asarray(tv))


def test_crop_resize_reads_only_the_crop(srv, photo):
    """Pixels outside the crop changed: the answer does not move."""
    ops = crop_resize(40, 30, 120, 100, 50, 40, IM.LANCZOS)
    a = u8(srv, encode(photo), ops)
    other = np.asarray(photo).copy()
    other[:30] = 0
    other[101:] = 255
    other[:, :40] = 7
    other[:, 121:] = 250
    assert np.array_equal(u8(srv, encode(Image.fromarray(other)), ops), a)


def test_hamming_refused_outside_pil_parity(srv, photo):
    spec = {"ops": [{"resize": {"w": 30, "h": 20, "interp": "hamming"}}],
            "normalize": {"dtype": "uint8", "scale": 1}}
    r = srv.post("/v1/preprocess", encode(photo), {"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status in (400, 422), r
    assert r.json()["error"]["field"].startswith("ops[0].resize"), r


# --------------------------------------------------------------------------
# decode to RGB


def jpeg(img, **kw):
    return encode(img, "JPEG", quality=90, **kw)


def cjpeg(photo, sample, tmp_path):
    if not CJPEG:
        pytest.skip("cjpeg (libjpeg-turbo-progs) is not installed")
    src = tmp_path / "in.ppm"
    photo.save(src)
    out = subprocess.run([CJPEG, "-quality", "90", "-sample", sample, str(src)],
                         capture_output=True, check=True).stdout
    return out


def assert_decodes_like_pil(srv, blob, spec=None):
    want = np.asarray(Image.open(io.BytesIO(blob)).convert("RGB"))
    got = rgb(srv, blob, spec)
    assert got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("sub", [0, 1, 2], ids=["444", "422", "420"])
def test_jpeg_sampling_decodes_like_pil(srv, photo, sub):
    blob = jpeg(photo, subsampling=sub)
    assert_decodes_like_pil(srv, blob)
    # odd sizes
    assert_decodes_like_pil(srv, jpeg(photo.crop((0, 0, 101, 77)), subsampling=sub))


@pytest.mark.parametrize("sample", ["1x2", "4x1", "2x2,1x1,2x1"], ids=["440", "411", "odd"])
def test_jpeg_cjpeg_samplings_decode_like_pil(srv, photo, sample, tmp_path):
    assert_decodes_like_pil(srv, cjpeg(photo, sample, tmp_path))


def test_jpeg_grey_and_progressive_decode_like_pil(srv, photo):
    assert_decodes_like_pil(srv, jpeg(photo.convert("L")))
    assert_decodes_like_pil(srv, jpeg(photo, progressive=True))
    assert_decodes_like_pil(srv, jpeg(photo, progressive=True, subsampling=0))
    assert_decodes_like_pil(srv, open(os.path.join(CORPUS, "testorig.jpg"), "rb").read())


def pngs(photo):
    """PNG kinds PIL writes, from the photo."""
    small = photo.crop((0, 0, 99, 71))
    a = np.asarray(small)
    alpha = (np.arange(99)[None, :] * 2 + np.arange(71)[:, None]) % 256
    rgba = Image.fromarray(np.dstack([a, alpha.astype(np.uint8)]), "RGBA")
    la = Image.fromarray(np.dstack([np.asarray(small.convert("L")),
                                    alpha.astype(np.uint8)]), "LA")
    p = small.quantize(64)
    pt = p.copy()
    pt.info["transparency"] = 5
    return {"rgb": encode(small), "rgba": encode(rgba), "l": encode(small.convert("L")),
            "la": encode(la), "p": encode(p), "p_trns": encode(pt, transparency=5),
            "1bit": encode(small.convert("1"))}


@pytest.mark.parametrize("kind", ["rgb", "rgba", "l", "la", "p", "p_trns", "1bit"])
def test_png_decodes_like_pil(srv, photo, kind):
    """PIL's convert('RGB') drops alpha (no compositing), expands palettes
    (tRNS ignored) and replicates grey."""
    assert_decodes_like_pil(srv, pngs(photo)[kind])


def test_png_16bit_rgb(srv, photo):
    """A 16-bit RGB PNG: Pillow 9.4 opens it as mode RGB with each sample's
    high byte (its 16-to-8 reduction is sample >> 8); dvppd must give the
    same bytes."""
    import zlib
    import struct
    a16 = (np.asarray(photo.crop((0, 0, 64, 40))).astype(np.uint16) * 257 +
           np.arange(64, dtype=np.uint16)[None, :, None] * 3)
    raw = b"".join(b"\0" + a16[y].astype(">u2").tobytes() for y in range(40))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    blob = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 40, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    pil = Image.open(io.BytesIO(blob))
    assert pil.mode == "RGB"
    want = np.asarray(pil.convert("RGB"))
    assert np.array_equal(want, (a16 >> 8).astype(np.uint8))
    assert np.array_equal(rgb(srv, blob), want)


def exif_jpeg(photo, orientation):
    ex = Image.Exif()
    ex[0x0112] = orientation
    return encode(photo, "JPEG", quality=90, exif=ex.tobytes())


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_exif_rotated_jpeg_with_orient_false(srv, photo, orientation):
    """torchvision's loader (Image.open(f).convert('RGB')) ignores EXIF
    orientation: so does {"decode": {"orient": false}}; by default dvppd
    applies it (PIL's exif_transpose)."""
    from PIL import ImageOps
    blob = exif_jpeg(photo, orientation)
    assert_decodes_like_pil(srv, blob, {"decode": {"orient": False}})
    rotated = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(blob))).convert("RGB"))
    assert np.array_equal(rgb(srv, blob), rotated)


def forensic_photos():
    files = sorted(glob.glob(os.path.join(FORENSICS, "**", "*.jp*g"), recursive=True) +
                   glob.glob(os.path.join(FORENSICS, "**", "*.png"), recursive=True))
    return [f for f in files if os.path.getsize(f) <= 8 << 20][:12]


@pytest.mark.skipif(not os.path.isdir(FORENSICS),
                    reason="forensics-samples-files is not installed")
@pytest.mark.parametrize("path", forensic_photos() or [None])
def test_real_photos_decode_like_pil(srv, path):
    if path is None:
        pytest.skip(f"no JPEG or PNG under {FORENSICS}")
    blob = open(path, "rb").read()
    assert_decodes_like_pil(srv, blob, {"decode": {"orient": False}})


# --------------------------------------------------------------------------
# Pad


@pytest.mark.parametrize("mode,btype", [("constant", "constant"), ("edge", "replicate"),
                                        ("reflect", "reflect101"), ("symmetric", "reflect")])
@pytest.mark.parametrize("pad", [(3, 1, 4, 2), (0, 7, 0, 0), (9, 9, 9, 9)])
def test_pad_equals_torchvision(srv, photo, mode, btype, pad):
    """torchvision Pad(padding=(left, top, right, bottom), fill, mode) on PIL."""
    l, t, r, b = pad
    img = photo.crop((20, 10, 60, 41))
    fill = (200, 10, 77)
    want = TF.pad(img, [l, t, r, b], fill=fill if mode == "constant" else 0,
                  padding_mode=mode)
    border = {"top": t, "bottom": b, "left": l, "right": r, "type": btype}
    if mode == "constant":
        border["value"] = list(fill)
    got = u8(srv, encode(img), [{"border": border}])
    assert np.array_equal(got, np.asarray(want))


# --------------------------------------------------------------------------
# ToTensor + Normalize, PILToTensor


@pytest.mark.parametrize("mean,std", [(MEAN, STD), ([0.5] * 3, [0.5] * 3),
                                      ([0.0] * 3, [1.0] * 3), ([0.3, 0.1, 0.9], [0.07, 2.5, 0.3])])
def test_normalize_within_1e6_of_torchvision(srv, photo, mean, std):
    """Every uint8 value x in every channel: (x/255 - mean)/std in float32
    as torch computes it, max |diff| <= 1e-6 (a 256-wide ramp holds all)."""
    ramp = np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 3, 2)
    ramp = np.concatenate([ramp, np.asarray(photo.crop((0, 0, 256, 8)))], 0)
    img = Image.fromarray(np.ascontiguousarray(ramp))
    want = TF.normalize(TF.to_tensor(img), mean, std).numpy()
    spec = {"normalize": {"mean": mean, "std": std, "dtype": "float32", "layout": "nchw"}}
    got = post(srv, "/v1/preprocess", encode(img), spec).npy()[0]
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-6


def test_uint8_nchw_equals_pil_to_tensor(srv, photo):
    want = TF.pil_to_tensor(photo).numpy()
    got = u8(srv, encode(photo), [], layout="nchw")
    assert got.dtype == np.uint8 and np.array_equal(got, want)
