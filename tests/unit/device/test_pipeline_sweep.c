/* The planner's promise, swept: for every VPC op (crop, the six resize
 * modes and the letterbox paste they make, border, convert) on every
 * pixel format, small sizes and offsets (odd and even, 1..67), image and
 * tensor outputs, under every profile: when dvpp_pipeline_plan_make
 * accepts a pipeline, dvpp_pipeline_run succeeds on it and writes every
 * byte of the output (two runs into buffers filled with two different
 * canaries give the same bytes); when it is refused, the planner (or the
 * validator) refuses it, with a status a front end maps to 4xx and a field
 * naming the op. A run that fails after a plan succeeded is what a daemon
 * answers only after admission, with buffers allocated: the defect this
 * test exists for (an odd letterbox paste into 4:2:0, a border of odd
 * margins on 4:2:2, ...).
 *
 * Inputs are raw images made here (a pattern in every plane) and small
 * JPEGs encoded with dvpp_jpeg_encode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_jpeg.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"

/* Every format dvppd lays out. */
static const dvpp_pixfmt k_fmts[] = {
    DVPP_PIXEL_YUV400,  DVPP_PIXEL_NV12,     DVPP_PIXEL_NV21,
    DVPP_PIXEL_YUV422SP, DVPP_PIXEL_YVU422SP, DVPP_PIXEL_YUV444SP,
    DVPP_PIXEL_YVU444SP, DVPP_PIXEL_YUYV,     DVPP_PIXEL_UYVY,
    DVPP_PIXEL_YVYU,    DVPP_PIXEL_VYUY,     DVPP_PIXEL_YUV_PACKED_444,
    DVPP_PIXEL_RGB,     DVPP_PIXEL_BGR,      DVPP_PIXEL_ARGB,
    DVPP_PIXEL_ABGR,    DVPP_PIXEL_RGBA,     DVPP_PIXEL_BGRA,
    DVPP_PIXEL_YVU_PLANAR_420, DVPP_PIXEL_YUV440SP, DVPP_PIXEL_YVU440SP,
    DVPP_PIXEL_I420,    DVPP_PIXEL_GRAY,
};
#define NFMTS (sizeof(k_fmts) / sizeof(k_fmts[0]))

static const dvpp_profile k_profiles[] = {DVPP_PROFILE_NATIVE, DVPP_PROFILE_ASCEND310,
                                          DVPP_PROFILE_ASCEND310P};

#define MAX_REPORTED 40

/* What a sweep saw. */
typedef struct sweep {
    dvpp_worker *w;
    dvpp_pipeline_out *out;
    unsigned runs;       /* pipelines planned and run */
    unsigned refused;    /* refused by the validator or the planner */
    unsigned bad;        /* broken promises */
    char report[MAX_REPORTED][320];
} sweep;

static sweep *sweep_new(void)
{
    sweep *s = calloc(1, sizeof(*s));

    assert_non_null(s);
    s->w = malloc(sizeof(*s->w));
    s->out = calloc(1, sizeof(*s->out));
    assert_non_null(s->w);
    assert_non_null(s->out);
    dvpp_worker_init(s->w, NULL);
    dvpp_buf_init(&s->out->encoded);
    return s;
}

/* Fails the test with the first broken promises when there were any. */
static void sweep_end(sweep *s, const char *name)
{
    unsigned n = s->bad < MAX_REPORTED ? s->bad : MAX_REPORTED;

    print_message("%s: %u planned and run, %u refused, %u broken\n", name, s->runs,
                  s->refused, s->bad);
    for (unsigned i = 0; i < n; i++)
        print_message("  %s\n", s->report[i]);
    dvpp_worker_fini(s->w);
    dvpp_buf_fini(&s->out->encoded);
    free(s->w);
    free(s->out);
    if (s->bad) {
        unsigned bad = s->bad;
        free(s);
        fail_msg("%s: %u pipelines broke the planner's promise", name, bad);
    }
    free(s);
}

__attribute__((format(printf, 2, 3)))
static void broken(sweep *s, const char *fmt, ...)
{
    va_list ap;

    if (s->bad < MAX_REPORTED) {
        va_start(ap, fmt);
        vsnprintf(s->report[s->bad], sizeof(s->report[0]), fmt, ap);
        va_end(ap);
    }
    if (getenv("SWEEP_ALL")) {
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
    }
    s->bad++;
}

/* A refusal a front end answers with 4xx and a field naming what. */
static bool client_refusal(dvpp_status st, const dvpp_err *e)
{
    bool client = st == DVPP_EINVAL || st == DVPP_ELIMIT || st == DVPP_EPROFILE ||
                  st == DVPP_EFORMAT || st == DVPP_EUNSUPPORTED || st == DVPP_ESTRIDE;
    return client && e->field[0];
}

/* Describe @p for a report. */
static void describe(const dvpp_pipeline *p, uint32_t w, uint32_t h, dvpp_pixfmt in,
                     char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "%s %s %ux%u", dvpp_profile_name(p->decode.profile),
                                  p->input == DVPP_PIPE_IN_RAW ? dvpp_pixfmt_name(in) : "jpeg",
                                  w, h);

    for (uint32_t i = 0; i < p->nops && len < n; i++) {
        const dvpp_pipe_op *op = &p->ops[i];
        switch (op->kind) {
        case DVPP_PIPE_OP_CROP:
            len += (size_t)snprintf(buf + len, n - len, " | crop %u,%u,%u,%u", op->u.crop.left,
                                    op->u.crop.top, op->u.crop.right, op->u.crop.bottom);
            break;
        case DVPP_PIPE_OP_RESIZE:
            len += (size_t)snprintf(buf + len, n - len, " | %s %ux%u",
                                    dvpp_resize_mode_name(op->u.resize.mode), op->u.resize.w,
                                    op->u.resize.h);
            break;
        case DVPP_PIPE_OP_CONVERT:
            len += (size_t)snprintf(buf + len, n - len, " | convert %s",
                                    dvpp_pixfmt_name(op->u.convert));
            break;
        default:
            len += (size_t)snprintf(buf + len, n - len, " | border %u,%u,%u,%u",
                                    op->u.border.top, op->u.border.bottom, op->u.border.left,
                                    op->u.border.right);
            break;
        }
    }
    if (len < n)
        snprintf(buf + len, n - len, " -> %s",
                 p->output == DVPP_PIPE_OUT_TENSOR
                     ? (p->post == DVPP_PIPE_POST_AIPP ? "aipp" : "tensor")
                     : p->out_format == DVPP_PIXEL_UNKNOWN ? "image"
                                                           : dvpp_pixfmt_name(p->out_format));
}

/* The caller's output for plan @pl, its bytes filled with @canary. */
static size_t out_bind(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                       dvpp_pipeline_out *out, uint8_t **buf, uint8_t canary)
{
    size_t n;

    memset(&out->tensor, 0, sizeof(out->tensor));
    memset(&out->image, 0, sizeof(out->image));
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        assert_int_equal(dvpp_tensor_init(&out->tensor, pl->dtype, pl->layout, 1, pl->c,
                                          pl->h, pl->w, NULL), DVPP_OK);
        n = out->tensor.bytes;
    } else if (p->encoding != DVPP_PIPE_ENC_NONE) {
        n = 0; /* the bytes go to out->encoded */
    } else {
        n = pl->out_bytes;
    }
    *buf = malloc(n ? n : 1);
    assert_non_null(*buf);
    memset(*buf, canary, n);
    if (p->output == DVPP_PIPE_OUT_TENSOR)
        out->tensor.data = *buf;
    else
        out->image.data = *buf, out->image.size = n;
    out->n = 0;
    return n;
}

/* The promise for @p on @in: refused by the validator or the planner
 * (4xx, a field), or run twice under two canaries to the same bytes. */
static void sweep_one(sweep *s, const dvpp_pipeline *p, const uint8_t *in, size_t len,
                      uint32_t w, uint32_t h, dvpp_pixfmt in_fmt)
{
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    char what[200];
    uint8_t *buf[2] = {NULL, NULL};
    size_t n = 0, enc_len = 0;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    st = dvpp_pipeline_validate(p, NULL, &e);
    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(p, in, len, NULL, &src, &e);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(p, &src, &plan, &e);
    if (st != DVPP_OK) {
        s->refused++;
        if (getenv("SWEEP_REFUSED")) {
            describe(p, w, h, in_fmt, what, sizeof(what));
            printf("REFUSED %s: %s %s: %s\n", what, dvpp_status_name(st), e.field, e.msg);
        }
        if (!client_refusal(st, &e)) {
            describe(p, w, h, in_fmt, what, sizeof(what));
            broken(s, "%s: refused with %s (%s: %s), not a 4xx naming a field", what,
                   dvpp_status_name(st), e.field, e.msg);
        }
        return;
    }
    s->runs++;
    for (int k = 0; k < 2; k++) {
        n = out_bind(p, &plan, s->out, &buf[k], k ? 0x54 : 0xAB);
        dvpp_err_clear(&e);
        st = dvpp_pipeline_run(s->w, p, in, len, s->out, &e);
        if (st != DVPP_OK) {
            describe(p, w, h, in_fmt, what, sizeof(what));
            broken(s, "%s: planned, then the run failed: %s %s: %s", what,
                   dvpp_status_name(st), e.field, e.msg);
            goto done;
        }
        if (p->encoding != DVPP_PIPE_ENC_NONE) { /* keep the encoded bytes */
            free(buf[k]);
            n = s->out->encoded.len;
            buf[k] = malloc(n ? n : 1);
            assert_non_null(buf[k]);
            memcpy(buf[k], s->out->encoded.data, n);
            if (k && n != enc_len) {
                describe(p, w, h, in_fmt, what, sizeof(what));
                broken(s, "%s: two runs encoded %zu and %zu bytes", what, enc_len, n);
                goto done;
            }
            enc_len = n;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (buf[0][i] != buf[1][i]) {
            describe(p, w, h, in_fmt, what, sizeof(what));
            broken(s, "%s: byte %zu of %zu unwritten", what, i, n);
            break;
        }
done:
    free(buf[0]);
    free(buf[1]);
}

/* --- inputs ------------------------------------------------------------------------ */

/* A raw @fmt image of @w x @h with a pattern in every plane (caller frees). */
static dvpp_image raw_image(dvpp_pixfmt fmt, uint32_t w, uint32_t h)
{
    dvpp_image img;
    dvpp_planes pl;

    assert_int_equal(dvpp_image_init(&img, fmt, w, h, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_planes(&img, &pl, NULL), DVPP_OK);
    for (int k = 0; k < pl.count; k++)
        for (uint32_t y = 0; y < pl.p[k].rows; y++) {
            uint8_t *row = dvpp_image_row(&img, &pl, k, y);
            for (uint32_t x = 0; x < pl.p[k].row_bytes; x++)
                row[x] = (uint8_t)(x * 13 + y * 29 + k * 71 + 16);
        }
    return img;
}

static void raw_pipeline(dvpp_pipeline *p, dvpp_profile prof, const dvpp_image *img)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_RAW;
    p->raw = (dvpp_pipe_raw){img->format, img->width, img->height, 0, 0};
    p->decode.profile = prof;
}

static void op_crop(dvpp_pipeline *p, uint32_t l, uint32_t t, uint32_t r, uint32_t b)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CROP};

    op.u.crop = (dvpp_roi){l, t, r, b};
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

static void op_resize(dvpp_pipeline *p, dvpp_resize_mode mode, uint32_t w, uint32_t h)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = mode;
    op.u.resize.w = w, op.u.resize.h = h;
    dvpp_resize_opts_init(&op.u.resize.opts);
    if (dvpp_profile_is_ascend(p->decode.profile))
        op.u.resize.opts.parity = DVPP_PARITY_ASCEND;
    op.u.resize.pad[0] = 30, op.u.resize.pad[1] = 160, op.u.resize.pad[2] = 240;
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

static void op_convert(dvpp_pipeline *p, dvpp_pixfmt f)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CONVERT};

    op.u.convert = f;
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

static void op_border(dvpp_pipeline *p, uint32_t t, uint32_t b, uint32_t l, uint32_t r,
                      dvpp_border_type type)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_BORDER;
    op.u.border = (dvpp_border){.top = t, .bottom = b, .left = l, .right = r, .type = type};
    op.u.border.value[0] = 10, op.u.border.value[1] = 200, op.u.border.value[2] = 90;
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

static void out_tensor(dvpp_pipeline *p)
{
    p->post = DVPP_PIPE_POST_NORM;
    p->norm.dtype = DVPP_DTYPE_F32;
    p->norm.layout = DVPP_LAYOUT_NCHW;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

/* The outputs every case is tried with: the last format kept, the tensor,
 * and one more format (rotating, so all pairs come up across cases). */
static void sweep_outputs(sweep *s, const dvpp_pipeline *base, const dvpp_image *img,
                          unsigned rot)
{
    dvpp_pipeline p = *base;

    sweep_one(s, &p, img->data, img->size, img->width, img->height, img->format);
    p.out_format = k_fmts[rot % NFMTS];
    sweep_one(s, &p, img->data, img->size, img->width, img->height, img->format);
    p = *base;
    out_tensor(&p);
    sweep_one(s, &p, img->data, img->size, img->width, img->height, img->format);
}

static const uint32_t k_sides[][2] = {{1, 1}, {2, 3}, {7, 6}, {10, 6}, {17, 33},
                                      {33, 18}, {64, 48}, {67, 67}};
#define NSIDES (sizeof(k_sides) / sizeof(k_sides[0]))

static const uint32_t k_targets[][2] = {{1, 1}, {2, 3}, {3, 2}, {5, 7}, {16, 16},
                                        {17, 9}, {31, 64}, {67, 1}, {64, 67}, {97, 20}};
#define NTARGETS (sizeof(k_targets) / sizeof(k_targets[0]))

/* --- the sweeps ------------------------------------------------------------------------ */

/* One op on a raw image of every format and size, each output kind. */
static void sweep_single_ops(sweep *s, dvpp_profile prof)
{
    static const uint32_t origins[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 3}, {3, 2}};
    static const uint32_t crops[][2] = {{1, 1}, {2, 2}, {3, 3}, {10, 6}, {0, 0}}; /* 0: to the edge */
    static const uint32_t margins[][4] = {{1, 0, 0, 0}, {0, 0, 1, 0}, {1, 1, 1, 1},
                                          {2, 3, 3, 2}, {0, 1, 0, 1}, {2, 2, 2, 2}};
    unsigned rot = 0;

    for (size_t f = 0; f < NFMTS; f++)
        for (size_t z = 0; z < NSIDES; z++) {
            dvpp_image img = raw_image(k_fmts[f], k_sides[z][0], k_sides[z][1]);
            dvpp_pipeline p;
            for (size_t o = 0; o < 6; o++)
                for (size_t c = 0; c < 5; c++) {
                    uint32_t l = origins[o][0], t = origins[o][1];
                    uint32_t cw = crops[c][0] ? crops[c][0] : img.width - l;
                    uint32_t ch = crops[c][1] ? crops[c][1] : img.height - t;
                    if (l >= img.width || t >= img.height)
                        continue;
                    raw_pipeline(&p, prof, &img);
                    op_crop(&p, l, t, l + cw - 1, t + ch - 1);
                    sweep_outputs(s, &p, &img, rot++);
                }
            for (unsigned m = 0; m <= DVPP_RESIZE_LONGER; m++)
                for (size_t g = 0; g < NTARGETS; g++) {
                    raw_pipeline(&p, prof, &img);
                    op_resize(&p, (dvpp_resize_mode)m, k_targets[g][0], k_targets[g][1]);
                    sweep_outputs(s, &p, &img, rot++);
                }
            for (size_t b = 0; b < 6; b++) {
                raw_pipeline(&p, prof, &img);
                op_border(&p, margins[b][0], margins[b][1], margins[b][2], margins[b][3],
                          (dvpp_border_type)(b % 4));
                sweep_outputs(s, &p, &img, rot++);
            }
            for (size_t g = 0; g < NFMTS; g++) {
                raw_pipeline(&p, prof, &img);
                op_convert(&p, k_fmts[g]);
                sweep_outputs(s, &p, &img, rot++);
            }
            dvpp_image_free(&img);
        }
}

/* The letterbox paste in every format: convert to it, letterbox (the
 * paste runs in that format), then every output; and a crop or a border
 * after the paste. */
static void sweep_paste_formats(sweep *s, dvpp_profile prof)
{
    static const uint32_t sides[][2] = {{64, 48}, {17, 33}, {33, 18}};
    static const uint32_t boxes[][2] = {{97, 20}, {20, 97}, {51, 47}, {64, 64},
                                        {35, 67}, {67, 35}, {16, 9}};

    for (size_t z = 0; z < 3; z++) {
        dvpp_image img = raw_image(DVPP_PIXEL_RGB, sides[z][0], sides[z][1]);
        for (size_t f = 0; f < NFMTS; f++)
            for (size_t b = 0; b < 7; b++) {
                dvpp_pipeline p;
                raw_pipeline(&p, prof, &img);
                op_convert(&p, k_fmts[f]);
                op_resize(&p, DVPP_RESIZE_LETTERBOX, boxes[b][0], boxes[b][1]);
                for (size_t g = 0; g < NFMTS; g++) {
                    p.out_format = k_fmts[g];
                    sweep_one(s, &p, img.data, img.size, img.width, img.height,
                              img.format);
                }
                p.out_format = DVPP_PIXEL_UNKNOWN;
                {
                    dvpp_pipeline q = p;
                    out_tensor(&q);
                    sweep_one(s, &q, img.data, img.size, img.width, img.height,
                              img.format);
                    q = p;
                    op_crop(&q, 1, 1, 9, 6);
                    sweep_one(s, &q, img.data, img.size, img.width, img.height,
                              img.format);
                    q = p;
                    op_border(&q, 1, 2, 3, 4, DVPP_BORDER_REPLICATE);
                    sweep_one(s, &q, img.data, img.size, img.width, img.height,
                              img.format);
                    q = p;
                    op_resize(&q, DVPP_RESIZE_LETTERBOX, 33, 31);
                    sweep_one(s, &q, img.data, img.size, img.width, img.height,
                              img.format);
                }
            }
        dvpp_image_free(&img);
    }
}

/* Small JPEGs (4:2:0) decoded to every output format (the decoder writes
 * what the output asks, so the ops run in it), through a letterbox, a crop
 * and a border. */
static void sweep_jpeg(sweep *s, dvpp_profile prof)
{
    static const uint32_t sides[][2] = {{7, 5}, {33, 17}, {64, 48}, {48, 64}};
    static const uint32_t boxes[][2] = {{97, 20}, {20, 97}, {51, 47}, {33, 33}};

    for (size_t z = 0; z < 4; z++) {
        dvpp_image img = raw_image(DVPP_PIXEL_RGB, sides[z][0], sides[z][1]);
        dvpp_jpeg_encode_opts o;
        dvpp_buf jpg;
        dvpp_jpeg_encode_opts_init(&o);
        dvpp_buf_init(&jpg);
        assert_int_equal(dvpp_jpeg_encode(&img, &o, &jpg, NULL), DVPP_OK);
        for (size_t g = 0; g < NFMTS; g++)
            for (size_t b = 0; b < 4 + 3; b++) {
                dvpp_pipeline p;
                dvpp_pipeline_init(&p);
                p.input = DVPP_PIPE_IN_JPEG;
                p.decode.profile = prof;
                if (b < 4)
                    op_resize(&p, DVPP_RESIZE_LETTERBOX, boxes[b][0], boxes[b][1]);
                else if (b == 4)
                    op_crop(&p, 1, 1, 5, 3);
                else if (b == 5)
                    op_border(&p, 1, 0, 1, 0, DVPP_BORDER_CONSTANT);
                else
                    op_resize(&p, DVPP_RESIZE_FIT, 9, 9);
                /* shrink-on-load (the default of /v1/image) every other time */
                p.decode.shrink_on_load = p.ops[0].kind == DVPP_PIPE_OP_RESIZE && g % 2;
                p.out_format = k_fmts[g];
                sweep_one(s, &p, jpg.data, jpg.len, img.width, img.height, img.format);
            }
        dvpp_buf_fini(&jpg);
        dvpp_image_free(&img);
    }
}

/* PNG inputs (grey, RGB, RGBA) into every output format, through a
 * letterbox, an odd crop and a border. */
static void sweep_png(sweep *s, dvpp_profile prof)
{
    static const dvpp_pixfmt kinds[] = {DVPP_PIXEL_GRAY, DVPP_PIXEL_RGB, DVPP_PIXEL_RGBA};
    static const uint32_t sides[][2] = {{7, 5}, {33, 34}, {64, 48}};

    for (size_t k = 0; k < 3; k++)
        for (size_t z = 0; z < 3; z++) {
            dvpp_image img = raw_image(kinds[k], sides[z][0], sides[z][1]);
            dvpp_png_encode_opts po = {.level = 1};
            dvpp_buf png;
            dvpp_buf_init(&png);
            assert_int_equal(dvpp_png_encode(&img, &po, &png, NULL), DVPP_OK);
            for (size_t g = 0; g < NFMTS; g++)
                for (int b = 0; b < 4; b++) {
                    dvpp_pipeline p;
                    dvpp_pipeline_init(&p);
                    p.input = DVPP_PIPE_IN_PNG;
                    p.decode.profile = prof;
                    if (b == 0)
                        op_resize(&p, DVPP_RESIZE_LETTERBOX, 97, 20);
                    else if (b == 1)
                        op_crop(&p, 1, 1, 5, 3);
                    else if (b == 2)
                        op_border(&p, 1, 0, 3, 0, DVPP_BORDER_REFLECT);
                    else
                        op_resize(&p, DVPP_RESIZE_FILL, 20, 21);
                    p.out_format = k_fmts[g];
                    sweep_one(s, &p, png.data, png.len, img.width, img.height, img.format);
                }
            dvpp_buf_fini(&png);
            dvpp_image_free(&img);
        }
}

/* JPEG- and PNG-encoded outputs of whatever the ops leave (the format
 * kept, or each one asked for): every format, odd sizes, letterbox. */
static void sweep_encoded(sweep *s, dvpp_profile prof)
{
    static const dvpp_pixfmt ins[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_NV12, DVPP_PIXEL_YUYV,
                                      DVPP_PIXEL_RGBA, DVPP_PIXEL_GRAY, DVPP_PIXEL_YUV444SP};
    static const uint32_t boxes[][2] = {{97, 20}, {64, 64}, {33, 35}};

    for (size_t f = 0; f < 6; f++) {
        dvpp_image img = raw_image(ins[f], 64, 48);
        for (size_t b = 0; b < 3; b++)
            for (size_t g = 0; g <= NFMTS; g++)
                for (int enc = DVPP_PIPE_ENC_JPEG; enc <= DVPP_PIPE_ENC_PNG; enc++) {
                    dvpp_pipeline p;
                    raw_pipeline(&p, prof, &img);
                    op_resize(&p, DVPP_RESIZE_LETTERBOX, boxes[b][0], boxes[b][1]);
                    p.encoding = (dvpp_pipe_encoding)enc;
                    p.out_format = g < NFMTS ? k_fmts[g] : DVPP_PIXEL_UNKNOWN;
                    if (enc == DVPP_PIPE_ENC_PNG && p.out_format != DVPP_PIXEL_UNKNOWN &&
                        dvpp_pipeline_validate(&p, NULL, NULL) != DVPP_OK)
                        continue; /* a format PNG cannot hold: the validator's */
                    sweep_one(s, &p, img.data, img.size, img.width, img.height,
                              img.format);
                }
        dvpp_image_free(&img);
    }
}

/* AIPP after the ops, for every input_format the pipeline feeds: the
 * image converted to it, crops at odd and even positions, a resize, a
 * config's source size that the ops do not make. */
static void sweep_aipp(sweep *s, dvpp_profile prof)
{
    static const dvpp_aipp_format fmts[] = {DVPP_AIPP_YUV420SP_U8, DVPP_AIPP_YUV422SP_U8,
                                            DVPP_AIPP_YUYV_U8, DVPP_AIPP_YUV400_U8,
                                            DVPP_AIPP_RGB888_U8, DVPP_AIPP_XRGB8888_U8};
    static const dvpp_pixfmt ins[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_NV12};
    static const uint32_t sides[][2] = {{33, 17}, {64, 48}};

    for (size_t i = 0; i < 2; i++)
        for (size_t z = 0; z < 2; z++) {
            dvpp_image img = raw_image(ins[i], sides[z][0], sides[z][1]);
            for (size_t f = 0; f < 6; f++)
                for (int v = 0; v < 6; v++) {
                    dvpp_pipeline p;
                    raw_pipeline(&p, prof, &img);
                    if (v == 5)
                        op_resize(&p, DVPP_RESIZE_LETTERBOX, 35, 33);
                    p.post = DVPP_PIPE_POST_AIPP;
                    p.output = DVPP_PIPE_OUT_TENSOR;
                    memset(&p.aipp, 0, sizeof(p.aipp));
                    p.aipp.mode = DVPP_AIPP_STATIC;
                    p.aipp.input_format = fmts[f];
                    for (int k = 0; k < 4; k++)
                        p.aipp.var_reci_chn[k] = 1.0f;
                    p.aipp_layout = DVPP_LAYOUT_NCHW;
                    p.aipp_dtype = DVPP_DTYPE_F32;
                    if (v == 1 || v == 2) { /* crops at (1, 1) and (2, 2) */
                        p.aipp.crop = true;
                        p.aipp.load_start_pos_w = p.aipp.load_start_pos_h = (uint32_t)v;
                        p.aipp.crop_size_w = 12, p.aipp.crop_size_h = 10;
                    }
                    if (v == 3) { /* a resize and padding */
                        p.aipp.resize = true;
                        p.aipp.resize_output_w = 40, p.aipp.resize_output_h = 9;
                        p.aipp.padding = true;
                        p.aipp.left_padding_size = 3, p.aipp.bottom_padding_size = 1;
                    }
                    if (v == 4) /* a source size the image does not have */
                        p.aipp.src_image_size_w = 224, p.aipp.src_image_size_h = 224;
                    sweep_one(s, &p, img.data, img.size, img.width, img.height,
                              img.format);
                }
            dvpp_image_free(&img);
        }
}

/* Two and three ops: a crop at an odd origin before and after a
 * letterbox, a fill (its centre crop at an odd column), borders around a
 * paste, a convert between, on 4:2:0, 4:2:2 and RGB. */
static void sweep_chains(sweep *s, dvpp_profile prof)
{
    static const dvpp_pixfmt ins[] = {DVPP_PIXEL_NV12, DVPP_PIXEL_I420, DVPP_PIXEL_YUYV,
                                      DVPP_PIXEL_YUV422SP, DVPP_PIXEL_RGB, DVPP_PIXEL_YUV440SP};
    static const uint32_t sides[][2] = {{64, 48}, {37, 29}};

    for (size_t f = 0; f < 6; f++)
        for (size_t z = 0; z < 2; z++) {
            dvpp_image img = raw_image(ins[f], sides[z][0], sides[z][1]);
            for (int c = 0; c < 8; c++)
                for (size_t g = 0; g < NFMTS; g += 3) {
                    dvpp_pipeline p;
                    raw_pipeline(&p, prof, &img);
                    switch (c) {
                    case 0: op_crop(&p, 3, 1, 24, 20); op_resize(&p, DVPP_RESIZE_LETTERBOX, 31, 45); break;
                    case 1: op_resize(&p, DVPP_RESIZE_LETTERBOX, 45, 31); op_crop(&p, 1, 3, 30, 20); break;
                    case 2: op_resize(&p, DVPP_RESIZE_FILL, 20, 21); break;
                    case 3: op_resize(&p, DVPP_RESIZE_FILL, 21, 20); op_border(&p, 2, 2, 2, 4, DVPP_BORDER_CONSTANT); break;
                    case 4: op_border(&p, 2, 0, 4, 2, DVPP_BORDER_REPLICATE); op_resize(&p, DVPP_RESIZE_LETTERBOX, 97, 20); break;
                    case 5: op_resize(&p, DVPP_RESIZE_LETTERBOX, 97, 20); op_convert(&p, DVPP_PIXEL_I420); op_convert(&p, DVPP_PIXEL_RGB); break;
                    case 6: op_convert(&p, DVPP_PIXEL_YUYV); op_resize(&p, DVPP_RESIZE_LETTERBOX, 20, 97); op_crop(&p, 1, 1, 12, 90); break;
                    default: op_crop(&p, 1, 1, 20, 20); op_resize(&p, DVPP_RESIZE_FILL, 9, 15); op_resize(&p, DVPP_RESIZE_LETTERBOX, 19, 15); break;
                    }
                    p.out_format = k_fmts[g];
                    sweep_one(s, &p, img.data, img.size, img.width, img.height,
                              img.format);
                    out_tensor(&p);
                    sweep_one(s, &p, img.data, img.size, img.width, img.height,
                              img.format);
                }
            dvpp_image_free(&img);
        }
}

/* Extreme valid values: one-pixel images and targets, a side of
 * max_side (16384) one pixel thick, a letterbox into it, a crop of the
 * last pixel, margins of 67. */
static void sweep_extremes(sweep *s, dvpp_profile prof)
{
    static const dvpp_pixfmt ins[] = {DVPP_PIXEL_NV12, DVPP_PIXEL_YUYV, DVPP_PIXEL_RGB};
    static const uint32_t targets[][2] = {{1, 1}, {16384, 1}, {1, 16384}, {16384, 2},
                                          {3, 16384}, {67, 1}};

    for (size_t f = 0; f < 3; f++)
        for (int z = 0; z < 2; z++) {
            dvpp_image img = raw_image(ins[f], z ? 67 : 1, z ? 67 : 1);
            dvpp_pipeline p;
            for (unsigned m = 0; m <= DVPP_RESIZE_LONGER; m++)
                for (size_t t = 0; t < 6; t++) {
                    raw_pipeline(&p, prof, &img);
                    op_resize(&p, (dvpp_resize_mode)m, targets[t][0], targets[t][1]);
                    sweep_outputs(s, &p, &img, (unsigned)(m * 6 + t));
                }
            raw_pipeline(&p, prof, &img);
            op_crop(&p, img.width - 1, img.height - 1, img.width - 1, img.height - 1);
            sweep_outputs(s, &p, &img, 1);
            raw_pipeline(&p, prof, &img);
            op_border(&p, 66, 66, 66, 66, DVPP_BORDER_REFLECT_101);
            sweep_outputs(s, &p, &img, 2);
            raw_pipeline(&p, prof, &img);
            op_border(&p, 67, 0, 67, 0, DVPP_BORDER_REFLECT);
            sweep_outputs(s, &p, &img, 3);
            dvpp_image_free(&img);
        }
}

static void test_sweep_single_ops_native(void **state)
{
    sweep *s = sweep_new();

    (void)state;
    sweep_single_ops(s, DVPP_PROFILE_NATIVE);
    sweep_end(s, "single ops, native");
}

static void test_sweep_single_ops_ascend(void **state)
{
    sweep *s = sweep_new();

    (void)state;
    sweep_single_ops(s, DVPP_PROFILE_ASCEND310);
    sweep_single_ops(s, DVPP_PROFILE_ASCEND310P);
    sweep_end(s, "single ops, ascend");
}

static void test_sweep_paste_formats(void **state)
{
    sweep *s = sweep_new();

    (void)state;
    for (size_t i = 0; i < 3; i++)
        sweep_paste_formats(s, k_profiles[i]);
    sweep_end(s, "letterbox paste in every format");
}

static void test_sweep_jpeg(void **state)
{
    sweep *s = sweep_new();

    (void)state;
    for (size_t i = 0; i < 3; i++)
        sweep_jpeg(s, k_profiles[i]);
    sweep_end(s, "jpeg into every format");
}

/* --- the cases the sweep found, by hand ---------------------------------------- */

/* Plan and run @p on @img into an image; the plan in @pl. */
static void run_image_out(dvpp_worker *w, const dvpp_pipeline *p, const dvpp_image *img,
                          dvpp_pipeline_plan *pl, uint8_t **buf)
{
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipe_source src;
    dvpp_err e;

    assert_non_null(out);
    dvpp_err_clear(&e);
    if (dvpp_pipeline_probe(p, img->data, img->size, NULL, &src, &e) != DVPP_OK ||
        dvpp_pipeline_plan_make(p, &src, pl, &e) != DVPP_OK)
        fail_msg("plan: %s: %s", e.field, e.msg);
    *buf = malloc(pl->out_bytes);
    assert_non_null(*buf);
    out->image.data = *buf, out->image.size = pl->out_bytes;
    if (dvpp_pipeline_run(w, p, img->data, img->size, out, &e) != DVPP_OK)
        fail_msg("run: %s: %s", e.field, e.msg);
    assert_memory_equal(&out->geom, &pl->geom, sizeof(pl->geom));
    free(out);
}

/* A letterbox whose picture is centred on an odd column of a 4:2:0 or
 * 4:2:2 output (64x48 into 97x20: x 35) planned, then failed EINVAL
 * ("paste origin (35, 0) must be even") after admission. It is placed on
 * the chroma grid (34) of the format it is pasted in (NV12 from a convert)
 * or delivered in (RGB converted to YUYV), the geometry says so, and the
 * bytes are the VPC's with that geometry; an RGB output keeps 35. */
static void test_letterbox_on_the_chroma_grid(void **state)
{
    static const struct {
        dvpp_pixfmt via, out; /* the paste's format (a convert first), the output */
        double pad_x;
    } cases[] = {{DVPP_PIXEL_NV12, DVPP_PIXEL_NV12, 34}, {DVPP_PIXEL_RGB, DVPP_PIXEL_YUYV, 34},
                 {DVPP_PIXEL_YUV422SP, DVPP_PIXEL_RGB, 34}, {DVPP_PIXEL_RGB, DVPP_PIXEL_BGR, 35},
                 {DVPP_PIXEL_YUV440SP, DVPP_PIXEL_YUV444SP, 35}};
    dvpp_image img = raw_image(DVPP_PIXEL_RGB, 64, 48);
    dvpp_worker *w = malloc(sizeof(*w));
    dvpp_vpc_ctx *c = malloc(sizeof(*c));

    (void)state;
    assert_non_null(w);
    assert_non_null(c);
    dvpp_worker_init(w, NULL);
    dvpp_vpc_ctx_init(c, DVPP_PROFILE_NATIVE);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_pipeline p;
        dvpp_pipeline_plan pl;
        dvpp_resize_geom g;
        dvpp_roi_grid grid;
        dvpp_image mid, lb, want;
        uint8_t *got;
        raw_pipeline(&p, DVPP_PROFILE_NATIVE, &img);
        op_convert(&p, cases[i].via);
        op_resize(&p, DVPP_RESIZE_LETTERBOX, 97, 20);
        p.out_format = cases[i].out;
        run_image_out(w, &p, &img, &pl, &got);
        assert_true(pl.geom.pad_x == cases[i].pad_x && pl.geom.pad_y == 0);
        assert_true(pl.resize[1].paste.left == (uint32_t)cases[i].pad_x);
        assert_true(pl.geom.scale_x == 27.0 / 64 && pl.geom.scale_y == 20.0 / 48);
        /* by hand: convert, letterbox at the grid's origin, convert */
        assert_int_equal(dvpp_resize_geometry(64, 48, DVPP_RESIZE_LETTERBOX, 97, 20, &g,
                                              NULL), DVPP_OK);
        assert_int_equal(g.paste.left, 35);
        dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, cases[i].via, &grid);
        {
            dvpp_roi_grid out_grid;
            dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, cases[i].out, &out_grid);
            dvpp_roi_grid_join(&grid, &out_grid);
        }
        dvpp_resize_geometry_snap(&g, NULL, &grid);
        assert_int_equal(g.paste.left, (uint32_t)cases[i].pad_x);
        assert_int_equal(dvpp_image_init(&mid, cases[i].via, 64, 48, 1, 1, NULL), DVPP_OK);
        assert_int_equal(dvpp_image_alloc(&mid, NULL), DVPP_OK);
        assert_int_equal(dvpp_image_init(&lb, cases[i].via, 97, 20, 1, 1, NULL), DVPP_OK);
        assert_int_equal(dvpp_image_alloc(&lb, NULL), DVPP_OK);
        assert_int_equal(dvpp_image_init(&want, cases[i].out, 97, 20, 1, 1, NULL), DVPP_OK);
        assert_int_equal(dvpp_image_alloc(&want, NULL), DVPP_OK);
        assert_int_equal(dvpp_vpc_convert(c, &img, &mid, NULL), DVPP_OK);
        assert_int_equal(dvpp_vpc_resize_mode(c, &mid, &g, &lb, p.ops[1].u.resize.pad,
                                              &p.ops[1].u.resize.opts, NULL), DVPP_OK);
        assert_int_equal(dvpp_vpc_convert(c, &lb, &want, NULL), DVPP_OK);
        assert_int_equal(pl.out_bytes, want.size);
        assert_memory_equal(got, want.data, want.size);
        free(got);
        dvpp_image_free(&mid), dvpp_image_free(&lb), dvpp_image_free(&want);
    }
    dvpp_vpc_ctx_fini(c);
    dvpp_worker_fini(w);
    free(c);
    free(w);
    dvpp_image_free(&img);
}

/* What really cannot run is refused by the planner, 4xx, naming the op and
 * the rule, before anything runs: margins of one pixel on NV12 (its 2x2
 * chroma cannot take them) from a raw NV12 input; from a JPEG decoded to
 * NV12 for the output, the message says how to choose another decode
 * format, and with decode.format rgb it runs. It planned, then failed
 * EINVAL ("margins") at run time. */
static void test_refused_by_the_planner(void **state)
{
    dvpp_image img = raw_image(DVPP_PIXEL_NV12, 64, 48), rgb = raw_image(DVPP_PIXEL_RGB, 33, 17);
    dvpp_jpeg_encode_opts jo;
    dvpp_pipe_source src;
    dvpp_pipeline_plan pl;
    dvpp_pipeline p;
    dvpp_buf jpg;
    dvpp_err e;

    (void)state;
    raw_pipeline(&p, DVPP_PROFILE_NATIVE, &img);
    op_border(&p, 1, 0, 0, 0, DVPP_BORDER_CONSTANT);
    assert_int_equal(dvpp_pipeline_probe(&p, img.data, img.size, NULL, &src, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &pl, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].border");
    assert_non_null(strstr(e.msg, "ops[0].border: nv12 has subsampled chroma: margins must "
                                  "be even"));
    assert_null(strstr(e.msg, "decode.format"));

    dvpp_jpeg_encode_opts_init(&jo);
    dvpp_buf_init(&jpg);
    assert_int_equal(dvpp_jpeg_encode(&rgb, &jo, &jpg, NULL), DVPP_OK);
    dvpp_pipeline_init(&p);
    op_border(&p, 1, 0, 0, 0, DVPP_BORDER_REPLICATE);
    p.out_format = DVPP_PIXEL_NV12;
    assert_int_equal(dvpp_pipeline_probe(&p, jpg.data, jpg.len, NULL, &src, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &pl, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].border");
    assert_non_null(strstr(e.msg, "set decode.format, e.g. rgb, to run this op"));
    p.decode.format = DVPP_PIXEL_RGB;
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &pl, &e), DVPP_OK);
    assert_true(pl.img_w == 33 && pl.img_h == 18 && pl.out_format == DVPP_PIXEL_NV12);
    dvpp_buf_fini(&jpg);
    dvpp_image_free(&img);
    dvpp_image_free(&rgb);
}

/* A JPEG into a packed YUV output was decoded to that format, which the
 * JPEG decoder cannot write: planned, then EFORMAT at run time. It decodes
 * to the semi-planar twin and converts at the end. A PNG of an RGBA
 * picture encoded as JPEG from an op that keeps RGBA: converted to RGB
 * (JPEG has no alpha) instead of EFORMAT at run time. */
static void test_decode_and_encode_formats(void **state)
{
    dvpp_image rgb = raw_image(DVPP_PIXEL_RGB, 33, 17), rgba = raw_image(DVPP_PIXEL_RGBA, 20, 9);
    dvpp_jpeg_encode_opts jo;
    dvpp_pipe_source src;
    dvpp_pipeline_plan pl;
    dvpp_pipeline p;
    dvpp_buf jpg;
    dvpp_err e;

    (void)state;
    dvpp_jpeg_encode_opts_init(&jo);
    dvpp_buf_init(&jpg);
    assert_int_equal(dvpp_jpeg_encode(&rgb, &jo, &jpg, NULL), DVPP_OK);
    dvpp_pipeline_init(&p);
    op_resize(&p, DVPP_RESIZE_LETTERBOX, 40, 40);
    p.out_format = DVPP_PIXEL_UYVY;
    assert_int_equal(dvpp_pipeline_probe(&p, jpg.data, jpg.len, NULL, &src, NULL), DVPP_OK);
    if (dvpp_pipeline_plan_make(&p, &src, &pl, &e) != DVPP_OK)
        fail_msg("%s: %s", e.field, e.msg);
    assert_int_equal(pl.decode_format, DVPP_PIXEL_YUV422SP);
    assert_int_equal(pl.out_format, DVPP_PIXEL_UYVY);
    /* 40x40 from 33x17: 40x21 at row 9 -> 9 (4:2:2: rows are not subsampled) */
    assert_true(pl.geom.pad_y == 9 && pl.geom.pad_x == 0);
    dvpp_buf_fini(&jpg);

    raw_pipeline(&p, DVPP_PROFILE_NATIVE, &rgba);
    op_resize(&p, DVPP_RESIZE_FIT, 10, 10);
    p.encoding = DVPP_PIPE_ENC_JPEG;
    assert_int_equal(dvpp_pipeline_probe(&p, rgba.data, rgba.size, NULL, &src, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &pl, &e), DVPP_OK);
    assert_int_equal(pl.out_format, DVPP_PIXEL_RGB);
    dvpp_image_free(&rgb);
    dvpp_image_free(&rgba);
}

/* The ascend profiles: DVPP's paste rule to the number (left % 16;
 * ascend310 YUV420SP even top and sizes), raw pixels of tight strides
 * copied into VPC strides as dvppctl copies them (they failed
 * 'widthStride(192) is not right' after admission), a crop op with the
 * chip's default mode (it failed 'use parity ascend'). */
static void test_ascend_rules(void **state)
{
    dvpp_image img = raw_image(DVPP_PIXEL_NV12, 100, 60);
    dvpp_worker *w = malloc(sizeof(*w));
    dvpp_pipeline_plan pl;
    dvpp_pipeline p;
    uint8_t *got;

    (void)state;
    assert_non_null(w);
    dvpp_worker_init(w, NULL);
    /* 100x60 into 160x50: 83x50 centred at 38 */
    raw_pipeline(&p, DVPP_PROFILE_ASCEND310P, &img);
    op_resize(&p, DVPP_RESIZE_LETTERBOX, 160, 50);
    run_image_out(w, &p, &img, &pl, &got);
    assert_true(pl.resize[0].paste.left == 32 && pl.resize[0].paste.right == 32 + 83 - 1);
    assert_true(pl.geom.pad_x == 32 && pl.geom.scale_x == 83.0 / 100);
    free(got);
    p.decode.profile = DVPP_PROFILE_ASCEND310;
    p.ops[0].u.resize.opts.ascend_mode = 1;
    run_image_out(w, &p, &img, &pl, &got);
    assert_true(pl.resize[0].paste.left == 32 && pl.resize[0].paste.right == 32 + 82 - 1);
    assert_true(pl.geom.pad_x == 32 && pl.geom.scale_x == 82.0 / 100);
    free(got);
    /* 100x60 into 64x76: 64x38 centred at row 19, on NV12's grid 18 */
    p.ops[0].u.resize.w = 64, p.ops[0].u.resize.h = 76;
    run_image_out(w, &p, &img, &pl, &got);
    assert_true(pl.resize[0].paste.top == 18 && pl.resize[0].paste.bottom == 18 + 38 - 1);
    free(got);
    /* a JPEG with shrink-on-load (the default of /v1/image): Ascend JPEGD
     * has no DCT scaling, so none is planned (it planned 4/8 and failed
     * EPROFILE 'scale must be 8/8' at run time) */
    {
        dvpp_image rgb = raw_image(DVPP_PIXEL_RGB, 64, 48);
        dvpp_pipeline_out *out = calloc(1, sizeof(*out));
        dvpp_jpeg_encode_opts jo;
        dvpp_pipe_source src;
        dvpp_buf jpg;
        dvpp_err e;
        assert_non_null(out);
        dvpp_jpeg_encode_opts_init(&jo);
        dvpp_buf_init(&jpg);
        assert_int_equal(dvpp_jpeg_encode(&rgb, &jo, &jpg, NULL), DVPP_OK);
        dvpp_pipeline_init(&p);
        p.decode.profile = DVPP_PROFILE_ASCEND310P;
        op_resize(&p, DVPP_RESIZE_STRETCH, 16, 12);
        p.decode.shrink_on_load = true;
        p.out_format = DVPP_PIXEL_NV12;
        assert_int_equal(dvpp_pipeline_probe(&p, jpg.data, jpg.len, NULL, &src, NULL), DVPP_OK);
        if (dvpp_pipeline_plan_make(&p, &src, &pl, &e) != DVPP_OK)
            fail_msg("%s: %s", e.field, e.msg);
        assert_int_equal(pl.scale_num, 8);
        got = malloc(pl.out_bytes);
        assert_non_null(got);
        out->image.data = got, out->image.size = pl.out_bytes;
        if (dvpp_pipeline_run(w, &p, jpg.data, jpg.len, out, &e) != DVPP_OK)
            fail_msg("%s: %s", e.field, e.msg);
        p.decode.profile = DVPP_PROFILE_NATIVE; /* native still shrinks */
        assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &pl, NULL), DVPP_OK);
        assert_int_equal(pl.scale_num, 2);
        free(got);
        free(out);
        dvpp_buf_fini(&jpg);
        dvpp_image_free(&rgb);
    }
    /* a crop (and the tight 100-byte stride of the raw input) */
    raw_pipeline(&p, DVPP_PROFILE_ASCEND310P, &img);
    op_crop(&p, 2, 2, 41, 31);
    run_image_out(w, &p, &img, &pl, &got);
    assert_true(pl.img_w == 40 && pl.img_h == 30);
    free(got);
    dvpp_worker_fini(w);
    free(w);
    dvpp_image_free(&img);
}

/* The other inputs and post steps, every profile. */
static void test_sweep_png_aipp_encoded(void **state)
{
    sweep *s = sweep_new();

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        sweep_png(s, k_profiles[i]);
        sweep_aipp(s, k_profiles[i]);
        sweep_encoded(s, k_profiles[i]);
    }
    sweep_end(s, "png, aipp, encoded");
}

static void test_sweep_chains_extremes(void **state)
{
    sweep *s = sweep_new();

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        sweep_chains(s, k_profiles[i]);
        sweep_extremes(s, k_profiles[i]);
    }
    sweep_end(s, "chains, extremes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_single_ops_native),
        cmocka_unit_test(test_sweep_single_ops_ascend),
        cmocka_unit_test(test_sweep_paste_formats),
        cmocka_unit_test(test_sweep_jpeg),
        cmocka_unit_test(test_sweep_png_aipp_encoded),
        cmocka_unit_test(test_sweep_chains_extremes),
        cmocka_unit_test(test_letterbox_on_the_chroma_grid),
        cmocka_unit_test(test_refused_by_the_planner),
        cmocka_unit_test(test_decode_and_encode_formats),
        cmocka_unit_test(test_ascend_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
