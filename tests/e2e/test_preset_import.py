"""`dvppctl preset import` (clients/dvppctl/ctl_preset.c): Hugging Face
preprocessor_config.json files -> dvppd presets, loaded into a real dvppd
as config presets and run on a real photo, against a numpy/PIL
re-implementation of transformers' documented semantics:

  resize      PIL resize with the config's resample; size.shortest_edge
              keeps the ratio with the long side int()-truncated
              (get_resize_output_image_size), height/width is exact
  center_crop top = (h - ch) // 2, left = (w - cw) // 2 (dvppd's centre
              crop with "round": "floor", any difference, odd too)
  rescale     image.astype(float64) * rescale_factor -> float32
  normalize   (image - mean) / std in float32
  ConvNeXt    crop_pct: shorter side int(shortest_edge / crop_pct), then a
              centre crop of shortest_edge (ConvNextImageProcessor.resize)

The configs are hand-written copies of google/vit-base-patch16-224,
openai/clip-vit-base-patch32, facebook/convnext-tiny-224 and
facebook/deit-base-distilled-patch16-224. dvppd's pil parity is Pillow's
resize bit for bit, so the pixels before rescaling are identical and the
difference is float32 rounding only: asserted max |diff| <= 1e-6 and mean
<= 1e-7 (measured max 4.8e-7). The imported `shorter` resizes round the
long side down (round: floor), as HF's int(): the photo (227x149) and the
same photo at 601x400, where rounding to nearest would differ (224 * 601 /
400 = 336.56 -> 336, 256 * 601 / 400 = 384.64 -> 384), both equal HF.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_preset_import.py
"""
import json
import os

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, ctl, free_port, stop_daemon  # noqa: E402

PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

CONFIGS = {
    "vit": {"do_normalize": True, "do_rescale": True, "do_resize": True,
            "image_mean": [0.5, 0.5, 0.5], "image_processor_type": "ViTImageProcessor",
            "image_std": [0.5, 0.5, 0.5], "resample": 2,
            "rescale_factor": 0.00392156862745098, "size": {"height": 224, "width": 224}},
    "clip": {"crop_size": {"height": 224, "width": 224}, "do_center_crop": True,
             "do_convert_rgb": True, "do_normalize": True, "do_rescale": True,
             "do_resize": True, "image_mean": CLIP_MEAN,
             "image_processor_type": "CLIPImageProcessor", "image_std": CLIP_STD,
             "resample": 3, "rescale_factor": 0.00392156862745098,
             "size": {"shortest_edge": 224}},
    "convnext": {"crop_pct": 0.875, "do_normalize": True, "do_resize": True,
                 "feature_extractor_type": "ConvNextFeatureExtractor",
                 "image_mean": IMAGENET_MEAN, "image_std": IMAGENET_STD, "resample": 3,
                 "size": 224},
    "deit": {"crop_size": {"height": 224, "width": 224}, "do_center_crop": True,
             "do_normalize": True, "do_rescale": True, "do_resize": True,
             "image_mean": IMAGENET_MEAN, "image_processor_type": "DeiTImageProcessor",
             "image_std": IMAGENET_STD, "resample": 3, "rescale_factor": 0.00392156862745098,
             "size": {"height": 256, "width": 256}},
}

PIL_FILTERS = {0: Image.NEAREST, 1: Image.LANCZOS, 2: Image.BILINEAR, 3: Image.BICUBIC,
               4: Image.BOX, 5: Image.HAMMING}


def hf_reference(img, c):
    """transformers' preprocess() of the config @c on PIL image @img, NCHW
    float32 with N = 1."""
    size = c.get("size")
    resample = PIL_FILTERS[c["resample"]]
    crop = None
    if c.get("do_center_crop"):
        cs = c["crop_size"]
        crop = (cs, cs) if isinstance(cs, int) else (cs["height"], cs["width"])
    if isinstance(size, int):  # legacy int: ConvNeXt/CLIP shortest edge, else square
        size = {"shortest_edge": size} if "ConvNext" in c.get(
            "feature_extractor_type", c.get("image_processor_type", "")) else \
            {"height": size, "width": size}
    if "crop_pct" in c:
        s = size["shortest_edge"]
        size, crop = {"shortest_edge": int(s / c["crop_pct"])}, (s, s)
    w, h = img.size
    if "shortest_edge" in size:
        s = size["shortest_edge"]
        short, long = min(w, h), max(w, h)
        ns, nl = s, int(s * long / short)
        nw, nh = (ns, nl) if w <= h else (nl, ns)
    else:
        nw, nh = size["width"], size["height"]
    a = np.asarray(img.resize((nw, nh), resample))
    if crop:
        ch, cw = crop
        top, left = (nh - ch) // 2, (nw - cw) // 2
        a = a[top:top + ch, left:left + cw]
    if c.get("do_rescale", True):
        a = (a.astype(np.float64) * c.get("rescale_factor", 1 / 255)).astype(np.float32)
    else:
        a = a.astype(np.float32)
    if c.get("do_normalize", True):
        a = (a - np.array(c["image_mean"], np.float32)) / np.array(c["image_std"], np.float32)
    return a.transpose(2, 0, 1)[None]


def import_preset(tmp_path, name, cfg, check=True):
    f = tmp_path / f"{name}.json"
    f.write_text(json.dumps(cfg))
    return ctl("preset", "import", str(f), "--name", name, check=check)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hf")
    presets = {}
    for name, cfg in CONFIGS.items():
        p = import_preset(tmp, name, cfg)
        presets.update(json.loads(p.stdout))
    return presets


@pytest.fixture(scope="module")
def srv(tmp_path_factory, imported):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": ""},
           "device": {"channels": 2}, "presets": imported}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("hfd")), cfg, "hf", port)
    yield d
    stop_daemon(d)


def test_imported_shapes(imported):
    vit = imported["vit"]["spec"]
    assert vit["ops"] == [{"resize": {"w": 224, "h": 224, "mode": "stretch",
                                      "interp": "bilinear", "parity": "pil"}}]
    assert imported["clip"]["spec"]["ops"][0]["resize"]["mode"] == "shorter"
    assert imported["clip"]["spec"]["ops"][0]["resize"]["round"] == "floor"
    assert imported["convnext"]["spec"]["ops"][0]["resize"]["round"] == "floor"
    assert "round" not in imported["vit"]["spec"]["ops"][0]["resize"]
    cn = imported["convnext"]["spec"]["ops"]
    hf_crop = {"crop": {"center": [224, 224], "round": "floor"}}
    assert cn[0]["resize"]["w"] == 256 and cn[1] == hf_crop and len(cn) == 2
    # an exact height x width resize: the size is known, the crop fixed
    assert imported["deit"]["spec"]["ops"][1] == {"crop": [16, 16, 239, 239]}
    assert imported["clip"]["spec"]["ops"][1] == hf_crop
    assert imported["deit"]["spec"]["ops"][0]["resize"]["interp"] == "bicubic"
    for p in imported.values():
        assert p["kind"] == "tensor" and p["description"].startswith("imported from")


@pytest.mark.parametrize("name", list(CONFIGS))
def test_imported_preset_equals_hf(srv, name):
    img = Image.open(PHOTO).convert("RGB")
    r = srv.post(f"/v1/preprocess?preset={name}", open(PHOTO, "rb").read())
    assert r.status == 200, r
    x = r.npy()
    ref = hf_reference(img, CONFIGS[name])
    assert x.shape == ref.shape == (1, 3, 224, 224)
    d = np.abs(x.astype(np.float64) - ref)
    assert d.max() <= 1e-6 and d.mean() <= 1e-7, f"{name}: max {d.max()} mean {d.mean()}"


@pytest.mark.parametrize("name", ["clip", "convnext", "deit"])
def test_truncated_long_side_equals_hf(srv, name):
    """601x400, where HF's int() and rounding to nearest part: equal HF."""
    import io
    img = Image.open(PHOTO).convert("RGB").resize((601, 400), Image.BICUBIC)
    b = io.BytesIO()
    img.save(b, "PNG")
    r = srv.post(f"/v1/preprocess?preset={name}", b.getvalue())
    assert r.status == 200, r
    ref = hf_reference(img, CONFIGS[name])
    d = np.abs(r.npy().astype(np.float64) - ref)
    assert d.max() <= 1e-6 and d.mean() <= 1e-7, f"{name}: max {d.max()} mean {d.mean()}"


def test_hamming_and_no_normalize(tmp_path, srv):
    """resample 5 (PIL HAMMING) is Pillow's filter in dvppd: honoured;
    do_normalize false leaves x * rescale_factor."""
    cfg = dict(CONFIGS["vit"], resample=5, do_normalize=False, rescale_factor=1 / 127.5)
    p = json.loads(import_preset(tmp_path, "ham", cfg).stdout)["ham"]["spec"]
    assert p["ops"][0]["resize"]["interp"] == "hamming"
    body = json.dumps(dict(p, ops=p["ops"]))
    r = srv.post("/v1/preprocess", open(PHOTO, "rb").read(), {"X-Dvpp-Spec": body})
    assert r.status == 200, r
    ref = hf_reference(Image.open(PHOTO).convert("RGB"), cfg)
    assert np.abs(r.npy() - ref).max() <= 1e-6


def test_odd_shortest_edge_minus_crop_equals_hf(tmp_path, srv):
    """shortest_edge 225, crop 224 (once refused: the fixed crop could not
    follow an odd difference). On 645x423 the resize makes 343x225
    (225 * 645 / 423 = 343.09): 343 - 224 = 119 columns -> HF's left
    119 // 2 = 59 (torchvision's round(59.5) would be 60), top 1 // 2 = 0.
    The imported centre crop floors: equal HF, and not the crop one column
    to the right."""
    import io
    cfg = dict(CONFIGS["clip"], size={"shortest_edge": 225})
    p = json.loads(import_preset(tmp_path, "odd", cfg).stdout)["odd"]["spec"]
    assert p["ops"][1] == {"crop": {"center": [224, 224], "round": "floor"}}
    img = Image.open(PHOTO).convert("RGB").resize((645, 423), Image.BICUBIC)
    b = io.BytesIO()
    img.save(b, "PNG")
    r = srv.post("/v1/preprocess", b.getvalue(), {"X-Dvpp-Spec": json.dumps(p)})
    assert r.status == 200, r
    x = r.npy().astype(np.float64)
    ref = hf_reference(img, cfg)
    d = np.abs(x - ref)
    assert d.max() <= 1e-6 and d.mean() <= 1e-7, f"max {d.max()} mean {d.mean()}"
    # the half-to-even crop (left 60) is the same pixels one column on
    wide = dict(cfg, crop_size={"height": 224, "width": 225})
    shifted = hf_reference(img, wide)[..., 1:]  # left 59, one column more, from 60 on
    assert np.abs(x - shifted).max() > 0.05
    assert float(r.headers["x-dvpp-pad"].split(",")[0]) == -59


@pytest.mark.parametrize("change,field", [
    ({"do_pad": True}, "do_pad"),
    ({"resample": 7}, "resample"),
    ({"do_flip_channel_order": True}, "do_flip_channel_order"),
    ({"size": {"longest_edge": 224}}, "size.longest_edge"),
    ({"crop_pct": 0.9}, "crop_pct"),               # not a ConvNeXt processor
    ({"do_center_crop": True, "crop_size": 300}, "crop_size"),
    ({"image_mean": [0.5, 0.5]}, "image_mean"),
])
def test_refusals_name_the_field(tmp_path, change, field):
    cfg = dict(CONFIGS["vit"], **change)
    p = import_preset(tmp_path, "bad", cfg, check=False)
    assert p.returncode != 0 and p.stdout == ""
    assert f": {field}: " in p.stderr, p.stderr
