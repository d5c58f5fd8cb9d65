"""AIPP and the simple normalise spec through dvppctl, against the hand-worked
vectors of reference/dvpp-aipp.md §7 and numpy references.

Run with Debian's /usr/bin/python3 (numpy).
"""
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")


def has_aipp():
    if not os.path.exists(DVPPCTL):
        return False
    return "aipp-check" in subprocess.run([DVPPCTL, "help"], capture_output=True,
                                          text=True).stdout


pytestmark = pytest.mark.skipif(not has_aipp(), reason="dvppctl without AIPP commands")

VECTOR_A = """aipp_op {
\taipp_mode : static
\trelated_input_rank : 0
\tinput_format : YUV420SP_U8
\tcsc_switch : true
\trbuv_swap_switch : false
\tvar_reci_chn_0 : 1
\tvar_reci_chn_1 : 1
\tvar_reci_chn_2 : 1
\tmin_chn_0 : 123
\tmin_chn_1 : 117
\tmin_chn_2 : 104
\tload_start_pos_h : 0
\tload_start_pos_w : 0
\tsrc_image_size_w : 224
\tsrc_image_size_h : 224
        matrix_r0c0 : 256
        matrix_r0c1 : 0
        matrix_r0c2 : 359
        matrix_r1c0 : 256
        matrix_r1c1 : -88
        matrix_r1c2 : -183
        matrix_r2c0 : 256
        matrix_r2c1 : 454
        matrix_r2c2 : 0
        input_bias_0 : 0
        input_bias_1 : 128
        input_bias_2 : 128
}
"""


def run(*args, check=True):
    r = subprocess.run([DVPPCTL, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"dvppctl {' '.join(args)}: {r.stderr}")
    return r


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def nv12(w, h, y, u, v):
    buf = np.empty((h * 3 // 2, w), np.uint8)
    buf[:h] = y
    buf[h:, 0::2] = u
    buf[h:, 1::2] = v
    return buf


def test_vector_a_gives_5_11_24(tmp_path):
    cfg = write(tmp_path, "a.cfg", VECTOR_A)
    raw = str(tmp_path / "in.yuv")
    nv12(224, 224, 128, 128, 128).tofile(raw)
    out = str(tmp_path / "o.npy")
    run("aipp", raw, "--input", "nv12:224x224", "--config", cfg, "-o", out)
    t = np.load(out)
    assert t.shape == (1, 1, 224, 224, 16) and t.dtype == np.float16
    assert (t[..., 0] == 5).all() and (t[..., 1] == 11).all() and (t[..., 2] == 24).all()
    assert (t[..., 3:] == 0).all()


def test_vector_b_default_matrix_is_bgr_bt601_narrow(tmp_path):
    text = "\n".join(line for line in VECTOR_A.splitlines()
                     if "matrix" not in line and "input_bias" not in line)
    cfg = write(tmp_path, "b.cfg", text)
    raw = str(tmp_path / "in.yuv")
    y, u, v = 100, 90, 200
    nv12(224, 224, y, u, v).tofile(raw)
    out = str(tmp_path / "o.npy")
    run("aipp", raw, "--input", "nv12:224x224", "--config", cfg, "--layout", "nhwc",
        "--dtype", "f32", "-o", out)
    t = np.load(out)
    m = np.array([[298, 516, 0], [298, -100, -208], [298, 0, 409]])
    # dvppd rounds the ">> 8" to nearest (the reference leaves it open)
    rgb = np.clip((m @ (np.array([y, u, v]) - [16, 128, 128]) + 128) // 256, 0, 255)
    # row 0 is B: ch0 = B - 123
    assert tuple(t[0, 0, 0]) == (rgb[0] - 123, rgb[1] - 117, rgb[2] - 104)
    assert rgb[0] != rgb[2]  # B and R differ here: a swapped order would show


def test_vector_c_crop_padding_size(tmp_path):
    cfg = write(tmp_path, "c.cfg",
                "aipp_op { aipp_mode: static input_format: YUV420SP_U8 "
                "src_image_size_w: 320 src_image_size_h: 240 crop: true "
                "load_start_pos_w: 10 load_start_pos_h: 20 crop_size_w: 50 "
                "crop_size_h: 60 padding: true left_padding_size: 20 "
                "right_padding_size: 15 top_padding_size: 20 bottom_padding_size: 15 "
                "padding_value: 0 }\n")
    r = run("aipp-check", cfg)
    assert "output 85 x 95" in r.stdout
    raw = str(tmp_path / "in.yuv")
    nv12(320, 240, 200, 128, 128).tofile(raw)
    out = str(tmp_path / "o.npy")
    run("aipp", raw, "--input", "nv12:320x240", "--config", cfg, "-o", out)
    t = np.load(out)
    assert t.shape == (1, 1, 95, 85, 16)
    assert (t[0, 0, :20] == 0).all() and (t[0, 0, 20:80, :20] == 0).all()
    assert (t[0, 0, 20:80, 20:70, 0] == 200).all()  # Y passes through (no CSC)


@pytest.mark.parametrize("name,bad,line", [
    ("unknown field", "  colour_switch : true\n", 3),
    ("bad enum", "  input_format : YUV999\n", 3),
    ("out of range", "  left_padding_size : 33\n", 3),
    ("duplicate", "  matrix_r0c1 : 0\n  matrix_r0c1 : 1\n", 4),
])
def test_malformed_config_names_the_line(tmp_path, name, bad, line):
    text = "aipp_op {\n  aipp_mode : static\n" + bad + "  input_format : RGB888_U8\n}\n"
    if name == "bad enum":
        text = "aipp_op {\n  aipp_mode : static\n" + bad + "}\n"
    r = run("aipp-check", write(tmp_path, "x.cfg", text), check=False)
    assert r.returncode == 1
    assert f"line {line}" in r.stderr, r.stderr


def test_unterminated_block_is_an_error(tmp_path):
    r = run("aipp-check", write(tmp_path, "u.cfg", "aipp_op {\n aipp_mode : static\n"),
            check=False)
    assert r.returncode == 1 and "line 1" in r.stderr


CSC_CASES = [  # (matrix rows, bias, yuv input?, float formula)
    ("601 full yuv->rgb", [[256, 0, 359], [256, -88, -183], [256, 454, 0]], [0, 128, 128], True,
     lambda y, u, v: (y + 1.402 * (v - 128), y - 0.344 * (u - 128) - 0.714 * (v - 128),
                      y + 1.772 * (u - 128))),
    ("601 narrow yuv->rgb", [[298, 0, 409], [298, -100, -208], [298, 516, 0]], [16, 128, 128],
     True, lambda y, u, v: (1.16438 * (y - 16) + 1.59602 * (v - 128),
                            1.16438 * (y - 16) - 0.39176 * (u - 128) - 0.81297 * (v - 128),
                            1.16438 * (y - 16) + 2.01723 * (u - 128))),
    ("709 narrow yuv->rgb", [[298, 0, 460], [298, -55, -137], [298, 541, 0]], [16, 128, 128],
     True, lambda y, u, v: (1.16438 * (y - 16) + 1.79274 * (v - 128),
                            1.16438 * (y - 16) - 0.21325 * (u - 128) - 0.53291 * (v - 128),
                            1.16438 * (y - 16) + 2.11240 * (u - 128))),
    ("709 wide yuv->rgb", [[256, 0, 403], [256, -48, -120], [256, 475, 0]], [0, 128, 128], True,
     lambda y, u, v: (y + 1.5748 * (v - 128), y - 0.18732 * (u - 128) - 0.46812 * (v - 128),
                      y + 1.8556 * (u - 128))),
    ("601 full rgb->yuv", [[77, 150, 29], [-43, -85, 128], [128, -107, -21]], [0, 128, 128],
     False, lambda r, g, b: (0.299 * r + 0.587 * g + 0.114 * b,
                             128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
                             128 + 0.5 * r - 0.418688 * g - 0.081312 * b)),
    ("601 narrow rgb->yuv", [[66, 129, 25], [-38, -74, 112], [112, -94, -18]], [16, 128, 128],
     False, lambda r, g, b: (16 + 0.256788 * r + 0.504129 * g + 0.097906 * b,
                             128 - 0.148223 * r - 0.290993 * g + 0.439216 * b,
                             128 + 0.439216 * r - 0.367788 * g - 0.071427 * b)),
    ("709 narrow rgb->yuv", [[47, 157, 16], [-26, -87, 112], [112, -102, -10]], [16, 128, 128],
     False, lambda r, g, b: (16 + 0.182586 * r + 0.614231 * g + 0.062007 * b,
                             128 - 0.100644 * r - 0.338572 * g + 0.439216 * b,
                             128 + 0.439216 * r - 0.398942 * g - 0.040274 * b)),
]


@pytest.mark.parametrize("case", CSC_CASES, ids=[c[0] for c in CSC_CASES])
def test_csc_matrices_within_1_of_float(tmp_path, case):
    name, m, bias, yuv_in, ref = case
    s = np.arange(0, 256, 5)  # a sampled cube: 52^3 triples
    a, b, c = [x.reshape(-1) for x in np.meshgrid(s, s, s, indexing="ij")]
    n = a.size
    w = 52 * 52
    h = n // w
    if yuv_in:  # AYUV444_U8: A, Y, U, V per pixel
        px = np.stack([np.zeros(n, np.uint8), a, b, c], -1).astype(np.uint8)
        fmt, inp = "AYUV444_U8", "argb"
    else:
        px = np.stack([a, b, c], -1).astype(np.uint8)
        fmt, inp = "RGB888_U8", "rgb"
    img = px.reshape(h, w, -1)
    npy = str(tmp_path / "in.npy")
    np.save(npy, img)
    lines = [f"matrix_r{i}c{j} : {m[i][j]}" for i in range(3) for j in range(3)]
    key = "input_bias" if yuv_in else "output_bias"
    lines += [f"{key}_{i} : {bias[i]}" for i in range(3)]
    cfg = write(tmp_path, "m.cfg", "aipp_op {\n aipp_mode : static\n input_format : "
                f"{fmt}\n csc_switch : true\n " + "\n ".join(lines) + "\n}\n")
    out = str(tmp_path / "o.npy")
    run("aipp", npy, "--input", inp, "--config", cfg, "--layout", "nhwc", "--dtype", "u8",
        "-o", out)
    got = np.load(out)[0].reshape(-1, 3).astype(np.float64)
    want = np.clip(np.stack(ref(a.astype(np.float64), b.astype(np.float64),
                                c.astype(np.float64)), -1), 0, 255)
    worst = np.abs(got - want).max()
    # The integer arithmetic itself: M/256 exactly, rounded to nearest.
    x = np.stack([a, b, c], -1).astype(np.float64)
    mm = np.array(m, np.float64) / 256
    exact = x - bias if yuv_in else x
    exact = exact @ mm.T + (0 if yuv_in else np.array(bias))
    assert np.abs(got - np.clip(exact, 0, 255)).max() <= 0.5 + 1e-9
    if "709" in name:
        # The reference gives float forms for BT.601 only; its published
        # BT.709 integer matrices are themselves up to ~0.004 per
        # coefficient off the standard, which alone exceeds 1 at the cube's
        # corners (measured: 1.06 YUV->RGB, 1.43 RGB->YUV).
        assert worst <= 1.5, f"{name}: worst {worst}"
    else:
        assert worst <= 1.0 + 1e-9, f"{name}: worst {worst}"


IMAGENET_MEAN = "0.485,0.456,0.406"
IMAGENET_STD = "0.229,0.224,0.225"


def _image(tmp_path, h=17, w=23):
    rng = np.random.default_rng(11)
    img = rng.integers(0, 256, (h, w, 3), np.uint8)
    p = str(tmp_path / "img.npy")
    np.save(p, img)
    return img, p


def test_f32_nchw_equals_numpy_reference(tmp_path):
    img, p = _image(tmp_path)
    out = str(tmp_path / "o.npy")
    run("preprocess", p, "--size", "23x17", "--mean", IMAGENET_MEAN, "--std", IMAGENET_STD,
        "--layout", "nchw", "--dtype", "f32", "-o", out)
    # numpy's order of operations with the values as given (float64: u8 / 255
    # promotes to float64), rounded once to float32
    mean = np.array([0.485, 0.456, 0.406])
    std = np.array([0.229, 0.224, 0.225])
    ref = ((img / 255 - mean) / std).astype(np.float32).transpose(2, 0, 1)[None]
    got = np.load(out)
    assert got.shape == (1, 3, 17, 23) and got.dtype == np.float32
    ulps = np.abs(got.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    assert ulps.max() == 0, ulps.max()


def test_f16_equals_numpy_astype_of_f32(tmp_path):
    img, p = _image(tmp_path)
    f32, f16 = str(tmp_path / "a.npy"), str(tmp_path / "b.npy")
    common = ["--size", "23x17", "--mean", IMAGENET_MEAN, "--std", IMAGENET_STD,
              "--layout", "nhwc"]
    run("preprocess", p, *common, "--dtype", "f32", "-o", f32)
    run("preprocess", p, *common, "--dtype", "f16", "-o", f16)
    a, b = np.load(f32), np.load(f16)
    assert b.dtype == np.float16
    assert (a.astype(np.float16).view(np.uint16) == b.view(np.uint16)).all()


def test_blobfromimage_style_scale_and_bgr(tmp_path):
    img, p = _image(tmp_path)
    out = str(tmp_path / "o.npy")
    run("preprocess", p, "--size", "23x17", "--mean", "104,117,123", "--scale",
        "0.017", "--order", "bgr", "-o", out)
    bgr = img[..., ::-1].astype(np.float64)
    ref = ((bgr - [104, 117, 123]) * 0.017).astype(np.float32).transpose(2, 0, 1)[None]
    got = np.load(out)
    assert np.abs(got - ref).max() <= 1e-6
