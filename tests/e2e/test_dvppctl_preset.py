"""dvppctl preprocess --preset NAME and dvppctl preset list
(clients/dvppctl/ctl_preset_run.c, docs/presets.md) against a real dvppd.

The local run resolves the name with the daemon's own code and runs the
pipeline here, so its .npy is byte for byte the daemon's ?preset=NAME
answer; with --socket the daemon resolves it (so a config preset the
daemon has works without --config here). Asserted on a JPEG and on a PNG
where the presets' round: floor matters (641x423).

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_dvppctl_preset.py
"""
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, ctl, free_port, stop_daemon  # noqa: E402

PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")
TINY = {"ops": [{"resize": {"w": 8, "h": 6}}],
        "normalize": {"dtype": "uint8", "layout": "nhwc", "scale": 1}}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    sd = daemon_util.sock_dir("ctlpreset")
    sock = os.path.join(sd, "dvppd.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2},
           "socket": {"path": sock, "mode": "0600"},
           "presets": {"tiny": {"description": "8x6 raw", "spec": TINY}}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("ctlpreset")), cfg,
                                 "ctlpreset", port, sock=sock, sock_dir=sd)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("in")
    b = io.BytesIO()
    Image.open(PHOTO).convert("RGB").resize((641, 423), Image.BICUBIC).save(b, "PNG")
    (d / "p641.png").write_bytes(b.getvalue())
    return {"jpeg": PHOTO, "png641": str(d / "p641.png")}


def daemon_npy(srv, path, name):
    r = srv.post(f"/v1/preprocess?preset={name}", open(path, "rb").read())
    assert r.status == 200, r
    return r.body


@pytest.mark.parametrize("src", ["jpeg", "png641"])
@pytest.mark.parametrize("name", ["imagenet", "clip", "yolov8"])
def test_local_equals_daemon(srv, inputs, tmp_path, name, src):
    out = tmp_path / "x.npy"
    p = ctl("preprocess", inputs[src], "--preset", name, "-o", str(out))
    got = out.read_bytes()
    want = daemon_npy(srv, inputs[src], name)
    assert got == want, f"{name} {src}: local .npy differs from the daemon's"
    g = json.loads(p.stdout)
    r = srv.post(f"/v1/preprocess?preset={name}", open(inputs[src], "rb").read())
    sx, sy = (float(v) for v in r.headers["x-dvpp-scale"].split(","))
    px, py = (float(v) for v in r.headers["x-dvpp-pad"].split(","))
    assert abs(g["scale_x"] - sx) < 1e-9 and abs(g["scale_y"] - sy) < 1e-9
    assert abs(g["pad_x"] - px) < 1e-9 and abs(g["pad_y"] - py) < 1e-9
    if name == "imagenet":
        assert np.load(io.BytesIO(got)).shape == (1, 3, 224, 224)


@pytest.mark.parametrize("name", ["imagenet", "yolov8", "tiny"])
def test_socket_equals_daemon(srv, inputs, tmp_path, name):
    """tiny is a config preset: only the daemon knows it (the output
    travels through an unsized ring slot)."""
    out = tmp_path / "x.npy"
    ctl("preprocess", inputs["png641"], "--preset", name, "--socket", srv.sock, "-o",
        str(out))
    assert out.read_bytes() == daemon_npy(srv, inputs["png641"], name)
    if name == "tiny":
        x = np.load(str(out))
        assert x.shape == (1, 6, 8, 3) and x.dtype == np.uint8


def test_config_file_presets_locally(srv, inputs, tmp_path):
    cfg = tmp_path / "dvppd.conf"
    cfg.write_text(json.dumps({"presets": {"tiny": {"spec": TINY}}}))
    out = tmp_path / "x.npy"
    ctl("preprocess", inputs["jpeg"], "--preset", "tiny", "--config", str(cfg), "-o",
        str(out))
    assert out.read_bytes() == daemon_npy(srv, inputs["jpeg"], "tiny")
    p = ctl("preprocess", inputs["jpeg"], "--preset", "tiny", "-o", str(out), check=False)
    assert p.returncode == 1 and "no preset named 'tiny'" in p.stderr, p.stderr
    lst = ctl("preset", "list", "--config", str(cfg)).stdout.splitlines()
    assert [ln.split("\t")[0] for ln in lst] == ["ascend-yuv", "clip", "imagenet", "tiny",
                                                 "yolov8"]
    assert lst[3].split("\t")[1:3] == ["tensor", "config"]


def test_dump_with_preset(srv, inputs, tmp_path):
    out, d = tmp_path / "x.npy", tmp_path / "dump"
    ctl("preprocess", inputs["png641"], "--preset", "imagenet", "--dump", str(d), "-o",
        str(out))
    want = daemon_npy(srv, inputs["png641"], "imagenet")
    assert out.read_bytes() == want and (d / "tensor.npy").read_bytes() == want


def test_unknown_and_conflicts(srv, inputs, tmp_path):
    out = str(tmp_path / "x.npy")
    for extra in ([], ["--socket", srv.sock]):
        p = ctl("preprocess", inputs["jpeg"], "--preset", "nope", "-o", out, *extra,
                check=False)
        assert p.returncode == 1 and "nope" in p.stderr, p.stderr
        assert not os.path.exists(out)
    p = ctl("preprocess", inputs["jpeg"], "--preset", "imagenet", "--size", "10x10", "-o",
            out, check=False)
    assert p.returncode == 2 and "--size" in p.stderr, p.stderr
    p = ctl("preprocess", inputs["jpeg"], "--mean", "0.5", "--preset", "imagenet", "-o",
            out, check=False)
    assert p.returncode == 2 and "--mean" in p.stderr, p.stderr
    p = ctl("preprocess", inputs["jpeg"], "--preset", "ascend-yuv", "-o", out, check=False)
    assert p.returncode == 1 and "/v1/decode" in p.stderr, p.stderr


def test_preset_list(srv):
    lines = ctl("preset", "list").stdout.splitlines()
    got = {ln.split("\t")[0]: ln.split("\t") for ln in lines}
    assert sorted(got) == ["ascend-yuv", "clip", "imagenet", "yolov8"]
    listed = {p["name"]: p for p in json.loads(srv.get("/v1/presets").body)["presets"]}
    for name, (n, kind, source, desc) in got.items():
        assert source == "builtin" and desc == listed[name]["description"]
        assert kind == listed[name]["kind"]


def test_round_flag(inputs, tmp_path):
    """dvppctl's --round: 641x423 shorter 256 -> 387 (floor) / 388."""
    out = tmp_path / "r.png"
    ctl("resize", inputs["png641"], "--size", "256", "--mode", "shorter", "--round", "floor",
        "-o", str(out))
    assert Image.open(str(out)).size == (387, 256)
    ctl("resize", inputs["png641"], "--size", "256", "--mode", "shorter", "-o", str(out))
    assert Image.open(str(out)).size == (388, 256)
    p = ctl("resize", inputs["png641"], "--size", "64x64", "--round", "floor", "-o",
            str(out), check=False)
    assert p.returncode == 2 and "--round floor: only for --mode shorter" in p.stderr


BIG_IMAGENET = {"ops": [{"resize": {"w": 512, "h": 384, "interp": "bilinear",
                                    "parity": "pil"}}],
                "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225],
                              "order": "rgb", "layout": "nchw", "dtype": "float32"}}


@pytest.fixture(scope="module")
def srv_big(tmp_path_factory):
    """A daemon whose config replaces the shipped imagenet with a bigger
    output (1x3x384x512 float32: 2.25 MiB against 588 KiB)."""
    port = free_port()
    sd = daemon_util.sock_dir("ctlbig")
    sock = os.path.join(sd, "dvppd.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 2},
           "socket": {"path": sock, "mode": "0600"},
           "presets": {"imagenet": {"description": "bigger", "spec": BIG_IMAGENET}}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("ctlbig")), cfg, "ctlbig", port,
                                 sock=sock, sock_dir=sd)
    yield d
    stop_daemon(d)


@pytest.mark.parametrize("src", ["jpeg", "png641"])
def test_socket_daemon_replaced_shipped_preset(srv_big, inputs, tmp_path, src):
    """--socket --preset imagenet without --config: the daemon's imagenet
    is not the shipped one; the output slot is not sized from the shipped
    preset (once ENOSPC), and the .npy is the daemon's HTTP answer."""
    out = tmp_path / "x.npy"
    p = ctl("preprocess", inputs[src], "--preset", "imagenet", "--socket", srv_big.sock,
            "-o", str(out), check=False)
    assert p.returncode == 0, p.stderr
    want = daemon_npy(srv_big, inputs[src], "imagenet")
    assert out.read_bytes() == want
    x = np.load(str(out))
    assert x.shape == (1, 3, 384, 512) and x.dtype == np.float32
    g = json.loads(p.stdout)
    r = srv_big.post("/v1/preprocess?preset=imagenet", open(inputs[src], "rb").read())
    sx, sy = (float(v) for v in r.headers["x-dvpp-scale"].split(","))
    assert abs(g["scale_x"] - sx) < 1e-9 and abs(g["scale_y"] - sy) < 1e-9
    # the local run (no daemon) is the shipped imagenet still
    ctl("preprocess", inputs[src], "--preset", "imagenet", "-o", str(out))
    assert np.load(str(out)).shape == (1, 3, 224, 224)
