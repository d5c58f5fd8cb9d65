"""BatchSubmit.item_specs (proto/dvpp.proto): one spec per item of a socket
batch, as a training loader draws its own crop and flip per image, into the
batch's one N x ... tensor in a ring slot.

  - a batch of 4 items with 4 different crops + flips equals 4 single
    Submits of the same specs byte for byte (uint8 and float32), and the
    uint8 pixels equal PIL's crop/resize/transpose of the real photo;
  - no item_specs: every item runs the batch's spec, as before;
  - refusals before anything runs: a count that is not the input count
    (field item_specs), an item whose tensor shape, dtype or layout differs
    from the batch's (item_specs[i]), an item spec that does not parse or
    validate (item_specs[i], the spec's own path in the message), an item
    spec above the 64 KiB spec limit (ELIMIT, item_specs[i]); none leases
    a slot.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_item_specs.py
"""
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, assert_refused, free_port, pyclient, sock_dir  # noqa: E402
from daemon_util import stats_wait, stop_daemon  # noqa: E402

dvpp = pyclient()
PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")
U8 = {"dtype": "uint8", "layout": "nhwc", "scale": 1}
F32 = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225], "dtype": "float32",
       "layout": "nchw"}
# (crop L, T, R, B inclusive; flip or None)
CROPS = [((0, 0, 99, 79), None), ((17, 9, 170, 140), "horizontal"),
         ((101, 40, 226, 148), "vertical"), ((30, 20, 61, 45), "both")]
W, H = 48, 40


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    sdir = sock_dir("dvppitems-", 0o755)
    sock = os.path.join(sdir, "d.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600", "lease_timeout_ms": 10000},
           "device": {"channels": 2}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("items")), cfg, "items", port,
                                 sock=sock, sock_dir=sdir)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def photo():
    return open(PHOTO, "rb").read()


def item_spec(crop, flip, norm):
    ops = [{"crop": list(crop)},
           {"resize": {"w": W, "h": H, "parity": "pil", "interp": "bilinear"}}]
    if flip:
        ops.append({"flip": flip})
    return {"ops": ops, "normalize": norm}


def pil_item(blob, crop, flip):
    img = Image.open(io.BytesIO(blob)).convert("RGB")
    l, t, r, b = crop
    img = img.crop((l, t, r + 1, b + 1)).resize((W, H), Image.BILINEAR)
    if flip in ("horizontal", "both"):
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    if flip in ("vertical", "both"):
        img = img.transpose(Image.FLIP_TOP_BOTTOM)
    return np.asarray(img)


@pytest.mark.parametrize("norm", [U8, F32], ids=["uint8", "float32"])
def test_item_specs_equal_single_submits(srv, photo, norm):
    specs = [item_spec(c, f, norm) for c, f in CROPS]
    with srv.client() as c:
        ring = c.open_ring(2, 4 * 3 * W * H * 4)
        singles = []
        for s in specs:
            with c.submit(s, photo, ring=ring) as r:
                singles.append(r.array()[0].copy())
        with c.batch_submit(specs[0], [photo] * 4, ring, item_specs=specs) as r:
            assert r.item_status == [0] * 4
            x = r.array().copy()
    assert x.shape == (4,) + singles[0].shape
    for i in range(4):
        assert x[i].tobytes() == singles[i].tobytes(), f"item {i}"
    if norm is U8:
        for i, (crop, flip) in enumerate(CROPS):
            assert np.array_equal(x[i], pil_item(photo, crop, flip)), f"item {i} vs PIL"
    # items really differ (4 crops)
    assert len({x[i].tobytes() for i in range(4)}) == 4


def test_no_item_specs_runs_the_batch_spec(srv, photo):
    spec = item_spec(CROPS[1][0], "horizontal", U8)
    with srv.client() as c:
        ring = c.open_ring(1, 3 * 3 * W * H)
        with c.batch_submit(spec, [photo] * 3, ring, item_specs=[]) as r:
            x = r.array().copy()
    want = pil_item(photo, CROPS[1][0], "horizontal")
    for i in range(3):
        assert np.array_equal(x[i], want)


def refusal(srv, spec, item_specs, n=4, code="EINVAL", field=None):
    with srv.client() as c:
        ring = c.open_ring(1, 4 * 3 * W * H * 4)
        with pytest.raises(dvpp.DvppError) as ei:
            c.batch_submit(spec, [open(PHOTO, "rb").read()] * n, ring, item_specs=item_specs)
        e = assert_refused(ei, code, field)
        stats_wait(c, lambda s: s["slots_leased"] == 0, "no lease after a refusal", 3)
        return e


def test_item_spec_count_must_match(srv):
    specs = [item_spec(c, f, U8) for c, f in CROPS]
    e = refusal(srv, specs[0], specs[:3], field="item_specs")
    assert "3 specs for 4 inputs" in e.message, e


@pytest.mark.parametrize("i,change,what", [
    (2, {"resize_h": H + 1}, f"3x{H + 1}x{W}"),
    (1, {"norm": F32}, "float32"),
    (3, {"norm": dict(U8, layout="nchw")}, "NCHW"),
])
def test_item_spec_other_tensor_refused(srv, i, change, what):
    specs = [item_spec(c, f, U8) for c, f in CROPS]
    if "resize_h" in change:
        specs[i]["ops"][1]["resize"]["h"] = change["resize_h"]
    if "norm" in change:
        specs[i]["normalize"] = change["norm"]
    e = refusal(srv, item_spec(*CROPS[0], U8), specs, field=f"item_specs[{i}]")
    assert what.lower() in e.message.lower(), e


def test_item_spec_bad_spec_names_item_and_path(srv):
    specs = [item_spec(c, f, U8) for c, f in CROPS]
    specs[1]["ops"][2] = {"flip": "sideways"}
    e = refusal(srv, specs[0], specs, field="item_specs[1]")
    assert e.message.startswith("item_specs[1]: ops[2].flip: want horizontal"), e
    specs[1] = "{not json"
    e = refusal(srv, specs[0], specs, field="item_specs[1]")
    assert "JSON" in e.message, e


def test_item_spec_over_the_spec_limit(srv):
    specs = [item_spec(c, f, U8) for c, f in CROPS]
    big = json.dumps(specs[2])[:-1] + ', "strict": false' + " " * 70000 + "}"
    specs[2] = big
    e = refusal(srv, specs[0], specs, code="ELIMIT", field="item_specs[2]")
    assert "65536" in e.message, e


def c_client(srv, tmp_path, spec, item_specs, slot_bytes):
    """tests/e2e/batch_items_client (libdvppclient's dvppc_batch_submit_items):
    its answer and the tensor bytes it wrote."""
    out = tmp_path / "out.bin"
    args = [daemon_util.build_path("tests", "e2e", "batch_items_client"), srv.sock, PHOTO,
            str(out), str(slot_bytes), json.dumps(spec)]
    args += [json.dumps(s) for s in item_specs] if item_specs else ["-"]
    r = daemon_util.run(*args)
    ans = json.loads(r.stdout)
    return ans, out.read_bytes() if ans["status"] == 0 else None


def test_c_client_item_specs(srv, photo, tmp_path):
    """The C client's dvppc_batch_submit_items gives the Python client's bytes,
    and its refusals name the item."""
    specs = [item_spec(c, f, U8) for c, f in CROPS]
    with srv.client() as c:
        ring = c.open_ring(1, 4 * 3 * W * H)
        with c.batch_submit(specs[0], [photo] * 4, ring, item_specs=specs) as r:
            want = r.array().tobytes()
    ans, got = c_client(srv, tmp_path, specs[0], specs, 4 * 3 * W * H)
    assert ans == {"status": 0, "code": "", "field": "", "items": 4}
    assert got == want
    bad = [dict(s) for s in specs]
    bad[3] = item_spec((0, 0, 9, 9), None, F32)
    ans, _ = c_client(srv, tmp_path, specs[0], bad, 4 * 3 * W * H * 4)
    assert ans["code"] == "EINVAL" and ans["field"] == "item_specs[3]", ans
