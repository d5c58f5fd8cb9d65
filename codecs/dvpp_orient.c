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

/* Address of displayed pixel (0, dy) in @src and the byte step from one
 * displayed column to the next: every orientation walks the stored plane
 * along a straight line per displayed row. */
static void row_walk(unsigned o, const uint8_t *src, size_t ss, uint32_t w,
                     uint32_t h, unsigned elem, uint32_t dy,
                     const uint8_t **start, ptrdiff_t *step)
{
    ptrdiff_t e = (ptrdiff_t)elem, s = (ptrdiff_t)ss;

    switch (o) {
    case 2: *start = src + dy * ss + (size_t)(w - 1) * elem; *step = -e; break;
    case 3: *start = src + (h - 1 - dy) * ss + (size_t)(w - 1) * elem; *step = -e; break;
    case 4: *start = src + (h - 1 - dy) * ss; *step = e; break;
    case 5: *start = src + (size_t)dy * elem; *step = s; break;
    case 6: *start = src + (h - 1) * ss + (size_t)dy * elem; *step = -s; break;
    case 7: *start = src + (h - 1) * ss + (size_t)(w - 1 - dy) * elem; *step = -s; break;
    case 8: *start = src + (size_t)(w - 1 - dy) * elem; *step = s; break;
    default: *start = src + dy * ss; *step = e; break;
    }
}

/* Copy displayed columns [x0, x1) of one displayed row. Fixed element
 * sizes let the compiler turn each memcpy into one move. */
static void walk_copy(uint8_t *dst, const uint8_t *p, ptrdiff_t step,
                      uint32_t x0, uint32_t x1, unsigned elem)
{
    p += (ptrdiff_t)x0 * step;
    dst += (size_t)x0 * elem;
    switch (elem) {
    case 1:
        for (uint32_t x = x0; x < x1; x++, p += step)
            *dst++ = *p;
        break;
    case 2:
        for (uint32_t x = x0; x < x1; x++, p += step, dst += 2)
            memcpy(dst, p, 2);
        break;
    case 3:
        for (uint32_t x = x0; x < x1; x++, p += step, dst += 3)
            memcpy(dst, p, 3);
        break;
    case 4:
        for (uint32_t x = x0; x < x1; x++, p += step, dst += 4)
            memcpy(dst, p, 4);
        break;
    default:
        for (uint32_t x = x0; x < x1; x++, p += step, dst += elem)
            memcpy(dst, p, elem);
        break;
    }
}

void dvpp_orient_plane(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds,
                       uint32_t w, uint32_t h, unsigned elem, unsigned o)
{
    uint32_t dw = o >= 5 && o <= 8 ? h : w, dh = o >= 5 && o <= 8 ? w : h;
    /* Tiles keep a transpose's column walks inside a few cache lines. */
    const uint32_t tile_h = 16, tile_w = 256;

    if (o <= 1 || o > 8) {
        for (uint32_t y = 0; y < h; y++)
            memcpy(dst + y * ds, src + y * ss, (size_t)w * elem);
        return;
    }
    for (uint32_t ty = 0; ty < dh; ty += tile_h) {
        uint32_t ty1 = ty + tile_h < dh ? ty + tile_h : dh;
        for (uint32_t tx = 0; tx < dw; tx += tile_w) {
            uint32_t tx1 = tx + tile_w < dw ? tx + tile_w : dw;
            for (uint32_t dy = ty; dy < ty1; dy++) {
                const uint8_t *p;
                ptrdiff_t step;
                row_walk(o, src, ss, w, h, elem, dy, &p, &step);
                walk_copy(dst + dy * ds, p, step, tx, tx1, elem);
            }
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
