"""The centre crop op ({"crop": {"center": [W, H], "round": ...}} and
?crop_center=WxH[:even]) through a real dvppd's /v1/image, PNG output
(lossless), against numpy slicing of the same source:

  floor  left = (L - C) // 2                      (transformers' center_crop)
  even   left = int(round((L - C) / 2.0)), ties to even (torchvision's CenterCrop)

on sizes where the two part ((L - C) % 4 == 3) and where they meet
((L - C) % 4 == 1, a tie on an even offset); after a resize (the rectangle
resolved on the resize's output, the stretch + crop fused into a windowed
resize), first on a JPEG (the decode limited to the crop) against
dvppd's own full decode; the geometry header; a centre crop larger than
its image refused with 400 naming the op.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_center_crop.py
"""
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, free_port, stop_daemon  # noqa: E402

PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2},
           "socket": {"path": ""}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("ccrop")), cfg, "ccrop", port)
    yield d
    stop_daemon(d)


def pattern(w, h):
    """An RGB picture where every column and row differs from its
    neighbours (a one-pixel shift always shows)."""
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([(x * 7 + y * 3) % 256, (x * 13 + y * 29) % 256, (x * y) % 251], -1)
    return a.astype(np.uint8)


def png_bytes(a):
    b = io.BytesIO()
    Image.fromarray(a).save(b, "PNG")
    return b.getvalue()


def image(srv, body, spec=None, query="", status=200):
    hdr = {"X-Dvpp-Spec": json.dumps(spec)} if spec else None
    r = srv.post("/v1/image" + query, body, hdr)
    assert r.status == status, r
    return r


def pixels(r):
    return np.asarray(Image.open(io.BytesIO(r.body)).convert("RGB"))


def tv_offset(length, crop):
    return int(round((length - crop) / 2.0))


def hf_offset(length, crop):
    return (length - crop) // 2


# (w, h, cw, ch): 387 - 224 = 163 (% 4 == 3: even 82, floor 81); 385 - 224 =
# 161 (% 4 == 1: 80 both); 389 - 100 = 289 (% 4 == 1: 144 both); 7 - 4 = 3
# (even 2, floor 1)
SIZES = [(387, 385, 224, 224), (389, 391, 100, 224), (7, 9, 4, 4)]


@pytest.mark.parametrize("w,h,cw,ch", SIZES)
@pytest.mark.parametrize("rnd", ["even", "floor"])
def test_json_centre_crop_equals_slicing(srv, w, h, cw, ch, rnd):
    a = pattern(w, h)
    spec = {"ops": [{"crop": {"center": [cw, ch], "round": rnd}}],
            "output": {"format": "png"}}
    r = image(srv, png_bytes(a), spec)
    off = tv_offset if rnd == "even" else hf_offset
    x0, y0 = off(w, cw), off(h, ch)
    got = pixels(r)
    assert got.shape == (ch, cw, 3)
    assert np.array_equal(got, a[y0:y0 + ch, x0:x0 + cw]), (rnd, x0, y0)
    assert float(r.headers["x-dvpp-pad"].split(",")[0]) == -x0
    assert float(r.headers["x-dvpp-pad"].split(",")[1]) == -y0


def test_the_roundings_part_where_they_should(srv):
    """387 - 224 = 163: even 82, floor 81 — the two answers differ by the
    one-column shift, and "round" defaults to floor."""
    a = pattern(387, 300)
    body = png_bytes(a)
    even = pixels(image(srv, body, {"ops": [{"crop": {"center": [224, 224],
                                                      "round": "even"}}],
                                    "output": {"format": "png"}}))
    dflt = pixels(image(srv, body, {"ops": [{"crop": {"center": 224}}],
                                    "output": {"format": "png"}}))
    assert tv_offset(387, 224) == 82 and hf_offset(387, 224) == 81
    assert np.array_equal(dflt, a[38:262, 81:305])
    assert np.array_equal(even, a[38:262, 82:306])
    assert not np.array_equal(even, dflt)
    assert np.array_equal(even[:, :-1], dflt[:, 1:])


@pytest.mark.parametrize("rnd", ["even", "floor"])
def test_query_crop_center_after_the_resize(srv, rnd):
    """?w=&h=&crop_center=WxH[:round]: the resize first (a stretch to 387 x
    301), the crop of its output; fused into one windowed resize, which
    changes no byte: equal the resize alone, sliced."""
    a = pattern(500, 400)
    body = png_bytes(a)
    full = pixels(image(srv, body, query="?w=387&h=301&format=png"))
    assert full.shape == (301, 387, 3)
    r = image(srv, body, query=f"?w=387&h=301&crop_center=224x100:{rnd}&format=png")
    off = tv_offset if rnd == "even" else hf_offset
    x0, y0 = off(387, 224), off(301, 100)  # 163 -> 82/81; 201 -> 100 (tie, even 100)
    assert np.array_equal(pixels(r), full[y0:y0 + 100, x0:x0 + 224])
    # WxH alone is floor
    r = image(srv, body, query="?w=387&h=301&crop_center=224x100&format=png")
    assert np.array_equal(pixels(r), full[100:200, 81:305])


@pytest.mark.parametrize("rnd", ["even", "floor"])
def test_jpeg_first_op_decodes_only_the_crop(srv, rnd):
    """A centre crop as op 0 of a JPEG (227x149: 227 - 100 = 127, % 4 == 3:
    even 64, floor 63; 149 - 61 = 88: 44) limits the decode to the
    resolved rectangle: equal dvppd's whole decode, sliced."""
    body = open(PHOTO, "rb").read()
    full = pixels(image(srv, body, {"output": {"format": "png"}}))
    assert full.shape == (149, 227, 3)
    r = image(srv, body, {"ops": [{"crop": {"center": [100, 61], "round": rnd}}],
                          "output": {"format": "png"}})
    x0 = 64 if rnd == "even" else 63
    assert np.array_equal(pixels(r), full[44:105, x0:x0 + 100])


@pytest.mark.parametrize("spec,query,field,words", [
    ({"ops": [{"crop": {"center": [388, 10]}}]}, "", "ops[0].crop",
     "larger than the 387x385 image"),
    ({"ops": [{"resize": {"w": 100, "h": 50}}, {"crop": {"center": [64, 64],
                                                         "round": "even"}}]}, "",
     "ops[1].crop", "larger than the 100x50 image"),
    (None, "?crop_center=400x400", "ops[0].crop", "larger than the 387x385 image"),
    ({"ops": [{"crop": {"center": [10, 10], "round": "up"}}]}, "", "ops[0].crop.round",
     "want floor or even"),
    ({"ops": [{"crop": {"center": [0, 10]}}]}, "", "ops[0].crop.center", ""),
    ({"ops": [{"crop": {"round": "even"}}]}, "", "ops[0].crop.center", "needs its size"),
    ({"ops": [{"crop": {"center": [10, 10], "x": 1}}]}, "", "ops[0].crop", "x"),
    (None, "?crop_center=10x10:up", "crop_center", "want WxH"),
    (None, "?crop_center=10", "crop_center", "want WxH"),
    (None, "?crop_center=0x0", "crop_center", "want WxH"),
    (None, "?w=256&mode=shorter&crop_center=0x0", "crop_center", "want WxH"),
    (None, "?crop_center=0x5", "crop_center", "want WxH"),
])
def test_refusals(srv, spec, query, field, words):
    r = image(srv, png_bytes(pattern(387, 385)), spec, query, status=400)
    e = json.loads(r.body)["error"]
    assert e["field"] == field and words in e["message"], e
