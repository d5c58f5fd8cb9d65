"""dvppd's HTTP API (docs/http-api.md) end to end, through the real daemon.

Every tensor is compared with what `dvppctl` computes for the same pipeline
(docs/http-api.md: "byte-identical to dvppctl"), and the /v1/preprocess
parity cases also with an independent reference (OpenCV, Pillow and numpy:
_reference below), with a maximum difference of 0. Run with Debian's
/usr/bin/python3 (numpy, cv2, PIL); HTTP through the standard library only:

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_http.py
"""
import http.client
import io
import json
import os
import random
import re
import select
import signal
import struct
import threading
import time
import urllib.parse

import numpy as np
import pytest
from PIL import Image

import cv2  # python3-opencv (make deps): a hard dependency, so an import, not a skip

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (Data, Resp, aipp_rgb, ctl, free_port, gradient,  # noqa: E402
                         multipart, read_raw_response, resp_from, stop_daemon, to_jpeg,
                         to_png)
import daemon_util  # noqa: E402


MEAN = "0.485,0.456,0.406"
STD = "0.229,0.224,0.225"
MAX_BODY = 2000000
MAX_BATCH_ITEMS = 64
REQUEST_TIMEOUT_S = 3
IDLE_TIMEOUT_S = 2

AIPP_CFG = aipp_rgb(224, 224)
# The same op with other numbers: the inline config must be the one used.
AIPP_INLINE = AIPP_CFG.replace("123", "100").replace("0.0171", "0.02")


# --------------------------------------------------------------------------
# HTTP helpers (the rest are daemon_util's)


def qs(params):
    return urllib.parse.urlencode(params, safe=",:")


def assert_error(r, status, code=None, field=None, mentions=None):
    assert r.status == status, r
    assert r.h("content-type", "").split(";")[0].strip() == "application/json", r
    j = r.json()
    assert set(j) == {"error"}, j
    e = j["error"]
    assert {"code", "message", "field"} <= set(e), j
    assert isinstance(e["code"], str) and e["code"], j
    assert isinstance(e["message"], str) and e["message"], j
    assert isinstance(e["field"], str), j
    if code is not None:
        assert e["code"] == code, j
    if field is not None:
        assert e["field"] == field, j
    if mentions is not None:
        assert mentions in e["field"] or mentions in e["message"], j
    return e


# --------------------------------------------------------------------------
# dvppctl (the library result)


def ctl_flags(params):
    """Query parameters of /v1/preprocess -> dvppctl preprocess flags."""
    p = dict(params)
    f = []
    if "w" in p:
        w = p.pop("w")
        h = p.pop("h", None)
        f += ["--size", f"{w}x{h}" if h is not None else f"{w}"]
    names = {"mode": "--mode", "interp": "--interp", "parity": "--parity",
             "ascend_mode": "--ascend-mode", "pad": "--pad", "mean": "--mean",
             "std": "--std", "scale": "--scale", "order": "--order",
             "layout": "--layout", "dtype": "--dtype", "profile": "--profile"}
    flags = {"allow_partial": "--allow-partial", "no_orient": "--no-orient"}
    for k, v in p.items():
        if k in names:
            f += [names[k], str(v)]
        elif k in flags:
            if str(v) == "1":
                f.append(flags[k])
        elif k == "shrink_on_load":
            if str(v) == "1":
                f += ["--shrink-on-load", "auto"]
        else:
            raise KeyError(k)
    return f


def ctl_preprocess(tmp, src, params, name="ref.npy"):
    out = os.path.join(tmp, name)
    r = ctl("preprocess", src, *ctl_flags(params), "-o", out)
    return np.load(out), json.loads(r.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# Fixtures


def start_daemon(tmp, http_extra=None, device=None, aipp_path=None, name="d", faults=None):
    port = free_port()
    http_cfg = {"listen": f"127.0.0.1:{port}", "request_timeout_s": REQUEST_TIMEOUT_S,
                "idle_timeout_s": IDLE_TIMEOUT_S, "max_body_bytes": MAX_BODY,
                "max_batch_items": MAX_BATCH_ITEMS, "job_ttl_s": 60}
    http_cfg.update(http_extra or {})
    cfg = {"http": http_cfg, "socket": {"path": ""}, "device": device or {"channels": 2}}
    if aipp_path:
        cfg["aipp"] = {"configs": {"test": aipp_path}}
    return daemon_util.start_daemon(tmp, cfg, name, port, faults=faults)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("http_data"))
    d = Data(tmp)
    put = d.put
    d.put_jpegs()
    d.jpg224 = put("i224.jpg", to_jpeg(gradient(224, 224, 4)))
    d.small_png = put("small.png", to_png(gradient(40, 30, 6)))
    rgba = np.dstack([gradient(320, 240, 7),
                      np.tile(np.arange(320, dtype=np.uint8)[None] * 255 // 319, (240, 1))])
    d.alpha_png = put("alpha.png", to_png(rgba))
    assert len(d.jpg1080) < MAX_BODY
    d.aipp_path = os.path.join(tmp, "test.aipp")
    with open(d.aipp_path, "w") as f:
        f.write(AIPP_CFG)
    d.inline_aipp_path = os.path.join(tmp, "inline.aipp")
    with open(d.inline_aipp_path, "w") as f:
        f.write(AIPP_INLINE)
    # 32 mixed sizes, JPEG and PNG, for the batch tests
    d.batch = d.put_batch(32)
    return d


@pytest.fixture(scope="module")
def srv(data, tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("http_srv"))
    d = start_daemon(tmp, aipp_path=data.aipp_path)
    yield d
    stop_daemon(d)


@pytest.fixture
def tmp(tmp_path):
    return str(tmp_path)


@pytest.fixture
def fresh(data, tmp_path):
    """A daemon of its own, for the tests that may break one: its clean exit
    on SIGTERM is part of the test."""
    d = start_daemon(str(tmp_path), aipp_path=data.aipp_path, name="fresh")
    yield d
    stop_daemon(d)


# --------------------------------------------------------------------------
# Operations endpoints


def test_healthz(srv):
    r = srv.get("/healthz")
    assert r.status == 200
    assert r.json() == {"status": "ok"}


def test_readyz(srv):
    assert srv.get("/readyz").status == 200


def test_info(srv):
    r = srv.get("/v1/info")
    assert r.status == 200 and r.h("content-type").startswith("application/json")
    j = r.json()
    version = ctl("version").stdout.split()[1]
    assert version in str(j["version"]), j
    assert j["engines"], j
    assert isinstance(j["limits"], dict) and j["limits"], j
    if isinstance(j.get("channels"), int):
        assert j["channels"] == 2, j
    text = json.dumps(j)
    assert "jpeg" in text and "png" in text, j  # codecs


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _gauge(srv, name):
    """The value of the unlabelled sample @name in /metrics."""
    return sum(v for n, lab, v in metrics(srv) if n == name and not lab)


def metrics(srv):
    r = srv.get("/metrics")
    assert r.status == 200
    assert r.h("content-type", "").startswith("text/plain"), r.headers
    out = []
    for line in r.body.decode().splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, f"bad exposition line: {line!r}"
        out.append((m.group(1), dict(_LABEL.findall(m.group(3) or "")), float(m.group(4))))
    return out


def _requests_total(ms, route_part, code):
    return sum(v for n, lab, v in ms if n == "dvppd_http_requests_total"
               and route_part in lab.get("route", "") and lab.get("code") == str(code))


def test_metrics_count_requests(srv, data):
    before = metrics(srv)
    for _ in range(3):
        assert srv.post("/v1/preprocess?w=32&h=32", data.small).status == 200
    assert srv.get("/no/such/route").status == 404
    assert srv.post("/v1/preprocess?w=32&h=32", b"hello").status == 415
    after = metrics(srv)
    assert _requests_total(after, "preprocess", 200) >= _requests_total(
        before, "preprocess", 200) + 3
    assert _requests_total(after, "preprocess", 415) >= _requests_total(
        before, "preprocess", 415) + 1
    assert sum(v for n, lab, v in after if n == "dvppd_http_requests_total"
               and lab.get("code") == "404") >= 1
    names = {n for n, _, _ in after}
    for want in ("dvppd_http_request_seconds_bucket", "dvppd_stage_seconds_bucket",
                 "dvppd_http_inflight", "dvppd_build_info", "dvppd_pixels_total"):
        assert want in names, want
    stages = {lab.get("stage") for n, lab, _ in after if n == "dvppd_stage_seconds_bucket"}
    assert {"decode", "vpc", "total"} <= stages, stages
    dec = [v for n, lab, v in after if n == "dvppd_stage_seconds_count"
           and lab.get("stage") == "decode"]
    assert dec and dec[0] >= 3
    info = [(lab, v) for n, lab, v in after if n == "dvppd_build_info"]
    assert len(info) == 1 and info[0][1] == 1
    assert info[0][0].get("version") == ctl("version").stdout.split()[1]
    assert "simd" in info[0][0] and "jpeg" in info[0][0]
    pix = [v for n, _, v in after if n == "dvppd_pixels_total"]
    pix0 = [v for n, _, v in before if n == "dvppd_pixels_total"]
    assert pix and pix0 and pix[0] > pix0[0]


# --------------------------------------------------------------------------
# /v1/preprocess: the tensor equals dvppctl's


PARITY_CASES = [
    ("stretch_bilinear_cv2", "i640.jpg", {"w": 224, "h": 224, "mean": MEAN, "std": STD}),
    ("letterbox", "i1080.jpg", {"w": 320, "h": 320, "mode": "letterbox", "pad": "727272",
                                "mean": MEAN, "std": STD}),
    ("pil_bicubic", "i640.jpg", {"w": 200, "h": 150, "interp": "bicubic", "parity": "pil",
                                 "mean": MEAN, "std": STD}),
    ("float16_nhwc", "i1080.jpg", {"w": 256, "h": 192, "dtype": "float16", "layout": "nhwc",
                                   "mean": MEAN, "std": STD}),
    ("uint8", "i640.jpg", {"w": 224, "h": 224, "dtype": "uint8"}),   # x / 255: 0 or 1
    ("uint8_pixels", "i640.jpg", {"w": 224, "h": 224, "dtype": "uint8", "scale": "1"}),
    ("default_x_over_255", "i630.jpg", {"w": 96, "h": 80}),
    ("fill_bgr_scale", "i1080.jpg", {"w": 300, "h": 300, "mode": "fill",
                                     "mean": "104,117,123", "scale": "0.017",
                                     "order": "bgr"}),
    ("shorter_area", "i1080.jpg", {"w": 256, "mode": "shorter", "interp": "area"}),
    ("int8_pil_lanczos", "i640.jpg", {"w": 100, "h": 75, "interp": "lanczos",
                                      "parity": "pil", "mean": "128", "scale": "1",
                                      "dtype": "int8"}),
    ("tf_nearest", "i630.jpg", {"w": 111, "h": 97, "interp": "nearest", "parity": "tf"}),
    ("ascend_mode0", "i640.jpg", {"w": 224, "h": 224, "parity": "ascend",
                                  "ascend_mode": 0}),
    ("shrink_on_load", "i1080.jpg", {"w": 224, "h": 224, "shrink_on_load": 1,
                                     "mean": MEAN, "std": STD}),
    ("png_alpha_nc1hwc0", "alpha.png", {"w": 160, "h": 120, "layout": "nc1hwc0",
                                        "dtype": "float16"}),
]


# --------------------------------------------------------------------------
# The independent reference of a /v1/preprocess query: decode with OpenCV
# (Pillow for parity=pil), resize with the library the parity names, the
# geometry of the mode by docs/http-api.md's rules (sides rounded half up),
# then numpy's normalise in float64 (as the spec writes it) and the dtype
# cast (float16 by numpy's round-to-nearest-even, integers rounded half to
# even and saturated).

_CV2_INTERP = {"nearest": cv2.INTER_NEAREST, "bilinear": cv2.INTER_LINEAR,
               "bicubic": cv2.INTER_CUBIC, "area": cv2.INTER_AREA,
               "lanczos": cv2.INTER_LANCZOS4}
_PIL_INTERP = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR,
               "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS}
# DVPP VPC interpolation modes (dvpp-aipp rules; the 310's mode 0, a
# proprietary filter, is emulated with bicubic)
_ASCEND_INTERP = {0: cv2.INTER_CUBIC, 1: cv2.INTER_LINEAR, 2: cv2.INTER_NEAREST}
# cv2.imdecode flags for a JPEG decoded at 1/d (libjpeg's DCT scaling)
_CV2_REDUCED = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2,
                4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


def _scale_side(v, num, den):
    """v * num / den rounded half up, at least 1."""
    return max((v * num * 2 + den) // (den * 2), 1)


def _floats3(v, default):
    x = [float(t) for t in str(v).split(",")] if v is not None else [default]
    return np.array(x * 3 if len(x) == 1 else x)


def _ref_decode(blob, params):
    """RGB uint8 H x W x 3 (alpha dropped), decoded by Pillow or OpenCV."""
    if params.get("parity") == "pil":
        return np.asarray(Image.open(io.BytesIO(blob)).convert("RGB"))
    flags = cv2.IMREAD_COLOR
    if str(params.get("shrink_on_load", "0")) == "1":
        # the largest 1/d (d <= 8) that keeps the decoded image at least w x h
        h0, w0 = cv2.imdecode(np.frombuffer(blob, np.uint8), cv2.IMREAD_COLOR).shape[:2]
        d = 1
        while d < 8 and -(-w0 // (2 * d)) >= int(params["w"]) and \
                -(-h0 // (2 * d)) >= int(params["h"]):
            d *= 2
        flags = _CV2_REDUCED[d]
    img = cv2.imdecode(np.frombuffer(blob, np.uint8), flags)
    assert img is not None, "OpenCV cannot decode the reference input"
    return np.ascontiguousarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))


def _ref_resize(img, w, h, params):
    parity, interp = params.get("parity", "cv2"), params.get("interp", "bilinear")
    if parity == "pil":
        return np.asarray(Image.fromarray(img).resize((w, h), _PIL_INTERP[interp]))
    if parity == "tf":
        # TF1 legacy nearest (align_corners=False, half_pixel_centers=False),
        # as tests/e2e/test_resize_parity.py: min(floor(out * in / out_size), in - 1)
        assert interp == "nearest"
        sh, sw = img.shape[:2]
        ys = np.floor(np.arange(h, dtype=np.float32) * (np.float32(sh) / np.float32(h)))
        xs = np.floor(np.arange(w, dtype=np.float32) * (np.float32(sw) / np.float32(w)))
        return img[np.minimum(ys.astype(int), sh - 1)][:, np.minimum(xs.astype(int), sw - 1)]
    if parity == "ascend":
        return cv2.resize(img, (w, h), interpolation=_ASCEND_INTERP[int(params["ascend_mode"])])
    return cv2.resize(img, (w, h), interpolation=_CV2_INTERP[interp])


def _ref_geometry(img, params):
    """The resized (and padded or cropped) RGB image of the query's mode."""
    sh, sw = img.shape[:2]
    mode, w, h = params.get("mode", "stretch"), int(params["w"]), int(params.get("h", 0))
    if mode == "stretch":
        return _ref_resize(img, w, h, params)
    if mode in ("shorter", "longer"):
        by_width = (sw <= sh) == (mode == "shorter")
        nw = w if by_width else _scale_side(sw, w, sh)
        nh = _scale_side(sh, w, sw) if by_width else w
        return _ref_resize(img, nw, nh, params)
    if mode == "fill":  # the centred crop of aspect w:h, scaled to w x h
        cw, ch = sw, sh
        if sw * h > sh * w:
            cw = _scale_side(sh, w, h)
        else:
            ch = _scale_side(sw, h, w)
        left, top = (sw - cw) // 2, (sh - ch) // 2
        return _ref_resize(np.ascontiguousarray(img[top:top + ch, left:left + cw]), w, h,
                           params)
    assert mode == "letterbox", mode
    by_width = sw * h >= sh * w
    nw = min(w if by_width else _scale_side(sw, h, sh), w)
    nh = min(_scale_side(sh, w, sw) if by_width else h, h)
    pad = params.get("pad", "000000")
    out = np.empty((h, w, 3), np.uint8)
    out[:] = [int(pad[i:i + 2], 16) for i in (0, 2, 4)]
    x0, y0 = (w - nw) // 2, (h - nh) // 2
    out[y0:y0 + nh, x0:x0 + nw] = _ref_resize(img, nw, nh, params)
    return out


def _ref_normalize(img, params):
    x = img.astype(np.float64)
    mean = _floats3(params.get("mean"), 0.0)
    if "scale" in params:
        v = (x - mean) * float(params["scale"])
    else:
        v = (x / 255 - mean) / _floats3(params.get("std"), 1.0)
    dtype = params.get("dtype", "float32")
    if dtype in ("float32", "float16"):
        t = v.astype(np.float32).astype(dtype)
    else:
        lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
        t = np.clip(np.rint(v), lo, hi).astype(dtype)
    layout = params.get("layout", "nchw")
    if layout == "nchw":
        return t.transpose(2, 0, 1)[None]
    if layout == "nhwc":
        return t[None]
    assert layout == "nc1hwc0", layout  # C0 = 16 for 16-bit types, the spare lanes 0
    out = np.zeros((1, 1) + t.shape[:2] + (16,), t.dtype)
    out[0, 0, :, :, :3] = t
    return out


def _reference(blob, params):
    img = _ref_geometry(_ref_decode(blob, params), params)
    if params.get("order") == "bgr":
        img = img[:, :, ::-1]
    return _ref_normalize(img, params)


def _layout_of(params):
    return params.get("layout", "nchw").upper()


def _check_tensor_headers(r, ref, params):
    assert r.h("x-dvpp-shape") == ",".join(map(str, ref.shape)), r.headers
    assert r.h("x-dvpp-dtype") == str(ref.dtype), r.headers
    assert r.h("x-dvpp-layout", "").upper() == _layout_of(params), r.headers
    timing = dict(kv.split("=") for kv in r.h("x-dvpp-timing").split(";"))
    assert "total" in timing and all(int(v) >= 0 for v in timing.values()), timing
    assert int(timing["total"]) >= int(timing.get("decode", 0))


@pytest.mark.parametrize("case", PARITY_CASES, ids=[c[0] for c in PARITY_CASES])
def test_preprocess_equals_dvppctl(srv, data, tmp, case):
    _, name, params = case
    ref, _ = ctl_preprocess(tmp, data.files[name], params)
    with open(data.files[name], "rb") as f:
        body = f.read()
    r = srv.post("/v1/preprocess?" + qs(params), body,
                 {"Content-Type": "application/octet-stream"})
    assert r.status == 200, r
    assert r.h("content-type") == "application/x-npy"
    got = r.npy()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.array_equal(got.view(np.uint8), ref.view(np.uint8))
    _check_tensor_headers(r, ref, params)
    # and what OpenCV / Pillow + numpy compute, exactly
    want = _reference(body, params)
    assert want.dtype == got.dtype and want.shape == got.shape, (want.shape, got.shape)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    worst, at = float(diff.max()), np.unravel_index(diff.argmax(), diff.shape)
    assert worst == 0, f"max |diff| {worst} at {at}: {int((diff > 0).sum())} of {diff.size} differ"


def test_preprocess_matches_cv2(srv, data):
    """A sanity check outside dvpp: cv2.resize INTER_LINEAR of the decoded RGB."""
    r = srv.post("/v1/preprocess?" + qs({"w": 224, "h": 224, "mean": MEAN, "std": STD}),
                 data.jpg640)
    assert r.status == 200
    got = r.npy()
    rgb = cv2.cvtColor(cv2.imdecode(np.frombuffer(data.jpg640, np.uint8),
                                    cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    rs = cv2.resize(rgb, (224, 224), interpolation=cv2.INTER_LINEAR) / 255.0
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    ref = ((rs - mean) / std).transpose(2, 0, 1)[None]
    assert got.shape == (1, 3, 224, 224) and got.dtype == np.float32
    assert np.abs(got - ref).max() < 1e-4


def test_preprocess_spec_forms_equal_query_form(srv, data, tmp):
    params = {"w": 224, "h": 224, "mode": "fill", "mean": MEAN, "std": STD,
              "dtype": "float16", "layout": "nhwc"}
    ref, _ = ctl_preprocess(tmp, data.files["i640.jpg"], params)
    spec = {"ops": [{"resize": {"w": 224, "h": 224, "mode": "fill"}}],
            "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225],
                          "dtype": "float16", "layout": "nhwc"}}
    s = json.dumps(spec)
    forms = {
        "query": srv.post("/v1/preprocess?" + qs(params), data.jpg640),
        "header": srv.post("/v1/preprocess", data.jpg640, {"X-Dvpp-Spec": s}),
        "spec=": srv.post("/v1/preprocess?spec=" + urllib.parse.quote(s, safe=""),
                          data.jpg640),
    }
    body, hdrs = multipart([("image", data.jpg640, "a.jpg", "image/jpeg"),
                            ("spec", s, None, "application/json")])
    forms["multipart"] = srv.post("/v1/preprocess", body, hdrs)
    body, hdrs = multipart([("spec", s), ("image", data.jpg640, "a.jpg", "image/jpeg")])
    forms["multipart_spec_first"] = srv.post("/v1/preprocess", body, hdrs)
    for form, r in forms.items():
        assert r.status == 200, (form, r)
        got = r.npy()
        assert got.shape == (1, 224, 224, 3) and got.dtype == np.float16, form
        assert np.array_equal(got.view(np.uint16), ref.view(np.uint16)), form
        _check_tensor_headers(r, ref, params)


def test_preprocess_spec_without_normalize_is_x_over_255(srv, data, tmp):
    ref, _ = ctl_preprocess(tmp, data.files["i640.jpg"], {"w": 64, "h": 48})
    spec = json.dumps({"ops": [{"resize": {"w": 64, "h": 48}}]})
    r = srv.post("/v1/preprocess", data.jpg640, {"X-Dvpp-Spec": spec})
    assert r.status == 200, r
    assert np.array_equal(r.npy(), ref)


def test_preprocess_out_raw(srv, data, tmp):
    params = {"w": 320, "h": 240, "mean": MEAN, "std": STD, "dtype": "float16"}
    ref, _ = ctl_preprocess(tmp, data.files["i640.jpg"], params)
    r = srv.post("/v1/preprocess?" + qs(dict(params, out="raw")), data.jpg640)
    assert r.status == 200, r
    assert r.h("content-type") == "application/octet-stream"
    assert r.h("x-dvpp-shape") == "1,3,240,320"
    assert r.h("x-dvpp-dtype") == "float16"
    assert r.h("x-dvpp-layout").upper() == "NCHW"
    assert len(r.body) == ref.nbytes and r.body == np.ascontiguousarray(ref).tobytes()


def _hdr_floats(v):
    return [float(x) for x in v.split(",")]


def _close(header_value, want):
    """A header number equals dvppctl's to the digits the header prints."""
    for s, w in zip(header_value.split(","), want):
        s = s.strip()
        dec = len(s.split(".")[1]) if "." in s and "e" not in s.lower() else 12
        assert abs(float(s) - w) <= 0.5 * 10 ** -dec + 1e-12 * max(1, abs(w)), \
            (header_value, want)


@pytest.mark.parametrize("src,w,h", [("i640.jpg", 640, 640), ("i1080.jpg", 320, 320),
                                     ("i630.jpg", 300, 500)])
def test_letterbox_scale_and_pad_headers(srv, data, tmp, src, w, h):
    params = {"w": w, "h": h, "mode": "letterbox", "pad": "727272", "dtype": "float16"}
    ref, geo = ctl_preprocess(tmp, data.files[src], params)
    with open(data.files[src], "rb") as f:
        body = f.read()
    r = srv.post("/v1/preprocess?" + qs(dict(params, out="raw")), body)
    assert r.status == 200, r
    assert r.body == ref.tobytes()
    assert len(_hdr_floats(r.h("x-dvpp-scale"))) == 2
    _close(r.h("x-dvpp-scale"), [geo["scale_x"], geo["scale_y"]])
    _close(r.h("x-dvpp-pad"), [geo["pad_x"], geo["pad_y"]])
    # the pad colour is 0x72 = 114 outside the image (x / 255)
    t = ref.astype(np.float32)[0]
    if geo["pad_y"] >= 1:
        assert np.allclose(t[:, 0, :], 114 / 255, atol=1e-3)
    if geo["pad_x"] >= 1:
        assert np.allclose(t[:, :, 0], 114 / 255, atol=1e-3)


def test_preprocess_chunked_body(srv, data, tmp):
    params = {"w": 128, "h": 96, "mean": MEAN, "std": STD}
    ref, _ = ctl_preprocess(tmp, data.files["i640.jpg"], params)
    c = srv.conn()
    try:
        chunks = (data.jpg640[i:i + 4096] for i in range(0, len(data.jpg640), 4096))
        c.request("POST", "/v1/preprocess?" + qs(params), body=chunks,
                  headers={"Transfer-Encoding": "chunked"}, encode_chunked=True)
        r = resp_from(c.getresponse())
    finally:
        c.close()
    assert r.status == 200, r
    assert np.array_equal(r.npy(), ref)


def test_allow_partial_accepts_truncated_jpeg(srv, data, tmp):
    cut = data.jpg640[:len(data.jpg640) // 2]
    p = os.path.join(tmp, "cut.jpg")
    with open(p, "wb") as f:
        f.write(cut)
    ref, _ = ctl_preprocess(tmp, p, {"w": 64, "h": 48, "allow_partial": 1})
    r = srv.post("/v1/preprocess?w=64&h=48&allow_partial=1", cut)
    assert r.status == 200, r
    assert np.array_equal(r.npy(), ref)
    assert_error(srv.post("/v1/preprocess?w=64&h=48", cut), 422, "ECORRUPT")


@pytest.mark.parametrize("fmt,nbytes", [("nv12", 64 * 48 * 3 // 2), ("rgb", 64 * 48 * 3)])
def test_preprocess_raw_input(srv, tmp, fmt, nbytes):
    raw = np.random.default_rng(3).integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    p = os.path.join(tmp, "in.raw")
    with open(p, "wb") as f:
        f.write(raw)
    out = os.path.join(tmp, "r.npy")
    ctl("preprocess", p, "--input", f"{fmt}:64x48", "--size", "32x24", "--mean", MEAN,
        "--std", STD, "-o", out)
    r = srv.post(f"/v1/preprocess?input=raw&raw={fmt}:64x48&w=32&h=24&mean={MEAN}&std={STD}",
                 raw)
    assert r.status == 200, r
    assert np.array_equal(r.npy(), np.load(out))
    # a body of the wrong size for the geometry
    r = srv.post(f"/v1/preprocess?input=raw&raw={fmt}:64x48&w=32&h=24", raw[:-1])
    assert 400 <= r.status < 500, r
    assert_error(r, r.status)


# --------------------------------------------------------------------------
# AIPP


def _ctl_aipp(tmp, src, cfg, *extra):
    out = os.path.join(tmp, "aipp.npy")
    ctl("aipp", src, "--config", cfg, *extra, "-o", out)
    return np.load(out)


def test_named_aipp_with_resize(srv, data, tmp):
    ref = _ctl_aipp(tmp, data.files["i640.jpg"], data.aipp_path, "--size", "224x224")
    r = srv.post("/v1/preprocess?aipp=test&w=224&h=224", data.jpg640)
    assert r.status == 200, r
    got = r.npy()
    assert got.shape == (1, 1, 224, 224, 16) and got.dtype == np.float16
    assert np.array_equal(got.view(np.uint16), ref.view(np.uint16))
    assert r.h("x-dvpp-shape") == "1,1,224,224,16"
    assert r.h("x-dvpp-dtype") == "float16"
    assert r.h("x-dvpp-layout").upper() == "NC1HWC0"


def test_named_aipp_at_source_size(srv, data, tmp):
    ref = _ctl_aipp(tmp, data.files["i224.jpg"], data.aipp_path)
    r = srv.post("/v1/preprocess?aipp=test", data.jpg224)
    assert r.status == 200, r
    assert np.array_equal(r.npy().view(np.uint16), ref.view(np.uint16))


def test_named_aipp_layout_and_dtype(srv, data, tmp):
    ref = _ctl_aipp(tmp, data.files["i640.jpg"], data.aipp_path, "--size", "224x224",
                    "--layout", "nhwc", "--dtype", "f32")
    r = srv.post("/v1/preprocess?aipp=test&w=224&h=224&aipp_layout=nhwc"
                 "&aipp_dtype=float32", data.jpg640)
    assert r.status == 200, r
    got = r.npy()
    assert got.dtype == np.float32 and got.shape == ref.shape == (1, 224, 224, 3)
    assert np.array_equal(got, ref)


def test_inline_aipp_multipart_part(srv, data, tmp):
    ref = _ctl_aipp(tmp, data.files["i224.jpg"], data.inline_aipp_path)
    other = _ctl_aipp(tmp, data.files["i224.jpg"], data.aipp_path)
    assert not np.array_equal(ref, other)
    body, hdrs = multipart([("image", data.jpg224, "x.jpg", "image/jpeg"),
                            ("aipp", AIPP_INLINE, "aipp.cfg", "text/plain")])
    r = srv.post("/v1/preprocess", body, hdrs)
    assert r.status == 200, r
    assert np.array_equal(r.npy().view(np.uint16), ref.view(np.uint16))


def test_inline_aipp_multipart_with_spec_resize(srv, data, tmp):
    ref = _ctl_aipp(tmp, data.files["i640.jpg"], data.inline_aipp_path, "--size", "224x224")
    spec = json.dumps({"ops": [{"resize": {"w": 224, "h": 224}}]})
    body, hdrs = multipart([("image", data.jpg640, "x.jpg", "image/jpeg"),
                            ("spec", spec), ("aipp", AIPP_INLINE, "aipp.cfg")])
    r = srv.post("/v1/preprocess", body, hdrs)
    assert r.status == 200, r
    assert np.array_equal(r.npy().view(np.uint16), ref.view(np.uint16))


def test_inline_aipp_in_spec(srv, data, tmp):
    ref = _ctl_aipp(tmp, data.files["i640.jpg"], data.inline_aipp_path, "--size", "224x224")
    spec = {"ops": [{"resize": {"w": 224, "h": 224}}],
            "aipp": {"config": AIPP_INLINE, "op": 0}}
    r = srv.post("/v1/preprocess", data.jpg640, {"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 200, r
    assert np.array_equal(r.npy().view(np.uint16), ref.view(np.uint16))


# --------------------------------------------------------------------------
# /v1/image


def _decode_img(blob):
    img = cv2.imdecode(np.frombuffer(blob, np.uint8), cv2.IMREAD_UNCHANGED)
    # None for an undecodable image: np.array_equal(None, None) is True
    assert img is not None, f"OpenCV cannot decode {blob[:16]!r}... ({len(blob)} bytes)"
    return img


@pytest.mark.parametrize("shrink", ["0", "default"])
def test_image_jpeg_equals_dvppctl_resize(srv, data, tmp, shrink):
    """/v1/image shrinks on load by default (http-api.md): dvppctl's
    --shrink-on-load auto; with shrink_on_load=0, the plain resize."""
    out = os.path.join(tmp, "x.jpg")
    extra = [] if shrink == "0" else ["--shrink-on-load", "auto"]
    geo = json.loads(ctl("resize", data.files["i1080.jpg"], "--size", "300x200", *extra,
                         "-o", out).stdout)
    q = "w=300&h=200" + ("&shrink_on_load=0" if shrink == "0" else "")
    r = srv.post("/v1/image?" + q, data.jpg1080)
    assert r.status == 200, r
    assert r.h("content-type") == "image/jpeg"
    assert r.h("x-dvpp-width") == "300" and r.h("x-dvpp-height") == "200"
    if shrink == "0":
        _close(r.h("x-dvpp-scale"), [geo["scale_x"], geo["scale_y"]])
    else:
        # source = (output - pad) / scale: the source is the 1920x1080 image,
        # whatever the decoder's DCT scaling
        _close(r.h("x-dvpp-scale"), [300 / 1920, 200 / 1080])
    _close(r.h("x-dvpp-pad"), [geo["pad_x"], geo["pad_y"]])
    assert "total=" in r.h("x-dvpp-timing")
    with open(out, "rb") as f:
        want = f.read()
    assert np.array_equal(_decode_img(r.body), _decode_img(want))
    assert r.body == want, "same pixels but not the same JPEG bytes as dvppctl"


def test_image_fit_quality(srv, data, tmp):
    out = os.path.join(tmp, "f.jpg")
    geo = json.loads(ctl("resize", data.files["i640.jpg"], "--size", "300x300", "--mode",
                         "fit", "--quality", "85", "-o", out).stdout)
    r = srv.post("/v1/image?w=300&h=300&mode=fit&quality=85&shrink_on_load=0", data.jpg640)
    assert r.status == 200, r
    assert (int(r.h("x-dvpp-width")), int(r.h("x-dvpp-height"))) == (geo["out_w"],
                                                                     geo["out_h"])
    got = _decode_img(r.body)
    with open(out, "rb") as f:
        want = _decode_img(f.read())
    assert got.shape == (225, 300, 3)
    assert np.array_equal(got, want)


def test_image_png_equals_dvppctl_pixels(srv, data, tmp):
    out = os.path.join(tmp, "x.png")
    ctl("resize", data.files["i1080.jpg"], "--size", "300x200", "--interp", "area",
        "--shrink-on-load", "auto", "-o", out)
    r = srv.post("/v1/image?w=300&h=200&interp=area&format=png", data.jpg1080)
    assert r.status == 200, r
    assert r.h("content-type") == "image/png"
    assert r.body[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out, "rb") as f:
        want = _decode_img(f.read())
    got = _decode_img(r.body)
    assert got.shape == want.shape == (200, 300, 3)
    assert np.array_equal(got, want)


def test_image_crop_png(srv, data, tmp):
    out = os.path.join(tmp, "c.png")
    ctl("crop", data.files["i640.jpg"], "--roi", "100,50,355,305", "--size", "128x128",
        "-o", out)
    r = srv.post("/v1/image?crop=100,50,355,305&w=128&h=128&format=png", data.jpg640)
    assert r.status == 200, r
    with open(out, "rb") as f:
        want = _decode_img(f.read())
    assert np.array_equal(_decode_img(r.body), want)


def test_image_letterbox_headers(srv, data, tmp):
    out = os.path.join(tmp, "l.png")
    geo = json.loads(ctl("resize", data.files["i1080.jpg"], "--size", "256x256", "--mode",
                         "letterbox", "--pad", "102030", "-o", out).stdout)
    r = srv.post("/v1/image?w=256&h=256&mode=letterbox&pad=102030&format=png&shrink_on_load=0",
                 data.jpg1080)
    assert r.status == 200, r
    _close(r.h("x-dvpp-scale"), [geo["scale_x"], geo["scale_y"]])
    _close(r.h("x-dvpp-pad"), [geo["pad_x"], geo["pad_y"]])
    with open(out, "rb") as f:
        want = _decode_img(f.read())
    got = _decode_img(r.body)
    assert np.array_equal(got, want)
    assert tuple(got[0, 128]) == (0x30, 0x20, 0x10)  # BGR of the pad colour


def test_image_refuses_normalize(srv, data):
    spec = json.dumps({"ops": [{"resize": {"w": 32, "h": 32}}],
                       "normalize": {"mean": [0.5, 0.5, 0.5]}})
    assert_error(srv.post("/v1/image", data.small, {"X-Dvpp-Spec": spec}), 400, "EINVAL")
    assert_error(srv.post("/v1/image?w=32&h=32&mean=0.5", data.small), 400, "EINVAL")


# --------------------------------------------------------------------------
# /v1/decode


def test_decode_rgb_npy_equals_dvppctl(srv, data, tmp):
    out = os.path.join(tmp, "d.npy")
    ctl("decode", data.files["i640.jpg"], "-o", out)
    ref = np.load(out)
    r = srv.post("/v1/decode?format=rgb", data.jpg640)
    assert r.status == 200, r
    got = r.npy()
    assert got.dtype == np.uint8 and got.shape == (480, 640, 3)
    assert np.array_equal(got, ref)
    assert r.h("x-dvpp-format").lower() == "rgb"
    assert r.h("x-dvpp-width") == "640" and r.h("x-dvpp-height") == "480"
    assert r.h("x-dvpp-width-stride") == str(640 * 3)
    assert r.h("x-dvpp-height-stride") == "480"


def test_decode_nv12_aligned_raw(srv, data, tmp):
    out = os.path.join(tmp, "n.yuv")
    ctl("decode", data.files["i630.jpg"], "--format", "nv12", "--align", "16x2", "-o", out)
    with open(out, "rb") as f:
        ref = f.read()
    r = srv.post("/v1/decode?format=nv12&align=16x2&out=raw", data.jpg630)
    assert r.status == 200, r
    assert r.h("content-type") == "application/octet-stream"
    stride = (630 + 15) // 16 * 16
    assert r.h("x-dvpp-width-stride") == str(stride) == "640"
    assert r.h("x-dvpp-height-stride") == "478"
    assert r.h("x-dvpp-width") == "630" and r.h("x-dvpp-height") == "478"
    assert r.h("x-dvpp-format").lower() == "nv12"
    assert len(r.body) == stride * 478 * 3 // 2 == len(ref)
    assert r.body == ref
    # the same as .npy: rows x width_stride
    r = srv.post("/v1/decode?format=nv12&align=16x2", data.jpg630)
    assert r.status == 200, r
    got = r.npy()
    assert got.dtype == np.uint8 and got.shape == (478 * 3 // 2, stride)
    assert got.tobytes() == ref


def test_decode_gray_and_png_rgba(srv, data, tmp):
    out = os.path.join(tmp, "g.npy")
    ctl("decode", data.files["i640.jpg"], "--format", "gray", "-o", out)
    r = srv.post("/v1/decode?format=gray", data.jpg640)
    assert r.status == 200, r
    got = r.npy()
    assert got.shape == (480, 640) and np.array_equal(got, np.load(out))
    ctl("decode", data.files["alpha.png"], "--format", "rgba", "-o", out)
    r = srv.post("/v1/decode?format=rgba", data.alpha_png)
    assert r.status == 200, r
    got = r.npy()
    assert got.shape == (240, 320, 4) and np.array_equal(got, np.load(out))


def test_decode_refuses_normalize(srv, data):
    assert_error(srv.post("/v1/decode?format=rgb&std=0.5", data.small), 400, "EINVAL")


# --------------------------------------------------------------------------
# /v1/batch


def _batch_body(data, names, extra=()):
    parts = []
    for i, n in enumerate(names):
        with open(data.files[n], "rb") as f:
            parts.append((f"img{i}", f.read(), n,
                          "image/png" if n.endswith("png") else "image/jpeg"))
    return multipart(list(extra) + parts)


BATCH_Q = {"w": 224, "h": 224, "mean": MEAN, "std": STD}


def test_batch_32_equals_single_requests_and_dvppctl(srv, data, tmp):
    body, hdrs = _batch_body(data, data.batch)
    r = srv.post("/v1/batch?" + qs(BATCH_Q), body, hdrs)
    assert r.status == 200, r
    assert r.h("content-type") == "application/x-npy"
    b = r.npy()
    assert b.shape == (32, 3, 224, 224) and b.dtype == np.float32
    assert r.h("x-dvpp-item-status") == ",".join(["OK"] * 32)
    assert r.h("x-dvpp-items-failed") == "0"
    assert r.h("x-dvpp-shape") == "32,3,224,224"
    singles = []
    for n in data.batch:
        with open(data.files[n], "rb") as f:
            s = srv.post("/v1/preprocess?" + qs(BATCH_Q), f.read())
        assert s.status == 200, (n, s)
        singles.append(s.npy()[0])
    assert np.array_equal(b, np.stack(singles))
    out = os.path.join(tmp, "b.npy")
    ctl("batch", *[data.files[n] for n in data.batch], "--size", "224x224", "--mean", MEAN,
        "--std", STD, "-o", out)
    assert np.array_equal(b, np.load(out))


def test_batch_spec_part(srv, data):
    names = data.batch[:4]
    spec = json.dumps({"ops": [{"resize": {"w": 64, "h": 64, "mode": "letterbox"}}],
                       "normalize": {"dtype": "uint8", "layout": "nhwc"}})
    body, hdrs = _batch_body(data, names, extra=[("spec", spec, None, "application/json")])
    r = srv.post("/v1/batch", body, hdrs)
    assert r.status == 200, r
    b = r.npy()
    assert b.shape == (4, 64, 64, 3) and b.dtype == np.uint8
    for i, n in enumerate(names):
        with open(data.files[n], "rb") as f:
            s = srv.post("/v1/preprocess?w=64&h=64&mode=letterbox&dtype=uint8&layout=nhwc",
                         f.read())
        assert np.array_equal(s.npy()[0], b[i])


def test_batch_corrupt_item(srv, data):
    names = data.batch[:8]
    parts = []
    for i, n in enumerate(names):
        with open(data.files[n], "rb") as f:
            blob = f.read()
        if i == 3:
            blob = data.jpg640[:len(data.jpg640) // 3]
        parts.append((f"p{i}", blob, f"{i}.bin"))
    body, hdrs = multipart(parts)
    r = srv.post("/v1/batch?" + qs(BATCH_Q), body, hdrs)
    assert r.status == 200, r
    b = r.npy()
    assert b.shape == (8, 3, 224, 224)
    assert (b[3] == 0).all()
    assert all((b[i] != 0).any() for i in range(8) if i != 3)
    st = r.h("x-dvpp-item-status").split(",")
    assert st == ["OK"] * 3 + ["ECORRUPT"] + ["OK"] * 4, st
    assert r.h("x-dvpp-items-failed") == "1"
    errs = json.loads(r.h("x-dvpp-item-errors"))
    assert len(errs) == 1 and errs[0]["index"] == 3 and errs[0]["code"] == "ECORRUPT"
    assert errs[0]["message"]


def _corrupt_batch(data):
    parts = [(f"p{i}", data.small, f"{i}.jpg") for i in range(6)]
    parts[3] = ("p3", data.jpg640[:len(data.jpg640) // 3], "3.jpg")
    return multipart(parts)


def test_batch_strict_is_422(srv, data):
    body, hdrs = _corrupt_batch(data)
    assert_error(srv.post("/v1/batch?w=32&h=32&strict=1", body, hdrs), 422, "ECORRUPT")
    assert srv.post("/v1/batch?w=32&h=32&strict=0", body, hdrs).status == 200


def test_batch_strict_error_names_the_item_index(srv, data):
    """http-api.md: strict=1 fails with the item's error, its index in field."""
    body, hdrs = _corrupt_batch(data)
    e = assert_error(srv.post("/v1/batch?w=32&h=32&strict=1", body, hdrs), 422, "ECORRUPT")
    assert "3" in e["field"], e


def test_batch_refuses_input_dependent_size(srv, data):
    body, hdrs = _batch_body(data, data.batch[:2])
    assert_error(srv.post("/v1/batch?w=224&h=224&mode=fit", body, hdrs), 400, "EINVAL")


def test_batch_too_many_items(srv, data):
    parts = [(f"p{i}", data.small, f"{i}.jpg") for i in range(MAX_BATCH_ITEMS + 1)]
    body, hdrs = multipart(parts)
    r = srv.post("/v1/batch?w=32&h=32", body, hdrs)
    assert 400 <= r.status < 500, r
    assert_error(r, r.status)
    body, hdrs = multipart(parts[:MAX_BATCH_ITEMS])
    r = srv.post("/v1/batch?w=32&h=32", body, hdrs)
    assert r.status == 200 and r.npy().shape == (MAX_BATCH_ITEMS, 3, 32, 32)


def test_batch_needs_multipart(srv, data):
    r = srv.post("/v1/batch?w=32&h=32", data.small)
    assert 400 <= r.status < 500, r
    assert_error(r, r.status)


# --------------------------------------------------------------------------
# Jobs


def _wait_job(srv, loc, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        r = srv.get(loc)
        assert r.status == 200, r
        j = r.json()
        if j["state"] != "running":
            return j
        assert time.monotonic() < deadline, j
        time.sleep(0.02)


def test_job_lifecycle(srv, data):
    names = data.batch[:12]
    body, hdrs = _batch_body(data, names)
    ref = srv.post("/v1/batch?" + qs(BATCH_Q), body, hdrs)
    assert ref.status == 200
    r = srv.post("/v1/jobs?" + qs(BATCH_Q), body, hdrs)
    assert r.status == 202, r
    j = r.json()
    assert j["state"] in ("running", "done") and j["total"] == 12, j
    jid = str(j["id"])
    loc = r.h("location")
    assert loc == f"/v1/jobs/{jid}", (loc, j)
    st = _wait_job(srv, loc)
    assert st["state"] == "done" and str(st["id"]) == jid, st
    assert st["total"] == 12 and st["done"] == 12 and st["failed"] == 0, st
    assert st["items"] == [], st
    res = srv.get(loc + "/result")
    assert res.status == 200, res
    assert res.h("content-type") == "application/x-npy"
    assert res.h("x-dvpp-item-status") == ",".join(["OK"] * 12)
    assert np.array_equal(res.npy(), ref.npy())
    # the result can be fetched again while the job is kept
    assert srv.get(loc + "/result").body == res.body
    d = srv.request("DELETE", loc)
    assert d.status == 200, d
    assert d.json()["state"] == "done"
    assert_error(srv.get(loc), 404, "ENOTFOUND")
    assert_error(srv.get(loc + "/result"), 404, "ENOTFOUND")
    assert_error(srv.request("DELETE", loc), 404, "ENOTFOUND")


def test_job_with_failed_item(srv, data):
    parts = [("a", data.small, "a.jpg"), ("b", b"\xff\xd8\xff\xe0garbage", "b.jpg"),
             ("c", data.small_png, "c.png")]
    body, hdrs = multipart(parts)
    r = srv.post("/v1/jobs?w=32&h=32", body, hdrs)
    assert r.status == 202, r
    loc = r.h("location")
    st = _wait_job(srv, loc)
    # "done" counts the items that succeeded, "failed" the others
    assert st["state"] == "done" and st["failed"] == 1, st
    assert st["done"] == 2 and st["total"] == 3, st
    assert len(st["items"]) == 1 and st["items"][0]["index"] == 1, st
    assert st["items"][0]["code"] == "ECORRUPT", st
    res = srv.get(loc + "/result")
    assert res.status == 200
    t = res.npy()
    assert (t[1] == 0).all() and (t[0] != 0).any() and (t[2] != 0).any()
    assert res.h("x-dvpp-item-status").split(",")[0::2] == ["OK", "OK"]
    assert srv.request("DELETE", loc).status == 200


def test_job_strict_failure(srv, data):
    parts = [("a", data.small, "a.jpg"), ("b", data.jpg640[:2000], "b.jpg")]
    body, hdrs = multipart(parts)
    r = srv.post("/v1/jobs?w=32&h=32&strict=1", body, hdrs)
    assert r.status == 202, r
    loc = r.h("location")
    st = _wait_job(srv, loc)
    assert st["state"] == "failed", st
    e = assert_error(srv.get(loc + "/result"), 422, "ECORRUPT")
    assert srv.request("DELETE", loc).status == 200
    assert "1" in e["field"], e  # the item's index (as /v1/batch strict=1)


# Every device task of this daemon first waits STALL_S (DVPPD_FAULTS=
# stall_ms): its jobs are surely running when the next request comes, and a
# burst surely meets a busy device (one channel, a queue of one). Its request
# deadline is far past the stall, so that nothing it answers times out.
STALL_S = 1.5


@pytest.fixture(scope="module")
def stalled(data, tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("http_stalled"))
    d = start_daemon(tmp, http_extra={"request_timeout_s": 60, "threads": 4},
                     device={"channels": 1, "queue_depth": 1}, name="stalled",
                     faults=f"stall_ms={int(STALL_S * 1000)}")
    yield d
    stop_daemon(d)


def test_job_result_while_running_is_409(stalled, data):
    """A job whose items are stalled: its result asked for at once is 409
    EBUSY, it is running with nothing done, and DELETE cancels it (the
    result of a finished job: test_job_lifecycle)."""
    body, hdrs = multipart([("a", data.small, "a.jpg"), ("b", data.small, "b.jpg")])
    r = stalled.post("/v1/jobs?w=16&h=16", body, hdrs)
    assert r.status == 202, r
    loc = r.h("location")
    assert_error(stalled.get(loc + "/result"), 409, "EBUSY")
    st = stalled.get(loc).json()
    assert st["state"] == "running" and st["done"] == 0 and st["total"] == 2, st
    d = stalled.request("DELETE", loc)
    assert d.status == 200, d
    assert d.json()["state"] == "canceled", d
    assert_error(stalled.get(loc), 404, "ENOTFOUND")


def test_unknown_job_is_404(srv):
    assert_error(srv.get("/v1/jobs/999999"), 404, "ENOTFOUND")
    assert_error(srv.get("/v1/jobs/999999/result"), 404, "ENOTFOUND")
    assert_error(srv.request("DELETE", "/v1/jobs/999999"), 404, "ENOTFOUND")
    assert srv.get("/v1/jobs/not-a-number").status == 404


# --------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("query,field", [
    ("w=abc&h=10", "w"),
    ("w=0&h=10", "w"),
    ("w=10&h=10&mode=squash", "mode"),
    ("w=10&h=10&interp=cubic2", "interp"),
    ("w=10&h=10&dtype=float64", "dtype"),
    ("w=10&h=10&layout=chw", "layout"),
    ("w=10&h=10&pad=12345", "pad"),
    ("w=10&h=10&std=0", "std"),
    ("w=10&h=10&scale=-1", "scale"),
    ("w=10&h=10&crop=5,5,1,1", "crop"),
    ("w=10&h=10&ascend_mode=9&parity=ascend", "ascend_mode"),
    ("w=10&h=10&aipp=nosuchconfig", "aipp"),
])
def test_400_bad_parameter(srv, data, query, field):
    e = assert_error(srv.post("/v1/preprocess?" + query, data.small), 400, "EINVAL")
    assert field in e["field"], e


def test_400_resize_target_over_the_side_limit(srv, data):
    # Above limits.max_side (16384): the validator's ELIMIT, a bad parameter (400).
    e = assert_error(srv.post("/v1/preprocess?w=16385&h=10", data.small), 400, "ELIMIT")
    assert e["field"].startswith("ops[0].resize"), e
    assert "16385" in e["message"], e


def test_400_unknown_parameter(srv, data):
    e = assert_error(srv.post("/v1/preprocess?w=10&h=10&colour=red", data.small), 400,
                     "EINVAL")
    assert e["field"] == "colour", e
    e = assert_error(srv.post("/v1/decode?format=rgb&qualty=3", data.small), 400, "EINVAL")
    assert "qualty" in e["field"] + e["message"], e


def test_400_bad_spec(srv, data):
    assert_error(srv.post("/v1/preprocess", data.small, {"X-Dvpp-Spec": "{not json"}), 400,
                 "EINVAL")
    assert_error(srv.post("/v1/preprocess?spec=%7Bnope", data.small), 400, "EINVAL")
    e = assert_error(srv.post("/v1/preprocess", data.small,
                              {"X-Dvpp-Spec": '{"ops": [], "bogus_key": 1}'}), 400, "EINVAL")
    assert "bogus_key" in e["field"] + e["message"], e
    e = assert_error(srv.post("/v1/preprocess", data.small, {
        "X-Dvpp-Spec": '{"ops": [{"resize": {"w": 10, "h": 10, "wobble": 1}}]}'}),
        400, "EINVAL")
    assert "wobble" in e["field"] + e["message"], e
    e = assert_error(srv.post("/v1/preprocess", data.small, {
        "X-Dvpp-Spec": '{"normalize": {"dtype": "float8"}}'}), 400, "EINVAL")
    # a spec and query pipeline parameters together
    assert_error(srv.post("/v1/preprocess?w=10&h=10", data.small,
                          {"X-Dvpp-Spec": '{"ops": [{"resize": {"w": 10, "h": 10}}]}'}),
                 400, "EINVAL")


def test_400_bad_aipp_text(srv, data):
    bad = "aipp_op {\n  aipp_mode : static\n  colour_switch : true\n  input_format : RGB888_U8\n}\n"
    body, hdrs = multipart([("image", data.jpg224, "x.jpg"), ("aipp", bad, "a.cfg")])
    e = assert_error(srv.post("/v1/preprocess", body, hdrs), 400, "EINVAL")
    assert "line 3" in e["message"] and "colour_switch" in e["message"] + e["field"], e
    spec = json.dumps({"aipp": {"config": "aipp_op {\n aipp_mode : static\n"}})
    assert_error(srv.post("/v1/preprocess", data.jpg224, {"X-Dvpp-Spec": spec}), 400,
                 "EINVAL")


def test_404_unknown_path(srv):
    # "/" is the web console on a loopback listener (test_console.py).
    for path in ("/v1", "/v1/nothing", "/v2/preprocess", "/healthz/x", "/console/nothing"):
        assert_error(srv.get(path), 404, "ENOTFOUND")
    assert_error(srv.post("/v1/unknown", b"x"), 404, "ENOTFOUND")


@pytest.mark.parametrize("method,path,allow", [
    ("GET", "/v1/preprocess", "POST"),
    ("PUT", "/v1/image", "POST"),
    ("GET", "/v1/batch", "POST"),
    ("POST", "/healthz", "GET"),
    ("DELETE", "/metrics", "GET"),
])
def test_405_with_allow(srv, method, path, allow):
    r = srv.request(method, path, body=b"" if method in ("POST", "PUT") else None)
    assert_error(r, 405)
    assert allow in [m.strip() for m in r.h("allow", "").split(",")], r.headers


def test_411_post_without_length(srv):
    s = srv.raw()
    try:
        s.sendall(b"POST /v1/preprocess?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Type: image/jpeg\r\n\r\n")
        r = read_raw_response(s, timeout=10)
    finally:
        s.close()
    assert r is not None, "connection closed without an answer"
    assert r[0] == 411, r
    assert json.loads(r[2])["error"]["code"]


def test_413_from_content_length_before_the_body(srv):
    s = srv.raw()
    try:
        t0 = time.monotonic()
        s.sendall(b"POST /v1/preprocess?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Type: image/jpeg\r\n"
                  b"Content-Length: %d\r\n\r\n" % (MAX_BODY + 1))
        r = read_raw_response(s, timeout=5)
        elapsed = time.monotonic() - t0
    finally:
        s.close()
    assert r is not None, "connection closed without an answer"
    assert r[0] == 413, r
    # at once, not after waiting for a body that never comes (which the idle
    # timeout, IDLE_TIMEOUT_S, or the request deadline would end)
    assert elapsed < IDLE_TIMEOUT_S / 2, elapsed
    e = json.loads(r[2])["error"]
    assert e["code"] == "ELIMIT" and e["field"] == "body", e


def test_content_length_at_the_limit_is_read(srv):
    """Exactly http.max_body_bytes is allowed: the server waits for the body."""
    s = srv.raw()
    try:
        s.sendall(b"POST /v1/preprocess?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Length: %d\r\n\r\n" % MAX_BODY)
        readable, _, _ = select.select([s], [], [], 0.7)
        assert not readable, read_raw_response(s, 1)
        # the whole body: a JPEG padded after its EOI
        s.sendall(data_pad(MAX_BODY))
        r = read_raw_response(s, timeout=15)
    finally:
        s.close()
    assert r is not None and r[0] == 200, r
    want = srv.post("/v1/preprocess?w=8&h=8", to_jpeg(gradient(32, 24, 9)))
    assert want.status == 200, want
    assert r[2] == want.body, "not the tensor of the JPEG before the padding"


def data_pad(n):
    img = to_jpeg(gradient(32, 24, 9))
    return img + b"\0" * (n - len(img))


def test_413_batch_limit_from_content_length(srv):
    s = srv.raw()
    try:
        s.sendall(b"POST /v1/batch?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Type: multipart/form-data; boundary=xyz\r\n"
                  b"Content-Length: %d\r\n\r\n" % (256 * 1024 * 1024 + 1))
        r = read_raw_response(s, timeout=5)
    finally:
        s.close()
    assert r is not None and r[0] == 413, r
    assert json.loads(r[2])["error"]["code"] == "ELIMIT"


def test_chunked_body_cut_at_the_limit(srv):
    """A chunked body: the connection is closed the moment it passes the limit
    (http-api.md: no answer in the middle of a body)."""
    s = srv.raw()
    sent = 0
    r = None
    try:
        s.sendall(b"POST /v1/preprocess?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"\xff\xd8" + b"\0" * (65536 - 2)
        while sent < 32 * 1024 * 1024:
            readable, _, _ = select.select([s], [], [], 0)
            if readable:
                break
            try:
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
            chunk = b"\0" * 65536
        # None: the peer closed (or reset) the connection without a status line
        r = read_raw_response(s, timeout=5)
    finally:
        s.close()
    assert r is None, f"an answer in the middle of the body, or no close: {r}"
    # cut near the limit (what the socket buffers hold aside), long before 32 MiB
    assert MAX_BODY < sent < 16 * 1024 * 1024, sent


@pytest.mark.parametrize("body", [
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00"
    b"\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;",
    b"hello, this is text and not an image\n",
    b"BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00",
    b"",
], ids=["gif", "text", "bmp", "empty"])
def test_415_not_jpeg_or_png(srv, body):
    for ep in ("/v1/preprocess?w=8&h=8", "/v1/image?w=8&h=8", "/v1/decode?format=rgb"):
        r = srv.post(ep, body, {"Content-Type": "image/gif"})
        if body == b"":
            assert_error(r, 400, "EINVAL", field="body", mentions="no image")
        else:
            assert_error(r, 415, "EUNSUPPORTED")


def _sof_patch(jpeg, w, h):
    b = bytearray(jpeg)
    i = 2
    while i < len(b):
        assert b[i] == 0xFF
        m, n = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
        if m in (0xC0, 0xC1, 0xC2):
            b[i + 5:i + 9] = struct.pack(">HH", h, w)
            return bytes(b)
        i += 2 + n
    raise AssertionError("no SOF")


def _png_corrupt(png):
    b = bytearray(png)
    i = b.find(b"IDAT")
    b[i + 40:i + 48] = bytes(x ^ 0x5A for x in b[i + 40:i + 48])
    return bytes(b)


@pytest.mark.parametrize("kind", ["truncated_jpeg", "corrupt_png", "truncated_png",
                                  "jpeg_60000", "jpeg_side_over_limit"])
def test_422_bad_images(srv, data, kind):
    if kind == "truncated_jpeg":
        body, code = data.jpg640[:len(data.jpg640) * 2 // 3], "ECORRUPT"
    elif kind == "corrupt_png":
        body, code = _png_corrupt(data.alpha_png), "ECORRUPT"
    elif kind == "truncated_png":
        body, code = data.alpha_png[:len(data.alpha_png) // 2], "ECORRUPT"
    elif kind == "jpeg_60000":
        body, code = _sof_patch(data.jpg640, 60000, 60000), "ELIMIT"
    else:
        body, code = _sof_patch(data.jpg640, 16385, 8), "ELIMIT"
    for ep in ("/v1/preprocess?w=8&h=8", "/v1/image?w=8&h=8", "/v1/decode?format=rgb"):
        e = assert_error(srv.post(ep, body), 422, code)
        assert e["message"]


def test_422_profile_refusal(srv, data):
    tiny = to_jpeg(np.full((20, 30, 3), 128, np.uint8))
    prog = cv2.imencode(".jpg", gradient(300, 200, 13), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1]
    for body, needle in ((tiny, "width"), (prog.tobytes(), "progressive")):
        e = assert_error(srv.post("/v1/decode?format=nv12&profile=ascend310", body), 422,
                         "EPROFILE")
        assert needle in e["message"], e
        assert srv.post("/v1/decode?format=nv12", body).status == 200


@pytest.mark.parametrize("query,field", [
    ("crop", "crop"),              # a key without "="
    ("w=8&h=8&crop", "crop"),
    ("w=8&h=8&aipp=%ff", "aipp"),  # not UTF-8 once decoded
    ("w=8&h=8&mean=%ff", "mean"),
    ("w=8&h=8&std=%C3", "std"),
    ("w=8&h=8&%ff=1", None),       # an unknown key that is not UTF-8
    ("w=8&&h=8&", None),           # empty pairs: a parameter without a name
])
def test_400_malformed_query(fresh, data, query, field):
    """Odd query strings are answered 400 (never a dropped connection), and
    the daemon stays whole (the fixture checks its clean exit)."""
    for ep in ("/v1/preprocess", "/v1/image", "/v1/decode", "/v1/batch"):
        try:
            r = fresh.post(f"{ep}?{query}", data.small)
        except (OSError, http.client.HTTPException) as e:
            pytest.fail(f"POST {ep}?{query}: no answer ({e!r})")
        if query == "w=8&&h=8&":
            assert_error(r, 400, "EINVAL", field="query", mentions="without a name")
            continue
        e = assert_error(r, 400, "EINVAL")
        if field:
            assert field in e["field"], (ep, e)
    assert fresh.get("/healthz").status == 200


# --------------------------------------------------------------------------
# Keep-alive, slow clients, idle connections


def test_keep_alive_several_requests_one_connection(srv, data, tmp):
    ref, _ = ctl_preprocess(tmp, data.files["small.jpg"], {"w": 32, "h": 24})
    c = srv.conn()
    try:
        c.connect()
        sock = c.sock
        for i in range(6):
            if i % 3 == 0:
                c.request("GET", "/healthz")
            elif i % 3 == 1:
                c.request("POST", "/v1/preprocess?w=32&h=24", body=data.small)
            else:
                c.request("GET", "/v1/info")
            r = resp_from(c.getresponse())
            assert r.status == 200, r
            if i % 3 == 1:
                assert np.array_equal(r.npy(), ref)
            assert c.sock is sock, f"connection not kept after request {i}"
    finally:
        c.close()


def test_idle_connection_is_closed(srv):
    c = srv.conn()
    try:
        c.request("GET", "/healthz")
        assert resp_from(c.getresponse()).status == 200
        s = c.sock
        s.settimeout(IDLE_TIMEOUT_S + 8)
        t0 = time.monotonic()
        try:
            d = s.recv(1)
        except ConnectionResetError:
            d = b""
        waited = time.monotonic() - t0
    finally:
        c.close()
    assert d == b"", d
    assert IDLE_TIMEOUT_S - 0.5 <= waited <= IDLE_TIMEOUT_S + 4, waited


def test_slow_body_cut_at_deadline_while_others_are_served(srv, data, tmp):
    ref, _ = ctl_preprocess(tmp, data.files["small.jpg"], {"w": 32, "h": 24})
    outcome = {}

    def slow():
        s = srv.raw(timeout=30)
        try:
            s.sendall(b"POST /v1/preprocess?w=32&h=24 HTTP/1.1\r\nHost: t\r\n"
                      b"Content-Type: image/jpeg\r\nContent-Length: 100000\r\n\r\n")
            t0 = time.monotonic()
            body = iter(data.small + b"\0" * 100000)
            while time.monotonic() - t0 < 20:
                readable, _, _ = select.select([s], [], [], 0)
                if readable:
                    break
                try:
                    s.sendall(bytes([next(body)]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                time.sleep(0.2)
            r = read_raw_response(s, timeout=5)
            outcome["elapsed"] = time.monotonic() - t0
            outcome["resp"] = r
        finally:
            s.close()

    t = threading.Thread(target=slow)
    t.start()
    lat, bad = [], []
    c = srv.conn(timeout=10)
    try:
        while t.is_alive():
            t1 = time.monotonic()
            try:
                c.request("POST", "/v1/preprocess?w=32&h=24", body=data.small)
                r = resp_from(c.getresponse())
            except (OSError, http.client.HTTPException) as e:
                bad.append(repr(e))
                c.close()
                c = srv.conn(timeout=10)
                continue
            lat.append(time.monotonic() - t1)
            if r.status != 200 or not np.array_equal(r.npy(), ref):
                bad.append(r)
            time.sleep(0.05)
    finally:
        c.close()
    t.join()
    assert not bad, bad[:5]
    # Served all along: a server held up by the slow body would answer the
    # others only once it is cut, REQUEST_TIMEOUT_S after it began (no
    # absolute latency limit: sanitizer builds and a loaded machine are slow).
    assert len(lat) >= 20
    assert max(lat) < REQUEST_TIMEOUT_S / 2, sorted(lat)[-5:]
    el = outcome["elapsed"]
    assert REQUEST_TIMEOUT_S - 0.5 <= el <= REQUEST_TIMEOUT_S + 4, el
    # cut: no answer in the middle of a body (http-api.md, request_timeout_s)
    assert outcome["resp"] is None, outcome["resp"]


def test_sigterm_answers_requests_in_flight(fresh, data):
    """SIGTERM: requests already received are answered 200 (the drain time,
    20 s by default, is far more than they need), never dropped, and the
    daemon exits 0 (the fixture). Past the drain time they are answered 503:
    test_service.py's test_drain_timeout_bounds_the_stop."""
    conns = []
    for _ in range(6):
        c = fresh.conn(timeout=30)
        c.request("POST", "/v1/preprocess?w=1024&h=1024&interp=lanczos&parity=pil",
                  body=data.jpg1080)
        conns.append(c)
    # every request has reached the daemon (6 + this /metrics one)
    daemon_util.wait_for(lambda: _gauge(fresh, "dvppd_http_inflight") >= 7,
                         "the 6 requests in flight")
    fresh.proc.send_signal(signal.SIGTERM)
    statuses = []
    for c in conns:
        try:
            r = resp_from(c.getresponse())
            statuses.append(r.status)
            assert r.status == 200 and r.npy().shape == (1, 3, 1024, 1024), r
        except (OSError, http.client.HTTPException) as e:
            statuses.append(repr(e))
        finally:
            c.close()
    assert statuses == [200] * 6, statuses


# --------------------------------------------------------------------------
# 10,000 random and broken bodies


_PARAM_NAMES = ["w", "h", "mode", "interp", "parity", "ascend_mode", "pad", "crop",
                "profile", "shrink_on_load", "no_orient", "allow_partial", "input", "raw",
                "mean", "std", "scale", "order", "layout", "dtype", "aipp", "aipp_op",
                "aipp_layout", "aipp_dtype", "format", "quality", "align", "out", "strict",
                "spec"]
_VALUES = ["0", "1", "2", "3", "7", "16", "64", "100", "255", "-1", "65536", "99999999999",
           "4294967297", "", "abc", "1e3", "0x10", "nan", "inf", "-0", "1.5", "%00", "%ff",
           "stretch", "fit", "fill", "letterbox", "shorter", "longer", "nearest", "bicubic",
           "area", "lanczos", "pil", "tf", "ascend", "cv2", "native", "ascend310",
           "ascend310p", "jpeg", "png", "raw", "auto", "nv12", "rgb", "gray", "i420",
           "nv12:64x48", "rgb:8x8", "nv12:99999x99999", "0,0,10,10", "5,5,1,1",
           "0,0,99999999,1", "1,2,3", "000000", "zzzzzz", "float16", "uint8", "int8",
           "nchw", "nhwc", "nc1hwc0", "bgr", "16x2", "0x0", "64x64", "3x99999999", "test",
           "nope", "0.5,0.5,0.5", "0.5,,0.5", "{}", "{\"ops\":[]}", "{\"x\":1}", "[",
           "%7B%22ops%22%3A5%7D", "\u00e9", "a" * 300]
_SMALL_VALUE = {"w": ["1", "7", "16", "33", "64", "100"], "h": ["1", "7", "16", "48", "99"]}


def _random_query(rng):
    items = []
    for _ in range(rng.randint(0, 7)):
        k = rng.choice(_PARAM_NAMES) if rng.random() < 0.9 else rng.choice(
            ["", "x", "W", "w[]", "%00", "w%20", "a" * 80, "&", "=="])
        if k in _SMALL_VALUE and rng.random() < 0.6:
            v = rng.choice(_SMALL_VALUE[k])
        else:
            v = rng.choice(_VALUES)
        r = rng.random()
        k = urllib.parse.quote(k, safe="%[]=&")
        v = urllib.parse.quote(v, safe="%,:")
        if r < 0.05:
            items.append(k)
        elif r < 0.1:
            items.append(k + "=" + v + "=" + v)
        else:
            items.append(k + "=" + v)
    q = "&".join(items)
    if rng.random() < 0.05:
        q += "&" * rng.randint(1, 3)
    return q


def _flip(blob, rng, n):
    b = bytearray(blob)
    for _ in range(n):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def _random_spec(rng):
    base = json.dumps({"ops": [{"resize": {"w": rng.choice([8, 16, 40]), "h": 12,
                                           "mode": rng.choice(["stretch", "letterbox",
                                                               "fill", "fit"])}},
                               rng.choice([{"convert": "bgr"}, {"crop": [1, 1, 20, 20]},
                                           {"border": {"top": 1, "bottom": 1, "left": 1,
                                                       "right": 1}}])],
                       "normalize": {"dtype": rng.choice(["uint8", "float16", "float32"])}})
    s = list(base)
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(s))
        op = rng.random()
        if op < 0.4:
            del s[i]
        elif op < 0.8:
            s[i] = rng.choice('{}[]":,0123456789abcxyz-. ')
        else:
            s.insert(i, rng.choice('{}[]":,0123456789-'))
    return "".join(s)


def _fuzz_case(rng, data):
    """(method, path, body, headers, strict4xx)."""
    ep = rng.choice(["/v1/preprocess", "/v1/image", "/v1/decode"])
    good_q = {"/v1/preprocess": "w=24&h=16", "/v1/image": "w=24&h=16&format=png",
              "/v1/decode": "format=rgb"}[ep]
    kind = rng.random()
    if kind < 0.25:
        n = rng.randint(1, 600)
        body = rng.randbytes(n)
        if body[:2] == b"\xff\xd8" or body[:4] == b"\x89PNG":
            body = b"x" + body
        return "POST", f"{ep}?{good_q}", body, {}, True
    if kind < 0.40:
        src = rng.choice([data.small, data.fuzz_jpeg_prog])
        return "POST", f"{ep}?{good_q}", src[:rng.randrange(2, int(len(src) * 0.9))], {}, True
    if kind < 0.50:
        src = data.small_png
        return "POST", f"{ep}?{good_q}", src[:rng.randrange(0, len(src) - 20)], {}, True
    if kind < 0.65:
        src = rng.choice([data.small, data.fuzz_jpeg_prog])
        return "POST", f"{ep}?{good_q}", _flip(src, rng, rng.randint(1, 6)), {}, False
    if kind < 0.72:
        return "POST", f"{ep}?{good_q}", _flip(data.small_png, rng, rng.randint(1, 4)), {}, \
            False
    if kind < 0.90:
        body = rng.choice([data.small, data.small_png])
        return "POST", f"{ep}?{_random_query(rng)}", body, {}, False
    if kind < 0.95:
        return "POST", "/v1/preprocess", data.small, {"X-Dvpp-Spec": _random_spec(rng)}, False
    # a random multipart batch
    parts = []
    for i in range(rng.randint(0, 4)):
        c = rng.random()
        if c < 0.3:
            parts.append((f"p{i}", data.small))
        elif c < 0.6:
            parts.append((f"p{i}", data.small[:rng.randrange(1, len(data.small))]))
        elif c < 0.8:
            parts.append(("spec", _random_spec(rng)))
        else:
            parts.append((f"p{i}", rng.randbytes(40)))
    body, hdrs = multipart(parts)
    if rng.random() < 0.3:
        cut = rng.randrange(0, len(body))
        body = body[:cut]
    if rng.random() < 0.1:
        hdrs = {"Content-Type": rng.choice(["multipart/form-data",
                                            "multipart/form-data; boundary=",
                                            "multipart/form-data; boundary=\"a b\"",
                                            "multipart/mixed; boundary=x"])}
    path = rng.choice(["/v1/batch?w=16&h=16", "/v1/batch?" + _random_query(rng),
                       "/v1/preprocess?w=16&h=16"])
    return "POST", path, body, hdrs, False


FUZZ_N = 10000


def test_10000_random_and_broken_bodies(fresh, data, tmp):
    srv = fresh
    prog = cv2.imencode(".jpg", gradient(48, 40, 12),
                        [cv2.IMWRITE_JPEG_QUALITY, 80, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1]
    data.fuzz_jpeg_prog = prog.tobytes()
    nthreads = 8
    per = FUZZ_N // nthreads
    results = [None] * nthreads

    def worker(k):
        try:
            run(k)
        except Exception as e:  # noqa: BLE001 - reported below
            results[k] = ({}, [("worker crashed", repr(e))])

    def run(k):
        rng = random.Random(1000 + k)
        stats, fails = {}, []
        c = srv.conn(timeout=15)
        for _ in range(per):
            method, path, body, hdrs, strict = _fuzz_case(rng, data)
            try:
                c.request(method, path, body=body, headers=hdrs)
                r = resp_from(c.getresponse())
            except (OSError, http.client.HTTPException) as e:
                fails.append(("dropped", path, body[:64], repr(e)))
                c.close()
                c = srv.conn(timeout=15)
                continue
            stats[r.status] = stats.get(r.status, 0) + 1
            if r.status >= 500 or (strict and not 400 <= r.status < 500):
                fails.append((r.status, path, body[:64], r.body[:200]))
            elif r.status >= 400:
                try:
                    e = r.json()["error"]
                    assert e["code"] and "message" in e and "field" in e
                except Exception:  # noqa: BLE001 - any shape problem is a failure
                    fails.append(("bad error body", r.status, path, r.body[:200]))
            if r.h("connection", "").lower() == "close":
                c.close()
                c = srv.conn(timeout=15)
        c.close()
        results[k] = (stats, fails)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats, fails = {}, []
    for s, f in results:
        fails += f
        for k, v in s.items():
            stats[k] = stats.get(k, 0) + v
    assert sum(stats.values()) + len(fails) >= nthreads * per
    assert not fails, (len(fails), fails[:8], stats)
    assert sum(v for k, v in stats.items() if 400 <= k < 500) > FUZZ_N // 2, stats
    # still healthy and still right
    assert srv.get("/healthz").status == 200
    params = {"w": 224, "h": 224, "mean": MEAN, "std": STD}
    ref, _ = ctl_preprocess(tmp, data.files["i640.jpg"], params)
    r = srv.post("/v1/preprocess?" + qs(params), data.jpg640)
    assert r.status == 200 and np.array_equal(r.npy(), ref)


# --------------------------------------------------------------------------
# A second daemon with tight admission: 503 and 429


@pytest.fixture(scope="module")
def tight(data, tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("http_tight"))
    d = start_daemon(tmp, http_extra={"max_jobs": 2, "threads": 4},
                     device={"channels": 1, "queue_depth": 1}, name="tight")
    yield d
    stop_daemon(d)


def test_429_too_many_jobs(tight, data):
    body, hdrs = multipart([("a", data.small), ("b", data.small)])
    locs = []
    try:
        for _ in range(2):
            r = tight.post("/v1/jobs?w=16&h=16", body, hdrs)
            assert r.status == 202, r
            locs.append(r.h("location"))
        r = tight.post("/v1/jobs?w=16&h=16", body, hdrs)
        assert_error(r, 429, "EAGAIN", field="batches")
        assert r.h("retry-after") and int(r.h("retry-after")) >= 0, r.headers
        assert tight.request("DELETE", locs.pop()).status == 200
        r = tight.post("/v1/jobs?w=16&h=16", body, hdrs)
        assert r.status == 202, r
        locs.append(r.h("location"))
    finally:
        for loc in locs:
            tight.request("DELETE", loc)


def test_503_when_admission_refuses(stalled, data, tmp):
    """queue_depth 1, one channel whose tasks stall: of a burst of 16, the
    one running and the one queued succeed, and the requests that come while
    both are there are refused at once, 503 with Retry-After."""
    ref, _ = ctl_preprocess(tmp, data.files["small.jpg"], {"w": 16, "h": 16})
    out = []
    lock = threading.Lock()
    rej0 = sum(v for n, lab, v in metrics(stalled) if n == "dvppd_rejections_total")

    def one():
        try:
            r = stalled.post("/v1/preprocess?w=16&h=16", data.small, timeout=60)
        except (OSError, http.client.HTTPException) as e:
            r = e
        with lock:
            out.append(r)

    ts = [threading.Thread(target=one) for _ in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(isinstance(r, Resp) for r in out), [r for r in out if not isinstance(r, Resp)]
    served = [r for r in out if r.status == 200]
    refused = [r for r in out if r.status != 200]
    assert 1 <= len(served) <= 2 and len(refused) >= 14, [r.status for r in out]
    for r in served:
        assert np.array_equal(r.npy(), ref)
    for r in refused:
        assert_error(r, 503, "EAGAIN")
        assert r.h("retry-after"), r.headers
    assert stalled.get("/healthz").status == 200
    rej = sum(v for n, lab, v in metrics(stalled) if n == "dvppd_rejections_total")
    assert rej == rej0 + len(refused)


def test_503_when_bodies_hold_the_body_memory(data, tmp_path):
    """http.max_body_memory: bodies being received are reserved from their
    Content-Length; one that would pass the budget is refused 503 before its
    body is read, and is accepted again once the first body is gone."""
    d = start_daemon(str(tmp_path), http_extra={"max_body_memory": 3000000}, name="mem")
    try:
        hold = d.raw(timeout=10)
        hold.sendall(b"POST /v1/preprocess?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                     b"Content-Length: 1900000\r\n\r\n" + b"\0" * 1000)
        # its body is being received (the other request in flight: /metrics)
        daemon_util.wait_for(lambda: _gauge(d, "dvppd_http_inflight") >= 2, "the held body")
        s = d.raw(timeout=10)
        s.sendall(b"POST /v1/preprocess?w=8&h=8 HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Length: 1900000\r\n\r\n")
        r = read_raw_response(s, timeout=5)
        s.close()
        assert r is not None and r[0] == 503, r
        assert b"body_memory" in r[2], r
        # A small body still fits beside the held one.
        assert d.post("/v1/preprocess?w=8&h=8", data.small).status == 200
        hold.close()
        daemon_util.wait_for(lambda: _gauge(d, "dvppd_http_inflight") <= 1,
                             "the held body gone")
        big = data.small + b"\0" * (1900000 - len(data.small))
        r = d.post("/v1/preprocess?w=8&h=8", big)
        assert r.status == 200, r
        assert d.get("/healthz").status == 200
    finally:
        stop_daemon(d)
