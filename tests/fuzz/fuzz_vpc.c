/* libFuzzer target: VPC operations with parameters taken from the input:
 * formats, sizes, strides, crop and paste ROIs, parity, interpolation,
 * profile, border, a resize mode with its letterbox pad (painted in any
 * output format, YUV and grey included: f0943ff); pixels from the rest of
 * the input. Any status is fine; a crash, a leak or a sanitizer report is
 * not, nor a resize mode that leaves a byte of its output's rows
 * unwritten (it runs twice, into two poisons).
 *
 * Input bytes in order: profile, parity, interp, ascend_mode, op (0 crop/
 * resize/paste, 1 convert, 2 border, 3 resize mode), then the source and
 * the destination (width - 1, height - 1, format, stride and height
 * alignment - 1), the crop and paste ROIs, then per op: 0 crop and paste
 * flags; 2 the border; 3 the mode, the pad R, G, B, the output's stride
 * alignment - 1; then the pixels (read, not consumed). Each byte is read
 * in a statement of its own, so gcc and clang builds read the same. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_vpc.h"

static const dvpp_pixfmt k_fmts[] = {
    DVPP_PIXEL_YUV400, DVPP_PIXEL_NV12,     DVPP_PIXEL_NV21,
    DVPP_PIXEL_I420,   DVPP_PIXEL_YVU_PLANAR_420, DVPP_PIXEL_YUV422SP,
    DVPP_PIXEL_YUV444SP, DVPP_PIXEL_YVU440SP, DVPP_PIXEL_YUYV,
    DVPP_PIXEL_UYVY,   DVPP_PIXEL_RGB,      DVPP_PIXEL_BGR,
    DVPP_PIXEL_RGBA,   DVPP_PIXEL_ARGB,     DVPP_PIXEL_GRAY,
    DVPP_PIXEL_YUV_PACKED_444,
};
#define NFMT (sizeof(k_fmts) / sizeof(k_fmts[0]))

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned take(reader *r, unsigned mod)
{
    unsigned v = 0;
    if (r->n) {
        v = r->p[0];
        r->p++, r->n--;
    }
    return mod ? v % mod : v;
}

/* An image read from @r: width, height, format, stride and height
 * alignment, in that order (one statement each: the order of a call's
 * arguments is unspecified, and gcc and clang read them differently). */
static int make(reader *r, dvpp_image *img)
{
    uint32_t w = 1 + take(r, 96);
    uint32_t h = 1 + take(r, 96);
    dvpp_pixfmt f = k_fmts[take(r, NFMT)];
    uint32_t align_w = 1 + take(r, 32);
    uint32_t align_h = 1 + take(r, 4);

    if (dvpp_image_init(img, f, w, h, align_w, align_h, NULL) != DVPP_OK ||
        dvpp_image_alloc(img, NULL) != DVPP_OK)
        return -1;
    for (size_t i = 0; i < img->size; i++)
        img->data[i] = (uint8_t)(i * 31 + (r->n ? r->p[i % r->n] : 0));
    return 0;
}

static dvpp_roi roi(reader *r, const dvpp_image *img)
{
    dvpp_roi q;
    q.left = take(r, img->width);
    q.top = take(r, img->height);
    q.right = q.left + take(r, img->width - q.left);
    q.bottom = q.top + take(r, img->height - q.top);
    return q;
}

/* Whether @img's pixel rows (not the stride padding) differ from @ref's. */
static bool rows_differ(const dvpp_image *img, const dvpp_image *ref)
{
    dvpp_planes pl;

    if (dvpp_image_planes(img, &pl, NULL) != DVPP_OK)
        return false;
    for (int k = 0; k < pl.count; k++)
        for (uint32_t y = 0; y < pl.p[k].rows; y++) {
            size_t off = pl.p[k].offset + (size_t)y * pl.p[k].stride;
            if (memcmp(img->data + off, ref->data + off, pl.p[k].row_bytes) != 0)
                return true;
        }
    return false;
}

/* dvpp_vpc_resize_mode of @src into @dst's format at the geometry's size,
 * twice (outputs poisoned 0x00, then 0xff): both runs agree or fail. */
static void resize_mode(dvpp_vpc_ctx *c, reader *r, const dvpp_image *src,
                        const dvpp_image *dst, const dvpp_resize_opts *o)
{
    dvpp_resize_mode mode = (dvpp_resize_mode)take(r, DVPP_RESIZE_LONGER + 1);
    uint8_t pad[3];
    unsigned align_w;
    dvpp_image out[2] = {{0}, {0}};
    dvpp_resize_geom g;
    dvpp_status st[2];

    for (int i = 0; i < 3; i++)
        pad[i] = (uint8_t)take(r, 0);
    align_w = 1 + take(r, 32);
    if (dvpp_resize_geometry(src->width, src->height, mode, dst->width, dst->height, &g,
                             NULL) != DVPP_OK ||
        (uint64_t)g.out_w * g.out_h > 256u * 256u)
        return;
    for (int i = 0; i < 2; i++) {
        if (dvpp_image_init(&out[i], dst->format, g.out_w, g.out_h, align_w, 1,
                            NULL) != DVPP_OK ||
            dvpp_image_alloc(&out[i], NULL) != DVPP_OK)
            goto out;
        memset(out[i].data, i ? 0xff : 0x00, out[i].size);
        st[i] = dvpp_vpc_resize_mode(c, src, &g, &out[i], pad, o, NULL);
    }
    if (st[0] != st[1] || (st[0] == DVPP_OK && rows_differ(&out[0], &out[1])))
        abort();
out:
    dvpp_image_free(&out[0]);
    dvpp_image_free(&out[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    dvpp_image src = {0}, dst = {0}, bdst = {0};
    dvpp_resize_opts o;
    dvpp_vpc_ctx c;
    dvpp_roi crop, paste;
    dvpp_border b;
    unsigned op;

    dvpp_vpc_ctx_init(&c, (dvpp_profile)take(&r, 3));
    dvpp_resize_opts_init(&o);
    o.parity = (dvpp_parity)take(&r, 4);
    o.interp = (dvpp_interp)take(&r, 7); /* through DVPP_INTERP_HAMMING */
    o.ascend_mode = (int)take(&r, 6) - 1;
    op = take(&r, 4);
    if (make(&r, &src) || make(&r, &dst))
        goto out;
    crop = roi(&r, &src);
    paste = roi(&r, &dst);
    if (op == 0) {
        bool use_crop = take(&r, 2), use_paste = take(&r, 2);
        (void)dvpp_vpc_crop_resize_paste(&c, &src, use_crop ? &crop : NULL, &dst,
                                         use_paste ? &paste : NULL, &o, NULL);
    } else if (op == 1) {
        dst.width = src.width, dst.height = src.height; /* may not fit: checked */
        (void)dvpp_vpc_convert(&c, &src, &dst, NULL);
    } else if (op == 3) {
        resize_mode(&c, &r, &src, &dst, &o);
    } else {
        memset(&b, 0, sizeof(b));
        b.top = take(&r, 40), b.bottom = take(&r, 40);
        b.left = take(&r, 40), b.right = take(&r, 40);
        b.type = (dvpp_border_type)take(&r, 5);
        b.value[0] = take(&r, 0), b.value[1] = (double)take(&r, 0) * 1.5;
        b.level = DVPP_SIMD_BEST;
        if (dvpp_image_init(&bdst, src.format, src.width + b.left + b.right,
                            src.height + b.top + b.bottom, 1, 1, NULL) == DVPP_OK &&
            dvpp_image_alloc(&bdst, NULL) == DVPP_OK)
            (void)dvpp_vpc_make_border(&c, &src, &bdst, &b, NULL);
    }
out:
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
    dvpp_image_free(&bdst);
    dvpp_vpc_ctx_fini(&c);
    return 0;
}
