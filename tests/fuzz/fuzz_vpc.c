/* libFuzzer target: VPC operations with parameters taken from the input:
 * formats, sizes, strides, crop and paste ROIs, parity, interpolation,
 * profile, border; pixels from the rest of the input. Any status is fine;
 * a crash, a leak or a sanitizer report is not. */
#include <stddef.h>
#include <stdint.h>
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

static int make(reader *r, dvpp_image *img, uint32_t w, uint32_t h)
{
    if (dvpp_image_init(img, k_fmts[take(r, NFMT)], w, h, 1 + take(r, 32),
                        1 + take(r, 4), NULL) != DVPP_OK ||
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
    o.interp = (dvpp_interp)take(&r, 6);
    o.ascend_mode = (int)take(&r, 6) - 1;
    op = take(&r, 3);
    if (make(&r, &src, 1 + take(&r, 96), 1 + take(&r, 96)) ||
        make(&r, &dst, 1 + take(&r, 96), 1 + take(&r, 96)))
        goto out;
    crop = roi(&r, &src);
    paste = roi(&r, &dst);
    if (op == 0) {
        (void)dvpp_vpc_crop_resize_paste(&c, &src, take(&r, 2) ? &crop : NULL, &dst,
                                         take(&r, 2) ? &paste : NULL, &o, NULL);
    } else if (op == 1) {
        dst.width = src.width, dst.height = src.height; /* may not fit: checked */
        (void)dvpp_vpc_convert(&c, &src, &dst, NULL);
    } else {
        memset(&b, 0, sizeof(b));
        b.top = take(&r, 40), b.bottom = take(&r, 40);
        b.left = take(&r, 40), b.right = take(&r, 40);
        b.type = (dvpp_border_type)take(&r, 5);
        b.value[0] = take(&r, 0), b.value[1] = (double)take(&r, 0) * 1.5;
        b.level = DVPP_SIMD_AVX512;
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
