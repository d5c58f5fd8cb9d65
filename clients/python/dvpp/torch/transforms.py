"""dvpp.torch.transforms: torchvision 0.14's image transforms, run by dvppd.

The names and arguments are torchvision's (``from dvpp.torch import
transforms`` in place of ``from torchvision import transforms``) for the
transforms that map onto dvppd's pipeline:

    Compose, Resize, CenterCrop, RandomResizedCrop, RandomHorizontalFlip,
    RandomVerticalFlip, Pad, Grayscale, ToTensor, PILToTensor,
    ConvertImageDtype, Normalize

What torchvision computes on the PIL image, the client computes here from
the image's stored size alone (the output size of ``Resize(int)``, the
box of ``CenterCrop``, the draws of the random transforms, with torch's
global generator and in torchvision's order, so ``torch.manual_seed(s)``
gives the same crops and flips); what it does to the pixels, the daemon
does, with Pillow's arithmetic (``parity: pil``): the tensors equal
torchvision's on PIL images (max |diff| <= 1e-6 in float32; the tests
assert it).

``Compose`` checks and compiles its list once: a transform that cannot be
expressed (a Lambda, ColorJitter, a Resize after ToTensor, which torchvision
would run on the tensor with other maths, ...) is refused there with
TransformError naming it. Each sample then costs only the arithmetic of
``plan(width, height)``: the pipeline spec (JSON for dvppd) and the shape
of the tensor. torchvision's own transform objects (and a
torchvision Compose) are accepted and translated the same way.

The input is what torchvision's ImageFolder loader gives:
``Image.open(path).convert('RGB')``, the stored orientation (EXIF ignored),
alpha dropped, grey made RGB. A Compose called on an image (bytes, a path,
or a PIL image) sends it to dvppd and returns the C x H x W tensor (see
``Compose.__call__``); the datasets and the DataLoader of dvpp.torch
batch many of them per job instead.
"""

import math
import numbers

import torch

__all__ = [
    "Compose", "Resize", "CenterCrop", "RandomResizedCrop", "RandomHorizontalFlip",
    "RandomVerticalFlip", "Pad", "Grayscale", "ToTensor", "PILToTensor",
    "ConvertImageDtype", "Normalize", "InterpolationMode", "TransformError", "Plan",
]

try:  # torchvision's enum when it is installed, so its members compare equal
    from torchvision.transforms import InterpolationMode
except ImportError:  # pragma: no cover - torchvision is optional
    import enum

    class InterpolationMode(enum.Enum):
        NEAREST = "nearest"
        BILINEAR = "bilinear"
        BICUBIC = "bicubic"
        BOX = "box"
        HAMMING = "hamming"
        LANCZOS = "lanczos"

# PIL's filter numbers (Image.NEAREST ...), which torchvision 0.14 still takes.
_PIL_CODES = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
# torchvision's mode -> dvppd's interp name under parity "pil".
_INTERP = {"nearest": "nearest", "bilinear": "bilinear", "bicubic": "bicubic",
           "box": "box", "hamming": "hamming", "lanczos": "lanczos"}
_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.uint8: "uint8"}


class TransformError(ValueError):
    """A transform (or its place in the Compose) dvppd cannot run; the
    message names it."""


def _interp(mode, who):
    if isinstance(mode, InterpolationMode):
        name = mode.value
    elif isinstance(mode, int) and mode in _PIL_CODES:
        name = _PIL_CODES[mode]
    elif isinstance(mode, str):
        name = mode.lower()
    else:
        name = getattr(mode, "value", None)
    if name not in _INTERP:
        raise TransformError(f"{who}: interpolation {mode!r} is not one dvppd has "
                             f"({', '.join(sorted(_INTERP))})")
    return _INTERP[name]


def _pair(size, who, what="size"):
    """torchvision's _setup_size: an int or a 1- or 2-sequence -> (h, w)."""
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise TransformError(f"{who}: {what} must be an int or a sequence of 1 or 2 ints, "
                         f"not {size!r}")


class _Geom:
    """What an image transform sees: the image's size and channels so far."""
    __slots__ = ("w", "h", "grey")

    def __init__(self, w, h):
        self.w, self.h = w, h
        self.grey = False      # after Grayscale(1): one channel


class Plan:
    """One sample's pipeline: ``spec`` (the dict dvppd takes as the JSON
    spec) and ``shape`` (C, H, W) of its tensor, ``dtype`` its torch dtype."""
    __slots__ = ("spec", "shape", "dtype")

    def __init__(self, spec, shape, dtype):
        self.spec, self.shape, self.dtype = spec, shape, dtype

    def __repr__(self):
        return f"<dvpp.torch Plan {list(self.shape)} {self.dtype}: {self.spec}>"


# --------------------------------------------------------------------------
# the transforms (torchvision's names and arguments)


class _Transform:
    """A transform: ``image`` ones change the pixels before the tensor
    (``_apply`` adds their ops for one sample), ``tensor`` ones make or
    change the tensor (Compose folds them into one ``normalize``)."""
    stage = "image"

    def _apply(self, g, ops):  # pragma: no cover - every image transform has one
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


class Resize(_Transform):
    """torchvision.transforms.Resize: ``size`` (h, w), or an int for the
    shorter side with the longer one ``int(size * long / short)``, capped
    by ``max_size``; Pillow's filter (PIL resizes always antialias:
    ``antialias`` is accepted and ignored, as torchvision does for PIL)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=None):
        if isinstance(size, numbers.Number):
            size = [int(size)]
        elif isinstance(size, (list, tuple)) and len(size) in (1, 2):
            size = [int(s) for s in size]
        else:
            raise TransformError(f"Resize: size must be an int or a sequence of 1 or 2 "
                                 f"ints, not {size!r}")
        if any(s <= 0 for s in size):
            raise TransformError(f"Resize: size {size} must be positive")
        if max_size is not None and len(size) != 1:
            raise TransformError("Resize: max_size needs an int size (the shorter side)")
        if max_size is not None and max_size <= size[0]:
            raise TransformError(f"Resize: max_size = {max_size} must be strictly greater "
                                 f"than the requested size for the smaller edge size = {size}")
        self.size = size
        self.interpolation = interpolation
        self.max_size = max_size
        self.antialias = antialias
        self._interp = _interp(interpolation, "Resize")

    def output_size(self, w, h):
        """(w, h) after the resize: torchvision 0.14's
        _compute_resized_output_size."""
        if len(self.size) == 2:
            return self.size[1], self.size[0]
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = self.size[0], int(self.size[0] * long / short)
        if self.max_size is not None and new_long > self.max_size:
            new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
        return (new_short, new_long) if w <= h else (new_long, new_short)

    def _apply(self, g, ops):
        w, h = self.output_size(g.w, g.h)
        if w <= 0 or h <= 0:
            raise TransformError(f"Resize: {g.w}x{g.h} resized to {w}x{h}")
        if (w, h) != (g.w, g.h):  # torchvision returns the image itself then
            ops.append(_resize_op(w, h, self._interp))
            g.w, g.h = w, h


def _resize_op(w, h, interp):
    return {"resize": {"w": w, "h": h, "mode": "stretch", "interp": interp, "parity": "pil"}}


class CenterCrop(_Transform):
    """torchvision.transforms.CenterCrop: the centred (h, w) box, top and
    left rounded as Python's round() does; an image smaller than the box is
    padded with zeros first, as torchvision does."""

    def __init__(self, size):
        self.size = _pair(size, "CenterCrop")
        if min(self.size) <= 0:
            raise TransformError(f"CenterCrop: size {self.size} must be positive")

    def _apply(self, g, ops):
        th, tw = self.size
        if tw > g.w or th > g.h:
            pad = [(tw - g.w) // 2 if tw > g.w else 0, (th - g.h) // 2 if th > g.h else 0,
                   (tw - g.w + 1) // 2 if tw > g.w else 0, (th - g.h + 1) // 2 if th > g.h else 0]
            _pad_op(g, ops, pad, 0, "constant")
            if (tw, th) == (g.w, g.h):
                return
        top = int(round((g.h - th) / 2.0))
        left = int(round((g.w - tw) / 2.0))
        _crop_op(g, ops, top, left, th, tw)


def _crop_op(g, ops, top, left, h, w):
    if (top, left, h, w) == (0, 0, g.h, g.w):
        return
    ops.append({"crop": [left, top, left + w - 1, top + h - 1]})
    g.w, g.h = w, h


class RandomResizedCrop(_Transform):
    """torchvision.transforms.RandomResizedCrop: the box drawn by
    torchvision's get_params (torch's global generator, the same draws in
    the same order), cropped and resized to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=None):
        self.size = _pair(size, "RandomResizedCrop")
        if min(self.size) <= 0:
            raise TransformError(f"RandomResizedCrop: size {self.size} must be positive")
        if not isinstance(scale, (list, tuple)) or len(scale) != 2 or \
                not isinstance(ratio, (list, tuple)) or len(ratio) != 2:
            raise TransformError("RandomResizedCrop: scale and ratio must be pairs")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise TransformError("RandomResizedCrop: scale and ratio must be (min, max)")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation
        self.antialias = antialias
        self._interp = _interp(interpolation, "RandomResizedCrop")
        self._log_ratio = torch.log(torch.tensor(ratio))

    @staticmethod
    def get_params_wh(width, height, scale, ratio, log_ratio=None):
        """(top, left, h, w): torchvision 0.14's get_params on a
        width x height image."""
        area = height * width
        if log_ratio is None:
            log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = torch.randint(0, height - h + 1, size=(1,)).item()
                j = torch.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply(self, g, ops):
        top, left, h, w = self.get_params_wh(g.w, g.h, self.scale, self.ratio,
                                             self._log_ratio)
        _crop_op(g, ops, top, left, h, w)
        oh, ow = self.size
        if (ow, oh) != (g.w, g.h):
            ops.append(_resize_op(ow, oh, self._interp))
            g.w, g.h = ow, oh


class RandomHorizontalFlip(_Transform):
    """torchvision.transforms.RandomHorizontalFlip: flips when
    ``torch.rand(1) < p``."""
    _axis = "horizontal"

    def __init__(self, p=0.5):
        self.p = p

    def _apply(self, g, ops):
        if torch.rand(1) < self.p:
            ops.append({"flip": self._axis})


class RandomVerticalFlip(RandomHorizontalFlip):
    """torchvision.transforms.RandomVerticalFlip."""
    _axis = "vertical"


_PAD_MODES = {"constant": "constant", "edge": "replicate", "reflect": "reflect101",
              "symmetric": "reflect"}


class Pad(_Transform):
    """torchvision.transforms.Pad: ``padding`` an int (all sides), (left/
    right, top/bottom) or (left, top, right, bottom); ``fill`` an int or an
    RGB tuple (constant mode); ``padding_mode`` constant, edge, reflect
    (without repeating the edge) or symmetric (repeating it)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        if isinstance(padding, numbers.Number):
            pad = [int(padding)] * 4
        elif isinstance(padding, (list, tuple)) and len(padding) in (1, 2, 4):
            p = [int(x) for x in padding]
            pad = p * 4 if len(p) == 1 else (p * 2 if len(p) == 2 else p)
        else:
            raise TransformError(f"Pad: padding must be an int or a sequence of 1, 2 or 4 "
                                 f"ints, not {padding!r}")
        if any(x < 0 for x in pad):
            raise TransformError(f"Pad: negative padding {padding!r} (a crop) is not "
                                 f"supported")
        if padding_mode not in _PAD_MODES:
            raise TransformError(f"Pad: padding_mode {padding_mode!r} is not one of "
                                 f"constant, edge, reflect, symmetric")
        if not isinstance(fill, (numbers.Number, list, tuple)):
            raise TransformError(f"Pad: fill {fill!r} must be a number or a tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode
        self._ltrb = pad

    def _apply(self, g, ops):
        _pad_op(g, ops, self._ltrb, self.fill, self.padding_mode)


def _pad_op(g, ops, ltrb, fill, mode):
    left, top, right, bottom = ltrb
    if not any(ltrb):
        return
    channels = 1 if g.grey else 3
    if isinstance(fill, (list, tuple)):
        if len(fill) != channels:
            raise TransformError(f"Pad: the number of elements in 'fill' does not match "
                                 f"the number of channels of the image ({len(fill)} != "
                                 f"{channels})")
        value = [int(x) for x in fill]
    else:
        value = [int(fill)] * channels
    if any(not 0 <= v <= 255 for v in value):
        raise TransformError(f"Pad: fill {fill!r} is outside 0..255")
    if mode in ("reflect", "symmetric") and (max(left, right) >= g.w + (mode == "symmetric")
                                             or max(top, bottom) >= g.h + (mode == "symmetric")):
        # numpy's pad repeats the reflection beyond one image width; one
        # reflection is what dvppd's border (and OpenCV's) does.
        raise TransformError(f"Pad: {mode} padding of {ltrb} is wider than the "
                             f"{g.w}x{g.h} image it reflects")
    border = {"top": top, "bottom": bottom, "left": left, "right": right,
              "type": _PAD_MODES[mode]}
    if mode == "constant":
        border["value"] = value if len(value) == 3 else value * 3
    ops.append({"border": border})
    g.w += left + right
    g.h += top + bottom


class Grayscale(_Transform):
    """torchvision.transforms.Grayscale: PIL's ``convert('L')`` (ITU-R 601-2
    luma, Pillow's rounding), in 1 or 3 identical channels."""

    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3):
            raise TransformError("Grayscale: num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def _apply(self, g, ops):
        ops.append({"convert": {"format": "gray", "parity": "pil"}})
        if self.num_output_channels == 3:
            ops.append({"convert": "rgb"})
            g.grey = False
        else:
            g.grey = True


class ToTensor(_Transform):
    """torchvision.transforms.ToTensor: C x H x W float32 in [0, 1]."""
    stage = "tensor"


class PILToTensor(_Transform):
    """torchvision.transforms.PILToTensor: C x H x W uint8, the pixels."""
    stage = "tensor"


class ConvertImageDtype(_Transform):
    """torchvision.transforms.ConvertImageDtype, from uint8 (PILToTensor) to
    torch.float32 or torch.float16 (x / 255), or to the dtype the tensor
    already has."""
    stage = "tensor"

    def __init__(self, dtype):
        if dtype not in _DTYPES:
            raise TransformError(f"ConvertImageDtype: dtype {dtype} is not one of "
                                 f"{', '.join(str(d) for d in _DTYPES)}")
        self.dtype = dtype


class Normalize(_Transform):
    """torchvision.transforms.Normalize: ``(x - mean) / std`` per channel on
    a float tensor (after ToTensor: x in [0, 1]). ``inplace`` is accepted:
    the daemon writes a new tensor either way."""
    stage = "tensor"

    def __init__(self, mean, std, inplace=False):
        self.mean = [float(m) for m in (mean if isinstance(mean, (list, tuple)) else [mean])]
        self.std = [float(s) for s in (std if isinstance(std, (list, tuple)) else [std])]
        if any(s == 0 for s in self.std):
            raise TransformError(f"Normalize: std evaluated to zero after conversion to "
                                 f"float32, leading to division by zero ({self.std})")
        self.inplace = inplace


# --------------------------------------------------------------------------
# Compose


_TORCHVISION_NAMES = {
    "Resize": lambda t: Resize(t.size, t.interpolation, t.max_size, t.antialias),
    "CenterCrop": lambda t: CenterCrop(t.size),
    "RandomResizedCrop": lambda t: RandomResizedCrop(t.size, t.scale, t.ratio,
                                                     t.interpolation,
                                                     getattr(t, "antialias", None)),
    "RandomHorizontalFlip": lambda t: RandomHorizontalFlip(t.p),
    "RandomVerticalFlip": lambda t: RandomVerticalFlip(t.p),
    "Pad": lambda t: Pad(t.padding, t.fill, t.padding_mode),
    "Grayscale": lambda t: Grayscale(t.num_output_channels),
    "ToTensor": lambda t: ToTensor(),
    "PILToTensor": lambda t: PILToTensor(),
    "ConvertImageDtype": lambda t: ConvertImageDtype(t.dtype),
    "Normalize": lambda t: Normalize(list(map(float, t.mean)), list(map(float, t.std)),
                                     t.inplace),
}


def _ours(t, where):
    """@t as one of this module's transforms (a torchvision one is
    translated by its class name and attributes)."""
    if isinstance(t, _Transform):
        return [t]
    cls = type(t)
    name = cls.__name__
    if cls.__module__.startswith("torchvision.transforms"):
        if name == "Compose":
            return [x for sub in t.transforms for x in _ours(sub, where)]
        make = _TORCHVISION_NAMES.get(name)
        if make is not None:
            return [make(t)]
    if isinstance(t, Compose):
        return list(t.transforms)
    raise TransformError(f"{where}: {name} cannot be expressed as a dvppd pipeline "
                         f"(supported: {', '.join(sorted(_TORCHVISION_NAMES))})")


class Compose:
    """torchvision.transforms.Compose, compiled once: ``plan(w, h)`` gives
    one sample's dvppd spec; calling it on an image runs it.

    The list must be image transforms (Resize, crops, flips, Pad,
    Grayscale) then ToTensor or PILToTensor, then ConvertImageDtype or
    Normalize; anything else is refused here (TransformError naming the
    transform and its index). Without ToTensor/PILToTensor torchvision
    would return a PIL image: a Compose here always ends in a tensor, so
    ToTensor is then added at the end, as datasets feeding a model need."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)):
            transforms = [transforms]
        steps = []
        for i, t in enumerate(transforms):
            steps.extend(_ours(t, f"Compose[{i}]"))
        self.transforms = steps
        self._image, tail = [], []
        for i, t in enumerate(steps):
            if t.stage == "image":
                if tail:
                    raise TransformError(
                        f"Compose[{i}]: {type(t).__name__} after "
                        f"{type(tail[0]).__name__}: torchvision would run it on the tensor "
                        f"(other maths, no antialias); put it before the "
                        f"{type(tail[0]).__name__}")
                self._image.append(t)
            else:
                if not tail and not isinstance(t, (ToTensor, PILToTensor)):
                    raise TransformError(f"Compose[{i}]: {type(t).__name__} needs a tensor: "
                                         f"put ToTensor (or PILToTensor) before it")
                if tail and isinstance(t, (ToTensor, PILToTensor)):
                    raise TransformError(f"Compose[{i}]: {type(t).__name__} of a tensor "
                                         f"(there is one already)")
                tail.append(t)
        self._tail = tail or [ToTensor()]
        self._norm = self._compile_tail()

    def _compile_tail(self):
        """The tensor step: dtype and normalisation as dvppd's
        ``normalize`` (checked here, once)."""
        dtype, norm = None, None
        for i, t in enumerate(self._tail):
            if isinstance(t, (ToTensor, PILToTensor)):
                dtype = torch.float32 if isinstance(t, ToTensor) else torch.uint8
            elif isinstance(t, ConvertImageDtype):
                if t.dtype != dtype and (dtype != torch.uint8 or t.dtype == torch.uint8):
                    raise TransformError(f"ConvertImageDtype: {dtype} to {t.dtype} is not "
                                         f"supported (only from uint8 to a float type)")
                dtype = t.dtype
            elif isinstance(t, Normalize):
                if dtype == torch.uint8:
                    raise TransformError("Normalize: the tensor is uint8 (PILToTensor): "
                                         "torchvision needs a float tensor; add "
                                         "ConvertImageDtype(torch.float) first")
                if norm is not None:
                    raise TransformError("Normalize: a second Normalize is not supported")
                norm = t
        self._dtype = dtype
        self._norm_t = norm
        spec = {"dtype": _DTYPES[dtype], "layout": "nchw"}
        if dtype == torch.uint8:
            spec["scale"] = 1
        return spec

    def _normalize(self, channels):
        spec = dict(self._norm)
        if channels == 1:
            spec["channels"] = 1
        t = self._norm_t
        if t is not None:
            for what, v in (("mean", t.mean), ("std", t.std)):
                if len(v) not in (1, channels):
                    raise TransformError(f"Normalize: {len(v)} {what} values for a "
                                         f"{channels}-channel tensor")
            spec["mean"] = t.mean if len(t.mean) == channels else t.mean * channels
            spec["std"] = t.std if len(t.std) == channels else t.std * channels
        return spec

    @property
    def dtype(self):
        """The torch dtype of the tensors."""
        return self._dtype

    def plan(self, width, height, kind=None, draft=None):
        """One sample of a width x height image: the Plan (spec, shape,
        dtype). Random transforms draw their parameters now, from torch's
        global generator. @kind "jpeg": a crop before any other op becomes
        the decode's region (libjpeg decodes only those blocks; the pixels
        are a full decode's, bit for bit). @draft (w, h), JPEG only: what
        PIL's ``Image.draft("RGB", draft)`` does first, a DCT-scaled decode
        (1/2, 1/4 or 1/8, the largest at most min(width // w, height // h)),
        and the transforms then see that smaller image."""
        decode = {"format": "rgb", "orient": False, "shrink_on_load": False}
        width, height = int(width), int(height)
        if draft is not None and kind == "jpeg":
            s = draft_scale(width, height, draft)
            if s > 1:
                decode["scale_denom"] = s
                width, height = (width + s - 1) // s, (height + s - 1) // s
        g = _Geom(width, height)
        ops = []
        for t in self._image:
            t._apply(g, ops)
        if kind == "jpeg" and ops and "crop" in ops[0]:
            decode["roi"] = ops.pop(0)["crop"]
        if len(ops) > _MAX_OPS:
            raise TransformError(f"Compose: {len(ops)} pipeline ops for this image, dvppd "
                                 f"runs at most {_MAX_OPS}")
        channels = 1 if g.grey else 3
        spec = {"decode": decode, "ops": ops, "normalize": self._normalize(channels)}
        return Plan(spec, (channels, g.h, g.w), self._dtype)

    def __call__(self, image, client=None, draft=None):
        """Run on one image (bytes of a JPEG or PNG, a path, or a PIL image):
        the C x H x W tensor, a view of a ring slot holding its lease (see
        dvpp.torch.as_tensor). @client: a dvpp.Client (default: the
        module's, dvpp.torch.default_client()); @draft: see plan()."""
        from . import _runner
        return _runner.run_one(self, image, client, draft)

    def __repr__(self):
        body = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


_MAX_OPS = 8  # device/dvpp_pipeline.h DVPP_PIPE_MAX_OPS


def draft_scale(width, height, size):
    """The DCT scale denominator Pillow 9.4's JpegImageFile.draft picks for
    a width x height JPEG and the requested @size (w, h)."""
    w, h = int(size[0]), int(size[1])
    if w <= 0 or h <= 0:
        raise TransformError(f"draft: size {tuple(size)} must be positive")
    scale = min(width // w, height // h)
    for s in (8, 4, 2, 1):
        if scale >= s:
            return s
    return 1
