"""?dump=1: every intermediate of a request in a folder of dump.dir
(docs/dump.md), against independent references.

- /v1/preprocess with crop + resize + normalise on a real photo (libjpeg-
  turbo's testorig.jpg): 00-decoded.png equals djpeg's decode (the
  reference test_jpeg_reference.py holds the decoder to, same DCT
  settings), 01-crop.png equals numpy slicing of it, 02-resize.png equals
  what /v1/image answers for the same ops, 03-post_input.png equals the
  resize, tensor.npy is byte-identical to the HTTP answer, and the manifest
  lists every file with its geometry, the tensor and the letterbox geometry
  of the answer's headers.
- /v1/decode in NV12: 00-decoded.npy holds the decoder's planes as laid out
  (rows of width_stride bytes), equal plane by plane to the answer.
- Retention: max_requests=3 after 5 dumps leaves the 3 newest; max_bytes
  keeps the total under the bound.
- Dumps off -> 403; a caller on a non-loopback address with dump.remote
  false -> 403 (and 200 with dump.remote true); no dump param -> no folder;
  a dump.dir that is a symbolic link or world-writable stops the daemon at
  start.
- dvppctl preprocess --dump DIR writes the same image files, byte for byte,
  as the daemon's dump of the same spec.
- Review fixes: retention keeps the dump just finished (max_bytes filled to
  the byte) and dumps still in progress (max_requests=1, a slow dump
  overlapping a fast one); a batch of 64 holds few descriptors; a request
  failing at plan time, and a batch refused at start, leave manifests with
  the answer's error; a batch's top tensor gets its room before the items.

Run with Debian's /usr/bin/python3 (numpy, Pillow, djpeg).
"""
import io
import json
import os
import shutil
import socket
import subprocess
import http.client

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import DVPPD, ROOT, ctl, free_port, stop_daemon  # noqa: E402

PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")
SPEC = {"ops": [{"crop": [10, 8, 169, 127]}, {"resize": {"w": 64, "h": 48}}],
        "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225],
                      "layout": "nchw", "dtype": "float32"}}


def photo():
    with open(PHOTO, "rb") as f:
        return f.read()


def djpeg_rgb(path):
    """djpeg's default decode (islow DCT, fancy upsampling) as H x W x 3."""
    out = subprocess.run(["djpeg", "-pnm", path], capture_output=True, check=True).stdout
    return np.asarray(Image.open(io.BytesIO(out)).convert("RGB"))


def png(path):
    return np.asarray(Image.open(path))


def start(tmp, dump=None, name="d", listen="127.0.0.1"):
    port = free_port()
    cfg = {"http": {"listen": f"{listen}:{port}"}, "socket": {"path": ""},
           "device": {"channels": 2}}
    if dump is not None:
        cfg["dump"] = dump
    d = daemon_util.start_daemon(tmp, cfg, name, port)
    return d


def folders(root):
    return sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))


def manifest(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def dumpd(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("dump"))
    root = os.path.join(tmp, "dumps")
    d = start(tmp, {"dir": root, "max_requests": 50})
    d.root = root
    yield d
    stop_daemon(d)


def post(d, path, spec, query="dump=1", body=None, headers=None):
    h = {"X-Dvpp-Spec": json.dumps(spec)} if spec is not None else {}
    h.update(headers or {})
    return d.post(path + ("?" + query if query else ""), photo() if body is None else body, h)


def test_preprocess_dump_matches_references(dumpd):
    r = post(dumpd, "/v1/preprocess", SPEC)
    assert r.status == 200, r
    name = r.h("X-Dvpp-Dump")
    assert name and "/" not in name
    folder = os.path.join(dumpd.root, name)
    assert (os.stat(folder).st_mode & 0o777) == 0o700
    files = sorted(os.listdir(folder))
    assert files == ["00-decoded.png", "01-crop.png", "02-resize.png", "03-post_input.png",
                     "manifest.json", "tensor.npy"]
    decoded = png(os.path.join(folder, "00-decoded.png"))
    ref = djpeg_rgb(PHOTO)
    assert decoded.shape == ref.shape == (149, 227, 3)
    assert np.array_equal(decoded, ref)
    crop = png(os.path.join(folder, "01-crop.png"))
    assert np.array_equal(crop, ref[8:128, 10:170])
    img = dumpd.post("/v1/image", photo(),
                     {"X-Dvpp-Spec": json.dumps({"ops": SPEC["ops"],
                                                 "output": {"format": "png"}})})
    assert img.status == 200, img
    via_image = np.asarray(Image.open(io.BytesIO(img.body)))
    resize = png(os.path.join(folder, "02-resize.png"))
    assert resize.shape == (48, 64, 3)
    assert np.array_equal(resize, via_image)
    # the last resize runs fused with the normalisation (one call from the
    # crop's output): what the normalisation reads is the crop
    assert np.array_equal(png(os.path.join(folder, "03-post_input.png")), crop)
    with open(os.path.join(folder, "tensor.npy"), "rb") as f:
        assert f.read() == r.body
    # the tensor is the normalisation of the dumped resize (numpy's order)
    t = np.load(os.path.join(folder, "tensor.npy"))
    mean = np.array(SPEC["normalize"]["mean"])[:, None, None]
    std = np.array(SPEC["normalize"]["std"])[:, None, None]
    want = ((resize.transpose(2, 0, 1) / 255.0 - mean) / std).astype(np.float32)
    assert np.allclose(t[0], want, atol=1e-6)

    m = manifest(folder)
    assert m["request"] == name
    assert m["spec"] == SPEC
    assert m["input"] == {"format": "jpeg", "width": 227, "height": 149,
                          "bytes": len(photo())}
    by_name = {f["name"]: f for f in m["files"]}
    assert set(by_name) == set(files) - {"manifest.json"}
    for fname, stage, index, (w, h) in [("00-decoded.png", "decoded", -1, (227, 149)),
                                         ("01-crop.png", "crop", 0, (160, 120)),
                                         ("02-resize.png", "resize", 1, (64, 48)),
                                         ("03-post_input.png", "post_input", -1, (160, 120))]:
        f = by_name[fname]
        assert (f["stage"], f["index"], f["format"], f["width"], f["height"]) == \
            (stage, index, "rgb", w, h), f
        assert f["width_stride"] >= 3 * w and f["height_stride"] >= h
        assert f["bytes"] == os.path.getsize(os.path.join(folder, fname))
    assert by_name["tensor.npy"]["bytes"] == len(r.body)
    assert m["tensor"] == {"shape": [1, 3, 48, 64], "dtype": r.h("X-Dvpp-Dtype"),
                           "layout": r.h("X-Dvpp-Layout")}
    assert (m["tensor"]["dtype"].lower(), m["tensor"]["layout"].lower()) == ("float32", "nchw")
    sx, sy = (float(v) for v in r.h("X-Dvpp-Scale").split(","))
    px, py = (float(v) for v in r.h("X-Dvpp-Pad").split(","))
    g = m["geometry"]
    assert (g["scale_x"], g["scale_y"], g["pad_x"], g["pad_y"]) == (sx, sy, px, py)
    assert m["error"] is None and m["notes"] == []


def nv12_planes(a, w, h, stride, hstride):
    """Y (h x w) and interleaved UV (h/2 x w) of NV12 bytes laid out in rows
    of @stride bytes, planes of @hstride rows."""
    flat = a.reshape(-1)
    y = flat[:stride * hstride].reshape(hstride, stride)[:h, :w]
    uv = flat[stride * hstride:].reshape(-1, stride)[:(h + 1) // 2, :w]
    return y, uv


def test_nv12_decode_dumps_planes(dumpd):
    r = dumpd.post("/v1/decode?format=nv12&dump=1", photo())
    assert r.status == 200, r
    folder = os.path.join(dumpd.root, r.h("X-Dvpp-Dump"))
    assert "00-decoded.npy" in os.listdir(folder)
    f = {x["name"]: x for x in manifest(folder)["files"]}["00-decoded.npy"]
    assert (f["format"], f["width"], f["height"]) == ("nv12", 227, 149)
    dumped = np.load(os.path.join(folder, "00-decoded.npy"))
    assert dumped.shape[1] == f["width_stride"]
    answer = r.npy()
    w, h = 227, 149
    dy, duv = nv12_planes(dumped, w, h, f["width_stride"], f["height_stride"])
    ay, auv = nv12_planes(answer, w, h, int(r.h("X-Dvpp-Width-Stride")),
                          int(r.h("X-Dvpp-Height-Stride")))
    assert np.array_equal(dy, ay)
    assert np.array_equal(duv, auv)
    # the Y plane is a real picture (not a blank buffer)
    assert dy.std() > 10
    with open(os.path.join(folder, "output.npy"), "rb") as fh:
        assert fh.read() == r.body


def test_header_asks_too_and_no_param_no_folder(dumpd):
    before = folders(dumpd.root)
    r = post(dumpd, "/v1/preprocess", SPEC, query="")
    assert r.status == 200 and r.h("X-Dvpp-Dump") is None
    assert folders(dumpd.root) == before
    r = post(dumpd, "/v1/preprocess", SPEC, query="", headers={"X-Dvpp-Dump": "1"})
    assert r.status == 200 and r.h("X-Dvpp-Dump") in folders(dumpd.root)
    r = post(dumpd, "/v1/preprocess", SPEC, query="dump=maybe")
    assert r.status == 400 and r.json()["error"]["field"] == "dump"


def test_query_spec_with_dump(dumpd):
    r = dumpd.post("/v1/preprocess?w=32&h=32&dump=1", photo())
    assert r.status == 200, r
    m = manifest(os.path.join(dumpd.root, r.h("X-Dvpp-Dump")))
    assert m["spec"] == {"w": "32", "h": "32"}
    assert [f["stage"] for f in m["files"]][-1] == "tensor"


def test_retention_max_requests(tmp_path):
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_requests": 3})
    try:
        names = []
        for _ in range(5):
            r = post(d, "/v1/preprocess", SPEC)
            assert r.status == 200, r
            names.append(r.h("X-Dvpp-Dump"))
        assert names == sorted(names) and len(set(names)) == 5
        assert folders(root) == names[2:]
    finally:
        stop_daemon(d)


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def test_retention_max_bytes(tmp_path):
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_bytes": 150000})
    try:
        sizes = []
        for _ in range(4):
            r = post(d, "/v1/preprocess", SPEC)
            assert r.status == 200, r
            sizes.append(folder_bytes(os.path.join(root, r.h("X-Dvpp-Dump"))))
            total = sum(folder_bytes(os.path.join(root, n)) for n in folders(root))
            assert total <= 150000
        # one dump is ~ 100 kB here: the bound keeps exactly the newest one
        assert 75000 < sizes[0] <= 150000 and len(folders(root)) == 1
    finally:
        stop_daemon(d)


def test_per_dump_bound_skips_with_note(tmp_path):
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_bytes": 8192})
    try:
        r = post(d, "/v1/preprocess", SPEC)
        assert r.status == 200, r
        m = manifest(os.path.join(root, r.h("X-Dvpp-Dump")))
        skipped = [f["name"] for f in m["files"] if f.get("skipped")]
        assert "00-decoded.png" in skipped
        assert not os.path.exists(os.path.join(root, r.h("X-Dvpp-Dump"), "00-decoded.png"))
        assert any("00-decoded.png" in n and "bound" in n for n in m["notes"])
        assert m["bytes"] <= 8192
    finally:
        stop_daemon(d)


def test_dumps_off_is_403(tmp_path):
    d = start(str(tmp_path))
    try:
        r = post(d, "/v1/preprocess", SPEC)
        assert r.status == 403, r
        assert r.json()["error"]["field"] == "dump"
        assert post(d, "/v1/preprocess", SPEC, query="").status == 200
    finally:
        stop_daemon(d)


def host_address():
    """A non-loopback IPv4 address of this machine, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout
    except OSError:
        return None
    for a in out.split():
        if "." in a and not a.startswith("127."):
            return a
    return None


def post_from(addr, port, path):
    c = http.client.HTTPConnection(addr, port, timeout=30)
    try:
        c.request("POST", path, body=photo(), headers={"X-Dvpp-Spec": json.dumps(SPEC)})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


@pytest.mark.parametrize("remote", [False, True])
def test_remote_caller(tmp_path, remote):
    addr = host_address()
    if not addr:
        pytest.skip("no non-loopback IPv4 address on this machine")
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "remote": remote}, listen="0.0.0.0")
    try:
        with socket.create_connection((addr, d.port), timeout=5) as s:
            assert not s.getpeername()[0].startswith("127.")
        status, headers, body = post_from(addr, d.port, "/v1/preprocess?dump=1")
        if remote:
            assert status == 200 and len(folders(root)) == 1
        else:
            assert status == 403, body
            assert json.loads(body)["error"]["field"] == "dump"
            assert folders(root) == []
            # the same daemon dumps for a loopback caller
            assert post(d, "/v1/preprocess", SPEC).status == 200
    finally:
        stop_daemon(d)


@pytest.mark.parametrize("kind", ["symlink", "world_writable"])
def test_unsafe_dump_dir_refused_at_start(tmp_path, kind):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    path = real
    if kind == "symlink":
        path = tmp_path / "link"
        os.symlink(real, path)
    else:
        os.chmod(real, 0o777)
    cfg = {"http": {"listen": f"127.0.0.1:{free_port()}"}, "socket": {"path": ""},
           "dump": {"dir": str(path)}}
    cfg_path = tmp_path / "c.json"
    cfg_path.write_text(json.dumps(cfg))
    p = subprocess.run([DVPPD, "--config", str(cfg_path)], capture_output=True, text=True,
                       timeout=20)
    assert p.returncode != 0
    assert "dump.dir" in p.stderr + p.stdout
    assert ("symbolic link" if kind == "symlink" else "writable by everyone") in \
        p.stderr + p.stdout


def test_dvppctl_dump_same_bytes(dumpd, tmp_path):
    r = dumpd.post("/v1/preprocess?w=64&h=48&dump=1", photo())
    assert r.status == 200, r
    folder = os.path.join(dumpd.root, r.h("X-Dvpp-Dump"))
    out = tmp_path / "ctl"
    ctl("preprocess", PHOTO, "--size", "64x48", "-o", str(tmp_path / "t.npy"),
        "--dump", str(out))
    daemon_files = sorted(f for f in os.listdir(folder) if f.endswith(".png"))
    ctl_files = sorted(f for f in os.listdir(out) if f.endswith(".png"))
    assert daemon_files == ctl_files and len(ctl_files) >= 2
    for f in ctl_files:
        with open(os.path.join(folder, f), "rb") as a, open(os.path.join(out, f), "rb") as b:
            assert a.read() == b.read(), f
    m = manifest(str(out))
    assert [f["name"] for f in m["files"]] == [f["name"] for f in manifest(folder)["files"]]
    with open(tmp_path / "t.npy", "rb") as a, open(out / "tensor.npy", "rb") as b:
        assert a.read() == b.read()
    # the watched pipeline gives the tensor the offline command (no --dump) gives
    ctl("preprocess", PHOTO, "--size", "64x48", "-o", str(tmp_path / "plain.npy"))
    assert (tmp_path / "plain.npy").read_bytes() == (out / "tensor.npy").read_bytes()
    assert (out / "tensor.npy").read_bytes() == r.body


BATCH_SPEC = {"ops": [{"resize": {"w": 40, "h": 30}}],
              "normalize": {"layout": "nchw", "dtype": "float32"}}


def test_batch_dump_per_item(dumpd):
    """/v1/batch?dump=1: item-NNNN/ per input with that item's decoded image
    (equal to its reference decode), its resize (equal to /v1/image's), its
    tensor slice (equal to the answer's); the top folder holds the batch's
    tensor, byte-identical to the answer."""
    second = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testimgint.jpg")
    rgb = np.zeros((37, 53, 3), np.uint8)
    rgb[..., 0] = np.arange(53, dtype=np.uint8)[None, :] * 4
    rgb[..., 1] = np.arange(37, dtype=np.uint8)[:, None] * 6
    rgb[..., 2] = 200
    pngb = daemon_util.encode_image(Image.fromarray(rgb))
    with open(second, "rb") as f:
        inputs = [photo(), f.read(), pngb]
    body, hdr = daemon_util.multipart([("image", b) for b in inputs]
                                      + [("spec", json.dumps(BATCH_SPEC))])
    r = dumpd.post("/v1/batch?dump=1", body, hdr)
    assert r.status == 200, r
    name = r.h("X-Dvpp-Dump")
    folder = os.path.join(dumpd.root, name)
    top = sorted(os.listdir(folder))
    assert top == ["item-0000", "item-0001", "item-0002", "manifest.json", "tensor.npy"]
    with open(os.path.join(folder, "tensor.npy"), "rb") as f:
        assert f.read() == r.body
    whole = np.load(io.BytesIO(r.body))
    assert whole.shape == (3, 3, 30, 40)
    refs = [djpeg_rgb(PHOTO), djpeg_rgb(second), rgb]
    for i, b in enumerate(inputs):
        item = os.path.join(folder, "item-%04d" % i)
        files = sorted(os.listdir(item))
        assert files == ["00-decoded.png", "01-resize.png", "02-post_input.png",
                         "manifest.json", "tensor.npy"], files
        assert np.array_equal(png(os.path.join(item, "00-decoded.png")), refs[i])
        # /v1/image shrinks a JPEG on load by default; tensors never do
        img = dumpd.post("/v1/image", b,
                         {"X-Dvpp-Spec": json.dumps({"ops": BATCH_SPEC["ops"],
                                                     "decode": {"shrink_on_load": False},
                                                     "output": {"format": "png"}})})
        assert img.status == 200, img
        assert np.array_equal(png(os.path.join(item, "01-resize.png")),
                              np.asarray(Image.open(io.BytesIO(img.body))))
        t = np.load(os.path.join(item, "tensor.npy"))
        assert t.shape == (1, 3, 30, 40)
        assert np.array_equal(t[0], whole[i])
        # the tensor is the resize over 255, channel first
        ref = png(os.path.join(item, "01-resize.png")).astype(np.float32) / 255
        assert np.allclose(t[0], ref.transpose(2, 0, 1), atol=1e-6)
        m = manifest(item)
        assert m["request"] == name + "/item-%04d" % i
        assert m["input"]["format"] == ("png" if i == 2 else "jpeg")
        assert m["input"]["bytes"] == len(b)
        assert m["tensor"]["shape"] == [1, 3, 30, 40]
    m = manifest(folder)
    assert m["request"] == name
    assert m["tensor"]["shape"] == [3, 3, 30, 40]


def test_batch_dump_failed_item_noted(dumpd):
    """A lenient batch whose second input is not an image: that item's
    manifest carries its error and no tensor; the others are dumped."""
    body, hdr = daemon_util.multipart([("image", photo()), ("image", b"\xff\xd8junk"),
                                       ("spec", json.dumps(BATCH_SPEC))])
    r = dumpd.post("/v1/batch?dump=1", body, hdr)
    assert r.status == 200, r
    folder = os.path.join(dumpd.root, r.h("X-Dvpp-Dump"))
    assert "tensor.npy" in os.listdir(os.path.join(folder, "item-0000"))
    bad = os.path.join(folder, "item-0001")
    assert "tensor.npy" not in os.listdir(bad)
    assert manifest(bad)["error"]


@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/video/decode"])
def test_dump_refused_where_it_cannot_apply(dumpd, path):
    """/v1/jobs and the video routes cannot dump: 400 naming dump, never a
    silently ignored flag."""
    body, hdr = daemon_util.multipart([("image", photo())])
    r = dumpd.post(path + "?dump=1", body if path == "/v1/jobs" else b"\x00\x00\x00\x01",
                   hdr if path == "/v1/jobs" else {})
    assert r.status == 400, r
    assert json.loads(r.body)["error"]["field"] == "dump"


# --- retention, concurrency, descriptors and failures (review fixes) ------------------


def disk_bytes(path):
    """Bytes of the regular files under @path, one level of subfolders too."""
    total = 0
    for n in os.listdir(path):
        p = os.path.join(path, n)
        total += folder_bytes(p) if os.path.isdir(p) else os.path.getsize(p)
    return total


def test_retention_keeps_the_dump_just_finished(tmp_path):
    """max_bytes equal to a dump's files: the manifest (counted by
    retention) used to push the folder past the bound and retention removed
    the dump it had just finished, so X-Dvpp-Dump named nothing. Now the
    folder stays, and its files leave the manifest's room inside the
    bound."""
    # the last file, the tensor (224 x 224 x 3 float32), is written by its
    # exact size, so the files can fill the bound to the byte
    spec = {"ops": [{"resize": {"w": 224, "h": 224}}], "normalize": {}}
    big = start(str(tmp_path), {"dir": str(tmp_path / "big")}, name="big")
    try:
        r = post(big, "/v1/preprocess", spec)
        assert r.status == 200, r
        folder = os.path.join(str(tmp_path / "big"), r.h("X-Dvpp-Dump"))
        files = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                    if f != "manifest.json")
    finally:
        stop_daemon(big)
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_bytes": files})
    try:
        r = post(d, "/v1/preprocess", spec)
        assert r.status == 200, r
        folder = os.path.join(root, r.h("X-Dvpp-Dump"))
        assert os.path.isdir(folder), "retention removed the dump it had just finished"
        m = manifest(folder)
        assert m["error"] is None
        assert disk_bytes(folder) <= files
        # the room kept for the manifest skipped a file, with its note
        assert any(f.get("skipped") for f in m["files"]) and m["notes"]
    finally:
        stop_daemon(d)


def noise_png(w, h, seed=7):
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    return daemon_util.encode_image(Image.fromarray(rgb))


def write_failures(folder):
    """The notes of @folder's manifests (item folders too) that tell of a
    write that failed."""
    notes = list(manifest(folder)["notes"])
    for n in os.listdir(folder):
        if n.startswith("item-"):
            notes += manifest(os.path.join(folder, n))["notes"]
    return [n for n in notes if "not written" in n]


def test_retention_spares_dumps_in_progress(tmp_path):
    """max_requests=1 and two dumps at once: a slow one (a large noise
    image, seconds of PNG encoding on its worker) and a fast one that
    finishes meanwhile. The fast one's retention must not remove the slow
    one's folder while it still writes: the slow dump ends complete (its
    manifest, no failed write, no warning), and once both are done only
    the last one to finish is left."""
    import threading
    import time
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_requests": 1})
    slow_body = noise_png(2000, 1500)
    spec = {"ops": [{"resize": {"w": 64, "h": 48}}], "normalize": {}}
    got = {}

    def slow():
        got["slow"] = post(d, "/v1/preprocess", spec, body=slow_body)

    try:
        t = threading.Thread(target=slow)
        t.start()
        deadline = time.monotonic() + 20
        while not folders(root) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert folders(root), "the slow dump's folder never appeared"
        fast = post(d, "/v1/preprocess", SPEC)
        assert fast.status == 200, fast
        fast_name = fast.h("X-Dvpp-Dump")
        # the premise: the fast dump ended (and ran retention) mid-slow-dump
        assert t.is_alive(), "the slow request finished first: no overlap to test"
        assert os.path.isdir(os.path.join(root, fast_name))
        t.join(60)
        assert "slow" in got and got["slow"].status == 200, got.get("slow")
        slow_name = got["slow"].h("X-Dvpp-Dump")
        assert slow_name < fast_name  # begun first: retention by name would pick it
        folder = os.path.join(root, slow_name)
        assert os.path.isdir(folder), "the in-progress dump was removed by another's retention"
        m = manifest(folder)
        assert m["error"] is None and write_failures(folder) == [], m["notes"]
        assert [f["name"] for f in m["files"] if f.get("skipped")] == []
        for f in m["files"]:
            assert os.path.getsize(os.path.join(folder, f["name"])) == f["bytes"]
        assert folders(root) == [slow_name]
        assert "dump " not in d.log()
    finally:
        stop_daemon(d)


def test_batch_dump_holds_few_descriptors(dumpd):
    """A batch of 64 with dump=1 opens an item's folder only while it
    writes into it: the daemon's descriptors stay within a few of idle
    during the whole request (it held one per item, 65, before)."""
    import threading
    idle = dumpd.fd_count()
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            try:
                samples.append(dumpd.fd_count())
            except OSError:
                pass

    body, hdr = daemon_util.multipart([("image", photo())] * 64
                                      + [("spec", json.dumps(BATCH_SPEC))])
    t = threading.Thread(target=sample)
    t.start()
    try:
        r = dumpd.post("/v1/batch?dump=1", body, hdr)
    finally:
        stop.set()
        t.join()
    assert r.status == 200, r
    assert len(samples) > 20, "too few samples to see the request"
    assert max(samples) - idle < 40, (idle, max(samples))
    folder = os.path.join(dumpd.root, r.h("X-Dvpp-Dump"))
    whole = np.load(io.BytesIO(r.body))
    for i in (0, 31, 63):
        item = os.path.join(folder, "item-%04d" % i)
        assert sorted(os.listdir(item)) == ["00-decoded.png", "01-resize.png",
                                            "02-post_input.png", "manifest.json",
                                            "tensor.npy"]
        assert np.array_equal(np.load(os.path.join(item, "tensor.npy"))[0], whole[i])
    assert write_failures(folder) == []


def test_failed_request_leaves_manifest_with_error(tmp_path):
    """A dump whose request fails at plan time (a crop outside the image,
    after the folder was made) still gets its manifest, carrying the
    answer's error; the error answer names no folder; the failed dump is
    not kept as in progress (max_requests=1: the next dump's retention
    removes it)."""
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_requests": 1})
    try:
        bad = {"ops": [{"crop": [100, 100, 1000, 1000]}], "normalize": {}}
        r = post(d, "/v1/preprocess", bad)
        assert r.status == 400, r
        assert r.h("X-Dvpp-Dump") is None
        names = folders(root)
        assert len(names) == 1
        m = manifest(os.path.join(root, names[0]))
        assert m["request"] == names[0]
        assert m["error"] == r.json()["error"]["message"]
        assert m["spec"] == bad and m["files"] == [] and m["tensor"] is None
        assert m["input"]["format"] == "jpeg" and m["input"]["width"] == 227
        ok = post(d, "/v1/preprocess", SPEC)
        assert ok.status == 200, ok
        assert folders(root) == [ok.h("X-Dvpp-Dump")]
    finally:
        stop_daemon(d)


def test_failed_batch_start_leaves_manifests(tmp_path):
    """A batch the device refuses at start (device.max_bytes_in_flight too
    small for an item's work), after its dump and item folders were made:
    the top folder and every item folder get a manifest with the error."""
    root = str(tmp_path / "dumps")
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": ""},
           "device": {"channels": 2, "max_bytes_in_flight": 120000}, "dump": {"dir": root}}
    d = daemon_util.start_daemon(str(tmp_path), cfg, "d", port)
    try:
        body, hdr = daemon_util.multipart([("image", photo())] * 3
                                          + [("spec", json.dumps(BATCH_SPEC))])
        r = d.post("/v1/batch?dump=1", body, hdr)
        assert r.status >= 400, r
        assert r.h("X-Dvpp-Dump") is None
        names = folders(root)
        assert len(names) == 1, (r, names)
        folder = os.path.join(root, names[0])
        m = manifest(folder)
        assert m["error"] == r.json()["error"]["message"], (m, r)
        for i in range(3):
            assert manifest(os.path.join(folder, "item-%04d" % i))["error"] == m["error"]
    finally:
        stop_daemon(d)


def test_batch_top_tensor_fits(tmp_path):
    """A batch of 8 whose dump.max_bytes (600000) an equal split (1/9 each,
    66666) left too small for the batch's tensor (8 x 14400 bytes): the
    top folder's room for the tensor comes first now, the items share the
    rest, and everything stays within the bound."""
    root = str(tmp_path / "dumps")
    d = start(str(tmp_path), {"dir": root, "max_bytes": 600000})
    rgb = np.zeros((37, 53, 3), np.uint8)
    rgb[..., 0] = np.arange(53, dtype=np.uint8)[None, :] * 4
    rgb[..., 1] = np.arange(37, dtype=np.uint8)[:, None] * 6
    pngb = daemon_util.encode_image(Image.fromarray(rgb))
    try:
        body, hdr = daemon_util.multipart([("image", pngb)] * 8
                                          + [("spec", json.dumps(BATCH_SPEC))])
        r = d.post("/v1/batch?dump=1", body, hdr)
        assert r.status == 200, r
        folder = os.path.join(root, r.h("X-Dvpp-Dump"))
        m = manifest(folder)
        t = {f["name"]: f for f in m["files"]}["tensor.npy"]
        assert not t.get("skipped"), m["notes"]
        with open(os.path.join(folder, "tensor.npy"), "rb") as f:
            assert f.read() == r.body
        whole = np.load(io.BytesIO(r.body))
        assert whole.shape == (8, 3, 30, 40)
        for i in range(8):
            item = os.path.join(folder, "item-%04d" % i)
            assert np.array_equal(np.load(os.path.join(item, "tensor.npy"))[0], whole[i])
            assert np.array_equal(png(os.path.join(item, "00-decoded.png")), rgb)
        assert write_failures(folder) == []
        assert disk_bytes(folder) <= 600000
    finally:
        stop_daemon(d)
