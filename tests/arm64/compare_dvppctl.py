#!/usr/bin/python3
"""dvppctl built for aarch64 (run under qemu-aarch64) against this machine's
dvppctl on real photos: every output file must be the same bytes.

JPEG photos (forensics-samples-files) and PNG photos (scikit-image's data)
go through decode, the CSC paths (NV12, grey, BGR), resize in every parity
mode and interpolation, letterbox, and normalisation to f32/f16/u8/i8 in
NCHW, NHWC and NC1HWC0. The cross build runs at its best level (NEON);
the unit suites compare NEON with scalar kernel by kernel (make test-arm64).

Usage: compare_dvppctl.py --native build/dvppctl --cross build/arm64/dvppctl
       [--qemu "qemu-aarch64"] [--data .cache/testdata] [--quick]
Exit 0 when every case matches, 1 on a mismatch or a failed run.
"""
import argparse
import concurrent.futures
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile

NORM_TV = ["--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225"]
NORM_HALF = ["--mean", "0.5,0.5,0.5", "--std", "0.5,0.5,0.5"]
NORM_NONE = ["--mean", "0,0,0", "--std", "1,1,1"]

# (name, argv after the input, output extension, small only). Each runs on
# every image unless marked small (then only on images up to 2.1 MP, to keep
# qemu quick). {half} and {up} are sizes of the image's own: an exact 1/2
# (cv2's integer-factor area path) and 3/2 (an upscale).
CASES = [
    ("decode-rgb", ["decode", "--format", "rgb"], "npy", False),
    ("decode-nv12", ["decode", "--format", "nv12"], "raw", False),
    ("decode-gray", ["decode", "--format", "gray"], "npy", True),
    ("decode-bgr-shrink", ["decode", "--format", "bgr", "--shrink-on-load", "300x300"],
     "npy", False),
    ("cv2-bilinear-f32", ["preprocess", "--size", "224x224", "--parity", "cv2", "--interp",
                          "bilinear", *NORM_TV, "--dtype", "f32"], "npy", False),
    ("cv2-bicubic-f16-nhwc", ["preprocess", "--size", "320x240", "--parity", "cv2",
                              "--interp", "bicubic", *NORM_HALF, "--dtype", "f16",
                              "--layout", "nhwc"], "npy", True),
    ("cv2-area-f32-bgr", ["preprocess", "--size", "224x224", "--parity", "cv2", "--interp",
                          "area", *NORM_TV, "--order", "bgr"], "npy", False),
    ("cv2-area-int-factor", ["resize", "--size", "{half}", "--parity", "cv2", "--interp",
                             "area"], "npy", True),
    ("cv2-nearest-u8-nc1hwc0", ["preprocess", "--size", "227x227", "--parity", "cv2",
                                "--interp", "nearest", *NORM_NONE, "--dtype", "u8",
                                "--layout", "nc1hwc0"], "npy", True),
    ("cv2-upscale", ["resize", "--size", "{up}", "--parity", "cv2", "--interp", "bicubic"],
     "npy", True),
    ("pil-bilinear-f32", ["preprocess", "--size", "224x224", "--parity", "pil", "--interp",
                          "bilinear", *NORM_TV], "npy", False),
    ("pil-bicubic-f16", ["preprocess", "--size", "224x224", "--parity", "pil", "--interp",
                         "bicubic", *NORM_HALF, "--dtype", "f16"], "npy", False),
    ("pil-lanczos-f32-nhwc", ["preprocess", "--size", "384x288", "--parity", "pil",
                              "--interp", "lanczos", *NORM_TV, "--layout", "nhwc"],
     "npy", True),
    ("pil-box-i8", ["preprocess", "--size", "224x224", "--parity", "pil", "--interp", "box",
                    *NORM_NONE, "--dtype", "i8"], "npy", True),
    ("pil-hamming-f16-nc1hwc0", ["preprocess", "--size", "160x160", "--parity", "pil",
                                 "--interp", "hamming", *NORM_HALF, "--dtype", "f16",
                                 "--layout", "nc1hwc0"], "npy", True),
    ("pil-shorter-256", ["resize", "--size", "256x256", "--mode", "shorter", "--parity",
                         "pil", "--interp", "bilinear"], "npy", True),
    ("tf-bilinear-f32", ["preprocess", "--size", "299x299", "--parity", "tf", "--interp",
                         "bilinear", *NORM_HALF], "npy", False),
    ("tf-nearest", ["resize", "--size", "200x150", "--parity", "tf", "--interp", "nearest"],
     "npy", True),
    ("letterbox-640-f16", ["preprocess", "--size", "640x640", "--mode", "letterbox", "--pad",
                           "727272", "--parity", "cv2", "--interp", "bilinear", *NORM_NONE,
                           "--scale", "0.00392156862745098", "--dtype", "f16"], "npy", False),
    ("ascend-nv12-resize", ["resize", "--size", "416x416", "--parity", "ascend",
                            "--decode-format", "nv12"], "raw", True),
    ("border-reflect", ["make-border", "--margins", "7,9,5,11", "--border-type",
                        "reflect101"], "npy", True),
]

PHOTOS = ["photos/photo1080.jpg", "photos/IMG_1054.JPG", "photos/d-debian.jpg",
          "photos/IMG-20191006-WA0002.jpg", "photos/IMG_20191224_234846.jpg",
          "skimage/astronaut.png", "skimage/coffee.png", "skimage/chelsea.png",
          "skimage/camera.png"]
QUICK = ["photos/photo1080.jpg", "photos/d-debian.jpg", "skimage/astronaut.png",
         "skimage/camera.png"]
SMALL_PIXELS = 2_100_000


def image_size(path):
    """The header's width and height (Pillow reads only the header)."""
    from PIL import Image
    with Image.open(path) as im:
        return im.size


def run(cmd, out):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    data = None
    if r.returncode == 0 and os.path.exists(out):
        with open(out, "rb") as f:
            data = f.read()
    return r.returncode, r.stdout, r.stderr.decode(errors="replace"), data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--native", required=True)
    ap.add_argument("--cross", required=True)
    ap.add_argument("--qemu", default="qemu-aarch64")
    ap.add_argument("--data", default=".cache/testdata")
    ap.add_argument("--quick", action="store_true", help="four images only")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()

    images = [os.path.join(a.data, p) for p in (QUICK if a.quick else PHOTOS)]
    missing = [p for p in images if not os.path.exists(p)]
    if missing:
        print("compare_dvppctl: missing test data (make test-data): " + " ".join(missing))
        return 1
    qemu = shlex.split(a.qemu)
    tmp = tempfile.mkdtemp(prefix="dvpp-arm64-")
    jobs = []
    for img in images:
        w, h = image_size(img)
        small = w * h <= SMALL_PIXELS
        kind = "png" if img.endswith(".png") else "jpeg"
        sizes = {"half": "%dx%d" % (w // 2, h // 2), "up": "%dx%d" % (w * 3 // 2, h * 3 // 2)}
        for name, argv, ext, small_only in CASES:
            if small_only and not small:
                continue
            stem = "%s-%s" % (os.path.basename(img).replace(".", "_"), name)
            outs = [os.path.join(tmp, "%s.%s.%s" % (stem, side, ext)) for side in ("x86", "arm")]
            cmd = [argv[0], img] + [x.format(**sizes) for x in argv[1:]]
            jobs.append((stem, kind, [a.native] + cmd + ["-o", outs[0]], outs[0],
                         qemu + [a.cross] + cmd + ["-o", outs[1]], outs[1]))

    failed = 0
    same = 0
    nbytes = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futs = []
        for stem, kind, ncmd, nout, ccmd, cout in jobs:
            futs.append((stem, ncmd, pool.submit(run, ncmd, nout), ccmd,
                         pool.submit(run, ccmd, cout)))
        for stem, ncmd, nf, ccmd, cf in futs:
            nrc, nso, nse, nd = nf.result()
            crc, cso, cse, cd = cf.result()
            if nrc != crc:
                failed += 1
                print("FAIL %s: exit %d (x86) vs %d (aarch64)\n  x86: %s\n  arm: %s" %
                      (stem, nrc, crc, nse.strip(), cse.strip()))
            elif nrc != 0:
                # Both refused the same input the same way: compare the message.
                if nse != cse:
                    failed += 1
                    print("FAIL %s: both exit %d, messages differ:\n  %s\n  %s" %
                          (stem, nrc, nse.strip(), cse.strip()))
                else:
                    same += 1
                    print("ok   %-50s both refuse: %s" % (stem, nse.strip()[:60]))
            elif nd != cd or nso != cso:
                failed += 1
                diff = "?"
                if nd is not None and cd is not None and len(nd) == len(cd):
                    diff = str(sum(1 for x, y in zip(nd, cd) if x != y))
                print("FAIL %s: outputs differ (%s vs %s bytes, %s differ; stdout %s)\n  %s" %
                      (stem, len(nd or b""), len(cd or b""), diff,
                       "same" if nso == cso else "differs", " ".join(ccmd)))
            else:
                same += 1
                nbytes += len(nd)
                print("ok   %-50s %10d bytes sha256 %s" %
                      (stem, len(nd), hashlib.sha256(nd).hexdigest()[:16]))
    print("compare_dvppctl: %d of %d cases the same bytes (%.1f MB compared), %d differ" %
          (same, len(jobs), nbytes / 1e6, failed))
    if failed == 0:
        subprocess.run(["rm", "-rf", tmp])
    else:
        print("outputs kept in " + tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
