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
              centre crop of shortest_edge (ConvNextImageProcessor.resize);
              a missing or null crop_pct is 224 / 256 (its __init__)
  defaults    do_center_crop defaults to true with crop_size 224 x 224 for
              DeiT, CLIP and BiT (their __init__); ViT and ConvNeXt have no
              centre-crop step; a legacy integer size is the shortest edge
              for CLIP / BiT / ConvNeXt, a square for ViT / DeiT
              (get_size_dict's default_to_square)
  class       image_processor_type, else feature_extractor_type with
              "FeatureExtractor" read as "ImageProcessor" (AutoImageProcessor)

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


def hf_class(c):
    """The class AutoImageProcessor builds for config @c (None: none named)."""
    t = c.get("image_processor_type")
    if t is None and c.get("feature_extractor_type") is not None:
        t = c["feature_extractor_type"].replace("FeatureExtractor", "ImageProcessor")
    return t


def hf_reference(img, c):
    """transformers' preprocess() of the config @c on PIL image @img, NCHW
    float32 with N = 1."""
    cls = hf_class(c) or ""
    size = c.get("size")
    resample = PIL_FILTERS[c["resample"]]
    crop = None
    crop_default = cls in ("DeiTImageProcessor", "CLIPImageProcessor", "BitImageProcessor")
    dc = c.get("do_center_crop")
    if (crop_default if dc is None else dc) and cls not in ("ViTImageProcessor",
                                                            "ConvNextImageProcessor"):
        cs = c.get("crop_size") or {"height": 224, "width": 224}
        crop = (cs, cs) if isinstance(cs, int) else (cs["height"], cs["width"])
    if isinstance(size, int):  # legacy int: get_size_dict's default_to_square
        size = {"shortest_edge": size} if cls in (
            "ConvNextImageProcessor", "CLIPImageProcessor", "BitImageProcessor") else \
            {"height": size, "width": size}
    if cls == "ConvNextImageProcessor" and size["shortest_edge"] < 384:
        s = size["shortest_edge"]
        pct = c.get("crop_pct")
        pct = 224 / 256 if pct is None else pct
        size, crop = {"shortest_edge": int(s / pct)}, (s, s)
    elif cls == "ConvNextImageProcessor":  # from 384: a warp to the square
        size = {"height": size["shortest_edge"], "width": size["shortest_edge"]}
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


@pytest.mark.parametrize("base,change,field", [
    ("vit", {"do_pad": True}, "do_pad"),
    ("vit", {"resample": 7}, "resample"),
    ("vit", {"do_flip_channel_order": True}, "do_flip_channel_order"),
    ("vit", {"size": {"longest_edge": 224}}, "size.longest_edge"),
    ("vit", {"crop_pct": 0.9}, "crop_pct"),               # not a ConvNeXt processor
    ("deit", {"do_center_crop": True, "crop_size": 300}, "crop_size"),
    ("vit", {"image_mean": [0.5, 0.5]}, "image_mean"),
    # ViT / ConvNeXt have no centre-crop step: transformers would ignore it
    ("vit", {"do_center_crop": True, "crop_size": 200}, "do_center_crop"),
    ("vit", {"crop_size": 200}, "crop_size"),
    ("convnext", {"do_center_crop": True}, "do_center_crop"),
    # their resize() raises on the other size form
    ("vit", {"size": {"shortest_edge": 224}}, "size.shortest_edge"),
    ("convnext", {"size": {"height": 224, "width": 224}}, "size"),
    # crop_pct range: (0, 1], and the short side int(224 / pct) <= 16384
    ("convnext", {"crop_pct": 0.001}, "crop_pct"),       # 224000
    ("convnext", {"crop_pct": 1e-9}, "crop_pct"),        # 2.24e11: once a UB cast
    ("convnext", {"crop_pct": 0}, "crop_pct"),
    ("convnext", {"crop_pct": -0.5}, "crop_pct"),
    ("convnext", {"crop_pct": 1.5}, "crop_pct"),
    # the exported mean / (255 f), std / (255 f) must be finite, in dvppd's range
    ("vit", {"rescale_factor": 1e308}, "rescale_factor"),  # once std [0, 0, 0]
    ("vit", {"rescale_factor": 1e-320}, "rescale_factor"),  # once "out of memory"
    ("vit", {"image_std": [1e-20, 0.5, 0.5]}, "image_std"),
    ("vit", {"image_std": [0.5, 1e12, 0.5]}, "image_std"),
    ("vit", {"image_mean": [0.5, 0.5, 1e300]}, "image_mean"),
    # a remote-code processor
    ("vit", {"auto_map": {"AutoImageProcessor": "m.MyProcessor"}}, "auto_map"),
])
def test_refusals_name_the_field(tmp_path, base, change, field):
    cfg = dict(CONFIGS[base], **change)
    p = import_preset(tmp_path, "bad", cfg, check=False)
    assert p.returncode == 1 and p.stdout == ""
    assert f": {field}: " in p.stderr, p.stderr
    assert "out of memory" not in p.stderr


@pytest.mark.parametrize("key,name", [
    ("image_processor_type", "LevitImageProcessor"),       # short side * 256 / 224
    ("image_processor_type", "MobileNetV2ImageProcessor"),
    ("image_processor_type", "MobileNetV1ImageProcessor"),
    ("image_processor_type", "ViTImageProcessorFast"),     # torchvision, not PIL
    ("feature_extractor_type", "LevitFeatureExtractor"),
])
def test_unlisted_processor_types_refused(tmp_path, key, name):
    """Only the classes whose resize the importer reproduces are imported;
    any other is refused naming it (Levit's resize would export a wrong
    short side with the generic semantics)."""
    cfg = {k: v for k, v in CONFIGS["clip"].items() if k != "image_processor_type"}
    cfg[key] = name
    p = import_preset(tmp_path, "bad", cfg, check=False)
    assert p.returncode == 1 and p.stdout == ""
    assert f": {key}: {name} is not supported" in p.stderr, p.stderr


def post_spec(srv, spec, img):
    import io
    b = io.BytesIO()
    img.save(b, "PNG")
    r = srv.post("/v1/preprocess", b.getvalue(), {"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == 200, r
    return r.npy().astype(np.float64)


def assert_equals_hf(srv, tmp_path, cfg, shape=(1, 3, 224, 224), sizes=((227, 149),
                                                                        (601, 400))):
    """@cfg imported, run by the daemon on the photo at @sizes, equals the
    numpy/PIL transformers reference (float32 rounding only); the spec."""
    p = json.loads(import_preset(tmp_path, "t", cfg).stdout)["t"]["spec"]
    photo = Image.open(PHOTO).convert("RGB")
    for wh in sizes:
        img = photo.resize(wh, Image.BICUBIC) if wh != photo.size else photo
        x = post_spec(srv, p, img)
        ref = hf_reference(img, cfg)
        assert x.shape == ref.shape == shape
        d = np.abs(x - ref)
        assert d.max() <= 1e-6 and d.mean() <= 1e-7, f"{wh}: max {d.max()} mean {d.mean()}"
    return p


@pytest.mark.parametrize("pct", ["missing", None])
def test_convnext_default_crop_pct(tmp_path, srv, pct):
    """ConvNextImageProcessor without crop_pct (or null) uses 224 / 256:
    short side int(224 / 0.875) = 256, centre crop 224 (once: a plain
    224 resize, no crop)."""
    cfg = {k: v for k, v in CONFIGS["convnext"].items() if k != "crop_pct"}
    if pct is None:
        cfg["crop_pct"] = None
    p = assert_equals_hf(srv, tmp_path, cfg)
    assert p["ops"][0]["resize"]["w"] == 256
    assert p["ops"][1] == {"crop": {"center": [224, 224], "round": "floor"}}


def test_convnext_other_crop_pct_and_warp(tmp_path, srv):
    """crop_pct 0.95: short side int(224 / 0.95) = 235; shortest_edge 384
    warps to 384 x 384 whatever crop_pct is."""
    p = assert_equals_hf(srv, tmp_path, dict(CONFIGS["convnext"], crop_pct=0.95))
    assert p["ops"][0]["resize"]["w"] == 235
    p = assert_equals_hf(srv, tmp_path, dict(CONFIGS["convnext"], size=384),
                         shape=(1, 3, 384, 384), sizes=((227, 149),))
    assert p["ops"] == [{"resize": {"w": 384, "h": 384, "mode": "stretch",
                                    "interp": "bicubic", "parity": "pil"}}]


def test_class_crop_defaults(tmp_path, srv):
    """do_center_crop absent: CLIP's default is true (crop_size honoured);
    DeiT with neither key crops to its default 224 x 224."""
    clip = {k: v for k, v in CONFIGS["clip"].items() if k != "do_center_crop"}
    p = assert_equals_hf(srv, tmp_path, clip)
    assert p["ops"][1] == {"crop": {"center": [224, 224], "round": "floor"}}
    deit = {k: v for k, v in CONFIGS["deit"].items()
            if k not in ("do_center_crop", "crop_size")}
    p = assert_equals_hf(srv, tmp_path, deit)
    assert p["ops"][1] == {"crop": [16, 16, 239, 239]}


def test_feature_extractor_types_map(tmp_path, srv):
    """Older configs name a feature extractor: ViTFeatureExtractor is
    ViTImageProcessor (legacy int size: a square), CLIPFeatureExtractor is
    CLIPImageProcessor (legacy int size: the shortest edge)."""
    vit = {k: v for k, v in CONFIGS["vit"].items() if k != "image_processor_type"}
    vit.update(feature_extractor_type="ViTFeatureExtractor", size=224)
    p = assert_equals_hf(srv, tmp_path, vit)
    assert p["ops"][0]["resize"]["mode"] == "stretch"
    clip = {k: v for k, v in CONFIGS["clip"].items() if k != "image_processor_type"}
    clip.update(feature_extractor_type="CLIPFeatureExtractor", size=224, crop_size=224)
    p = assert_equals_hf(srv, tmp_path, clip)
    assert p["ops"][0]["resize"]["mode"] == "shorter"
    assert "CLIPFeatureExtractor" in import_preset(tmp_path, "t", clip).stdout


def test_no_type_generic_semantics(tmp_path, srv):
    """No image_processor_type nor feature_extractor_type: imported with
    the generic semantics (a note on stderr), every key whose default
    differs between classes required explicitly."""
    cfg = {k: v for k, v in CONFIGS["clip"].items() if k != "image_processor_type"}
    p = assert_equals_hf(srv, tmp_path, cfg)  # do_center_crop explicit: true
    assert p["ops"][1] == {"crop": {"center": [224, 224], "round": "floor"}}
    note = import_preset(tmp_path, "t", cfg).stderr
    assert "no image_processor_type: imported with the generic semantics" in note
    assert import_preset(tmp_path, "t", CONFIGS["clip"]).stderr == ""
    for change, field in [({"do_center_crop": None}, "do_center_crop"),  # crop_size given
                          ({"size": 224}, "size"),                      # square or short?
                          ({"crop_pct": 0.875}, "crop_pct")]:
        bad = dict(cfg, **change)
        if change.get("do_center_crop", 1) is None:
            del bad["do_center_crop"]
        r = import_preset(tmp_path, "bad", bad, check=False)
        assert r.returncode == 1 and f": {field}: " in r.stderr, r.stderr
