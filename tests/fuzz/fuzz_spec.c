/* libFuzzer target: the request spec, both syntaxes (dvppd/dvppd_spec.h).
 *
 * Input: a flag byte, the spec text up to the first NUL byte, then a tail.
 *   bit  0    JSON spec (dvppd_spec_from_json), else a query string
 *             "k=v&k&..." (dvppd_spec_from_query; "spec" is skipped as the
 *             HTTP front end does)
 *   bits 1-2  endpoint kind: tensor, image, decode, tensor
 *   bit  3    run a spec that validates (dvpp_pipeline_run) on the input
 *   bits 4-5  that input: a 24x16 JPEG, the same as PNG, the tail (raw
 *             pixels or any bytes), a 7x5 PNG
 *   bit  6    the tail is an inline aipp_op config (a multipart part)
 *   bit  7    named server-side AIPP configs exist ("nv12", "rgb")
 * Every spec that parses is validated against the default limits, as the
 * daemon does. Runs use the daemon's checks with tighter limits (1 MP,
 * 4096 px a side, 4 MiB outputs) so each is fast, and so a border or a
 * shorter/longer resize of the small inputs can pass them (the planner
 * refuses that op, ELIMIT); outputs are written into exact-size buffers,
 * so ASan sees a write past the planned size, and a run that succeeds is
 * run again into other poison: any byte that differs was never written. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/dvpp_pipeline.h"
#include "dvppd_spec.h"
#include "fuzz_util.h"

#define MAX_KV 64
#define MAX_OUT (4u << 20)

static const char k_cfg_nv12[] =
    "aipp_op {\n aipp_mode : static\n input_format : YUV420SP_U8\n csc_switch : true\n"
    " src_image_size_w : 24\n src_image_size_h : 16\n mean_chn_0 : 104\n"
    " var_reci_chn_0 : 0.017\n}\n";
static const char k_cfg_rgb[] =
    "aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n crop : true\n"
    " load_start_pos_w : 2\n load_start_pos_h : 2\n crop_size_w : 16\n crop_size_h : 8\n"
    " padding : true\n left_padding_size : 4\n padding_value : 1.5\n}\n"
    "aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n rbuv_swap_switch : true\n}\n";

static dvpp_aipp_config g_nv12, g_rgb;
static dvpp_buf g_jpeg, g_png, g_tiny;
static dvpp_worker g_worker;
static bool g_ready;

static const dvpp_aipp_config *lookup(void *ctx, const char *name)
{
    (void)ctx;
    if (!strcmp(name, "nv12"))
        return &g_nv12;
    if (!strcmp(name, "rgb"))
        return &g_rgb;
    return NULL;
}

static void setup(void)
{
    dvpp_limits lim = dvpp_limits_default();

    if (dvpp_aipp_parse(k_cfg_nv12, sizeof(k_cfg_nv12) - 1, &g_nv12, NULL) != DVPP_OK ||
        dvpp_aipp_parse(k_cfg_rgb, sizeof(k_cfg_rgb) - 1, &g_rgb, NULL) != DVPP_OK)
        abort();
    fuzz_make_image(false, 24, 16, &g_jpeg);
    fuzz_make_image(true, 24, 16, &g_png);
    fuzz_make_image(true, 7, 5, &g_tiny);
    lim.max_pixels = 1u << 20;
    lim.max_side = 4096;
    lim.max_decode_memory = 64u << 20;
    dvpp_worker_init(&g_worker, &lim);
    g_ready = true;
}

/* "a=1&b&c=" into @kv, pointing into @q (modified in place). */
static size_t split_query(char *q, dvppd_kv *kv)
{
    size_t n = 0;
    char *p = q;

    while (p && n < MAX_KV) {
        char *amp = strchr(p, '&'), *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(p, '=');
        if (eq)
            *eq = '\0';
        if (strcmp(p, "spec") != 0 && (*p || eq)) {
            kv[n].key = p;
            kv[n].value = eq ? eq + 1 : NULL;
            n++;
        }
        p = amp ? amp + 1 : NULL;
    }
    return n;
}

/* Run @p on @in with its output poisoned with @poison first; the bytes
 * written (NULL for encoded outputs, or when the run failed) are @got's, the
 * caller frees them. */
static dvpp_status run_once(const dvpp_pipeline *p, const dvpp_pipeline_plan *plan,
                            const uint8_t *in, size_t len, uint8_t poison, uint8_t **got)
{
    dvpp_pipeline_out out;
    uint8_t *buf = NULL;
    size_t bytes = 0;
    dvpp_status st;

    *got = NULL;
    memset(&out, 0, sizeof(out));
    dvpp_buf_init(&out.encoded);
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        if (dvpp_tensor_init(&out.tensor, plan->dtype, plan->layout, 1, plan->c, plan->h,
                             plan->w, NULL) != DVPP_OK)
            return DVPP_EINVAL;
        bytes = out.tensor.bytes;
    } else if (p->encoding == DVPP_PIPE_ENC_NONE) {
        bytes = out.image.size = plan->out_bytes;
    }
    if (p->output == DVPP_PIPE_OUT_TENSOR || p->encoding == DVPP_PIPE_ENC_NONE) {
        buf = malloc(bytes ? bytes : 1);
        if (!buf)
            return DVPP_ENOMEM;
        memset(buf, poison, bytes);
        out.tensor.data = out.image.data = buf;
    }
    st = dvpp_pipeline_run(&g_worker, p, in, len, &out, NULL);
    /* What ran matches what was planned. */
    if (st == DVPP_OK && p->output == DVPP_PIPE_OUT_IMAGE && p->encoding == DVPP_PIPE_ENC_NONE &&
        (out.plan.out_bytes != plan->out_bytes || out.image.width != plan->img_w ||
         out.image.height != plan->img_h))
        abort();
    dvpp_buf_fini(&out.encoded);
    if (st == DVPP_OK)
        *got = buf;
    else
        free(buf);
    return st;
}

static void run(const dvpp_pipeline *p, const uint8_t *in, size_t len)
{
    const dvpp_limits *lim = dvpp_worker_limits(&g_worker);
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    dvpp_tensor t;
    uint8_t *a, *b;
    size_t bytes = 0;
    dvpp_status st, sa, sb;

    dvpp_err err;

    if (dvpp_pipeline_probe(p, in, len, lim, &src, NULL) != DVPP_OK)
        return;
    dvpp_err_clear(&err);
    st = dvpp_pipeline_plan_make(p, &src, &plan, &err);
    /* An image an op would make past the limits is refused here, naming
     * the op ("ops[2].border") or the limit. */
    if (st == DVPP_ELIMIT && !err.field[0])
        abort();
    if (st != DVPP_OK)
        return;
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        if (dvpp_tensor_init(&t, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w, NULL) !=
            DVPP_OK)
            return;
        bytes = t.bytes;
    } else if (p->encoding == DVPP_PIPE_ENC_NONE) {
        bytes = plan.out_bytes;
    } else if ((uint64_t)plan.img_w * plan.img_h > MAX_OUT / 4) {
        return;
    }
    if (bytes > MAX_OUT)
        return;
    sa = run_once(p, &plan, in, len, 0x00, &a);
    if (sa != DVPP_OK || !a)
        return;
    /* Every output byte is written or zeroed (an answer never carries a
     * pooled buffer's old content): a second run into 0xff poison gives
     * the same bytes. */
    sb = run_once(p, &plan, in, len, 0xff, &b);
    if (sb != DVPP_OK || memcmp(a, b, bytes) != 0)
        abort();
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const dvppd_spec_kind kinds[] = {DVPPD_SPEC_TENSOR, DVPPD_SPEC_IMAGE,
                                            DVPPD_SPEC_DECODE, DVPPD_SPEC_TENSOR};
    dvpp_limits lim = dvpp_limits_default();
    dvppd_spec_env env;
    dvppd_spec spec;
    dvppd_kv kv[MAX_KV];
    const uint8_t *nul, *tail = NULL;
    size_t spec_len, tail_len = 0;
    char *text;
    dvpp_err err;
    dvpp_status st;
    uint8_t f;

    if (!g_ready)
        setup();
    if (size < 1)
        return 0;
    f = data[0];
    data++, size--;
    nul = memchr(data, 0, size);
    spec_len = nul ? (size_t)(nul - data) : size;
    if (nul) {
        tail = nul + 1;
        tail_len = size - spec_len - 1;
    }
    memset(&env, 0, sizeof(env));
    env.kind = kinds[(f >> 1) & 3];
    env.lookup = f & 128 ? lookup : NULL;
    if ((f & 64) && tail) {
        env.aipp_text = (const char *)tail;
        env.aipp_len = tail_len;
    }
    /* An exact-size copy: the JSON parser gets a length, the query a string. */
    text = malloc(spec_len + 1);
    if (!text)
        return 0;
    memcpy(text, data, spec_len);
    text[spec_len] = '\0';
    dvpp_err_clear(&err);
    if (f & 1) {
        st = dvppd_spec_from_json(&env, text, spec_len, &spec, &err);
    } else {
        size_t n = split_query(text, kv);
        for (size_t i = 0; i < n; i++)
            (void)dvppd_spec_is_param(kv[i].key);
        st = dvppd_spec_from_query(&env, kv, n, &spec, &err);
    }
    /* Syntax errors are EINVAL naming the parameter or JSON path (ELIMIT for
     * an oversized spec, ENOMEM when memory runs out). */
    if (st != DVPP_OK && ((st != DVPP_EINVAL && st != DVPP_ELIMIT && st != DVPP_ENOMEM) ||
                          err.status != st || !err.field[0]))
        abort();
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&spec.pipe, &lim, NULL);
    /* The spec points into nothing of the request. */
    free(text);
    if (st == DVPP_OK && (f & 8)) {
        switch ((f >> 4) & 3) {
        case 0: run(&spec.pipe, g_jpeg.data, g_jpeg.len); break;
        case 1: run(&spec.pipe, g_png.data, g_png.len); break;
        case 2: run(&spec.pipe, tail, tail_len); break;
        default: run(&spec.pipe, g_tiny.data, g_tiny.len); break;
        }
    }
    return 0;
}
