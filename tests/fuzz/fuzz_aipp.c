/* libFuzzer target: AIPP configuration.
 *
 * Text (any input not starting with byte 0x01): an ATC aipp_op config
 * through dvpp_aipp_parse. Every op it accepts is printed with
 * dvpp_aipp_format_op (what `dvppctl aipp-check` shows), which must parse
 * back to the same op; its output size is computed and, when static and
 * small, it is run by dvpp_aipp_run on a synthetic image of its input
 * format, sized as the pipeline sizes it (or deliberately not, to reach
 * the size checks).
 *
 * Binary (0x01, then the blob): a dynamic AIPP parameter blob through
 * dvpp_aipp_dynamic_parse; each image's op (dvpp_aipp_dynamic_op) is run
 * the same way, and the parsed blob must serialise again
 * (dvpp_aipp_dynamic_build) into a blob that parses.
 *
 * Any status is fine; a crash, a leak, a sanitizer report, or an accepted
 * config that does not print back to itself or rebuild is not. Images are capped at
 * 256x256 and tensors at 4 MiB so each run is fast. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_aipp.h"
#include "dvpp_aipp_cfg.h"

#define MAX_SIDE 256u
#define MAX_TENSOR (4u << 20)

/* The pixel format the pipeline feeds an input_format with. */
static dvpp_pixfmt pixfmt_of(const dvpp_aipp_op *op, unsigned alt)
{
    switch (op->input_format) {
    case DVPP_AIPP_YUV420SP_U8: return alt ? DVPP_PIXEL_NV21 : DVPP_PIXEL_NV12;
    case DVPP_AIPP_YUV422SP_U8: return DVPP_PIXEL_YUV422SP;
    case DVPP_AIPP_YUYV_U8: return DVPP_PIXEL_YUYV;
    case DVPP_AIPP_YUV400_U8: return DVPP_PIXEL_YUV400;
    case DVPP_AIPP_RGB888_U8: return alt ? DVPP_PIXEL_BGR : DVPP_PIXEL_RGB;
    case DVPP_AIPP_XRGB8888_U8:
    case DVPP_AIPP_ARGB8888_U8: return alt ? DVPP_PIXEL_RGBA : DVPP_PIXEL_ARGB;
    default: return alt ? DVPP_PIXEL_RGB : DVPP_PIXEL_UNKNOWN;
    }
}

static uint32_t hash(const uint8_t *d, size_t n)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 16777619u;
    return h;
}

/* Run @op0 on a synthetic image as dvpp_pipeline does (src size filled in
 * from the image when neither it nor a crop says); @h picks the variant. */
static void run_op(dvpp_aipp_ctx *c, const dvpp_aipp_op *op0, uint32_t h)
{
    static const dvpp_layout layouts[] = {DVPP_LAYOUT_NC1HWC0, DVPP_LAYOUT_NCHW,
                                          DVPP_LAYOUT_NHWC};
    static const dvpp_dtype dtypes[] = {DVPP_DTYPE_F16, DVPP_DTYPE_F32, DVPP_DTYPE_U8,
                                        DVPP_DTYPE_I8};
    dvpp_aipp_op op = *op0;
    dvpp_pixfmt f = pixfmt_of(&op, h & 1);
    dvpp_image img = {0};
    dvpp_tensor t;
    uint32_t w = op.src_image_size_w, hh = op.src_image_size_h, n = (h >> 9) & 1;

    if (op.mode != DVPP_AIPP_STATIC || f == DVPP_PIXEL_UNKNOWN)
        return;
    if (!w || !hh || (h & 2)) { /* the image decides, or a mismatching one */
        w = 2 + ((h >> 2) % 48) * 2;
        hh = 2 + ((h >> 8) % 40) * 2;
    }
    if (w > MAX_SIDE || hh > MAX_SIDE)
        return;
    if (!op.src_image_size_w && !op.crop)
        op.src_image_size_w = w, op.src_image_size_h = hh;
    if (dvpp_aipp_tensor(&op, 2, layouts[(h >> 12) % 3], dtypes[(h >> 14) % 4], &t, NULL) !=
            DVPP_OK ||
        t.bytes > MAX_TENSOR)
        return;
    if (dvpp_image_init(&img, f, w, hh, 1 + ((h >> 16) & 1) * 15, 1, NULL) != DVPP_OK ||
        dvpp_image_alloc(&img, NULL) != DVPP_OK)
        return;
    for (size_t i = 0; i < img.size; i++)
        img.data[i] = (uint8_t)(i * 131u + h);
    t.data = malloc(t.bytes ? t.bytes : 1);
    if (t.data)
        (void)dvpp_aipp_run(c, &op, &img, &t, n, NULL);
    free(t.data);
    dvpp_image_free(&img);
}

/* @op without what carries no meaning: its line, and the name's bytes
 * after its end (a NUL inside the quoted name ends it). */
static dvpp_aipp_op canonical(const dvpp_aipp_op *op)
{
    dvpp_aipp_op c = *op;
    size_t n = strnlen(c.related_input_name, sizeof(c.related_input_name));

    c.first_line = 0;
    memset(c.related_input_name + n, 0, sizeof(c.related_input_name) - n);
    return c;
}

static void text_mode(dvpp_aipp_ctx *c, const uint8_t *data, size_t size, uint32_t h)
{
    static dvpp_aipp_config cfg, again;
    static char buf[8192];
    dvpp_err err;

    if (dvpp_aipp_parse((const char *)data, size, &cfg, &err) != DVPP_OK) {
        /* Errors name a field and say which line. */
        if (err.status == DVPP_OK || !err.msg[0])
            abort();
        return;
    }
    if (cfg.nops == 0 || cfg.nops > DVPP_AIPP_MAX_OPS)
        abort();
    for (unsigned i = 0; i < cfg.nops; i++) {
        const dvpp_aipp_op *op = &cfg.ops[i];
        uint32_t w, oh;
        size_t need = dvpp_aipp_format_op(op, buf, sizeof(buf));
        dvpp_aipp_op x, y;
        if (need == 0 || need >= sizeof(buf) || strlen(buf) != need)
            abort(); /* every op prints, whole */
        /* What aipp-check prints is a config that parses to the same op. */
        if (dvpp_aipp_parse(buf, need, &again, &err) != DVPP_OK || again.nops != 1)
            abort();
        x = canonical(op), y = canonical(&again.ops[0]);
        if (memcmp(&x, &y, sizeof(x)) != 0)
            abort();
        dvpp_aipp_output_size(op, &w, &oh);
        (void)dvpp_aipp_channels(op);
        run_op(c, op, h + i);
    }
}

static void blob_mode(dvpp_aipp_ctx *c, const uint8_t *data, size_t size, uint32_t h)
{
    static dvpp_aipp_dyn d, again;
    static uint8_t blob[64 + 96 * DVPP_AIPP_MAX_OPS * 4];
    size_t need;

    if (dvpp_aipp_dynamic_parse(data, size, &d, NULL) != DVPP_OK)
        return;
    need = dvpp_aipp_dynamic_size(d.batch_num);
    if (need > sizeof(blob) || need > size)
        abort(); /* parse accepted more images than the blob holds */
    if (dvpp_aipp_dynamic_build(&d, blob, need, NULL) != DVPP_OK ||
        dvpp_aipp_dynamic_parse(blob, need, &again, NULL) != DVPP_OK ||
        again.batch_num != d.batch_num)
        abort(); /* what parses must serialise, and parse again */
    for (uint32_t i = 0; i <= d.batch_num; i++) {
        dvpp_aipp_op op;
        if (dvpp_aipp_dynamic_op(&d, i, &op, NULL) == DVPP_OK)
            run_op(c, &op, h + i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dvpp_aipp_ctx c;
    uint32_t h = hash(data, size);

    dvpp_aipp_ctx_init(&c);
    if (size >= 1 && data[0] == 0x01)
        blob_mode(&c, data + 1, size - 1, h);
    else
        text_mode(&c, data, size, h);
    dvpp_aipp_ctx_fini(&c);
    return 0;
}
