"""The integer-tensor examples of docs/http-api.md, run against dvppd: each
`X-Dvpp-Spec` a curl line there sends with a `uint8` or `int8` normalize
must give the pixels, not `x / 255` rounded to 0 or 1 (the example without
`"scale": 1` did, a trap for whoever copies it). The daemon's rule itself is
checked too: without mean/std/scale a uint8 tensor is x / 255 rounded.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_http_doc_examples.py
"""
import io
import json
import os
import re

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import ROOT, free_port, gradient, stop_daemon, to_png  # noqa: E402
import daemon_util  # noqa: E402

DOC = os.path.join(ROOT, "docs", "http-api.md")


def doc_specs():
    """Every X-Dvpp-Spec JSON of the doc's curl lines whose normalize asks
    for an integer dtype."""
    with open(DOC) as f:
        text = f.read()
    out = []
    for m in re.finditer(r"X-Dvpp-Spec: (\{.*?\})'", text):
        spec = json.loads(m.group(1))
        if spec.get("normalize", {}).get("dtype") in ("uint8", "int8"):
            out.append(spec)
    return out


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("docex"))
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": ""},
           "device": {"channels": 1}}
    d = daemon_util.start_daemon(tmp, cfg, "docex", port)
    yield d
    stop_daemon(d)


def tensor(srv, png, spec):
    r = srv.post("/v1/preprocess", png, headers={"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 200, r
    return np.load(io.BytesIO(r.body))


def test_the_doc_has_integer_examples():
    assert doc_specs(), "no uint8/int8 X-Dvpp-Spec example left in docs/http-api.md"


@pytest.mark.parametrize("spec", doc_specs(), ids=lambda s: json.dumps(s["normalize"]))
def test_integer_examples_give_the_pixels(srv, spec):
    img = gradient(300, 200, 4)          # BGR as cv2 writes it: every byte value
    t = tensor(srv, to_png(img), spec)
    assert t.dtype == np.dtype(spec["normalize"]["dtype"])
    assert len(np.unique(t)) > 100, \
        f"{spec}: {len(np.unique(t))} distinct values {np.unique(t)[:4]}: x / 255 rounded?"


def test_without_scale_an_integer_tensor_is_x_over_255_rounded(srv):
    """The rule the doc states: no mean/std/scale is x / 255, rounded half
    to even to uint8 (0 or 1); "scale": 1 gives the bytes of the image."""
    img = gradient(64, 48, 3)
    rgb = img[..., ::-1]
    base = {"dtype": "uint8", "layout": "nhwc"}
    t = tensor(srv, to_png(img), {"normalize": base})
    assert np.array_equal(t[0], np.round(rgb / 255).astype(np.uint8))
    t = tensor(srv, to_png(img), {"normalize": dict(base, scale=1)})
    assert np.array_equal(t[0], rgb)
