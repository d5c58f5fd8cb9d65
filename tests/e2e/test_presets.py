"""Named presets (dvppd/dvppd_presets.c, docs/presets.md) through a real
dvppd: GET /v1/presets, ?preset=NAME, {"preset": NAME, ...} in JSON specs
(HTTP and the socket), config presets and their validation at load.

References: the imagenet and clip presets are held to a numpy/PIL
re-implementation of torchvision's Resize(S) (PIL filter) + CenterCrop(C)
+ ToTensor + Normalize in float32. dvppd's resize runs with parity pil,
which is Pillow's resize bit for bit, and its normalisation is computed in
double and rounded once to float32, so the only difference is float32
rounding of (x/255 - m)/s: bounded by 1e-6 (measured: 4.8e-7). The presets'
`shorter` resize rounds the long side down (`round: floor`), as
torchvision's int(), and their centre crop rounds its offset half to
even ("round": "even"), as torchvision's CenterCrop: where that differs
from transformers' floor ((L - C) % 4 == 3) dvppd equals torchvision and
the test checks that the floored crop would not. yolov8 is held to
cv2.resize INTER_LINEAR (dvppd's cv2 parity, bit-exact) inside the
letterbox and to 114/255 in the bars.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_presets.py
"""
import io
import json
import os
import subprocess

import cv2
import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import DVPPD, ROOT, free_port, stop_daemon  # noqa: E402

PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")
IMAGENET = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
CLIP = ([0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711])
ATOL = 1e-6

SHIPPED = {
    "imagenet": {"ops": [{"resize": {"w": 256, "mode": "shorter", "interp": "bilinear",
                                     "parity": "pil", "round": "floor"}},
                         {"crop": {"center": [224, 224], "round": "even"}}],
                 "normalize": {"mean": IMAGENET[0], "std": IMAGENET[1], "order": "rgb",
                               "layout": "nchw", "dtype": "float32"}},
    "clip": {"ops": [{"resize": {"w": 224, "mode": "shorter", "interp": "bicubic",
                                 "parity": "pil", "round": "floor"}},
                     {"crop": {"center": [224, 224], "round": "even"}}],
             "normalize": {"mean": CLIP[0], "std": CLIP[1], "order": "rgb",
                           "layout": "nchw", "dtype": "float32"}},
    "yolov8": {"ops": [{"resize": {"w": 640, "h": 640, "mode": "letterbox",
                                   "interp": "bilinear", "parity": "cv2",
                                   "pad": [114, 114, 114]}}],
               "normalize": {"order": "rgb", "layout": "nchw", "dtype": "float32"}},
    "ascend-yuv": {"output": {"format": "nv12", "align": [16, 2]}},
}

TINY = {"ops": [{"resize": {"w": 8, "h": 6}}],
        "normalize": {"dtype": "uint8", "layout": "nhwc", "scale": 1}}


def _start(tmp_path_factory, name, extra=None):
    port = free_port()
    sd = daemon_util.sock_dir(name)
    sock = os.path.join(sd, "dvppd.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2},
           "socket": {"path": sock, "mode": "0600"}}
    cfg.update(extra or {})
    return daemon_util.start_daemon(str(tmp_path_factory.mktemp(name)), cfg, name, port,
                                    sock=sock, sock_dir=sd)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    d = _start(tmp_path_factory, "presets")
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def cfgsrv(tmp_path_factory):
    d = _start(tmp_path_factory, "cfgpresets", {"presets": {
        "tiny": {"description": "8x6 pixels", "spec": TINY},
        "yolov8": {"description": "mine", "spec": {"ops": [{"resize": {"w": 4, "h": 4}}]}},
        "thumb": {"kind": "image", "spec": {"ops": [{"resize": {"w": 20, "h": 10}}],
                                            "output": {"format": "png"}}}}})
    yield d
    stop_daemon(d)


def png(img):
    b = io.BytesIO()
    img.save(b, "PNG")
    return b.getvalue()


@pytest.fixture(scope="module")
def photo():
    return Image.open(PHOTO).convert("RGB")


def torchvision_ref(img, short, crop, filt, mean, std, long_round=False, crop_floor=False):
    """torchvision's Resize(short) + CenterCrop(crop) + ToTensor + Normalize
    on a PIL image (long side int()-truncated; @long_round: rounded to
    nearest, as `shorter` without round: floor; crop offset
    int(round((L - C) / 2.0)), Python's half to even; @crop_floor:
    (L - C) // 2, as transformers' center_crop and dvppd's "round": "floor"),
    NCHW float32 with N = 1."""
    w, h = img.size
    f = (lambda x: int(x + 0.5)) if long_round else int
    nw, nh = (short, f(short * h / w)) if w <= h else (f(short * w / h), short)
    r = img.resize((nw, nh), filt)
    if crop_floor:
        top, left = (nh - crop) // 2, (nw - crop) // 2
    else:
        top, left = int(round((nh - crop) / 2.0)), int(round((nw - crop) / 2.0))
    a = np.asarray(r.crop((left, top, left + crop, top + crop)), np.float32) / np.float32(255)
    a = (a - np.array(mean, np.float32)) / np.array(std, np.float32)
    return a.transpose(2, 0, 1)[None]


def post(d, path, body, query="", spec=None, status=200):
    r = d.post(path + query, body, {"X-Dvpp-Spec": json.dumps(spec)} if spec else None)
    assert r.status == status, r
    return r


def error_of(r):
    return json.loads(r.body)["error"]


# --- the list --------------------------------------------------------------------


def test_presets_lists_the_shipped_four(srv):
    r = srv.get("/v1/presets")
    assert r.status == 200, r
    got = {p["name"]: p for p in json.loads(r.body)["presets"]}
    assert sorted(got) == sorted(SHIPPED)
    for name, spec in SHIPPED.items():
        assert got[name]["source"] == "builtin"
        assert got[name]["description"]
        assert got[name]["spec"] == spec, name
    assert got["ascend-yuv"]["kind"] == "decode" and got["imagenet"]["kind"] == "tensor"
    info = json.loads(srv.get("/v1/info").body)
    assert sorted(info["presets"]) == sorted(SHIPPED)


def test_config_presets_listed_and_override(cfgsrv, photo):
    got = {p["name"]: p for p in json.loads(cfgsrv.get("/v1/presets").body)["presets"]}
    assert sorted(got) == sorted(list(SHIPPED) + ["tiny", "thumb"])
    assert got["tiny"]["source"] == "config" and got["tiny"]["spec"] == TINY
    assert got["tiny"]["description"] == "8x6 pixels"
    assert got["yolov8"]["source"] == "config" and got["yolov8"]["description"] == "mine"
    assert got["imagenet"]["source"] == "builtin"
    x = post(cfgsrv, "/v1/preprocess", png(photo), "?preset=tiny").npy()
    assert x.shape == (1, 6, 8, 3) and x.dtype == np.uint8
    cv = cv2.resize(np.asarray(photo), (8, 6), interpolation=cv2.INTER_LINEAR)
    assert np.array_equal(x[0], cv), "tiny: the cv2 bilinear resize"
    # the replaced yolov8 is the config's 4x4, not the letterbox
    y = post(cfgsrv, "/v1/preprocess", png(photo), "?preset=yolov8")
    assert y.headers["x-dvpp-shape"] == "1,3,4,4"
    im = post(cfgsrv, "/v1/image", png(photo), "?preset=thumb")
    assert Image.open(io.BytesIO(im.body)).size == (20, 10)


# --- the shipped presets against their references ------------------------------


@pytest.mark.parametrize("size", [(227, 149), (454, 298)])
@pytest.mark.parametrize("name", ["imagenet", "clip"])
def test_imagenet_clip_equal_torchvision(srv, photo, name, size):
    img = photo if size == photo.size else photo.resize(size, Image.BICUBIC)
    body = open(PHOTO, "rb").read() if size == photo.size else png(img)
    x = post(srv, "/v1/preprocess", body, f"?preset={name}").npy()
    short, filt, (mean, std) = ((256, Image.BILINEAR, IMAGENET) if name == "imagenet"
                                else (224, Image.BICUBIC, CLIP))
    ref = torchvision_ref(img, short, 224, filt, mean, std)
    assert x.shape == (1, 3, 224, 224) and x.dtype == np.float32
    err = np.abs(x - ref).max()
    assert err <= ATOL, f"{name} {size}: max |dvppd - torchvision| {err}"


@pytest.mark.parametrize("name", ["imagenet", "clip"])
def test_long_side_truncates_as_torchvision(srv, photo, name):
    """601x400: 256 * 601 / 400 = 384.64 and 224 * 601 / 400 = 336.56: the
    presets' `shorter` (round: floor) makes 384 / 336 as torchvision's
    int(), where rounding to nearest would make 385 / 337; both centre
    crops land where torchvision's do (160 / 2, 112 / 2: even). dvppd
    equals torchvision, and the test can tell the rounded geometry apart."""
    img = photo.resize((601, 400), Image.BICUBIC)
    r = post(srv, "/v1/preprocess", png(img), f"?preset={name}")
    x = r.npy()
    short, filt, norm = ((256, Image.BILINEAR, IMAGENET) if name == "imagenet"
                         else (224, Image.BICUBIC, CLIP))
    ref = torchvision_ref(img, short, 224, filt, *norm)
    rounded = torchvision_ref(img, short, 224, filt, *norm, long_round=True)
    assert np.abs(x - ref).max() <= ATOL, f"{name}: max |dvppd - torchvision|"
    assert np.abs(x - rounded).max() > 0.05
    sx = float(r.headers["x-dvpp-scale"].split(",")[0])
    assert abs(sx - (384 if name == "imagenet" else 336) / 601) < 1e-12


@pytest.mark.parametrize("name", ["imagenet", "clip"])
def test_641x423_centre_crop_rounds_half_to_even(srv, photo, name):
    """641x423: imagenet's shorter 256 makes 387x256 (256 * 641 / 423 =
    387.93, int()), clip's 224 makes 339x224 (339.44). The centre crop's
    offset: 387 - 224 = 163 -> round(81.5) = 82 (floor 81); 339 - 224 = 115
    -> round(57.5) = 58 (floor 57): (L - C) % 4 == 3 in both, where half to
    even and floor part. dvppd equals torchvision exactly; the floored crop
    (transformers') is one column to the left."""
    img = photo.resize((641, 423), Image.BICUBIC)
    r = post(srv, "/v1/preprocess", png(img), f"?preset={name}")
    x = r.npy()
    short, filt, norm = ((256, Image.BILINEAR, IMAGENET) if name == "imagenet"
                         else (224, Image.BICUBIC, CLIP))
    tv = torchvision_ref(img, short, 224, filt, *norm)
    floor_crop = torchvision_ref(img, short, 224, filt, *norm, crop_floor=True)
    assert np.abs(x - tv).max() <= ATOL, f"{name}: max |dvppd - torchvision|"
    if name == "imagenet":  # 387.93 would round to 388 (339.44 is 339 either way)
        rounded = torchvision_ref(img, short, 224, filt, *norm, long_round=True)
        assert np.abs(x - rounded).max() > 0.05
    assert np.abs(x - floor_crop).max() > 0.05
    # the floored crop is the same pixels one column to the left
    assert np.abs(x[..., :-1] - floor_crop[..., 1:]).max() <= ATOL
    want = -82 if name == "imagenet" else -58
    assert float(r.headers["x-dvpp-pad"].split(",")[0]) == want


def test_imagenet_637x423_tie_rounds_down_to_even(srv, photo):
    """637x423: 256 * 637 / 423 = 385.51 -> 385; 385 - 224 = 161 ((L - C) %
    4 == 1): round(80.5) = 80, even already, so torchvision's crop and the
    floored one agree (offset 80, not 81)."""
    img = photo.resize((637, 423), Image.BICUBIC)
    r = post(srv, "/v1/preprocess", png(img), "?preset=imagenet")
    x = r.npy()
    tv = torchvision_ref(img, 256, 224, Image.BILINEAR, *IMAGENET)
    floor_crop = torchvision_ref(img, 256, 224, Image.BILINEAR, *IMAGENET, crop_floor=True)
    assert np.array_equal(tv, floor_crop)
    assert np.abs(x - tv).max() <= ATOL
    assert float(r.headers["x-dvpp-pad"].split(",")[0]) == -80


def test_round_query_and_json(srv, photo):
    """round=floor on a shorter resize, in both syntaxes: 641x423 -> 387;
    nearest (the default) 388."""
    body = png(photo.resize((641, 423), Image.BICUBIC))
    q = "?w=256&mode=shorter&dtype=uint8&layout=nhwc&scale=1"
    assert post(srv, "/v1/preprocess", body, q + "&round=floor").headers[
        "x-dvpp-shape"] == "1,256,387,3"
    assert post(srv, "/v1/preprocess", body, q).headers["x-dvpp-shape"] == "1,256,388,3"
    assert post(srv, "/v1/preprocess", body, q + "&round=nearest").headers[
        "x-dvpp-shape"] == "1,256,388,3"
    spec = {"ops": [{"resize": {"w": 100, "mode": "longer", "round": "floor"}}],
            "normalize": {"dtype": "uint8", "layout": "nhwc", "scale": 1}}
    # longer 100 of 641x423: 100 * 423 / 641 = 65.99 -> 65 (nearest: 66)
    assert post(srv, "/v1/preprocess", body, spec=spec).headers["x-dvpp-shape"] == \
        "1,65,100,3"


def test_yolov8_letterbox_geometry_and_grey(srv, photo):
    r = post(srv, "/v1/preprocess", open(PHOTO, "rb").read(), "?preset=yolov8")
    x = r.npy()
    assert x.shape == (1, 3, 640, 640) and x.dtype == np.float32
    s = 640 / 227
    nh = int(149 * s + 0.5)                    # 420
    top = (640 - nh) // 2                      # 110
    sx, sy = (float(v) for v in r.headers["x-dvpp-scale"].split(","))
    px, py = (float(v) for v in r.headers["x-dvpp-pad"].split(","))
    assert abs(sx - s) < 1e-9 and abs(sy - nh / 149) < 1e-9
    assert (px, py) == (0, top)
    grey = np.float32(114) / np.float32(255)
    assert np.all(x[0, :, :top, :] == grey) and np.all(x[0, :, top + nh:, :] == grey)
    want = cv2.resize(np.asarray(photo), (640, nh), interpolation=cv2.INTER_LINEAR)
    want = want.astype(np.float32).transpose(2, 0, 1) / np.float32(255)
    assert np.abs(x[0, :, top:top + nh, :] - want).max() <= ATOL


def test_ascend_yuv_decode_strides(srv, photo):
    r = post(srv, "/v1/decode", open(PHOTO, "rb").read(), "?preset=ascend-yuv")
    h = r.headers
    assert h["x-dvpp-format"] == "nv12"
    assert (h["x-dvpp-width"], h["x-dvpp-height"]) == ("227", "149")
    assert (h["x-dvpp-width-stride"], h["x-dvpp-height-stride"]) == ("240", "150")
    a = r.npy().reshape(-1)
    assert a.size == 240 * 150 * 3 // 2
    y = a[:240 * 150].reshape(150, 240)[:149, :227].astype(np.float64)
    # the JPEG's own luma plane (libjpeg's YCbCr output, as PIL's draft
    # in YCbCr reads it): the decode keeps the stored samples
    j = Image.open(PHOTO)
    j.draft("YCbCr", j.size)
    luma = np.asarray(j)[:, :, 0].astype(np.float64)
    assert np.array_equal(y, luma)


# --- the syntax ----------------------------------------------------------------


def test_json_preset_with_override(srv, photo):
    spec = {"preset": "imagenet", "normalize": {"dtype": "uint8", "layout": "nhwc",
                                                "scale": 1}}
    x = post(srv, "/v1/preprocess", open(PHOTO, "rb").read(), spec=spec).npy()
    r = photo.resize((390, 256), Image.BILINEAR)
    want = np.asarray(r.crop((83, 16, 83 + 224, 16 + 224)))
    assert x.shape == (1, 224, 224, 3) and np.array_equal(x[0], want)
    # "ops" replaces the preset's ops as a whole, normalisation kept
    spec = {"preset": "imagenet", "ops": [{"resize": {"w": 32, "h": 16}}]}
    r = post(srv, "/v1/preprocess", open(PHOTO, "rb").read(), spec=spec)
    assert r.headers["x-dvpp-shape"] == "1,3,16,32"
    ref = cv2.resize(np.asarray(photo), (32, 16), interpolation=cv2.INTER_LINEAR)
    ref = (ref.astype(np.float32) / 255 - np.array(IMAGENET[0], np.float32)) / \
        np.array(IMAGENET[1], np.float32)
    assert np.abs(r.npy()[0] - ref.transpose(2, 0, 1)).max() <= ATOL


@pytest.mark.parametrize("path,query,spec,field,words", [
    ("/v1/preprocess", "?preset=nope", None, "preset", "no preset named 'nope'"),
    ("/v1/preprocess", "?preset=imagenet&w=100", None, "w", "not beside preset="),
    ("/v1/preprocess", "?w=100&preset=imagenet", None, "w", "not beside preset="),
    ("/v1/preprocess", "?preset=imagenet", {"ops": []}, "preset", "not beside it"),
    ("/v1/preprocess", "", {"preset": "nope"}, "preset", "no preset named 'nope'"),
    ("/v1/preprocess", "", {"preset": 3}, "preset", "a string"),
    ("/v1/preprocess", "", {"preset": "imagenet", "bogus": 1}, "spec", "unknown key 'bogus'"),
    ("/v1/preprocess", "?preset=ascend-yuv", None, "preset", "for /v1/decode"),
    ("/v1/image", "?preset=imagenet", None, "preset", "for tensor endpoints"),
    ("/v1/decode", "", {"preset": "yolov8"}, "preset", "for tensor endpoints"),
    ("/v1/preprocess", "?w=8&h=8&round=floor", None, "round", "only for mode shorter"),
    ("/v1/preprocess", "?w=8&mode=fill&h=8&round=floor", None, "round",
     "only for mode shorter"),
    ("/v1/preprocess", "?w=8&mode=shorter&round=up", None, "round", "want nearest or floor"),
    ("/v1/preprocess", "", {"ops": [{"resize": {"w": 8, "h": 8, "round": "floor"}}]},
     "ops[0].resize.round", "only for mode shorter or longer"),
    ("/v1/preprocess", "", {"ops": [{"resize": {"w": 8, "h": 8, "mode": "letterbox",
                                                "round": "floor"}}]},
     "ops[0].resize.round", "only for mode shorter or longer"),
    ("/v1/preprocess", "", {"ops": [{"resize": {"w": 8, "mode": "shorter", "round": 1}}]},
     "ops[0].resize.round", "want nearest or floor"),
])
def test_refusals(srv, photo, path, query, spec, field, words):
    r = post(srv, path, open(PHOTO, "rb").read(), query, spec, status=400)
    e = error_of(r)
    assert e["field"] == field and words in e["message"], e


def test_batch_takes_presets(srv, photo):
    flipped = png(photo.transpose(Image.FLIP_LEFT_RIGHT))
    body, hdrs = daemon_util.multipart([("a", open(PHOTO, "rb").read()), ("b", flipped)],
                                       as_files=True)
    one = post(srv, "/v1/preprocess", open(PHOTO, "rb").read(), "?preset=clip").npy()
    two = post(srv, "/v1/preprocess", flipped, "?preset=clip").npy()
    r = srv.post("/v1/batch?preset=clip", body, hdrs)
    assert r.status == 200, r
    x = r.npy()
    assert x.shape == (2, 3, 224, 224)
    assert np.array_equal(x[0], one[0]) and np.array_equal(x[1], two[0])


def test_socket_preset_equals_http(srv):
    body = open(PHOTO, "rb").read()
    want = post(srv, "/v1/preprocess", body, "?preset=imagenet").npy()
    with srv.client() as c:
        ring = c.open_ring(1, 3 * 224 * 224 * 4)
        with c.submit({"preset": "imagenet"}, body, ring=ring) as r:
            got = r.array().copy()
        with pytest.raises(Exception) as ei:
            c.submit({"preset": "nope"}, body, ring=ring)
        assert "preset" in str(ei.value)
    assert got.shape == want.shape and np.array_equal(got, want)


# --- loading --------------------------------------------------------------------


@pytest.mark.parametrize("presets,words", [
    ({"bad": {"spec": {"ops": [{"resize": {"w": 8, "h": 8, "interp": "magic"}}]}}},
     "presets.bad.spec.ops[0].resize.interp"),
    ({"bad": {"spec": {"normalize": {}}, "kind": "image"}}, "presets.bad.spec.normalize"),
    ({"bad": {"spec": {"preset": "imagenet"}}}, "presets.bad.spec.preset"),
    ({"bad": {"spec": {"nope": 1}}}, "presets.bad.spec: unknown key 'nope'"),
    ({"bad": {"description": "x"}}, "presets.bad: no \"spec\""),
    ({"bad": {"spec": {}, "colour": 1}}, "presets.bad: unknown key 'colour'"),
    ({"bad": {"spec": {}, "kind": "video"}}, "presets.bad.kind"),
    ({"a b": {"spec": {}}}, "presets.a b: a name is"),
    ({f"p{i}": {"spec": {}} for i in range(65)}, "presets: 65, at most 64"),
])
def test_bad_preset_fails_the_load(tmp_path, presets, words):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"http": {"listen": "127.0.0.1:0"}, "socket": {"path": ""},
                               "presets": presets}))
    p = subprocess.run([DVPPD, "--config", str(cfg), "--check-config"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode != 0 and words in p.stderr + p.stdout, p.stderr


def test_check_config_prints_presets(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"socket": {"path": ""},
                               "presets": {"tiny": {"spec": TINY}}}))
    p = subprocess.run([DVPPD, "--config", str(cfg), "--check-config"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["presets"] == {"tiny": {"spec": TINY}}
