#include "dvpp_orient.h"

#include <string.h>

/* Where displayed pixel (dx, dy) comes from in the stored plane. The
 * displayed plane is (dw x dh); stored is (w x h). */
void dvpp_orient_source(unsigned o, uint32_t w, uint32_t h, uint32_t dx,
                      uint32_t dy, uint32_t *sx, uint32_t *sy)
{
    switch (o) {
    case 2: *sx = w - 1 - dx; *sy = dy; break;
    case 3: *sx = w - 1 - dx; *sy = h - 1 - dy; break;
    case 4: *sx = dx; *sy = h - 1 - dy; break;
    case 5: *sx = dy; *sy = dx; break;
    case 6: *sx = dy; *sy = h - 1 - dx; break;
    case 7: *sx = w - 1 - dy; *sy = h - 1 - dx; break;
    case 8: *sx = w - 1 - dy; *sy = dx; break;
    default: *sx = dx; *sy = dy; break;
    }
}

void dvpp_orient_plane(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds,
                       uint32_t w, uint32_t h, unsigned elem, unsigned o)
{
    uint32_t dw = o >= 5 ? h : w, dh = o >= 5 ? w : h;

    if (o <= 1 || o > 8) {
        for (uint32_t y = 0; y < h; y++)
            memcpy(dst + y * ds, src + y * ss, (size_t)w * elem);
        return;
    }
    for (uint32_t dy = 0; dy < dh; dy++) {
        uint8_t *out = dst + dy * ds;
        for (uint32_t dx = 0; dx < dw; dx++) {
            uint32_t sx, sy;
            dvpp_orient_source(o, w, h, dx, dy, &sx, &sy);
            memcpy(out + (size_t)dx * elem, src + sy * ss + (size_t)sx * elem,
                   elem);
        }
    }
}

void dvpp_orient_rect_to_stored(unsigned o, uint32_t w, uint32_t h, uint32_t *x,
                                uint32_t *y, uint32_t *rw, uint32_t *rh)
{
    uint32_t ax, ay, bx, by, x0, y0, x1, y1;

    if (o <= 1 || o > 8)
        return;
    /* Map two opposite corners and take their bounding box. */
    dvpp_orient_source(o, w, h, *x, *y, &ax, &ay);
    dvpp_orient_source(o, w, h, *x + *rw - 1, *y + *rh - 1, &bx, &by);
    x0 = ax < bx ? ax : bx, x1 = ax < bx ? bx : ax;
    y0 = ay < by ? ay : by, y1 = ay < by ? by : ay;
    *x = x0, *y = y0, *rw = x1 - x0 + 1, *rh = y1 - y0 + 1;
}
