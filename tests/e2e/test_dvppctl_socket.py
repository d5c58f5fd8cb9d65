"""dvppctl --socket: every pixel command run by a real dvppd gives the same
bytes as the same command run in-process.

For each subcommand and several flag sets, `dvppctl X ... --socket S -o b`
and `dvppctl X ... -o a` must write byte-identical files (and print the
same geometry). Also: batch over a directory with a corrupt file (same
failure report, same zero slice), stats, bench, the flags the daemon cannot
express, and a clean SIGTERM at the end.

Run with Debian's /usr/bin/python3 (numpy) after `make`:

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_dvppctl_socket.py
"""
import json
import os
import pty
import shutil
import signal
import subprocess

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPD = os.path.join(ROOT, BUILD, "dvppd")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")
DATA = os.path.join(ROOT, ".cache", "testdata")
FIX = os.path.join(DATA, "fixtures")
SKI = os.path.join(DATA, "skimage")
PHOTOS = os.path.join(DATA, "photos")

JPG = os.path.join(FIX, "base_420.jpg")            # 67x45 4:2:0
JPG444 = os.path.join(FIX, "base_444.jpg")
ORIENT6 = os.path.join(FIX, "orient_6.jpg")        # EXIF rotation
GRAYJPG = os.path.join(FIX, "gray.jpg")
TRUNC = os.path.join(FIX, "truncated_420.jpg")
PHOTO = os.path.join(PHOTOS, "d-debian.jpg")       # 800x600: memfd input, ring output
PNG = os.path.join(SKI, "astronaut.png")           # 512x512 RGB
GRAYPNG = os.path.join(SKI, "camera.png")
RGBAPNG = os.path.join(SKI, "horse.png")

MEAN = "0.485,0.456,0.406"
STD = "0.229,0.224,0.225"

# An aipp_op for camera NV12 frames (tests/e2e/test_aipp.py's vector A).
AIPP_NV12 = """aipp_op {
\taipp_mode : static
\tinput_format : YUV420SP_U8
\tcsc_switch : true
\tvar_reci_chn_0 : 1
\tvar_reci_chn_1 : 1
\tvar_reci_chn_2 : 1
\tmin_chn_0 : 123
\tmin_chn_1 : 117
\tmin_chn_2 : 104
\tsrc_image_size_w : 224
\tsrc_image_size_h : 224
\tmatrix_r0c0 : 256
\tmatrix_r0c1 : 0
\tmatrix_r0c2 : 359
\tmatrix_r1c0 : 256
\tmatrix_r1c1 : -88
\tmatrix_r1c2 : -183
\tmatrix_r2c0 : 256
\tmatrix_r2c1 : 454
\tmatrix_r2c2 : 0
\tinput_bias_0 : 0
\tinput_bias_1 : 128
\tinput_bias_2 : 128
}
"""
# RGB in, BGR-ordered means, a crop and padding: the op for JPEG inputs.
AIPP_RGB = """aipp_op {
  aipp_mode : static
  input_format : RGB888_U8
  rbuv_swap_switch : true
  crop : true
  load_start_pos_w : 4
  load_start_pos_h : 6
  crop_size_w : 40
  crop_size_h : 30
  padding : true
  left_padding_size : 8
  right_padding_size : 8
  top_padding_size : 2
  bottom_padding_size : 2
  mean_chn_0 : 104
  mean_chn_1 : 117
  mean_chn_2 : 123
  var_reci_chn_0 : 0.017
  var_reci_chn_1 : 0.017
  var_reci_chn_2 : 0.017
}
aipp_op {
  aipp_mode : static
  input_format : YUV400_U8
}
"""


def have_everything():
    return (os.path.exists(DVPPD) and os.path.exists(DVPPCTL) and os.path.exists(JPG)
            and os.path.exists(PHOTO) and os.path.exists(PNG))


pytestmark = pytest.mark.skipif(not have_everything(),
                                reason="needs `make` and the test data (.cache/testdata)")


def ctl(*args, env=None):
    return subprocess.run([DVPPCTL, *args], capture_output=True, text=True, env=env,
                          timeout=120)


# --- the daemon --------------------------------------------------------------


class Daemon(du.CtlDaemon):
    def __init__(self):
        super().__init__("dvppctl-sock-")


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
    try:
        d.wait_ready()
        yield d
    finally:
        d.stop()


# --- offline vs daemon ------------------------------------------------------------


def same(daemon, tmp_path, cmd, *args, ext="npy", out=None):
    """Run `dvppctl cmd args` offline and through the daemon; both succeed,
    write the same bytes and print the same stdout. Returns the file."""
    a = str(tmp_path / f"a.{ext}") if out is None else str(tmp_path / out.format("a"))
    b = str(tmp_path / f"b.{ext}") if out is None else str(tmp_path / out.format("b"))
    local = ctl(cmd, *args, "-o", a)
    assert local.returncode == 0, local.stderr
    remote = ctl(cmd, *args, "--socket", daemon.sock, "-o", b)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    if out is None:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            assert fa.read() == fb.read(), f"{cmd} {' '.join(args)}: files differ"
    return a


def files_equal(p, q):
    with open(p, "rb") as f, open(q, "rb") as g:
        return f.read() == g.read()


def nv12_npy(tmp_path, w=64, h=48, seed=3):
    rng = np.random.default_rng(seed)
    buf = rng.integers(0, 256, (h * 3 // 2, w), np.uint8)
    p = str(tmp_path / "frame.npy")
    np.save(p, buf)
    return p, f"nv12:{w}x{h}"


def rgb_npy(tmp_path, w=37, h=29, seed=5):
    rng = np.random.default_rng(seed)
    p = str(tmp_path / "rgb.npy")
    np.save(p, rng.integers(0, 256, (h, w, 3), np.uint8))
    return p


def test_version_prints_the_welcome(daemon):
    r = ctl("version", "--socket", daemon.sock)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("dvppctl ")
    assert "daemon: dvppd " in r.stdout and "daemon simd: " in r.stdout
    assert "max_inline 65536" in r.stdout and "max_batch_items" in r.stdout
    # the global form, before the command
    r2 = ctl("--socket", daemon.sock, "version")
    assert r2.returncode == 0 and r2.stdout == r.stdout


@pytest.mark.parametrize("inp,flags,ext", [
    (JPG, [], "npy"),
    (JPG, ["--format", "nv12", "--align", "128x16"], "raw"),
    (JPG, ["--format", "nv12", "--align", "128x16"], "npy"),
    (JPG444, ["--format", "yuv444sp", "--align", "16x2"], "raw"),
    (JPG, ["--format", "bgr", "--roi", "8,8,47,31"], "npy"),
    (ORIENT6, ["--format", "rgba"], "npy"),
    (ORIENT6, ["--no-orient"], "png"),
    (GRAYJPG, ["--format", "gray"], "npy"),
    (PHOTO, ["--format", "i420"], "raw"),
    (PHOTO, [], "jpg"),
    (PNG, ["--align", "64x4"], "raw"),
    (GRAYPNG, ["--format", "gray"], "npy"),
    (RGBAPNG, ["--format", "rgba"], "png"),
])
def test_decode(daemon, tmp_path, inp, flags, ext):
    same(daemon, tmp_path, "decode", inp, *flags, ext=ext)


def test_decode_refusal_is_the_same(daemon, tmp_path):
    # A PNG cannot decode to NV12: both say so, exit 1.
    a = ctl("decode", PNG, "--format", "nv12", "-o", str(tmp_path / "a.raw"))
    b = ctl("decode", PNG, "--format", "nv12", "--socket", daemon.sock,
            "-o", str(tmp_path / "b.raw"))
    assert a.returncode == b.returncode == 1
    assert "EFORMAT" in a.stderr and "EFORMAT" in b.stderr


@pytest.mark.parametrize("inp,flags,ext", [
    (JPG, ["--size", "100x80"], "npy"),
    (JPG, ["--size", "100x80", "--mode", "letterbox", "--pad", "727272"], "npy"),
    (PHOTO, ["--size", "320x320", "--mode", "letterbox", "--pad", "202020"], "raw"),
    (PNG, ["--size", "64x64", "--parity", "pil", "--interp", "bicubic"], "npy"),
    (PNG, ["--size", "200x90", "--parity", "pil", "--interp", "lanczos",
           "--mode", "fill"], "png"),
    (RGBAPNG, ["--size", "77x61", "--parity", "pil", "--interp", "bilinear",
               "--format", "rgba"], "npy"),
    (PHOTO, ["--size", "150", "--mode", "shorter", "--interp", "area"], "jpg"),
    (PHOTO, ["--size", "300x200", "--mode", "fit", "--format", "nv12",
             "--align", "16x2"], "raw"),
    (PHOTO, ["--size", "224x224", "--shrink-on-load", "auto"], "npy"),
    (JPG, ["--size", "31x17", "--parity", "tf", "--interp", "nearest"], "npy"),
    (JPG, ["--size", "40x30", "--parity", "ascend", "--ascend-mode", "3"], "npy"),
])
def test_resize(daemon, tmp_path, inp, flags, ext):
    same(daemon, tmp_path, "resize", inp, *flags, ext=ext)


def test_resize_raw_nv12_to_rgb_converts_first(daemon, tmp_path):
    p, spec = nv12_npy(tmp_path)
    same(daemon, tmp_path, "resize", p, "--input", spec, "--size", "40x20",
         "--format", "rgb")
    same(daemon, tmp_path, "resize", p, "--input", spec, "--size", "40x20",
         "--mode", "letterbox", "--format", "bgr")
    same(daemon, tmp_path, "resize", p, "--input", spec, "--size", "32x32")


@pytest.mark.parametrize("inp,flags,ext", [
    (JPG, ["--roi", "10,6,49,35"], "npy"),
    (JPG, ["--roi", "10,6,49,35", "--size", "32x32"], "npy"),
    (PHOTO, ["--roi", "100,50,499,349", "--size", "224x224", "--interp", "bicubic"],
     "raw"),
    (PNG, ["--roi", "0,0,255,127", "--size", "64x32", "--format", "nv12"], "raw"),
    (PNG, ["--roi", "3,5,100,90", "--parity", "pil", "--interp", "box",
           "--size", "20x20"], "png"),
])
def test_crop(daemon, tmp_path, inp, flags, ext):
    same(daemon, tmp_path, "crop", inp, *flags, ext=ext)


def test_crop_raw_nv12_to_rgb(daemon, tmp_path):
    p, spec = nv12_npy(tmp_path)
    same(daemon, tmp_path, "crop", p, "--input", spec, "--roi", "8,4,47,35",
         "--size", "24x24", "--format", "rgb")


@pytest.mark.parametrize("inp,fmt,flags,ext", [
    (JPG, "nv12", [], "raw"),
    (PHOTO, "nv12", ["--align", "16x2"], "npy"),
    (PNG, "i420", [], "raw"),
    (PNG, "gray", [], "png"),
    (JPG, "bgra", ["--decode-format", "nv12"], "npy"),
])
def test_convert(daemon, tmp_path, inp, fmt, flags, ext):
    same(daemon, tmp_path, "convert", inp, "--format", fmt, *flags, ext=ext)


def test_convert_raw_nv12(daemon, tmp_path):
    p, spec = nv12_npy(tmp_path)
    same(daemon, tmp_path, "convert", p, "--input", spec, "--format", "rgb")
    same(daemon, tmp_path, "convert", rgb_npy(tmp_path), "--format", "yuv444sp",
         ext="raw")


@pytest.mark.parametrize("inp,flags,ext", [
    (JPG, ["--margins", "2,4,6,8", "--value", "10,200,30"], "npy"),
    (PNG, ["--margins", "7,0,3,1", "--border-type", "replicate"], "png"),
    (PHOTO, ["--margins", "2,2,4,4", "--border-type", "reflect101",
             "--format", "nv12"], "raw"),
    (JPG, ["--margins", "30,30,40,40", "--border-type", "reflect"], "npy"),
])
def test_make_border(daemon, tmp_path, inp, flags, ext):
    same(daemon, tmp_path, "make-border", inp, *flags, ext=ext)


def test_batch_crop(daemon, tmp_path):
    rois = ["--roi", "0:0,0,39,29", "--roi", "1:100,100,299,249", "--roi", "0:10,10,59,39",
            "--roi", "1:0,0,511,511"]
    same(daemon, tmp_path, "batch-crop", JPG, PNG, *rois, "--size", "48x32")
    same(daemon, tmp_path, "batch-crop", JPG, PNG, *rois, "--size", "48x32",
         "--format", "nv12", "--interp", "bicubic")
    # one file per ROI
    same(daemon, tmp_path, "batch-crop", PHOTO, "--roi", "0,0,399,299",
         "--roi", "100,50,799,599", "--size", "300x200", out="{}_%d.png")
    for i in range(2):
        assert files_equal(str(tmp_path / f"a_{i}.png"), str(tmp_path / f"b_{i}.png"))


@pytest.mark.parametrize("inp,flags", [
    (JPG, ["--size", "64x64", "--mean", MEAN, "--std", STD]),
    (PHOTO, ["--size", "224x224", "--mean", MEAN, "--std", STD]),
    (PHOTO, ["--size", "224x224", "--dtype", "f16", "--layout", "nhwc"]),
    (PHOTO, ["--size", "640x640", "--mode", "letterbox", "--pad", "727272",
             "--dtype", "f16", "--layout", "nhwc"]),
    (PNG, ["--size", "96x80", "--mean", "104,117,123", "--scale", "0.0172",
           "--order", "bgr"]),
    (PNG, ["--size", "33x33", "--dtype", "u8", "--layout", "nc1hwc0",
           "--parity", "pil", "--interp", "bicubic"]),
    (PHOTO, ["--size", "200x150", "--dtype", "i8", "--mean", "128", "--scale", "1"]),
    (PHOTO, ["--size", "160x160", "--mode", "fill", "--shrink-on-load", "auto"]),
    (GRAYPNG, ["--size", "50x50", "--mode", "fit"]),
])
def test_preprocess(daemon, tmp_path, inp, flags):
    same(daemon, tmp_path, "preprocess", inp, *flags)


def test_preprocess_raw_inputs(daemon, tmp_path):
    p, spec = nv12_npy(tmp_path)
    same(daemon, tmp_path, "preprocess", p, "--input", spec, "--size", "32x24",
         "--dtype", "f16", "--layout", "nhwc")
    same(daemon, tmp_path, "preprocess", rgb_npy(tmp_path), "--size", "20x20",
         "--mean", MEAN, "--std", STD)


def test_aipp_static_config(daemon, tmp_path):
    nv12cfg = tmp_path / "nv12.cfg"
    nv12cfg.write_text(AIPP_NV12)
    rgbcfg = tmp_path / "rgb.cfg"
    rgbcfg.write_text(AIPP_RGB)
    frame = str(tmp_path / "frame.yuv")
    rng = np.random.default_rng(7)
    rng.integers(0, 256, (224 * 3 // 2, 224), np.uint8).tofile(frame)
    # a camera frame as it comes, fp16 NC1HWC0 (the hardware's output)
    same(daemon, tmp_path, "aipp", frame, "--input", "nv12:224x224", "--config",
         str(nv12cfg))
    # JPEGs decoded straight to NV12 and resized to the op's source size
    same(daemon, tmp_path, "aipp", PHOTO, "--config", str(nv12cfg), "--size",
         "224x224", "--layout", "nhwc", "--dtype", "f32")
    # a PNG is decoded to RGB and converted to NV12 at the resized size
    same(daemon, tmp_path, "aipp", PNG, "--config", str(nv12cfg), "--size", "224x224")
    # RGB op with crop + padding, block 0 and the YUV400 block 1
    same(daemon, tmp_path, "aipp", JPG, "--config", str(rgbcfg))
    same(daemon, tmp_path, "aipp", PHOTO, "--config", str(rgbcfg), "--size", "64x48",
         "--dtype", "u8")
    same(daemon, tmp_path, "aipp", GRAYPNG, "--config", str(rgbcfg), "--op", "1",
         "--layout", "nchw", "--dtype", "f32")
    # a YUV frame into the RGB op: converted before the resize, as offline
    p, spec = nv12_npy(tmp_path)
    same(daemon, tmp_path, "aipp", p, "--input", spec, "--config", str(rgbcfg),
         "--size", "64x48")


def _batch_dir(tmp_path):
    d = tmp_path / "imgs"
    d.mkdir()
    files = [JPG, JPG444, ORIENT6, PNG, GRAYPNG, PHOTO]
    for i, f in enumerate(files):
        shutil.copy(f, d / f"{i:02d}_{os.path.basename(f)}")
    shutil.copy(TRUNC, d / "03b_truncated.jpg")      # sorted into the middle
    (d / "notes.txt").write_text("not an image")       # ignored
    (d / "sub.jpg").mkdir()                             # ignored: not a file
    return str(d)


def test_batch_dir_with_a_corrupt_file(daemon, tmp_path):
    d = _batch_dir(tmp_path)
    flags = ["--size", "64x48", "--mean", MEAN, "--std", STD]
    a = ctl("batch", d, *flags, "-o", str(tmp_path / "a.npy"))
    b = ctl("batch", d, *flags, "--socket", daemon.sock, "-o", str(tmp_path / "b.npy"))
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert files_equal(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    # the same failure report, line for line
    assert b.stderr == a.stderr
    assert "item 4 (" in a.stderr and "03b_truncated.jpg" in a.stderr
    assert "ECORRUPT" in a.stderr and "1 of 7 items failed" in a.stderr
    t = np.load(str(tmp_path / "b.npy"))
    assert t.shape == (7, 3, 48, 64)
    assert (t[4] == 0).all() and (t[3] != 0).any() and (t[5] != 0).any()


def test_batch_files_and_flags(daemon, tmp_path):
    files = [PHOTO, PNG, JPG, RGBAPNG]
    for flags in (["--size", "32x32", "--dtype", "f16", "--layout", "nhwc"],
                  ["--size", "96x64", "--mode", "letterbox", "--pad", "727272",
                   "--mean", "104,117,123", "--scale", "0.017", "--order", "bgr"],
                  ["--size", "80x80", "--mode", "fill", "--shrink-on-load", "auto",
                   "--parity", "pil", "--interp", "bicubic"]):
        a = ctl("batch", *files, *flags, "-o", str(tmp_path / "a.npy"))
        b = ctl("batch", *files, *flags, "--socket", daemon.sock,
                "-o", str(tmp_path / "b.npy"))
        assert a.returncode == b.returncode == 0, (flags, a.stderr, b.stderr)
        assert files_equal(str(tmp_path / "a.npy"), str(tmp_path / "b.npy")), flags


def test_batch_progress_bar_on_a_terminal(daemon, tmp_path):
    master, slave = pty.openpty()
    try:
        r = subprocess.run([DVPPCTL, "batch", PHOTO, PNG, JPG, "--size", "64x64",
                            "--socket", daemon.sock, "-o", str(tmp_path / "p.npy")],
                           stdout=subprocess.PIPE, stderr=slave, timeout=60)
    finally:
        os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert r.returncode == 0
    assert b"\r[" in err and b"] 3/3" in err and b"#" * 40 in err


def test_batch_strict_fails(daemon, tmp_path):
    r = ctl("batch", JPG, TRUNC, PNG, "--size", "32x32", "--strict",
            "--socket", daemon.sock, "-o", str(tmp_path / "s.npy"))
    assert r.returncode == 1 and "ECORRUPT" in r.stderr


def test_env_var_names_the_socket(daemon, tmp_path):
    env = dict(os.environ, DVPPD_SOCKET=daemon.sock)
    before = json.loads(ctl("stats", "--socket", daemon.sock).stdout)["jobs_submitted"]
    r = ctl("resize", JPG, "--size", "20x20", "-o", str(tmp_path / "e.npy"), env=env)
    assert r.returncode == 0, r.stderr
    after = json.loads(ctl("stats", "--socket", daemon.sock).stdout)["jobs_submitted"]
    assert after == before + 1


@pytest.mark.parametrize("cmd,flags", [
    ("decode", ["--fast-dct"]),
    ("decode", ["--nosmooth"]),
    ("decode", ["--scale", "4"]),
    ("resize", ["--size", "20x20", "--csc", "bt709"]),
    ("crop", ["--roi", "0,0,9,9", "--shrink-on-load", "16x16"]),
    ("preprocess", ["--size", "20x20", "--max-pixels", "100000"]),
    ("batch", ["--size", "20x20", "--channels", "2"]),
    ("decode", ["--profile", "ascend310", "--format", "nv12"]),
])
def test_flags_the_daemon_cannot_express(daemon, tmp_path, cmd, flags):
    r = ctl(cmd, JPG, *flags, "--socket", daemon.sock, "-o", str(tmp_path / "x.npy"))
    assert r.returncode == 2 and "not available with --socket" in r.stderr, r.stderr
    assert not os.path.exists(str(tmp_path / "x.npy"))


def test_aipp_ops_the_daemon_cannot_feed(daemon, tmp_path):
    # AYUV444_U8: the offline command loads packed 4-byte pixels; the
    # daemon's pipeline has no conversion into it. Dynamic ops need --dynamic.
    cfg = tmp_path / "ayuv.cfg"
    cfg.write_text("aipp_op {\n aipp_mode : static\n input_format : AYUV444_U8\n}\n")
    r = ctl("aipp", rgb_npy(tmp_path), "--config", str(cfg), "--socket", daemon.sock,
            "-o", str(tmp_path / "x.npy"))
    assert r.returncode == 2 and "not available with --socket" in r.stderr, r.stderr
    r = ctl("aipp", JPG, "--config", str(cfg), "--dynamic", str(cfg), "--socket",
            daemon.sock, "-o", str(tmp_path / "x.npy"))
    assert r.returncode == 2 and "not available with --socket" in r.stderr, r.stderr


def test_info_and_aipp_check_stay_local(daemon, tmp_path):
    cfg = tmp_path / "rgb.cfg"
    cfg.write_text(AIPP_RGB)
    assert ctl("info", JPG, "--socket", daemon.sock).stdout == ctl("info", JPG).stdout
    r = ctl("aipp-check", str(cfg), "--socket", "/nonexistent/socket")
    assert r.returncode == 0 and r.stdout == ctl("aipp-check", str(cfg)).stdout


def test_no_daemon_is_an_error(tmp_path):
    r = ctl("resize", JPG, "--size", "20x20", "--socket", str(tmp_path / "none.sock"),
            "-o", str(tmp_path / "x.npy"))
    assert r.returncode == 1 and r.stderr.startswith("dvppctl: ")


def test_stats(daemon):
    r = ctl("stats", "--socket", daemon.sock)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    for key in ("connections", "rings", "slots_leased", "leases_expired", "bad_releases",
                "dropped_connections", "jobs_submitted", "jobs_failed", "inflight_pixels"):
        assert isinstance(s[key], int), key
    assert s["jobs_submitted"] > 0 and s["connections"] >= 1
    assert {e["name"] for e in s["engines"]} >= {"jpegd", "vpc"}
    assert "\n  " in r.stdout  # pretty-printed
    assert ctl("stats").returncode == 2  # no daemon named


def test_bench(daemon):
    r = ctl("bench", "--socket", daemon.sock, PHOTO, "--size", "224x224", "-n", "24",
            "--concurrency", "3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    b = json.loads(lines[0])
    assert b["images"] == 24 and b["failed"] == 0 and b["concurrency"] == 3
    assert b["images_per_s"] > 0
    assert 0 < b["p50_ms"] <= b["p99_ms"] <= b["max_ms"]
    # a corrupt input: every job fails, exit 1
    r = ctl("bench", "--socket", daemon.sock, TRUNC, "-n", "3")
    assert r.returncode == 1 and json.loads(r.stdout)["failed"] == 3


def test_sigterm_exits_0(daemon):
    # Last: the daemon stops cleanly while idle.
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.proc.wait(timeout=20) == 0, daemon.logtext()
