"""The AscendCL samples (clients/acl/examples) built and run as a CANN user would,
their outputs compared byte for byte with dvppctl under the same profile.

Each sample folder is copied out of the tree and built alone with CMake
against INSTALL_DIR=$DVPP_BUILD/acl (no edit: -DCMAKE_CXX_FLAGS only adds
-Wall -Wextra -Werror), once per session. The programs run with the real
libraries on LD_LIBRARY_PATH (set_env.sh's job, tested too) under
DVPP_ACL_PROFILE=ascend310 and ascend310p, and their files must equal what
dvppctl writes for the same work under that profile: decode --format nv12,
resize/crop/batch-crop --parity ascend --ascend-mode N, a crop pasted into a
black canvas with numpy, convert to .jpg at the same quality, video-decode
(the .npy's pixel bytes) and video-encode with the same parameters. The
errors sample runs every bad input of the issue's list (NULL pointers,
destroyed descriptors, sizes short of widthStride x heightStride, unaligned
strides, unsupported formats) and each code is asserted, with a message.

Inputs are made here (Pillow JPEG/PNG, NumPy NV12, ffmpeg H.264/H.265)
plus one photo and one PNG from .cache/testdata (tests/tools/fetch-test-data).

Under an ASan build (DVPP_BUILD=build/asan...) the uninstrumented samples
load instrumented libraries: they run with gcc's libasan.so in LD_PRELOAD
and tests/tools/lsan.supp.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_acl_examples.py
"""
import concurrent.futures
import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
ACL = os.path.join(ROOT, BUILD, "acl")
LIB64 = os.path.join(ACL, "runtime", "lib64")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")
EXAMPLES = os.path.join(ROOT, "clients", "acl", "examples")
DATA = os.path.join(ROOT, ".cache", "testdata")
PHOTO = os.path.join(DATA, "photos", "photo1080.jpg")
REAL_PNG = os.path.join(DATA, "skimage", "chelsea.png")
SAMPLES = ("jpegd", "jpege", "pngd", "vpc_resize", "vpc_crop", "vpc_crop_paste",
           "vpc_batch_crop_resize", "vdec", "venc", "errors")
PROFILES = ("ascend310", "ascend310p")
CXXFLAGS = "-Wall -Wextra -Werror"

pytestmark = [
    pytest.mark.skipif(not os.path.exists(os.path.join(LIB64, "libascendcl.so")),
                       reason=f"no {BUILD}/acl tree (make BUILD={BUILD})"),
    pytest.mark.skipif(not os.path.exists(DVPPCTL), reason=f"no {BUILD}/dvppctl"),
    pytest.mark.skipif(not shutil.which("cmake") or not shutil.which("g++"),
                       reason="cmake or g++ missing (make deps installs them)"),
]

needs_ffmpeg = pytest.mark.skipif(not shutil.which("ffmpeg"), reason="ffmpeg missing")
needs_photo = pytest.mark.skipif(
    not os.path.exists(PHOTO) or not os.path.exists(REAL_PNG),
    reason="no photo1080.jpg / chelsea.png in .cache/testdata (run tests/tools/fetch-test-data)")


def align(v, a):
    return (v + a - 1) // a * a


# --- running the samples ------------------------------------------------------------

def sanitizer_env():
    """What an uninstrumented program needs to load this tree's libraries:
    nothing, or (built with gcc's ASan) its runtime first in LD_PRELOAD and
    the suite's leak suppressions. (env, None) or (None, why not)."""
    lib = os.path.join(LIB64, "libascendcl.so")
    dyn = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout
    if "libasan" not in dyn:
        syms = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True,
                              text=True).stdout
        if "__asan_" in syms:
            return None, "libraries built with clang's ASan: no shared ASan runtime to preload"
        return {}, None
    asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                          text=True).stdout.strip()
    if not os.path.isabs(asan) or not os.path.exists(asan):
        return None, "ASan libraries, but gcc -print-file-name=libasan.so finds no runtime"
    return {"LD_PRELOAD": asan,
            "LSAN_OPTIONS": f"suppressions={ROOT}/tests/tools/lsan.supp"}, None


def sample_env(profile):
    """The environment of a sample run: the real libraries first on the
    loader's path (what set_env.sh does), the profile, the sanitizer's
    runtime when the libraries need it."""
    extra, why = sanitizer_env()
    if extra is None:
        pytest.skip(why)
    env = dict(os.environ, DVPP_ACL_PROFILE=profile, **extra)
    env["LD_LIBRARY_PATH"] = LIB64 + (":" + env["LD_LIBRARY_PATH"]
                                      if env.get("LD_LIBRARY_PATH") else "")
    return env


class Samples:
    """The samples built from a copy of clients/acl/examples, one CMake
    build per folder; a sample that did not build fails its tests with its
    build log."""

    def __init__(self, root):
        self.root = root
        self.logs = {}

    def exe(self, name):
        path = os.path.join(self.root, name, "build", name)
        if not os.path.exists(path):
            pytest.fail(f"sample {name} did not build:\n{self.logs.get(name, '')[-4000:]}")
        return path

    def run(self, name, *args, profile, check=True):
        r = subprocess.run([self.exe(name), *map(str, args)], capture_output=True, text=True,
                           env=sample_env(profile), timeout=300)
        if check:
            assert r.returncode == 0, (f"{name} {' '.join(map(str, args))} under {profile}: "
                                       f"exit {r.returncode}\n{r.stdout}{r.stderr}")
        return r


def last_json(r):
    """The JSON line a sample prints last."""
    lines = r.stdout.strip().splitlines()
    assert lines, f"no output: {r.stderr}"
    return json.loads(lines[-1])


def cmake_build(src, build, env):
    """Configure and build one CMake project; (ok, log)."""
    log = ""
    for cmd in (["cmake", "-S", src, "-B", build, f"-DCMAKE_CXX_FLAGS={CXXFLAGS}"],
                ["cmake", "--build", build]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        log += f"$ {' '.join(cmd)}\n{r.stdout}{r.stderr}"
        if r.returncode != 0:
            return False, log
    return True, log


def build_env():
    env = dict(os.environ, INSTALL_DIR=ACL)
    env.pop("LD_PRELOAD", None)
    return env


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """Every sample folder copied out of the tree (as an outside user has
    it) and built on its own, two at a time."""
    root = str(tmp_path_factory.mktemp("acl") / "examples")
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("build*"))
    s = Samples(root)
    env = build_env()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {name: pool.submit(cmake_build, os.path.join(root, name),
                                  os.path.join(root, name, "build"), env)
                for name in SAMPLES}
        for name, job in jobs.items():
            s.logs[name] = job.result()[1]
    return s


def dvppctl(*args):
    r = subprocess.run([DVPPCTL, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"dvppctl {' '.join(map(str, args))}: {r.stderr}"
    return r


def read(path):
    with open(path, "rb") as f:
        return f.read()


def assert_same_bytes(got_path, want_path, what):
    got, want = read(got_path), read(want_path)
    assert len(got) == len(want), f"{what}: {len(got)} bytes, dvppctl wrote {len(want)}"
    if got != want:
        a = np.frombuffer(got, np.uint8)
        b = np.frombuffer(want, np.uint8)
        bad = np.flatnonzero(a != b)
        pytest.fail(f"{what}: {bad.size} of {a.size} bytes differ from dvppctl's, the first at "
                    f"{bad[0]} ({a[bad[0]]} != {b[bad[0]]}), max |diff| "
                    f"{int(np.abs(a.astype(int) - b.astype(int)).max())}")


# --- inputs --------------------------------------------------------------------------

def synthetic(h, w, seed):
    """A smooth picture with some texture and noise: every resize filter and
    every JPEG coefficient has something to do."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 100 * np.sin(x / 9.0 + seed) * np.cos(y / 13.0)
    g = 255.0 * x / max(w - 1, 1)
    b = 255.0 * y / max(h - 1, 1)
    img = np.stack([r, g, b], axis=-1) + rng.normal(0, 6, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def nv12_of(rgb):
    """Tight NV12 bytes of an even-sized RGB picture (BT.601 via OpenCV's
    I420, then U and V interleaved)."""
    import cv2
    h, w = rgb.shape[:2]
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420).reshape(-1)
    y = i420[:w * h]
    u = i420[w * h:w * h * 5 // 4]
    v = i420[w * h * 5 // 4:]
    uv = np.empty(w * h // 2, np.uint8)
    uv[0::2], uv[1::2] = u, v
    return np.concatenate([y, uv]).tobytes()


NV12_W, NV12_H = 322, 242   # not a multiple of 16: VPC's strides pad each row
VIDEO_W, VIDEO_H, VIDEO_FRAMES = 200, 150, 12


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *map(str, args)], check=True,
                   capture_output=True)


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    d = tmp_path_factory.mktemp("acl-media")
    m = {}
    rgb = synthetic(97, 151, 1)             # odd sizes: JPEGD's rounding and strides
    for name, sub in (("s420", 2), ("s422", 1), ("s444", 0)):
        m[name] = str(d / f"{name}.jpg")
        Image.fromarray(rgb).save(m[name], quality=90, subsampling=sub)
    m["gray"] = str(d / "gray.jpg")
    Image.fromarray(rgb).convert("L").save(m["gray"], quality=90)
    m["wide"] = str(d / "wide.jpg")         # 150 wide: 310 strides 256, 310P 192
    Image.fromarray(synthetic(64, 150, 2)).save(m["wide"], quality=85)
    m["progressive"] = str(d / "progressive.jpg")
    Image.fromarray(rgb).save(m["progressive"], quality=90, progressive=True)
    m["small"] = str(d / "small.jpg")
    Image.fromarray(synthetic(16, 16, 3)).save(m["small"], quality=90)
    m["truncated"] = str(d / "truncated.jpg")
    with open(m["truncated"], "wb") as f:
        f.write(read(m["s420"])[:len(read(m["s420"])) * 3 // 5])

    m["png_rgb"] = str(d / "rgb.png")
    Image.fromarray(rgb).save(m["png_rgb"])
    m["png_gray"] = str(d / "gray.png")
    Image.fromarray(rgb).convert("L").save(m["png_gray"])
    m["png_palette"] = str(d / "palette.png")
    Image.fromarray(rgb).convert("P").save(m["png_palette"])

    for name, seed in (("nv12_a", 4), ("nv12_b", 5)):
        m[name] = str(d / f"{name}.yuv")
        with open(m[name], "wb") as f:
            f.write(nv12_of(synthetic(NV12_H, NV12_W, seed)))
    return m


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """H.264 and H.265 Annex-B streams from ffmpeg's test source (B frames
    included: frames come back in display order), and the tight NV12 frames
    of that source for the encoder."""
    if not shutil.which("ffmpeg"):
        pytest.skip("ffmpeg missing")
    d = tmp_path_factory.mktemp("acl-video")
    src = ["-f", "lavfi", "-i", f"testsrc2=size={VIDEO_W}x{VIDEO_H}:rate=25",
           "-frames:v", VIDEO_FRAMES]
    v = {"h264": str(d / "clip.h264"), "h265": str(d / "clip.h265"),
         "frames": str(d / "frames.yuv")}
    ffmpeg(*src, "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "h264", v["h264"])
    ffmpeg(*src, "-c:v", "libx265", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p",
           "-f", "hevc", v["h265"])
    ffmpeg(*src, "-pix_fmt", "nv12", "-f", "rawvideo", v["frames"])
    return v


# --- building -----------------------------------------------------------------------

@pytest.mark.parametrize("name", SAMPLES)
def test_each_sample_builds_alone(samples, name):
    """A sample folder is a CANN project on its own: CMake against
    INSTALL_DIR, -Wall -Wextra -Werror, C++11, linked from lib64/stub."""
    exe = samples.exe(name)
    needed = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
    assert "[libascendcl.so]" in needed and "[libacl_dvpp.so]" in needed, needed


def test_all_samples_build_from_the_examples_folder(samples, tmp_path):
    """The shared CMakeLists builds every sample through add_subdirectory."""
    ok, log = cmake_build(samples.root, str(tmp_path / "all"), build_env())
    assert ok, log[-4000:]
    for name in SAMPLES:
        assert os.path.exists(tmp_path / "all" / name / name), name


def test_cmake_without_install_dir_stops(samples, tmp_path):
    """As CANN's samples do: no INSTALL_DIR, no build, and the message says why."""
    env = build_env()
    env.pop("INSTALL_DIR")
    r = subprocess.run(["cmake", "-S", os.path.join(samples.root, "jpegd"), "-B",
                        str(tmp_path / "b")], capture_output=True, text=True, env=env)
    assert r.returncode != 0
    assert "INSTALL_DIR" in r.stderr


def test_set_env_sh_points_the_loader_at_the_real_libraries(samples, media, tmp_path):
    """Sourcing set_env.sh (with no LD_LIBRARY_PATH before) is all a shell
    needs: the samples' libraries resolve to runtime/lib64, and jpegd runs."""
    extra, why = sanitizer_env()
    if extra is None:
        pytest.skip(why)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env.update(extra, DVPP_ACL_PROFILE="ascend310")
    exe = samples.exe("jpegd")
    out = tmp_path / "o.yuv"
    script = (f'. "{ACL}/set_env.sh" && echo "LD=$LD_LIBRARY_PATH" && echo "DIR=$INSTALL_DIR" '
              f'&& ldd "{exe}" && "{exe}" "{media["s420"]}" "{out}"')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert f"LD={LIB64}" in lines and f"DIR={ACL}" in lines, r.stdout
    resolved = [ln.split("=>")[1].split()[0] for ln in lines
                if "libascendcl.so" in ln or "libacl_dvpp.so" in ln]
    assert len(resolved) == 2 and all(os.path.dirname(os.path.realpath(p)) ==
                                      os.path.realpath(LIB64) for p in resolved), r.stdout
    assert out.stat().st_size > 0


OLD_CONVENTION_CMAKE = """\
cmake_minimum_required(VERSION 3.5.1)
project(old_convention CXX)
set(CMAKE_CXX_STANDARD 11)
if(NOT DEFINED ENV{DDK_PATH})
    set(INC_PATH "/usr/local/Ascend")
else()
    set(INC_PATH $ENV{DDK_PATH})
endif()
if(NOT DEFINED ENV{NPU_HOST_LIB})
    set(LIB_PATH "/usr/local/Ascend/runtime/lib64/stub/")
else()
    set(LIB_PATH $ENV{NPU_HOST_LIB})
endif()
add_definitions(-DENABLE_DVPP_INTERFACE)
include_directories(${INC_PATH}/runtime/include)
link_directories(${LIB_PATH})
add_executable(jpegd main.cpp)
target_link_libraries(jpegd ascendcl acl_dvpp stdc++)
"""


def test_the_ddk_path_convention_builds_after_set_env_sh(samples, media, tmp_path):
    """An older project reading DDK_PATH and NPU_HOST_LIB (not INSTALL_DIR)
    builds and runs after sourcing set_env.sh, and equals the INSTALL_DIR build."""
    extra, why = sanitizer_env()
    if extra is None:
        pytest.skip(why)
    src = tmp_path / "old"
    src.mkdir()
    shutil.copy(os.path.join(samples.root, "jpegd", "main.cpp"), src / "main.cpp")
    (src / "CMakeLists.txt").write_text(OLD_CONVENTION_CMAKE)
    env = {k: v for k, v in os.environ.items()
           if k not in ("INSTALL_DIR", "DDK_PATH", "NPU_HOST_LIB", "LD_LIBRARY_PATH",
                        "LD_PRELOAD")}
    out, ref = tmp_path / "o.yuv", tmp_path / "ref.yuv"
    script = (f'. "{ACL}/set_env.sh" && cmake -S "{src}" -B "{src}/b" >/dev/null && '
              f'cmake --build "{src}/b" >/dev/null && '
              + " ".join(f"{k}={v}" for k, v in extra.items())
              + f' DVPP_ACL_PROFILE=ascend310 "{src}/b/jpegd" "{media["s420"]}" "{out}"')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    samples.run("jpegd", media["s420"], ref, profile="ascend310")
    assert_same_bytes(out, ref, "jpegd built with DDK_PATH/NPU_HOST_LIB")


# The older CANN layout (Ascend/samples' vdec CMakeLists and others):
# headers from acllib/include, libraries from acllib/lib64/stub.
ACLLIB_CMAKE = """\
cmake_minimum_required(VERSION 3.5.1)
project(acllib_layout CXX)
set(CMAKE_CXX_STANDARD 11)
if(NOT DEFINED ENV{INSTALL_DIR})
    message(FATAL_ERROR "INSTALL_DIR is not set")
endif()
add_definitions(-DENABLE_DVPP_INTERFACE)
include_directories($ENV{INSTALL_DIR}/acllib/include)
link_directories($ENV{INSTALL_DIR}/acllib/lib64/stub)
add_executable(jpegd main.cpp)
target_link_libraries(jpegd ascendcl acl_dvpp stdc++)
"""


def test_the_acllib_layout_builds(samples, media, tmp_path):
    """acllib/include, acllib/lib64 and acllib/lib64/stub are the runtime/
    ones (a relative link, so a copy of the tree keeps them): a project
    reading them builds, its compile line names acllib, and its jpegd
    equals the INSTALL_DIR/runtime build."""
    for sub in ("include/acl/acl.h", "include/acl/ops/acl_dvpp.h", "lib64/libascendcl.so",
                "lib64/stub/libascendcl.so", "lib64/stub/libacl_dvpp.so",
                "lib64/libacl_dvpp.so", "lib64/stub/libacl_cblas.so"):
        got = os.path.join(ACL, "acllib", sub)
        assert os.path.isfile(got), f"{got} does not resolve"
        assert os.path.realpath(got) == os.path.realpath(os.path.join(ACL, "runtime", sub))
    assert os.readlink(os.path.join(ACL, "acllib")) == "runtime"
    src = tmp_path / "acllib"
    src.mkdir()
    shutil.copy(os.path.join(samples.root, "jpegd", "main.cpp"), src / "main.cpp")
    (src / "CMakeLists.txt").write_text(ACLLIB_CMAKE)
    ok, log = cmake_build(str(src), str(src / "b"), build_env())
    assert ok, log
    flags = "".join(p.read_text() for p in (src / "b").rglob("flags.make"))
    links = "".join(p.read_text() for p in (src / "b").rglob("link.txt"))
    assert f"{ACL}/acllib/include" in flags, flags
    assert f"{ACL}/acllib/lib64/stub" in links, links
    out, ref = tmp_path / "o.yuv", tmp_path / "ref.yuv"
    r = subprocess.run([str(src / "b" / "jpegd"), media["s420"], str(out)], capture_output=True,
                       text=True, env=sample_env("ascend310"), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    samples.run("jpegd", media["s420"], ref, profile="ascend310")
    assert_same_bytes(out, ref, "jpegd built against acllib/")


# --- JPEG decode ------------------------------------------------------------------------

JPEGD_CASES = [("s420", "nv12"), ("s420", "nv21"), ("s422", "nv12"), ("s444", "nv12"),
               ("gray", "nv12"), ("wide", "nv12"), ("s422", "unknown"), ("s444", "unknown")]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("image,fmt", JPEGD_CASES)
def test_jpegd_equals_dvppctl_decode(samples, media, tmp_path, profile, image, fmt):
    got, want = tmp_path / "acl.yuv", tmp_path / "ctl.yuv"
    info = last_json(samples.run("jpegd", media[image], got, "--format", fmt,
                                 profile=profile))
    dvppctl("decode", media[image], "--format", fmt, "--profile", profile, "-o", want)
    assert_same_bytes(got, want, f"jpegd {image} {fmt} {profile}")
    # The output descriptor holds what the decoder wrote, in JPEGD's layout.
    a = 64 if profile == "ascend310p" else 128
    assert info["soc"] == ("Ascend310P3" if profile == "ascend310p" else "Ascend310")
    assert info["width"] in (info["image_width"], info["image_width"] & ~1), info
    assert info["height"] in (info["image_height"], info["image_height"] & ~1), info
    assert info["width_stride"] == align(info["width"], a), info
    assert info["height_stride"] == align(info["height"], 16), info
    assert info["size"] == os.path.getsize(got) <= info["predicted_size"], info
    if fmt in ("nv12", "nv21"):
        assert info["size"] == info["width_stride"] * info["height_stride"] * 3 // 2, info
    assert info["ret_code"] == 0


@needs_photo
@pytest.mark.parametrize("profile", PROFILES)
def test_jpegd_of_a_photo_equals_dvppctl(samples, tmp_path, profile):
    got, want = tmp_path / "acl.yuv", tmp_path / "ctl.yuv"
    info = last_json(samples.run("jpegd", PHOTO, got, profile=profile))
    dvppctl("decode", PHOTO, "--format", "nv12", "--profile", profile, "-o", want)
    assert_same_bytes(got, want, f"jpegd photo {profile}")
    assert (info["width"], info["height"], info["components"]) == (1920, 1080, 3), info


# --- PNG decode ------------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("image", ["png_rgb", "png_gray", "real"])
def test_pngd_equals_dvppctl_decode(samples, media, tmp_path, profile, image):
    src = REAL_PNG if image == "real" else media[image]
    if not os.path.exists(src):
        pytest.skip("no chelsea.png in .cache/testdata (run tests/tools/fetch-test-data)")
    got, want = tmp_path / "acl.rgb", tmp_path / "ctl.rgb"
    info = last_json(samples.run("pngd", src, got, profile=profile))
    dvppctl("decode", src, "--format", "rgb", "--profile", profile, "-o", want)
    assert_same_bytes(got, want, f"pngd {image} {profile}")
    w, h = Image.open(src).size
    out = info["output"]
    assert (info["image_width"], info["image_height"]) == (w, h)
    assert (out["width"], out["height"]) == (w, h)
    assert out["width_stride"] == align(w, 128) * 3 and out["height_stride"] == align(h, 16)
    assert out["size"] == out["width_stride"] * out["height_stride"] == info["predicted_size"]


# --- VPC --------------------------------------------------------------------------------

def vpc_modes(profile):
    """Interpolations the profile has (None: the config's default)."""
    return [None, 0, 1, 2] + ([3, 4] if profile == "ascend310" else [])


def ascend_args(interp):
    return ["--parity", "ascend", "--ascend-mode", 0 if interp is None else interp]


def interp_args(interp):
    return [] if interp is None else ["--interp", interp]


def nv12_layout(w, h):
    ws, hs = align(w, 16), align(h, 2)
    return ws, hs, ws * hs * 3 // 2


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("size", ["224x224", "640x360", "162x98"])
def test_vpc_resize_equals_dvppctl(samples, media, tmp_path, profile, size):
    ow, oh = map(int, size.split("x"))
    for interp in vpc_modes(profile):
        got, want = tmp_path / f"acl{interp}.yuv", tmp_path / f"ctl{interp}.yuv"
        r = samples.run("vpc_resize", media["nv12_a"], f"{NV12_W}x{NV12_H}", got, size,
                        *interp_args(interp), profile=profile)
        dvppctl("resize", media["nv12_a"], "--input", f"nv12:{NV12_W}x{NV12_H}",
                "--size", size, *ascend_args(interp), "--profile", profile, "-o", want)
        assert_same_bytes(got, want, f"vpc_resize {size} interp {interp} {profile}")
        info = last_json(r)
        ws, hs, n = nv12_layout(ow, oh)
        assert (info["width"], info["height"], info["width_stride"], info["height_stride"],
                info["size"]) == (ow, oh, ws, hs, n), info


def test_vpc_resize_to_rgb_only_on_310p(samples, media, tmp_path):
    """The 310P's VPC writes RGB; the 310's refuses the format (FORMAT_NOT_MATCH)."""
    got, want = tmp_path / "acl.rgb", tmp_path / "ctl.rgb"
    samples.run("vpc_resize", media["nv12_a"], f"{NV12_W}x{NV12_H}", got, "160x120",
                "--out-format", "rgb", "--interp", 1, profile="ascend310p")
    dvppctl("resize", media["nv12_a"], "--input", f"nv12:{NV12_W}x{NV12_H}", "--size",
            "160x120", "--format", "rgb", *ascend_args(1), "--profile", "ascend310p",
            "-o", want)
    assert_same_bytes(got, want, "vpc_resize nv12 -> rgb ascend310p")
    r = samples.run("vpc_resize", media["nv12_a"], f"{NV12_W}x{NV12_H}", got, "160x120",
                    "--out-format", "rgb", profile="ascend310", check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "acldvppVpcResizeAsync failed: error 100027" in r.stderr, r.stderr


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("roi,size", [("10,20,169,139", None), ("0,0,321,241", None),
                                      ("10,20,169,139", "64x48"), ("100,50,299,149", "320x160")])
def test_vpc_crop_equals_dvppctl(samples, media, tmp_path, profile, roi, size):
    got, want = tmp_path / "acl.yuv", tmp_path / "ctl.yuv"
    extra = ["--size", size] if size else []
    info = last_json(samples.run("vpc_crop", media["nv12_a"], f"{NV12_W}x{NV12_H}", got,
                                 "--roi", roi, *extra, profile=profile))
    dvppctl("crop", media["nv12_a"], "--input", f"nv12:{NV12_W}x{NV12_H}", "--roi", roi,
            *extra, *ascend_args(None), "--profile", profile, "-o", want)
    assert_same_bytes(got, want, f"vpc_crop {roi} {size} {profile}")
    l, t, r, b = map(int, roi.split(","))
    w, h = map(int, size.split("x")) if size else (r - l + 1, b - t + 1)
    assert (info["width"], info["height"]) == (w, h), info


def test_vpc_crop_odd_origin_310p_only(samples, media, tmp_path):
    """An odd crop origin: 310P crops it (as dvppctl), 310 refuses it."""
    got, want = tmp_path / "acl.yuv", tmp_path / "ctl.yuv"
    samples.run("vpc_crop", media["nv12_a"], f"{NV12_W}x{NV12_H}", got, "--roi",
                "11,21,170,140", profile="ascend310p")
    dvppctl("crop", media["nv12_a"], "--input", f"nv12:{NV12_W}x{NV12_H}", "--roi",
            "11,21,170,140", *ascend_args(None), "--profile", "ascend310p", "-o", want)
    assert_same_bytes(got, want, "vpc_crop odd origin ascend310p")
    r = samples.run("vpc_crop", media["nv12_a"], f"{NV12_W}x{NV12_H}", got, "--roi",
                    "11,21,170,140", profile="ascend310", check=False)
    assert r.returncode == 1 and "acldvppVpcCropAsync failed: error 100000" in r.stderr, \
        r.stdout + r.stderr


def paste_expected(crop_path, pw, ph, ow, oh, left, top):
    """What the sample's canvas must hold: black NV12 (Y 16, UV 128) with
    dvppctl's crop (pw x ph, VPC strides) pasted at (left, top)."""
    ws, hs, n = nv12_layout(ow, oh)
    canvas = np.empty(n, np.uint8)
    canvas[:ws * hs] = 16
    canvas[ws * hs:] = 128
    y = canvas[:ws * hs].reshape(hs, ws)
    uv = canvas[ws * hs:].reshape(hs // 2, ws)
    cws, chs, cn = nv12_layout(pw, ph)
    crop = np.frombuffer(read(crop_path), np.uint8)
    assert crop.size == cn
    cy = crop[:cws * chs].reshape(chs, cws)
    cuv = crop[cws * chs:].reshape(chs // 2, cws)
    y[top:top + ph, left:left + pw] = cy[:ph, :pw]
    uv[top // 2:(top + ph) // 2, left:left + pw] = cuv[:ph // 2, :pw]
    return canvas.tobytes()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("crop,paste,interp", [
    ("10,20,169,139", "32,40,191,159", None),     # same size: a copy into the canvas
    ("10,20,169,139", "48,20,271,187", None),     # scaled up to 224 x 168
    ("0,0,321,241", "16,2,111,73", 1),            # the whole picture scaled down
    ("100,50,299,199", "64,100,127,147", 2),
])
def test_vpc_crop_paste_equals_dvppctl_crop_pasted(samples, media, tmp_path, profile, crop,
                                                   paste, interp):
    ow, oh = 320, 240
    got, ref = tmp_path / "acl.yuv", tmp_path / "crop.yuv"
    info = last_json(samples.run("vpc_crop_paste", media["nv12_a"], f"{NV12_W}x{NV12_H}", got,
                                 f"{ow}x{oh}", "--crop", crop, "--paste", paste,
                                 *interp_args(interp), profile=profile))
    pl, pt, pr, pb = map(int, paste.split(","))
    pw, ph = pr - pl + 1, pb - pt + 1
    dvppctl("crop", media["nv12_a"], "--input", f"nv12:{NV12_W}x{NV12_H}", "--roi", crop,
            "--size", f"{pw}x{ph}", *ascend_args(interp), "--profile", profile, "-o", ref)
    want = tmp_path / "want.yuv"
    want.write_bytes(paste_expected(ref, pw, ph, ow, oh, pl, pt))
    assert_same_bytes(got, want, f"vpc_crop_paste {crop} -> {paste} {profile}")
    assert (info["width"], info["height"], info["size"]) == (ow, oh, nv12_layout(ow, oh)[2])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("interp", [None, 1, 2])
def test_vpc_batch_crop_resize_equals_dvppctl_batch_crop(samples, media, tmp_path, profile,
                                                         interp):
    rois = ["0:0,0,99,99", "1:20,30,219,229", "0:100,50,299,199", "1:2,2,321,241"]
    got, want = str(tmp_path / "acl_%d.yuv"), str(tmp_path / "ctl_%d.yuv")
    roi_args = [a for roi in rois for a in ("--roi", roi)]
    info = last_json(samples.run(
        "vpc_batch_crop_resize", got, "96x64", f"{media['nv12_a']}:{NV12_W}x{NV12_H}",
        f"{media['nv12_b']}:{NV12_W}x{NV12_H}", *roi_args, *interp_args(interp),
        profile=profile))
    dvppctl("batch-crop", media["nv12_a"], media["nv12_b"], "--input",
            f"nv12:{NV12_W}x{NV12_H}", *roi_args, "--size", "96x64", *ascend_args(interp),
            "--profile", profile, "-o", want)
    assert len(info["outputs"]) == len(rois)
    for k in range(len(rois)):   # source-major: input 0's regions first
        assert_same_bytes(got % k, want % k, f"batch output {k} {profile} interp {interp}")
        out = info["outputs"][k]
        assert (out["width"], out["height"], out["size"]) == (96, 64, 96 * 64 * 3 // 2), out


# --- JPEG encode --------------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("level", [None, 0, 1, 60, 90, 100])
def test_jpege_equals_dvppctl_jpeg_output(samples, media, tmp_path, profile, level):
    """acldvppJpegEncodeAsync's JPEG is dvppctl's .jpg output of the same
    NV12 at the same quality; *size comes back as the JPEG's length. Level 0
    (also the config's default) is the best quality on the 310 and refused
    by the 310P, whose levels are 1..100."""
    got, want = tmp_path / "acl.jpg", tmp_path / "ctl.jpg"
    args = [] if level is None else ["--level", level]
    best = level in (None, 0)
    r = samples.run("jpege", media["nv12_a"], f"{NV12_W}x{NV12_H}", got, *args,
                    profile=profile, check=not (best and profile == "ascend310p"))
    if best and profile == "ascend310p":
        assert r.returncode == 1 and "error 100000" in r.stderr, r.stdout + r.stderr
        return
    info = last_json(r)
    assert info["level"] == (level or 0), info
    dvppctl("convert", media["nv12_a"], "--input", f"nv12:{NV12_W}x{NV12_H}", "--format",
            "nv12", "--quality", 100 if best else level, "-o", want)
    assert_same_bytes(got, want, f"jpege level {level} {profile}")
    ws, hs = align(NV12_W, 16), align(NV12_H, 16)
    assert info["predicted_size"] == align(ws * hs * 3 // 2 + 640 + 128, 2 << 20), info
    assert info["size"] == os.path.getsize(got) < info["predicted_size"]
    assert Image.open(got).size == (NV12_W, NV12_H)


# --- video ------------------------------------------------------------------------------

def npy_frames(path):
    """The pixel bytes of dvppctl's T x rows x stride frames .npy."""
    a = np.load(path)
    return a.shape, np.ascontiguousarray(a).tobytes()


@needs_ffmpeg
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("codec,fmt,flags", [("h264", "nv12", []), ("h265", "nv12", []),
                                             ("h264", "nv21", ["--eos"]),
                                             ("h265", "nv12", ["--sloppy", "--eos"]),
                                             ("h264", "nv12", ["--sloppy"])])
def test_vdec_equals_dvppctl_video_decode(samples, videos, tmp_path, profile, codec, fmt,
                                          flags):
    got, want = tmp_path / "acl.yuv", str(tmp_path / "ctl.npy")
    info = last_json(samples.run("vdec", videos[codec], got, "--codec", codec, "--size",
                                 f"{VIDEO_W}x{VIDEO_H}", "--format", fmt, *flags,
                                 profile=profile))
    dvppctl("video-decode", videos[codec], "--format", fmt, "-o", want)
    shape, pixels = npy_frames(want)
    ws, hs, n = nv12_layout(VIDEO_W, VIDEO_H)
    assert shape == (VIDEO_FRAMES, hs * 3 // 2, ws), shape
    assert (info["units"], info["frames"], info["failed"]) == (VIDEO_FRAMES, VIDEO_FRAMES, 0)
    assert (info["width"], info["height"], info["width_stride"], info["height_stride"],
            info["size"]) == (VIDEO_W, VIDEO_H, ws, hs, n), info
    g = read(got)
    assert len(g) == len(pixels), f"{len(g)} bytes of frames, dvppctl {len(pixels)}"
    if g != pixels:
        frames = [k for k in range(VIDEO_FRAMES) if g[k * n:(k + 1) * n] != pixels[k * n:(k + 1) * n]]
        pytest.fail(f"vdec {codec} {flags} {profile}: frames {frames} differ from dvppctl's")


VENC_CASES = [
    ("h264", ["--profile", "high", "--gop", 5, "--rc", "vbr", "--bitrate", 400, "--fps", 25],
     ["--profile", "high", "--gop", 5, "--rc", "vbr", "--bitrate", 400, "--fps", 25]),
    ("h264", ["--profile", "baseline", "--gop", 30, "--rc", "cbr", "--bitrate", 300, "--fps",
              30, "--idr", "4,9"],
     ["--profile", "baseline", "--gop", 30, "--rc", "cbr", "--bitrate", 300, "--fps", 30,
      "--idr", "4,9"]),
    ("h265", ["--gop", 6, "--fps", 25, "--rc", "cbr", "--bitrate", 300, "--idr", 3],
     ["--profile", "main", "--gop", 6, "--fps", 25, "--rc", "cbr", "--bitrate", 300,
      "--idr", 3]),
]


@needs_ffmpeg
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("codec,acl_args,ctl_args", VENC_CASES)
def test_venc_equals_dvppctl_video_encode(samples, videos, tmp_path, profile, codec, acl_args,
                                          ctl_args):
    """aclvencSendFrame's stream is dvppctl video-encode --low-delay's (VENC
    hands out each frame's packet as it is encoded) with the same codec,
    profile, GOP, rate control, bitrate, frame rate and forced IDRs."""
    got, want = tmp_path / f"acl.{codec}", tmp_path / f"ctl.{codec}"
    frames = tmp_path / "frames.npy"
    raw = np.frombuffer(read(videos["frames"]), np.uint8)
    np.save(frames, raw.reshape(VIDEO_FRAMES, VIDEO_H * 3 // 2, VIDEO_W))
    info = last_json(samples.run("venc", videos["frames"], f"{VIDEO_W}x{VIDEO_H}", got,
                                 "--codec", codec, *acl_args, profile=profile))
    dvppctl("video-encode", frames, "--input", f"nv12:{VIDEO_W}x{VIDEO_H}", "--codec", codec,
            *ctl_args, "--low-delay", "-o", want)
    assert info["frames"] == VIDEO_FRAMES and info["failed"] == 0, info
    assert info["bytes"] == os.path.getsize(got), info
    assert_same_bytes(got, want, f"venc {codec} {acl_args} {profile}")


@needs_ffmpeg
@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_venc_over_declared_height_stride(samples, videos, tmp_path, codec):
    """A picture declaring heightStride ALIGN(h,16) over a buffer of ALIGN(h,2)
    rows (the chroma right after them), as many programs send it, encodes to
    the same stream as the exact declaration."""
    args = ["--codec", codec, "--gop", 6, "--rc", "cbr", "--bitrate", 300]
    exact, sloppy = tmp_path / "exact", tmp_path / "sloppy"
    samples.run("venc", videos["frames"], f"{VIDEO_W}x{VIDEO_H}", exact, *args,
                profile="ascend310")
    assert align(VIDEO_H, 16) != align(VIDEO_H, 2)
    samples.run("venc", videos["frames"], f"{VIDEO_W}x{VIDEO_H}", sloppy, *args, "--sloppy",
                profile="ascend310")
    assert_same_bytes(sloppy, exact, f"venc {codec} --sloppy")


# docs/acl.md: what a channel left at its defaults encodes with.
VENC_DEFAULTS = {"ascend310": ["--gop", 30, "--fps", 30, "--rc", "cbr", "--bitrate", 300],
                 "ascend310p": ["--gop", 30, "--fps", 30, "--rc", "vbr", "--bitrate", 2000]}


@needs_ffmpeg
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_venc_defaults_are_the_documented_ones(samples, videos, tmp_path, profile, codec):
    """With only the required fields set, the stream is dvppctl's with the
    defaults docs/acl.md gives, and decodes to every frame, close to the source."""
    got, want, dec = tmp_path / f"acl.{codec}", tmp_path / f"ctl.{codec}", str(tmp_path / "d.npy")
    frames = tmp_path / "frames.npy"
    raw = np.frombuffer(read(videos["frames"]), np.uint8)
    np.save(frames, raw.reshape(VIDEO_FRAMES, VIDEO_H * 3 // 2, VIDEO_W))
    info = last_json(samples.run("venc", videos["frames"], f"{VIDEO_W}x{VIDEO_H}", got,
                                 "--codec", codec, profile=profile))
    assert info["frames"] == VIDEO_FRAMES and info["packets"] == VIDEO_FRAMES, info
    dvppctl("video-encode", frames, "--input", f"nv12:{VIDEO_W}x{VIDEO_H}", "--codec", codec,
            "--profile", "main", *VENC_DEFAULTS[profile], "--low-delay", "-o", want)
    assert_same_bytes(got, want, f"venc {codec} defaults {profile}")
    dvppctl("video-decode", got, "--align", "1x1", "-o", dec)
    out = np.load(dec)
    src = raw.reshape(out.shape)
    mse = np.mean((out.astype(float) - src) ** 2)
    assert out.shape[0] == VIDEO_FRAMES and 10 * np.log10(255 ** 2 / max(mse, 1e-9)) > 25


# --- bad input ---------------------------------------------------------------------------

INVALID, REPEAT_INIT, FORMAT, REPEAT_FINAL = 100000, 100002, 100027, 100037
UNSUPPORTED, FAILURE = 200006, 500001
RT_PARAM, RT_THREAD_SUBSCRIBE = 107000, 107012
NULL, NOT_NULL = "NULL", "not NULL"
UNSUPPORTED_JPEG = 148052
OK_AFTER_SYNC = "accepted, then 0 at the sync"


def at_sync(code):
    """Accepted by the call (the arguments are right), @code from the sync."""
    return ("at the sync", code)


def per_profile(p310, p310p):
    return {"ascend310": p310, "ascend310p": p310p}


# What every case of the errors sample must answer (reference §2.2, §3, §4.3,
# §5; the brief: arguments checked at the call, results at the sync).
ERRORS = {
    "init_twice": REPEAT_INIT,
    "version_null": INVALID,
    "dvpp_malloc_null": INVALID,
    "dvpp_free_null": INVALID,
    "rt_free_null": INVALID,
    "rt_free_host_null": INVALID,
    "rt_malloc_zero": INVALID,
    "memcpy_count_over_dest_max": RT_PARAM,
    "memcpy_bad_kind": INVALID,
    "memcpy_null": INVALID,
    "process_report_zero_timeout": INVALID,
    "process_report_unsubscribed": RT_THREAD_SUBSCRIBE,
    "launch_callback_bad_block": INVALID,
    "pic_desc_set_data_null_desc": INVALID,
    "pic_desc_set_data_null": INVALID,
    "pic_desc_set_size_null_desc": INVALID,
    "stream_desc_set_data_null_desc": INVALID,
    "channel_desc_destroy_null": 0,
    "vdec_channel_desc_destroy_null": 0,
    "roi_over_65535": NULL,
    "batch_desc_0": NULL,
    "batch_desc_257": NULL,
    "batch_get_past_the_end": NULL,
    "border_config": per_profile(NULL, NOT_NULL),
    "channel_mode_vpc": per_profile(UNSUPPORTED, 0),
    "channel_mode_zero": per_profile(UNSUPPORTED, INVALID),
    "resize_interpolation_3": per_profile(0, INVALID),
    "resize_interpolation_5": INVALID,
    "vdec_ref_frame_num": per_profile(UNSUPPORTED, 0),
    "vdec_out_mode_2": INVALID,
    "venc_buf_addr": per_profile(UNSUPPORTED, 0),
    "jpeg_info_garbage": FAILURE,
    "jpeg_info_no_outputs": 0,
    "jpeg_info_null_data": INVALID,
    "jpeg_predict_rgb": FORMAT,
    "jpeg_predict_yuv400": per_profile(FORMAT, 0),
    "jpeg_predict_small": INVALID,
    "jpeg_predict_null_size": INVALID,
    "jpegd_null_channel": INVALID,
    "jpegd_null_data": INVALID,
    "jpegd_null_output": INVALID,
    "jpegd_zero_size": INVALID,
    "jpegd_output_size_short": INVALID,
    "jpegd_reused_after_failure": OK_AFTER_SYNC,
    "jpegd_destroyed_output": INVALID,
    "jpegd_destroyed_channel": INVALID,
    "jpegd_buffer_short": INVALID,
    "jpegd_truncated": at_sync(FAILURE),           # the header is fine, the data ends early
    "jpegd_progressive": UNSUPPORTED_JPEG,          # the header says so: refused at the call
    "png_info_short": INVALID,
    "png_info_palette": FORMAT,
    "png_predict_nv12": FORMAT,
    "pngd_null_output": INVALID,
    "vpc_null_channel": INVALID,
    "vpc_null_input": INVALID,
    "vpc_null_output": INVALID,
    "vpc_null_config": INVALID,
    "vpc_crop_null_area": INVALID,
    "vpc_input_size_short": INVALID,
    "vpc_reused_after_failure": OK_AFTER_SYNC,
    "vpc_destroyed_input": INVALID,
    "vpc_destroyed_config": INVALID,
    "vpc_output_rgb": per_profile(FORMAT, OK_AFTER_SYNC),
    "vpc_input_format_rgb444": FORMAT,
    "vpc_crop_odd_left": per_profile(INVALID, OK_AFTER_SYNC),
    "vpc_paste_left_unaligned": INVALID,
    "vpc_crop_outside": INVALID,
    "vpc_batch_roi_nums_zero": INVALID,
    "vpc_batch_null_crops": INVALID,
    "vpc_batch_ok": OK_AFTER_SYNC,
    "vpc_input_buffer_short": INVALID,
    "vpc_width_stride_unaligned": INVALID,
    "vpc_width_stride_below_width": INVALID,
    "jpege_predict_null_size": INVALID,
    "jpege_predict_null_config": INVALID,
    "jpege_predict_rgb": FORMAT,
    "jpege_level_101": INVALID,
    "jpege_size_zero": INVALID,
    "jpege_size_null": INVALID,
    "jpege_null_output": INVALID,
    "jpege_ok": OK_AFTER_SYNC,
    "jpege_predict_small": INVALID,
    "vdec_send_null_channel": INVALID,
    "vdec_send_null_input": INVALID,
    "vdec_send_null_output": INVALID,
    "vdec_destroy_channel": 0,
    "venc_send_null_config": INVALID,
    "venc_send_reserve": INVALID,
    "venc_send_null_input": INVALID,
    "venc_send_size_short": INVALID,
    "venc_destroy_channel": 0,
    "finalize_twice": REPEAT_FINAL,
}


@pytest.fixture(scope="module", params=PROFILES)
def error_answers(request, samples, media):
    """The errors sample's answers under one profile, by case."""
    profile = request.param
    r = samples.run("errors", "--jpeg", media["s420"], "--small-jpeg", media["small"],
                    "--truncated-jpeg", media["truncated"], "--progressive-jpeg",
                    media["progressive"], "--png", media["png_rgb"], "--palette-png",
                    media["png_palette"], profile=profile, check=False)
    answers = {}
    for line in r.stdout.splitlines():
        a = json.loads(line)
        answers[a["case"]] = a
    return profile, r, answers


def test_errors_sample_runs_every_case(error_answers):
    """No crash, no hang, no leak report: exit 0 and an answer for every case."""
    profile, r, answers = error_answers
    assert r.returncode == 0, f"{profile}: exit {r.returncode}\n{r.stderr[-4000:]}"
    missing = [c for c in ERRORS if c not in answers]
    assert not missing, f"{profile}: no answer for {missing}\n{r.stderr[-4000:]}"
    assert not set(answers) - set(ERRORS), set(answers) - set(ERRORS)


@pytest.mark.parametrize("case", list(ERRORS))
def test_error_code(error_answers, case):
    profile, r, answers = error_answers
    want = ERRORS[case]
    if isinstance(want, dict):
        want = want[profile]
    if case not in answers:
        pytest.fail(f"{profile}: the errors sample gave no answer for {case} "
                    f"(exit {r.returncode})\n{r.stderr[-2000:]}")
    a = answers[case]
    if want in (NULL, NOT_NULL):
        assert a.get("null") == (want == NULL), f"{profile} {case}: {a}"
        return
    code, sync = a.get("code"), a.get("sync")
    if want == OK_AFTER_SYNC:
        assert (code, sync) == (0, 0), f"{profile} {case}: {a}"
    elif isinstance(want, tuple):
        assert (code, sync) == (0, want[1]), f"{profile} {case}: want {want}, got {a}"
    elif want == 0:
        assert code == 0 and sync in (None, 0), f"{profile} {case}: want success, got {a}"
    else:   # arguments are checked at the call, which queues nothing
        assert code == want, f"{profile} {case}: want {want} from the call, got {a}"
    failed = code if code else sync
    if failed:
        assert a["msg"].strip(), f"{profile} {case}: code {failed} without a message"
