"""dvpp.torch._probe: an encoded image's size from its header, without
decoding it.

The transforms need the stored width and height before the daemon sees the
image: Resize(int) rounds the other side from them and RandomResizedCrop
draws its box from them, in the client, as torchvision does on the PIL
image. They are the stored size: torchvision's loader (PIL's Image.open)
does not apply the EXIF orientation, and neither do the transforms.
"""

import struct

# SOFn markers carry the frame size; C4 (DHT), C8 (JPG), CC (DAC) do not.
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ProbeError(ValueError):
    """The bytes are not a JPEG or PNG whose size the header gives."""


def image_size(data):
    """(width, height, kind) of JPEG or PNG bytes: kind "jpeg", "png", or
    "png-grey16" for a 16-bit greyscale PNG (which PIL opens as mode I;16
    and whose convert('RGB') clamps at 255, unlike every other PNG, whose
    16-bit samples it narrows to their high byte as libpng does).
    ProbeError when the header is not one of them or is cut short."""
    mv = memoryview(data)
    if mv[:8] == _PNG_MAGIC:
        return _png_size(mv)
    if mv[:2] == b"\xff\xd8":
        return _jpeg_size(mv)
    raise ProbeError("not a JPEG or PNG (unknown magic)")


def _png_size(mv):
    if len(mv) < 24 or mv[12:16] != b"IHDR":
        raise ProbeError("PNG without an IHDR chunk first")
    w, h = struct.unpack_from(">II", mv, 16)
    if w == 0 or h == 0:
        raise ProbeError(f"PNG of {w}x{h}")
    if len(mv) >= 26 and mv[24] == 16 and mv[25] == 0:
        return w, h, "png-grey16"
    return w, h, "png"


def _jpeg_size(mv):
    i, n = 2, len(mv)
    while i + 4 <= n:
        if mv[i] != 0xFF:
            raise ProbeError(f"JPEG marker expected at byte {i}")
        marker = mv[i + 1]
        if marker == 0xFF:          # fill byte
            i += 1
            continue
        if marker in (0x01,) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker in (0xD9, 0xDA):
            break                   # EOI or scan data before any SOF
        seg = struct.unpack_from(">H", mv, i + 2)[0]
        if seg < 2:
            raise ProbeError(f"JPEG segment of length {seg} at byte {i}")
        if marker in _SOF:
            if i + 9 > n:
                break
            h, w = struct.unpack_from(">HH", mv, i + 5)
            if w == 0 or h == 0:
                raise ProbeError(f"JPEG frame of {w}x{h} (DNL heights are not supported)")
            return w, h, "jpeg"
        i += 2 + seg
    raise ProbeError("JPEG without a frame header (SOF) before its scan")
