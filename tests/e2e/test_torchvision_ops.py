"""The pipeline ops torchvision-compatible transforms compile to (issue 20),
against PIL, torchvision and numpy through a real dvppd's HTTP API:

  flip      {"flip": "horizontal" | "vertical" | "both"} at any place of the
            op list equals np.flip / PIL transpose / torchvision hflip and
            vflip, in RGB, BGR, RGBA, grey and (even sizes) NV12, I420,
            YUYV; refused naming ops[i].flip where the chroma grid would
            move or the profile has no flip. After the last resize it still
            gives torchvision's tensor (the resize + normalise fusion ends).
  grey      {"convert": "gray"} is cv2's COLOR_RGB2GRAY, not Pillow's
            convert('L'); {"convert": {"format": "gray", "parity": "pil"}}
            is convert('L') bit for bit (random pixels, a JPEG photo, every
            SIMD tail); Grayscale(3) / Grayscale(1) within 1e-6 after
            to_tensor + normalize.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_torchvision_ops.py
"""
import io
import os

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, free_port, stop_daemon  # noqa: E402

torch = pytest.importorskip("torch")
TF = pytest.importorskip("torchvision.transforms.functional")
T = pytest.importorskip("torchvision.transforms")

CORPUS = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo")
PHOTO = os.path.join(CORPUS, "testorig.ppm")       # a real photo, 227x149
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("tvops")), cfg, "tvops", port)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def photo():
    return Image.open(PHOTO).convert("RGB")


encode = daemon_util.encode_image
post = daemon_util.post_spec


def decode(srv, body, spec):
    """/v1/decode of @body with @spec: the pixels (npy)."""
    return post(srv, "/v1/decode", body, spec).npy()


def refused(srv, path, body, spec, status=400):
    return post(srv, path, body, spec, status).json()["error"]


def u8_tensor(srv, body, spec):
    """/v1/preprocess with @spec's ops, uint8 NHWC pixels (scale 1): H x W x 3."""
    spec = dict(spec, normalize={"dtype": "uint8", "layout": "nhwc", "scale": 1})
    return post(srv, "/v1/preprocess", body, spec).npy()[0]


def f32_tensor(srv, body, spec, mean=MEAN, std=STD):
    spec = dict(spec, normalize={"mean": mean, "std": std, "dtype": "float32",
                                 "layout": "nchw"})
    return post(srv, "/v1/preprocess", body, spec).npy()[0]


def raw_spec(fmt, w, h, ops):
    return {"input": "raw", "raw": {"format": fmt, "width": w, "height": h}, "ops": ops,
            "output": {"format": fmt, "out": "raw"}}


def flip_np(a, how, axes=(0, 1)):
    """np.flip of the pixel axes @axes (rows, columns) of @a."""
    if how in ("vertical", "both"):
        a = np.flip(a, axes[0])
    if how in ("horizontal", "both"):
        a = np.flip(a, axes[1])
    return np.ascontiguousarray(a)


FLIPS = ["horizontal", "vertical", "both"]

# --------------------------------------------------------------------------
# flip


@pytest.mark.parametrize("how", FLIPS)
@pytest.mark.parametrize("fmt,ch", [("rgb", 3), ("bgr", 3), ("rgba", 4), ("gray", 1)])
def test_flip_packed_equals_numpy(srv, fmt, ch, how):
    """Raw packed pixels (odd sizes), one flip: exactly np.flip."""
    rng = np.random.default_rng(7)
    w, h = 37, 23
    a = rng.integers(0, 256, (h, w, ch), dtype=np.uint8)
    r = post(srv, "/v1/decode", a.tobytes(), raw_spec(fmt, w, h, [{"flip": how}]))
    got = np.frombuffer(r.body, np.uint8).reshape(h, w, ch)
    assert np.array_equal(got, flip_np(a, how))


def yuv_planes(fmt, w, h, rng):
    """Random planes of a tight @fmt image and a function flipping them."""
    y = rng.integers(0, 256, (h, w), dtype=np.uint8)
    if fmt == "nv12":
        uv = rng.integers(0, 256, (h // 2, w // 2, 2), dtype=np.uint8)
        return [y, uv]
    if fmt == "i420":
        return [y] + [rng.integers(0, 256, (h // 2, w // 2), dtype=np.uint8) for _ in "uv"]
    assert fmt == "yuyv"
    return [rng.integers(0, 256, (h, w // 2, 4), dtype=np.uint8)]


def flip_yuyv(p, how):
    """Packed 4:2:2 mirrored: pixel pairs reversed, the two Y of each swapped."""
    out = flip_np(p, how)
    if how in ("horizontal", "both"):
        out = out[..., [2, 1, 0, 3]]
    return np.ascontiguousarray(out)


@pytest.mark.parametrize("how", FLIPS)
@pytest.mark.parametrize("fmt", ["nv12", "i420", "yuyv"])
def test_flip_yuv_even_sizes_flips_every_plane(srv, fmt, how):
    rng = np.random.default_rng(11)
    w, h = 38, 22
    planes = yuv_planes(fmt, w, h, rng)
    body = b"".join(p.tobytes() for p in planes)
    r = post(srv, "/v1/decode", body, raw_spec(fmt, w, h, [{"flip": how}]))
    want = flip_yuv(fmt, planes, how)
    assert r.body == want


def flip_yuv(fmt, planes, how):
    if fmt == "yuyv":
        return flip_yuyv(planes[0], how).tobytes()
    return b"".join(flip_np(p, how).tobytes() for p in planes)


@pytest.mark.parametrize("fmt,w,h,how", [("nv12", 37, 22, "horizontal"),
                                         ("nv12", 38, 21, "vertical"),
                                         ("i420", 37, 21, "both"),
                                         ("yuyv", 37, 22, "horizontal")])
def test_flip_odd_subsampled_side_refused(srv, fmt, w, h, how):
    """An odd side of a subsampled axis cannot be mirrored sample for sample:
    400, field ops[1].flip, saying to convert first."""
    body = bytes(w * h * 3)
    spec = raw_spec("rgb", w, h, [{"convert": fmt}, {"flip": how}])
    e = refused(srv, "/v1/decode", body, spec)
    assert e["field"] == "ops[1].flip" and "rgb" in e["message"], e


def test_flip_vertical_of_odd_width_nv12_runs(srv):
    """Only the flipped axis needs whole chroma samples."""
    rng = np.random.default_rng(3)
    w, h = 37, 22
    y = rng.integers(0, 256, (h, w + 1), dtype=np.uint8)  # rows of an even length
    uv = rng.integers(0, 256, (h // 2, (w + 1) // 2, 2), dtype=np.uint8)
    r = post(srv, "/v1/decode", y.tobytes() + uv.tobytes(),
             raw_spec("nv12", w, h, [{"flip": "vertical"}]))
    y[:, w] = 0  # the answer's row padding is zeroed
    assert r.body == np.flip(y, 0).tobytes() + np.flip(uv, 0).tobytes()


@pytest.mark.parametrize("bad,field", [({"flip": "sideways"}, "ops[0].flip"),
                                       ({"flip": 1}, "ops[0].flip"),
                                       ({"flip": None}, "ops[0].flip")])
def test_flip_bad_value_refused(srv, photo, bad, field):
    e = refused(srv, "/v1/decode", encode(photo), {"ops": [bad]})
    assert e["field"] == field and e["code"] == "EINVAL", e


def test_flip_refused_under_ascend_profiles(srv, photo):
    """DVPP's VPC has no flip: EPROFILE under ascend310p, naming the op."""
    spec = {"decode": {"profile": "ascend310p", "format": "rgb"},
            "ops": [{"resize": {"w": 64, "h": 48, "parity": "ascend"}},
                    {"flip": "horizontal"}]}
    e = refused(srv, "/v1/decode", encode(photo), spec, 422)
    assert e["field"] == "ops[1].flip" and e["code"] == "EPROFILE", e


@pytest.mark.parametrize("how", FLIPS)
def test_flip_jpeg_photo_equals_pil(srv, how):
    """A real JPEG photo decoded and flipped equals PIL's decode transposed
    (libjpeg-turbo decodes for both)."""
    blob = open(os.path.join(CORPUS, "testorig.jpg"), "rb").read()
    pil = Image.open(io.BytesIO(blob)).convert("RGB")
    if how in ("horizontal", "both"):
        pil = pil.transpose(Image.FLIP_LEFT_RIGHT)
    if how in ("vertical", "both"):
        pil = pil.transpose(Image.FLIP_TOP_BOTTOM)
    got = decode(srv, blob, {"decode": {"format": "rgb"}, "ops": [{"flip": how}]})
    assert np.array_equal(got, np.asarray(pil))


def test_flip_anywhere_in_the_ops(srv, photo):
    """flip, crop, resize, flip, border: each op on the image the one before
    made (PIL doing the same steps)."""
    spec = {"ops": [{"flip": "horizontal"}, {"crop": [10, 5, 150, 120]},
                    {"resize": {"w": 70, "h": 58, "parity": "pil", "interp": "bilinear"}},
                    {"flip": "vertical"},
                    {"border": {"top": 1, "bottom": 2, "left": 3, "right": 0,
                                "type": "constant", "value": [9, 8, 7]}}]}
    want = photo.transpose(Image.FLIP_LEFT_RIGHT).crop((10, 5, 151, 121))
    want = want.resize((70, 58), Image.BILINEAR).transpose(Image.FLIP_TOP_BOTTOM)
    want = np.pad(np.asarray(want), ((1, 2), (3, 0), (0, 0)))
    want[:1], want[-2:], want[:, :3] = [9, 8, 7], [9, 8, 7], [9, 8, 7]
    got = decode(srv, encode(photo), spec)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("how", ["horizontal", "vertical"])
def test_flip_after_the_last_resize_equals_torchvision(srv, photo, how):
    """crop -> resize (pil) -> flip -> ToTensor + Normalize: torchvision's
    resized_crop, hflip/vflip, to_tensor, normalize on the PIL image, within
    1e-6; the uint8 pixels are PIL's exactly; the reported map back has a
    negative scale on the mirrored axis."""
    ops = [{"crop": [12, 7, 201, 140]},
           {"resize": {"w": 96, "h": 80, "parity": "pil", "interp": "bilinear"}},
           {"flip": how}]
    pil = TF.resized_crop(photo, 7, 12, 134, 190, [80, 96],
                          T.InterpolationMode.BILINEAR)
    pil = TF.hflip(pil) if how == "horizontal" else TF.vflip(pil)
    assert np.array_equal(u8_tensor(srv, encode(photo), {"ops": ops}), np.asarray(pil))
    want = TF.normalize(TF.to_tensor(pil), MEAN, STD).numpy()
    got = f32_tensor(srv, encode(photo), {"ops": ops})
    assert got.shape == want.shape and np.abs(got - want).max() <= 1e-6
    r = post(srv, "/v1/preprocess", encode(photo),
             {"ops": ops, "normalize": {"mean": MEAN, "std": STD}})
    sx, sy = (float(v) for v in r.h("X-Dvpp-Scale").split(","))
    assert (sx < 0) == (how == "horizontal") and (sy < 0) == (how == "vertical"), r.headers


# --------------------------------------------------------------------------
# grey: torchvision Grayscale on PIL is img.convert('L')


GRAY_PIL = {"convert": {"format": "gray", "parity": "pil"}}


def random_rgb(w, h, seed):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_convert_gray_default_is_cv2_not_pil(srv):
    """{"convert": "gray"} is cv2's COLOR_RGB2GRAY (15-bit weights), which
    differs from Pillow's convert('L') (16-bit weights) by 1 on some pixels:
    why the pil parity exists."""
    import cv2
    a = random_rgb(257, 129, 5)
    got = np.frombuffer(post(srv, "/v1/decode", a.tobytes(),
                             raw_spec("rgb", 257, 129, [{"convert": "gray"}])
                             | {"output": {"format": "gray", "out": "raw"}}).body,
                        np.uint8).reshape(129, 257)
    assert np.array_equal(got, cv2.cvtColor(a, cv2.COLOR_RGB2GRAY))
    assert (got != np.asarray(Image.fromarray(a).convert("L"))).sum() > 0


@pytest.mark.parametrize("w,h", [(257, 129), (1, 1), (31, 7), (1024, 64)])
def test_convert_gray_pil_equals_pil_convert_L(srv, w, h):
    """parity pil: Pillow's weights, exactly, at every SIMD width's tail."""
    a = random_rgb(w, h, w * h)
    spec = raw_spec("rgb", w, h, [GRAY_PIL]) | {"output": {"format": "gray", "out": "raw"}}
    got = np.frombuffer(post(srv, "/v1/decode", a.tobytes(), spec).body, np.uint8)
    assert np.array_equal(got.reshape(h, w), np.asarray(Image.fromarray(a).convert("L")))


def test_convert_gray_pil_on_a_jpeg_photo(srv):
    blob = open(os.path.join(CORPUS, "testorig.jpg"), "rb").read()
    want = np.asarray(Image.open(io.BytesIO(blob)).convert("RGB").convert("L"))
    got = decode(srv, blob, {"decode": {"format": "rgb"}, "ops": [GRAY_PIL],
                             "output": {"format": "gray"}})
    assert np.array_equal(got, want)


@pytest.mark.parametrize("then_rgb", [True, False], ids=["gray-rgb", "gray"])
def test_grayscale3_equals_torchvision(srv, photo, then_rgb):
    """torchvision Grayscale(3) (and Grayscale(1) broadcast to 3): PIL grey
    in all three channels, via convert gray (pil) then rgb, or straight into
    the normalisation (which reads a grey image as three equal channels)."""
    ops = [{"crop": [3, 2, 200, 140]}, GRAY_PIL] + ([{"convert": "rgb"}] if then_rgb else [])
    img = photo.crop((3, 2, 201, 141))
    g3 = T.Grayscale(3)(img)
    assert np.array_equal(u8_tensor(srv, encode(photo), {"ops": ops}), np.asarray(g3))
    want = TF.normalize(TF.to_tensor(g3), MEAN, STD).numpy()
    got = f32_tensor(srv, encode(photo), {"ops": ops})
    assert np.abs(got - want).max() <= 1e-6
    one = TF.to_tensor(T.Grayscale(1)(img)).numpy()        # 1 x H x W
    got1 = post(srv, "/v1/preprocess", encode(photo),
                {"ops": ops, "normalize": {"dtype": "float32"}}).npy()[0]
    assert np.abs(got1 - one).max() <= 1e-6                 # every channel is it


@pytest.mark.parametrize("bad,field", [
    ({"convert": {"format": "rgb", "parity": "pil"}}, "ops[0].convert"),
    ({"convert": {"format": "gray", "parity": "tf"}}, "ops[0].convert"),
    ({"convert": {"format": "gray", "parity": "opencv"}}, "ops[0].convert.parity"),
    ({"convert": {"parity": "pil"}}, "ops[0].convert.format"),
    ({"convert": {"format": "gray", "matrix": "bt709"}}, "ops[0].convert"),
])
def test_convert_object_form_refusals(srv, photo, bad, field):
    e = refused(srv, "/v1/decode", encode(photo), {"ops": [bad]})
    assert e["field"] == field and e["code"] == "EINVAL", e
