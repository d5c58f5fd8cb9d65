#!/usr/bin/python3
"""bench/run_fuse.py: what the planner's byte-neutral fusions save per image.

    DVPP_BUILD=build /usr/bin/python3 bench/run_fuse.py      (N=60 requests per case)

Two private dvppd (1 device channel, HTTP on a free port, socket in a temp
dir): one as built, one with DVPP_NO_FUSE=1 (every op run as written). Each
gets N POST /v1/preprocess of one 1920x1080 q90 4:2:0 JPEG
(.cache/testdata/photos/photo1080.jpg when tests/tools/fetch-test-data made
it, else the corpus photo upscaled, said in the output), sequentially, for:
  eval   the spec dvpp.torch sends for Resize(256) + CenterCrop(224) + ToTensor
         + Normalize: pil bilinear stretch to 455x256, crop [115, 16, 338, 239],
         float32 NCHW: a windowed resize, and a decode limited to what it reads
  train  a first crop 1000x900 then pil bilinear to 224x224 (RandomResizedCrop
         without the client's decode.roi): the decode limited to the crop
The medians (after 5 warm-up requests) of the X-Dvpp-Timing stages, in
microseconds, per daemon and case; both answers are checked equal byte for
byte. Benchmark only: nothing asserted but the equality.
"""
import io
import json
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import daemon_util  # noqa: E402
from daemon_util import free_port, stop_daemon  # noqa: E402
from PIL import Image  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
DECODE = {"format": "rgb", "orient": False, "shrink_on_load": False}
NORM = {"mean": MEAN, "std": STD, "dtype": "float32", "layout": "nchw"}
SPECS = {
    "eval": {"decode": DECODE, "normalize": NORM,
             "ops": [{"resize": {"w": 455, "h": 256, "mode": "stretch", "interp": "bilinear",
                                 "parity": "pil"}},
                     {"crop": [115, 16, 338, 239]}]},
    "train": {"decode": DECODE, "normalize": NORM,
              "ops": [{"crop": [300, 100, 1299, 999]},
                      {"resize": {"w": 224, "h": 224, "mode": "stretch",
                                  "interp": "bilinear", "parity": "pil"}}]},
}


def photo():
    p = os.path.join(ROOT, ".cache", "testdata", "photos", "photo1080.jpg")
    if os.path.exists(p):
        return open(p, "rb").read(), p
    img = Image.open(os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo",
                                  "testorig.ppm")).convert("RGB")
    b = io.BytesIO()
    img.resize((1920, 1080), Image.BICUBIC).save(b, "JPEG", quality=90)
    return b.getvalue(), "testorig.ppm upscaled to 1920x1080 (synthetic: not comparable)"


def daemon(name, no_fuse):
    port = free_port()
    sd = daemon_util.sock_dir(name)
    sock = os.path.join(sd, "dvppd.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "device": {"channels": 1},
           "socket": {"path": sock, "mode": "0600"}}
    env = os.environ.pop("DVPP_NO_FUSE", None)
    if no_fuse:
        os.environ["DVPP_NO_FUSE"] = "1"
    try:
        return daemon_util.start_daemon(tempfile.mkdtemp(prefix="fusebench"), cfg, name, port,
                                        sock=sock, sock_dir=sd)
    finally:
        os.environ.pop("DVPP_NO_FUSE", None)
        if env is not None:
            os.environ["DVPP_NO_FUSE"] = env


def main():
    n = int(os.environ.get("N", "60"))
    blob, what = photo()
    print(f"input: {what}, {len(blob)} bytes; {n} requests per case, medians after 5")
    answers = {}
    for name, no_fuse in (("fused", False), ("DVPP_NO_FUSE=1", True)):
        d = daemon("fuse" if not no_fuse else "nofuse", no_fuse)
        try:
            for case, spec in SPECS.items():
                rows = []
                for _ in range(n):
                    r = d.post("/v1/preprocess", blob, {"X-Dvpp-Spec": json.dumps(spec)})
                    assert r.status == 200, r
                    rows.append({k: int(v) for k, v in
                                 (kv.split("=") for kv in r.h("x-dvpp-timing").split(";"))})
                answers.setdefault(case, []).append(r.body)
                med = {k: statistics.median(x[k] for x in rows[5:]) for k in rows[0]}
                print(f"{name:15s} {case:6s} " +
                      " ".join(f"{k}={v:.0f}" for k, v in med.items()))
        finally:
            stop_daemon(d)
    for case, (a, b) in answers.items():
        print(f"{case}: fused and unfused answers {'equal' if a == b else 'DIFFER'}")


if __name__ == "__main__":
    main()
