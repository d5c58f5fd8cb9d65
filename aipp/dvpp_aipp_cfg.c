/* dvpp_aipp_cfg: ATC AIPP config text, the dynamic AIPP blob, norm specs.
 *
 * The parser is a hand-written tokenizer over the protobuf text-format
 * subset ATC configs use; it never reads past @len and keeps no state
 * outside the call. Each field of dvpp_aipp_op is described once in
 * k_fields (name, kind, storage, range); parsing, duplicate detection and
 * formatting all walk that one table.
 *
 * Defaults follow GE's ge_aipp_op.cc (SetDefaultParams, static mode only):
 * with csc_switch every matrix element, input bias and output bias that was
 * not given is filled individually (YUV420SP_U8: BT.601 narrow YUV->BGR and
 * biases 16,128,128; other inputs: BT.601 narrow RGB->YUV); every
 * var_reci_chn not given is 1.0; crop/resize/padding sizes are zeroed when
 * their switch is off.
 */
#include "dvpp_aipp_cfg.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_fp16.h"

/* --- the field table ------------------------------------------------------ */

enum fkind { K_MODE, K_FMT, K_BOOL, K_INT, K_FLOAT, K_STR, K_EDGE };
enum ctype { C_NONE, C_U32, C_I32, C_I16, C_U8, C_BOOL, C_F32 };

typedef struct fdesc {
    const char *name;
    uint8_t kind;
    uint8_t ctype;
    size_t off;
    int64_t lo, hi; /* K_INT range */
    bool zero_ok;   /* 0 allowed besides [lo, hi] */
} fdesc;

#define OFF(m) offsetof(dvpp_aipp_op, m)
#define FI(n, ct, m, lo, hi, z) {n, K_INT, ct, OFF(m), lo, hi, z}
#define FB(n, m) {n, K_BOOL, C_BOOL, OFF(m), 0, 1, false}
#define FF(n, m) {n, K_FLOAT, C_F32, OFF(m), 0, 0, false}

/* In the order dvpp_aipp_format_op prints them. */
static const fdesc k_fields[] = {
    {"aipp_mode", K_MODE, C_NONE, OFF(mode), 0, 2, false},
    FI("related_input_rank", C_I32, related_input_rank, 0, INT32_MAX, false),
    {"related_input_name", K_STR, C_NONE, OFF(related_input_name), 0, 0, false},
    {"input_edge_idx", K_EDGE, C_U32, OFF(input_edge_idx), 0, UINT32_MAX, false},
    FI("max_src_image_size", C_U32, max_src_image_size, 0, UINT32_MAX, false),
    FB("support_rotation", support_rotation),
    {"input_format", K_FMT, C_NONE, OFF(input_format), 0, 20, false},
    FI("src_image_size_w", C_U32, src_image_size_w, 2, 4096, true),
    FI("src_image_size_h", C_U32, src_image_size_h, 1, 4096, true),
    FB("crop", crop),
    FI("load_start_pos_w", C_U32, load_start_pos_w, 0, 4095, false),
    FI("load_start_pos_h", C_U32, load_start_pos_h, 0, 4095, false),
    FI("crop_size_w", C_U32, crop_size_w, 0, 4096, false),
    FI("crop_size_h", C_U32, crop_size_h, 0, 4096, false),
    FB("resize", resize),
    FI("resize_output_w", C_U32, resize_output_w, 16, 1920, true),
    FI("resize_output_h", C_U32, resize_output_h, 16, 4096, true),
    FB("padding", padding),
    FI("left_padding_size", C_U32, left_padding_size, 0, 32, false),
    FI("right_padding_size", C_U32, right_padding_size, 0, 32, false),
    FI("top_padding_size", C_U32, top_padding_size, 0, 32, false),
    FI("bottom_padding_size", C_U32, bottom_padding_size, 0, 32, false),
    FF("padding_value", padding_value),
    FB("csc_switch", csc_switch),
    FB("rbuv_swap_switch", rbuv_swap_switch),
    FB("ax_swap_switch", ax_swap_switch),
    FB("single_line_mode", single_line_mode),
    FF("cpadding_value", cpadding_value),
#define MX(r, c) FI("matrix_r" #r "c" #c, C_I16, matrix[r][c], INT16_MIN, INT16_MAX, false)
    MX(0, 0), MX(0, 1), MX(0, 2), MX(1, 0), MX(1, 1), MX(1, 2), MX(2, 0), MX(2, 1), MX(2, 2),
#undef MX
    FI("output_bias_0", C_U8, output_bias[0], 0, 255, false),
    FI("output_bias_1", C_U8, output_bias[1], 0, 255, false),
    FI("output_bias_2", C_U8, output_bias[2], 0, 255, false),
    FI("input_bias_0", C_U8, input_bias[0], 0, 255, false),
    FI("input_bias_1", C_U8, input_bias[1], 0, 255, false),
    FI("input_bias_2", C_U8, input_bias[2], 0, 255, false),
    FI("mean_chn_0", C_I32, mean_chn[0], 0, 255, false),
    FI("mean_chn_1", C_I32, mean_chn[1], 0, 255, false),
    FI("mean_chn_2", C_I32, mean_chn[2], 0, 255, false),
    FI("mean_chn_3", C_I32, mean_chn[3], 0, 255, false),
    FF("min_chn_0", min_chn[0]),
    FF("min_chn_1", min_chn[1]),
    FF("min_chn_2", min_chn[2]),
    FF("min_chn_3", min_chn[3]),
    FF("var_reci_chn_0", var_reci_chn[0]),
    FF("var_reci_chn_1", var_reci_chn[1]),
    FF("var_reci_chn_2", var_reci_chn[2]),
    FF("var_reci_chn_3", var_reci_chn[3]),
    FI("raw_rgbir_to_f16_n", C_U32, raw_rgbir_to_f16_n, 0, UINT32_MAX, false),
};

#define NFIELDS (sizeof(k_fields) / sizeof(k_fields[0]))

/* Indices used by the default filling and cross checks. */
static size_t field_index(const char *name, size_t n)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strlen(k_fields[i].name) == n && memcmp(k_fields[i].name, name, n) == 0)
            return i;
    return NFIELDS;
}

static const char *const k_fmt_names[] = {
    "UNDEFINED",      "YUV420SP_U8",    "XRGB8888_U8", "RGB888_U8", "YUV400_U8",
    "NC1HWC0DI_FP16", "NC1HWC0DI_S8",   "ARGB8888_U8", "YUYV_U8",   "YUV422SP_U8",
    "AYUV444_U8",     "RAW10",          "RAW12",       "RAW16",     "RAW24",
    "RGB16",          "RGB20",          "RGB24",       "RGB8_IR",   "RGB16_IR",
    "RGB24_IR",
};

static const char *const k_mode_names[] = {"undefined", "static", "dynamic"};

const char *dvpp_aipp_format_name(dvpp_aipp_format f)
{
    if ((int)f <= 0 || (int)f > DVPP_AIPP_RGB24_IR)
        return "UNDEFINED";
    return k_fmt_names[f];
}

/* --- tokenizer ------------------------------------------------------------ */

enum tkind { T_EOF, T_IDENT, T_NUM, T_STR, T_COLON, T_LBRACE, T_RBRACE, T_SEP, T_BAD };

typedef struct tok {
    int kind;
    const char *s; /* lexeme (for T_STR: including the quotes) */
    size_t n;
    uint32_t line;
} tok;

typedef struct lexer {
    const char *p, *end;
    uint32_t line;
} lexer;

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_numch(char c)
{
    return is_alpha(c) || is_digit(c) || c == '.' || c == '+' || c == '-';
}

static tok lex_next(lexer *lx)
{
    tok t = {T_EOF, NULL, 0, 0};

    for (;;) {
        while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r' ||
                                   *lx->p == '\n' || *lx->p == '\f' || *lx->p == '\v')) {
            if (*lx->p == '\n')
                lx->line++;
            lx->p++;
        }
        if (lx->p < lx->end && *lx->p == '#') {
            while (lx->p < lx->end && *lx->p != '\n')
                lx->p++;
            continue;
        }
        break;
    }
    t.line = lx->line;
    t.s = lx->p;
    if (lx->p >= lx->end)
        return t;
    char c = *lx->p;
    if (is_alpha(c)) {
        t.kind = T_IDENT;
        while (lx->p < lx->end && (is_alpha(*lx->p) || is_digit(*lx->p)))
            lx->p++;
    } else if (is_digit(c) || c == '-' || c == '+' || c == '.') {
        t.kind = T_NUM;
        while (lx->p < lx->end && is_numch(*lx->p))
            lx->p++;
    } else if (c == '"' || c == '\'') {
        t.kind = T_BAD; /* until the closing quote is seen */
        lx->p++;
        while (lx->p < lx->end && *lx->p != c && *lx->p != '\n') {
            if (*lx->p == '\\' && lx->p + 1 < lx->end && lx->p[1] != '\n')
                lx->p++;
            lx->p++;
        }
        if (lx->p < lx->end && *lx->p == c) {
            lx->p++;
            t.kind = T_STR;
        }
    } else {
        lx->p++;
        t.kind = c == ':' ? T_COLON : c == '{' ? T_LBRACE : c == '}' ? T_RBRACE
               : (c == ';' || c == ',') ? T_SEP : T_BAD;
    }
    t.n = (size_t)(lx->p - t.s);
    return t;
}

/* At most this much of a token goes into a message. */
#define TOKSHOW(t) (int)((t).n > 32 ? 32 : (t).n), (t).s

/* --- value conversion ----------------------------------------------------- */

static bool tok_copy(const tok *t, char *buf, size_t size)
{
    if (t->n == 0 || t->n >= size)
        return false;
    memcpy(buf, t->s, t->n);
    buf[t->n] = '\0';
    return true;
}

/* 0: ok, 1: not an integer, 2: overflow */
static int tok_int(const tok *t, int64_t *v)
{
    char buf[64];
    char *e;

    if (t->kind != T_NUM || !tok_copy(t, buf, sizeof buf))
        return 1;
    errno = 0;
    long long x = strtoll(buf, &e, 10);
    if (e == buf || *e != '\0')
        return 1;
    if (errno == ERANGE)
        return 2;
    *v = x;
    return 0;
}

static bool tok_float(const tok *t, double *v)
{
    char buf[64];
    char *e;

    if ((t->kind != T_NUM && t->kind != T_IDENT) || !tok_copy(t, buf, sizeof buf))
        return false;
    double x = strtod(buf, &e);
    if (e == buf || *e != '\0')
        return false;
    *v = x;
    return true;
}

static bool tok_is(const tok *t, const char *s)
{
    return strlen(s) == t->n && memcmp(t->s, s, t->n) == 0;
}

/* --- parser --------------------------------------------------------------- */

typedef struct pstate {
    lexer lx;
    dvpp_err *err;
    uint32_t seen[NFIELDS]; /* line the field was given on, 0: not given */
} pstate;

static dvpp_status perr(pstate *ps, uint32_t line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static dvpp_status perr(pstate *ps, uint32_t line, const char *field, const char *fmt, ...)
{
    char reason[192];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return dvpp_err_set(ps->err, DVPP_EINVAL, field, "line %u: %s: %s", (unsigned)line, field,
                        reason);
}

static void store_int(dvpp_aipp_op *op, const fdesc *f, size_t off, int64_t v)
{
    unsigned char *p = (unsigned char *)op + off;

    switch (f->ctype) {
    case C_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, sizeof x); break; }
    case C_I32: { int32_t x = (int32_t)v; memcpy(p, &x, sizeof x); break; }
    case C_I16: { int16_t x = (int16_t)v; memcpy(p, &x, sizeof x); break; }
    case C_U8: { uint8_t x = (uint8_t)v; memcpy(p, &x, sizeof x); break; }
    default: break;
    }
}

static int64_t load_int(const dvpp_aipp_op *op, const fdesc *f)
{
    const unsigned char *p = (const unsigned char *)op + f->off;

    switch (f->ctype) {
    case C_U32: { uint32_t x; memcpy(&x, p, sizeof x); return x; }
    case C_I32: { int32_t x; memcpy(&x, p, sizeof x); return x; }
    case C_I16: { int16_t x; memcpy(&x, p, sizeof x); return x; }
    case C_U8: { uint8_t x; memcpy(&x, p, sizeof x); return x; }
    default: return 0;
    }
}

static dvpp_status parse_enum(pstate *ps, const fdesc *f, const tok *v,
                              const char *const *names, size_t nnames, int *out)
{
    int64_t x;

    if (v->kind == T_IDENT) {
        for (size_t i = 0; i < nnames; i++)
            if (tok_is(v, names[i])) {
                *out = (int)i;
                return DVPP_OK;
            }
        return perr(ps, v->line, f->name, "unknown value '%.*s'", TOKSHOW(*v));
    }
    int r = tok_int(v, &x);
    if (r == 1)
        return perr(ps, v->line, f->name, "bad value '%.*s'", TOKSHOW(*v));
    if (r == 2 || x < 0 || x >= (int64_t)nnames)
        return perr(ps, v->line, f->name, "unknown value '%.*s'", TOKSHOW(*v));
    *out = (int)x;
    return DVPP_OK;
}

static dvpp_status parse_value(pstate *ps, dvpp_aipp_op *op, const fdesc *f, const tok *v)
{
    unsigned char *p = (unsigned char *)op + f->off;
    int64_t x;
    double d;
    int e = 0;

    switch (f->kind) {
    case K_MODE: {
        static const char *const alt[] = {"UNDEFINED", "STATIC", "DYNAMIC"};
        if (v->kind == T_IDENT)
            for (size_t i = 0; i < 3; i++)
                if (tok_is(v, alt[i])) {
                    op->mode = (dvpp_aipp_mode)i;
                    return DVPP_OK;
                }
        dvpp_status st = parse_enum(ps, f, v, k_mode_names, 3, &e);
        if (st == DVPP_OK)
            op->mode = (dvpp_aipp_mode)e;
        return st;
    }
    case K_FMT: {
        dvpp_status st = parse_enum(ps, f, v, k_fmt_names, 21, &e);
        if (st == DVPP_OK)
            op->input_format = (dvpp_aipp_format)e;
        return st;
    }
    case K_BOOL: {
        bool b;
        if (tok_is(v, "true") || tok_is(v, "True") || tok_is(v, "t") || tok_is(v, "1"))
            b = true;
        else if (tok_is(v, "false") || tok_is(v, "False") || tok_is(v, "f") || tok_is(v, "0"))
            b = false;
        else
            return perr(ps, v->line, f->name, "bad value '%.*s' (want true or false)",
                        TOKSHOW(*v));
        memcpy(p, &b, sizeof b);
        return DVPP_OK;
    }
    case K_INT:
    case K_EDGE: {
        int r = tok_int(v, &x);
        if (r == 1)
            return perr(ps, v->line, f->name, "bad value '%.*s' (want an integer)",
                        TOKSHOW(*v));
        if (r == 2 || ((x < f->lo || x > f->hi) && !(f->zero_ok && x == 0))) {
            if (f->zero_ok)
                return perr(ps, v->line, f->name, "%.*s out of range (0 or [%lld, %lld])",
                            TOKSHOW(*v), (long long)f->lo, (long long)f->hi);
            return perr(ps, v->line, f->name, "%.*s out of range [%lld, %lld]", TOKSHOW(*v),
                        (long long)f->lo, (long long)f->hi);
        }
        if (f->kind == K_EDGE) {
            if (op->n_input_edge_idx >= 8)
                return perr(ps, v->line, f->name, "given more than 8 times");
            op->input_edge_idx[op->n_input_edge_idx++] = (uint32_t)x;
        } else {
            store_int(op, f, f->off, x);
        }
        return DVPP_OK;
    }
    case K_FLOAT: {
        if (!tok_float(v, &d))
            return perr(ps, v->line, f->name, "bad value '%.*s' (want a number)", TOKSHOW(*v));
        if (!isfinite(d) || fabs(d) > FLT_MAX)
            return perr(ps, v->line, f->name, "%.*s out of range (finite float)",
                        TOKSHOW(*v));
        float fl = (float)d;
        memcpy(p, &fl, sizeof fl);
        return DVPP_OK;
    }
    case K_STR: {
        char *dst = op->related_input_name;
        size_t n = 0;
        if (v->kind != T_STR)
            return perr(ps, v->line, f->name, "bad value '%.*s' (want a quoted string)",
                        TOKSHOW(*v));
        for (size_t i = 1; i + 1 < v->n; i++) {
            char c = v->s[i];
            if (c == '\\' && i + 2 < v->n) {
                c = v->s[++i];
                c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
            }
            if (n + 1 >= sizeof op->related_input_name)
                return perr(ps, v->line, f->name, "longer than %zu bytes",
                            sizeof op->related_input_name - 1);
            dst[n++] = c;
        }
        dst[n] = '\0';
        return DVPP_OK;
    }
    default:
        return perr(ps, v->line, f->name, "unsupported");
    }
}

static const int16_t k_yuv2bgr[3][3] = {{298, 516, 0}, {298, -100, -208}, {298, 0, 409}};
static const int16_t k_rgb2yuv[3][3] = {{66, 129, 25}, {-38, -74, 112}, {112, -94, -18}};
static const uint8_t k_bias[3] = {16, 128, 128};

#define SEEN(ps, name) ((ps)->seen[field_index(name, strlen(name))])

/* Line to blame for @name: where it was given, else the block's line. */
static uint32_t blame(const pstate *ps, const dvpp_aipp_op *op, const char *name)
{
    uint32_t l = ps->seen[field_index(name, strlen(name))];
    return l ? l : op->first_line;
}

static dvpp_status finish_block(pstate *ps, dvpp_aipp_op *op)
{
    if (op->mode == DVPP_AIPP_UNDEFINED)
        return perr(ps, blame(ps, op, "aipp_mode"), "aipp_mode",
                    ps->seen[0] ? "must be static or dynamic" : "required field missing");
    if (op->mode == DVPP_AIPP_DYNAMIC) {
        if (op->max_src_image_size == 0)
            return perr(ps, blame(ps, op, "max_src_image_size"), "max_src_image_size",
                        SEEN(ps, "max_src_image_size") ? "must be > 0 in dynamic mode"
                                                       : "required field missing");
        return DVPP_OK;
    }
    if (op->input_format == DVPP_AIPP_FMT_UNDEFINED)
        return perr(ps, blame(ps, op, "input_format"), "input_format",
                    SEEN(ps, "input_format") ? "must not be UNDEFINED"
                                             : "required field missing");

    /* ATC defaults (static only), field by field as SetCscDefaultValue. */
    if (op->csc_switch) {
        bool yuv = op->input_format == DVPP_AIPP_YUV420SP_U8;
        char name[32];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                snprintf(name, sizeof name, "matrix_r%dc%d", r, c);
                if (!SEEN(ps, name))
                    op->matrix[r][c] = yuv ? k_yuv2bgr[r][c] : k_rgb2yuv[r][c];
            }
        for (int i = 0; i < 3; i++) {
            snprintf(name, sizeof name, "input_bias_%d", i);
            if (!SEEN(ps, name))
                op->input_bias[i] = k_bias[i];
            snprintf(name, sizeof name, "output_bias_%d", i);
            if (!SEEN(ps, name))
                op->output_bias[i] = k_bias[i];
        }
    }
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "var_reci_chn_%d", i);
        if (!SEEN(ps, name))
            op->var_reci_chn[i] = 1.0f;
    }
    if (!op->crop)
        op->load_start_pos_w = op->load_start_pos_h = op->crop_size_w = op->crop_size_h = 0;
    if (!op->resize)
        op->resize_output_w = op->resize_output_h = 0;
    if (!op->padding)
        op->left_padding_size = op->right_padding_size = op->top_padding_size =
            op->bottom_padding_size = 0;

    /* Cross-field rules of reference §7. */
    bool yuv420 = op->input_format == DVPP_AIPP_YUV420SP_U8;
    if (op->csc_switch && op->input_format == DVPP_AIPP_YUV400_U8)
        return perr(ps, blame(ps, op, "csc_switch"), "csc_switch",
                    "not allowed with YUV400_U8 input");
    if (yuv420 && (op->src_image_size_w & 1u))
        return perr(ps, blame(ps, op, "src_image_size_w"), "src_image_size_w",
                    "%u must be even for YUV420SP_U8", op->src_image_size_w);
    if (op->crop) {
        static const char *const names[4] = {"load_start_pos_w", "load_start_pos_h",
                                             "crop_size_w", "crop_size_h"};
        const uint32_t vals[4] = {op->load_start_pos_w, op->load_start_pos_h, op->crop_size_w,
                                  op->crop_size_h};
        if (yuv420)
            for (int i = 0; i < 4; i++)
                if (vals[i] & 1u)
                    return perr(ps, blame(ps, op, names[i]), names[i],
                                "%u must be even for YUV420SP_U8", vals[i]);
        const uint32_t src[2] = {op->src_image_size_w, op->src_image_size_h};
        for (int i = 0; i < 2; i++) {
            if (src[i] == 0)
                continue;
            if (vals[i + 2] != 0 && vals[i] + vals[i + 2] > src[i])
                return perr(ps, blame(ps, op, names[i + 2]), names[i + 2],
                            "%s + %s = %u exceeds %s %u", names[i], names[i + 2],
                            vals[i] + vals[i + 2], i ? "src_image_size_h" : "src_image_size_w",
                            src[i]);
            if (vals[i] >= src[i])
                return perr(ps, blame(ps, op, names[i]), names[i], "%u not inside %s %u",
                            vals[i], i ? "src_image_size_h" : "src_image_size_w", src[i]);
        }
    }
    if (op->padding) {
        uint32_t w, h;
        dvpp_aipp_output_size(op, &w, &h);
        (void)h;
        if (w > 1080) {
            const char *nm = SEEN(ps, "right_padding_size") ? "right_padding_size"
                                                            : "left_padding_size";
            return perr(ps, blame(ps, op, nm), nm, "padded output width %u exceeds 1080", w);
        }
    }
    return DVPP_OK;
}

static dvpp_status parse_block(pstate *ps, dvpp_aipp_op *op, uint32_t open_line)
{
    memset(op, 0, sizeof *op);
    memset(ps->seen, 0, sizeof ps->seen);
    op->first_line = open_line;
    for (;;) {
        tok t = lex_next(&ps->lx);
        if (t.kind == T_EOF)
            return perr(ps, open_line, "aipp_op", "block opened here is not closed");
        if (t.kind == T_RBRACE)
            return finish_block(ps, op);
        if (t.kind == T_SEP)
            continue;
        if (t.kind != T_IDENT)
            return perr(ps, t.line, "aipp_op", "unexpected '%.*s'", TOKSHOW(t));
        size_t fi = field_index(t.s, t.n);
        if (fi == NFIELDS) {
            char name[40];
            size_t n = t.n < sizeof name - 1 ? t.n : sizeof name - 1;
            memcpy(name, t.s, n);
            name[n] = '\0';
            return perr(ps, t.line, name, "unknown field");
        }
        const fdesc *f = &k_fields[fi];
        if (ps->seen[fi] && f->kind != K_EDGE)
            return perr(ps, t.line, f->name, "given twice (first on line %u)",
                        (unsigned)ps->seen[fi]);
        tok c = lex_next(&ps->lx);
        if (c.kind != T_COLON) {
            if (c.kind == T_EOF)
                return perr(ps, open_line, "aipp_op", "block opened here is not closed");
            return perr(ps, c.line, f->name, "expected ':' after the field name, got '%.*s'",
                        TOKSHOW(c));
        }
        tok v = lex_next(&ps->lx);
        if (v.kind == T_EOF)
            return perr(ps, open_line, "aipp_op", "block opened here is not closed");
        if (v.kind != T_IDENT && v.kind != T_NUM && v.kind != T_STR)
            return perr(ps, v.line, f->name, "missing value (got '%.*s')", TOKSHOW(v));
        dvpp_status st = parse_value(ps, op, f, &v);
        if (st != DVPP_OK)
            return st;
        if (!ps->seen[fi])
            ps->seen[fi] = t.line;
    }
}

dvpp_status dvpp_aipp_parse(const char *text, size_t len, dvpp_aipp_config *out,
                            dvpp_err *err)
{
    pstate pst;
    pstate *ps = &pst;
    dvpp_status st = DVPP_OK;

    if (!out || (!text && len))
        return dvpp_err_set(err, DVPP_EINVAL, "aipp_op", "no config text");
    memset(ps, 0, sizeof *ps);
    ps->lx.p = text;
    ps->lx.end = text ? text + len : text;
    ps->lx.line = 1;
    ps->err = err;
    memset(out, 0, sizeof *out);
    for (;;) {
        tok t = lex_next(&ps->lx);
        if (t.kind == T_EOF)
            break;
        if (t.kind == T_SEP)
            continue;
        if (t.kind != T_IDENT || !tok_is(&t, "aipp_op")) {
            st = perr(ps, t.line, "aipp_op", "unexpected '%.*s' (want 'aipp_op {')",
                      TOKSHOW(t));
            break;
        }
        tok b = lex_next(&ps->lx);
        if (b.kind == T_COLON)
            b = lex_next(&ps->lx);
        if (b.kind != T_LBRACE) {
            st = perr(ps, b.kind == T_EOF ? t.line : b.line, "aipp_op",
                      "expected '{' after aipp_op");
            break;
        }
        if (out->nops >= DVPP_AIPP_MAX_OPS) {
            st = perr(ps, t.line, "aipp_op", "more than %d blocks", DVPP_AIPP_MAX_OPS);
            break;
        }
        st = parse_block(ps, &out->ops[out->nops], b.line);
        if (st != DVPP_OK)
            break;
        out->nops++;
    }
    if (st == DVPP_OK && out->nops == 0)
        st = perr(ps, ps->lx.line, "aipp_op", "no aipp_op block");
    if (st != DVPP_OK)
        memset(out, 0, sizeof *out);
    return st;
}

/* --- formatting ----------------------------------------------------------- */

typedef struct sbuf {
    char *buf;
    size_t size, len;
} sbuf;

static void sb_printf(sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *sb, const char *fmt, ...)
{
    va_list ap;
    char *dst = sb->len < sb->size ? sb->buf + sb->len : NULL;
    size_t room = sb->len < sb->size ? sb->size - sb->len : 0;

    va_start(ap, fmt);
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb->len += (size_t)n;
}

size_t dvpp_aipp_format_op(const dvpp_aipp_op *op, char *buf, size_t size)
{
    sbuf sb = {buf, buf ? size : 0, 0};

    if (buf && size)
        buf[0] = '\0';
    if (!op)
        return 0;
    sb_printf(&sb, "aipp_op {\n");
    for (size_t i = 0; i < NFIELDS; i++) {
        const fdesc *f = &k_fields[i];
        const unsigned char *p = (const unsigned char *)op + f->off;
        switch (f->kind) {
        case K_MODE:
            sb_printf(&sb, "    %s : %s\n", f->name,
                      (unsigned)op->mode <= 2 ? k_mode_names[op->mode] : "undefined");
            break;
        case K_FMT:
            sb_printf(&sb, "    %s : %s\n", f->name, dvpp_aipp_format_name(op->input_format));
            break;
        case K_BOOL: {
            bool b;
            memcpy(&b, p, sizeof b);
            sb_printf(&sb, "    %s : %s\n", f->name, b ? "true" : "false");
            break;
        }
        case K_INT:
            sb_printf(&sb, "    %s : %lld\n", f->name, (long long)load_int(op, f));
            break;
        case K_EDGE:
            for (unsigned k = 0; k < op->n_input_edge_idx && k < 8; k++)
                sb_printf(&sb, "    %s : %u\n", f->name, op->input_edge_idx[k]);
            break;
        case K_FLOAT: {
            float fl;
            memcpy(&fl, p, sizeof fl);
            sb_printf(&sb, "    %s : %.9g\n", f->name, (double)fl);
            break;
        }
        case K_STR: {
            sb_printf(&sb, "    %s : \"", f->name);
            for (size_t k = 0; k < sizeof op->related_input_name && op->related_input_name[k];
                 k++) {
                char c = op->related_input_name[k];
                if (c == '"' || c == '\\')
                    sb_printf(&sb, "\\%c", c);
                else if (c == '\n')
                    sb_printf(&sb, "\\n");
                else
                    sb_printf(&sb, "%c", c);
            }
            sb_printf(&sb, "\"\n");
            break;
        }
        default:
            break;
        }
    }
    sb_printf(&sb, "}\n");
    return sb.len;
}

/* One axis of dvpp_aipp_geometry. */
static void geom_axis(bool crop, uint32_t pos, uint32_t size, uint32_t resize, uint32_t pad,
                      uint32_t src, uint32_t *x0, uint32_t *c, uint32_t *r, uint32_t *o)
{
    *x0 = crop ? pos : 0;
    *c = crop && size ? size : src > *x0 ? src - *x0 : 0;
    *r = resize ? resize : *c;
    *o = *r ? *r + pad : 0;
}

void dvpp_aipp_geometry(const dvpp_aipp_op *op, uint32_t src_w, uint32_t src_h,
                        dvpp_aipp_geom *g)
{
    uint32_t pw = op->padding ? op->left_padding_size + op->right_padding_size : 0;
    uint32_t ph = op->padding ? op->top_padding_size + op->bottom_padding_size : 0;

    geom_axis(op->crop, op->load_start_pos_w, op->crop_size_w,
              op->resize ? op->resize_output_w : 0, pw, src_w, &g->x0, &g->crop_w,
              &g->resize_w, &g->out_w);
    geom_axis(op->crop, op->load_start_pos_h, op->crop_size_h,
              op->resize ? op->resize_output_h : 0, ph, src_h, &g->y0, &g->crop_h,
              &g->resize_h, &g->out_h);
}

void dvpp_aipp_output_size(const dvpp_aipp_op *op, uint32_t *w, uint32_t *h)
{
    dvpp_aipp_geom g;

    dvpp_aipp_geometry(op, op->src_image_size_w, op->src_image_size_h, &g);
    if (w)
        *w = g.out_w;
    if (h)
        *h = g.out_h;
}

void dvpp_aipp_op_for_image(dvpp_aipp_op *op, uint32_t w, uint32_t h)
{
    if (!op->src_image_size_w)
        op->src_image_size_w = w;
    if (!op->src_image_size_h)
        op->src_image_size_h = h;
}

/* --- dynamic AIPP blob -----------------------------------------------------
 *
 * Little endian, serialised field by field (inc/common/dynamic_aipp.h).
 * kAippDynamicPara header, 64 bytes:
 *    0 u8  inputFormat          1 i8 cscSwitch      2 i8 rbuvSwapSwitch
 *    3 i8  axSwapSwitch         4 i8 batchNum       5..7 reserve1[3]
 *    8 i32 srcImageSizeW       12 i32 srcImageSizeH
 *   16 i16 cscMatrixR0C0..R2C2 (9 x 2 bytes, row major, 16..33)
 *   34 i16 reserve2[3] (34..39)
 *   40 u8  cscOutputBiasR0..R2 (40..42)   43 u8 cscInputBiasR0..R2 (43..45)
 *   46 u8  reserve3[2]         48 i8 reserve4[16] (48..63)
 * kAippDynamicBatchPara entry i at 64 + 96*i, 96 bytes:
 *    0 i8 cropSwitch   1 i8 scfSwitch   2 i8 paddingSwitch   3 i8 rotateSwitch
 *    4 reserve[4]
 *    8 i32 cropStartPosW  12 cropStartPosH  16 cropSizeW  20 cropSizeH
 *   24 i32 scfInputSizeW  28 scfInputSizeH  32 scfOutputSizeW  36 scfOutputSizeH
 *   40 i32 paddingSizeTop 44 paddingSizeBottom 48 paddingSizeLeft 52 paddingSizeRight
 *   56 i16 dtcPixelMeanChn0..3 (56..63)
 *   64 u16 dtcPixelMinChn0..3 (fp16, 64..71)
 *   72 u16 dtcPixelVarReciChn0..3 (fp16, 72..79)
 *   80 i8  reserve1[16] (80..95)
 */
enum {
    DYN_HDR = 64, DYN_BATCH = 96,
    H_FMT = 0, H_CSC = 1, H_RBUV = 2, H_AX = 3, H_BATCH = 4, H_SRCW = 8, H_SRCH = 12,
    H_MATRIX = 16, H_OBIAS = 40, H_IBIAS = 43,
    B_CROP = 0, B_SCF = 1, B_PAD = 2, B_ROT = 3, B_CROPX = 8, B_CROPY = 12, B_CROPW = 16,
    B_CROPH = 20, B_SCFINW = 24, B_SCFINH = 28, B_SCFOUTW = 32, B_SCFOUTH = 36,
    B_PADT = 40, B_PADB = 44, B_PADL = 48, B_PADR = 52, B_MEAN = 56, B_MIN = 64,
    B_VAR = 72,
};
_Static_assert(H_IBIAS + 3 + 2 + 16 == DYN_HDR, "dynamic AIPP header is 64 bytes");
_Static_assert(B_VAR + 8 + 16 == DYN_BATCH, "dynamic AIPP batch entry is 96 bytes");

#define DYN_MAX_BATCH (DVPP_AIPP_MAX_OPS * 4)

size_t dvpp_aipp_dynamic_size(uint32_t batch)
{
    return DYN_HDR + (size_t)DYN_BATCH * batch;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static int32_t get32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24));
}

static dvpp_status dyn_range(dvpp_err *err, const char *what, unsigned b, int64_t v,
                             int64_t lo, int64_t hi)
{
    char field[DVPP_ERR_FIELD_LEN];

    if (v >= lo && v <= hi)
        return DVPP_OK;
    if (b == UINT32_MAX)
        snprintf(field, sizeof field, "%s", what);
    else
        snprintf(field, sizeof field, "batch[%u].%s", b, what);
    return dvpp_err_set(err, DVPP_EINVAL, field, "%s: %lld out of range [%lld, %lld]", field,
                        (long long)v, (long long)lo, (long long)hi);
}

static dvpp_status dyn_half(dvpp_err *err, const char *what, unsigned b, unsigned ch, float v)
{
    if (isfinite(v) && fabsf(v) <= 65504.0f)
        return DVPP_OK;
    char field[DVPP_ERR_FIELD_LEN];
    snprintf(field, sizeof field, "batch[%u].%s[%u]", b, what, ch);
    return dvpp_err_set(err, DVPP_EINVAL, field, "%s: %g is not a finite fp16 value", field,
                        (double)v);
}

#define DYN_CHECK(expr)                                                                     \
    do {                                                                                    \
        dvpp_status st_ = (expr);                                                           \
        if (st_ != DVPP_OK)                                                                 \
            return st_;                                                                     \
    } while (0)

/* Validation shared by build and parse. */
static dvpp_status dyn_validate(const dvpp_aipp_dyn *d, dvpp_err *err)
{
    DYN_CHECK(dyn_range(err, "batch_num", UINT32_MAX, d->batch_num, 1, DYN_MAX_BATCH));
    DYN_CHECK(dyn_range(err, "input_format", UINT32_MAX, d->input_format, 1,
                        DVPP_AIPP_RGB24_IR));
    DYN_CHECK(dyn_range(err, "src_w", UINT32_MAX, d->src_w, 2, 4096));
    DYN_CHECK(dyn_range(err, "src_h", UINT32_MAX, d->src_h, 1, 4096));
    bool yuv420 = d->input_format == DVPP_AIPP_YUV420SP_U8;
    if (yuv420 && (d->src_w & 1))
        return dvpp_err_set(err, DVPP_EINVAL, "src_w", "src_w: %d must be even for YUV420SP_U8",
                            (int)d->src_w);
    for (unsigned b = 0; b < d->batch_num; b++) {
        const dvpp_aipp_dyn_batch *e = &d->batch[b];
        DYN_CHECK(dyn_range(err, "rotate", b, e->rotate, 0, 3));
        if (e->crop) {
            DYN_CHECK(dyn_range(err, "crop_x", b, e->crop_x, 0, 4095));
            DYN_CHECK(dyn_range(err, "crop_y", b, e->crop_y, 0, 4095));
            DYN_CHECK(dyn_range(err, "crop_w", b, e->crop_w, 1, 4096));
            DYN_CHECK(dyn_range(err, "crop_h", b, e->crop_h, 1, 4096));
            DYN_CHECK(dyn_range(err, "crop_x+crop_w", b, (int64_t)e->crop_x + e->crop_w, 0,
                                d->src_w));
            DYN_CHECK(dyn_range(err, "crop_y+crop_h", b, (int64_t)e->crop_y + e->crop_h, 0,
                                d->src_h));
            if (yuv420 && ((e->crop_x | e->crop_y | e->crop_w | e->crop_h) & 1)) {
                char field[DVPP_ERR_FIELD_LEN];
                snprintf(field, sizeof field, "batch[%u].crop", b);
                return dvpp_err_set(err, DVPP_EINVAL, field,
                                    "%s: crop offsets and sizes must be even for YUV420SP_U8",
                                    field);
            }
        }
        if (e->scf) {
            DYN_CHECK(dyn_range(err, "scf_in_w", b, e->scf_in_w, 1, 4096));
            DYN_CHECK(dyn_range(err, "scf_in_h", b, e->scf_in_h, 1, 4096));
            DYN_CHECK(dyn_range(err, "scf_out_w", b, e->scf_out_w, 16, 1920));
            DYN_CHECK(dyn_range(err, "scf_out_h", b, e->scf_out_h, 16, 4096));
        }
        if (e->padding) {
            DYN_CHECK(dyn_range(err, "pad_top", b, e->pad_top, 0, 32));
            DYN_CHECK(dyn_range(err, "pad_bottom", b, e->pad_bottom, 0, 32));
            DYN_CHECK(dyn_range(err, "pad_left", b, e->pad_left, 0, 32));
            DYN_CHECK(dyn_range(err, "pad_right", b, e->pad_right, 0, 32));
        }
        for (unsigned c = 0; c < 4; c++) {
            DYN_CHECK(dyn_half(err, "min", b, c, e->min[c]));
            DYN_CHECK(dyn_half(err, "var_reci", b, c, e->var_reci[c]));
        }
    }
    return DVPP_OK;
}

dvpp_status dvpp_aipp_dynamic_build(const dvpp_aipp_dyn *d, uint8_t *blob, size_t len,
                                    dvpp_err *err)
{
    if (!d || !blob)
        return dvpp_err_set(err, DVPP_EINVAL, "blob", "no blob or parameters");
    DYN_CHECK(dyn_validate(d, err));
    size_t need = dvpp_aipp_dynamic_size(d->batch_num);
    if (len < need)
        return dvpp_err_set(err, DVPP_ENOSPC, "blob", "blob of %zu bytes, %u images need %zu",
                            len, (unsigned)d->batch_num, need);
    memset(blob, 0, need);
    blob[H_FMT] = (uint8_t)d->input_format;
    blob[H_CSC] = d->csc_switch;
    blob[H_RBUV] = d->rbuv_swap;
    blob[H_AX] = d->ax_swap;
    blob[H_BATCH] = d->batch_num;
    put32(blob + H_SRCW, (uint32_t)d->src_w);
    put32(blob + H_SRCH, (uint32_t)d->src_h);
    for (int i = 0; i < 9; i++)
        put16(blob + H_MATRIX + 2 * i, (uint16_t)d->matrix[i / 3][i % 3]);
    for (int i = 0; i < 3; i++) {
        blob[H_OBIAS + i] = d->output_bias[i];
        blob[H_IBIAS + i] = d->input_bias[i];
    }
    for (unsigned b = 0; b < d->batch_num; b++) {
        const dvpp_aipp_dyn_batch *e = &d->batch[b];
        uint8_t *p = blob + DYN_HDR + (size_t)DYN_BATCH * b;
        p[B_CROP] = e->crop;
        p[B_SCF] = e->scf;
        p[B_PAD] = e->padding;
        p[B_ROT] = e->rotate;
        const int32_t v[12] = {e->crop_x,    e->crop_y,    e->crop_w,   e->crop_h,
                               e->scf_in_w,  e->scf_in_h,  e->scf_out_w, e->scf_out_h,
                               e->pad_top,   e->pad_bottom, e->pad_left, e->pad_right};
        for (int i = 0; i < 12; i++)
            put32(p + B_CROPX + 4 * i, (uint32_t)v[i]);
        for (int c = 0; c < 4; c++) {
            put16(p + B_MEAN + 2 * c, (uint16_t)e->mean[c]);
            put16(p + B_MIN + 2 * c, dvpp_f32_to_f16(e->min[c]));
            put16(p + B_VAR + 2 * c, dvpp_f32_to_f16(e->var_reci[c]));
        }
    }
    return DVPP_OK;
}

static dvpp_status dyn_flag(dvpp_err *err, const char *what, unsigned b, uint8_t v, bool *out)
{
    if (v > 1)
        return dyn_range(err, what, b, (int8_t)v, 0, 1);
    *out = v != 0;
    return DVPP_OK;
}

dvpp_status dvpp_aipp_dynamic_parse(const uint8_t *blob, size_t len, dvpp_aipp_dyn *d,
                                    dvpp_err *err)
{
    if (!d || !blob)
        return dvpp_err_set(err, DVPP_EINVAL, "blob", "no blob or parameters");
    if (len < DYN_HDR + DYN_BATCH)
        return dvpp_err_set(err, DVPP_EINVAL, "blob",
                            "blob of %zu bytes is shorter than one header and one image (%d)",
                            len, DYN_HDR + DYN_BATCH);
    memset(d, 0, sizeof *d);
    int8_t bn = (int8_t)blob[H_BATCH];
    DYN_CHECK(dyn_range(err, "batch_num", UINT32_MAX, bn, 1, DYN_MAX_BATCH));
    size_t need = dvpp_aipp_dynamic_size((uint32_t)bn);
    if (len < need)
        return dvpp_err_set(err, DVPP_EINVAL, "batch_num",
                            "batch_num %d needs %zu bytes, blob has %zu", bn, need, len);
    d->batch_num = (uint8_t)bn;
    d->input_format = (dvpp_aipp_format)blob[H_FMT];
    DYN_CHECK(dyn_flag(err, "csc_switch", UINT32_MAX, blob[H_CSC], &d->csc_switch));
    DYN_CHECK(dyn_flag(err, "rbuv_swap", UINT32_MAX, blob[H_RBUV], &d->rbuv_swap));
    DYN_CHECK(dyn_flag(err, "ax_swap", UINT32_MAX, blob[H_AX], &d->ax_swap));
    d->src_w = get32(blob + H_SRCW);
    d->src_h = get32(blob + H_SRCH);
    for (int i = 0; i < 9; i++)
        d->matrix[i / 3][i % 3] = (int16_t)get16(blob + H_MATRIX + 2 * i);
    for (int i = 0; i < 3; i++) {
        d->output_bias[i] = blob[H_OBIAS + i];
        d->input_bias[i] = blob[H_IBIAS + i];
    }
    for (unsigned b = 0; b < d->batch_num; b++) {
        dvpp_aipp_dyn_batch *e = &d->batch[b];
        const uint8_t *p = blob + DYN_HDR + (size_t)DYN_BATCH * b;
        DYN_CHECK(dyn_flag(err, "crop", b, p[B_CROP], &e->crop));
        DYN_CHECK(dyn_flag(err, "scf", b, p[B_SCF], &e->scf));
        if (p[B_PAD] >= 2 && p[B_PAD] <= 4) {
            char field[DVPP_ERR_FIELD_LEN];
            snprintf(field, sizeof field, "batch[%u].padding", b);
            return dvpp_err_set(err, DVPP_EUNSUPPORTED, field,
                                "%s: padding mode %u (copy of source data) is not supported",
                                field, p[B_PAD]);
        }
        DYN_CHECK(dyn_flag(err, "padding", b, p[B_PAD], &e->padding));
        e->rotate = p[B_ROT];
        int32_t *const v[12] = {&e->crop_x,   &e->crop_y,    &e->crop_w,    &e->crop_h,
                                &e->scf_in_w, &e->scf_in_h,  &e->scf_out_w, &e->scf_out_h,
                                &e->pad_top,  &e->pad_bottom, &e->pad_left, &e->pad_right};
        for (int i = 0; i < 12; i++)
            *v[i] = get32(p + B_CROPX + 4 * i);
        for (int c = 0; c < 4; c++) {
            e->mean[c] = (int16_t)get16(p + B_MEAN + 2 * c);
            e->min[c] = dvpp_f16_to_f32(get16(p + B_MIN + 2 * c));
            e->var_reci[c] = dvpp_f16_to_f32(get16(p + B_VAR + 2 * c));
        }
    }
    dvpp_status st = dyn_validate(d, err);
    if (st != DVPP_OK)
        memset(d, 0, sizeof *d);
    return st;
}

dvpp_status dvpp_aipp_dynamic_op(const dvpp_aipp_dyn *d, uint32_t index, dvpp_aipp_op *op,
                                 dvpp_err *err)
{
    if (!d || !op)
        return dvpp_err_set(err, DVPP_EINVAL, "blob", "no parameters");
    DYN_CHECK(dyn_validate(d, err));
    if (index >= d->batch_num)
        return dvpp_err_set(err, DVPP_EINVAL, "index", "image %u of a %u-image blob",
                            (unsigned)index, (unsigned)d->batch_num);
    const dvpp_aipp_dyn_batch *e = &d->batch[index];
    if (e->rotate)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "rotate",
                            "dynamic AIPP rotation (%u) is not supported", e->rotate);
    memset(op, 0, sizeof *op);
    op->mode = DVPP_AIPP_STATIC;
    op->input_format = d->input_format;
    op->src_image_size_w = (uint32_t)d->src_w;
    op->src_image_size_h = (uint32_t)d->src_h;
    op->csc_switch = d->csc_switch;
    op->rbuv_swap_switch = d->rbuv_swap;
    op->ax_swap_switch = d->ax_swap;
    memcpy(op->matrix, d->matrix, sizeof op->matrix);
    memcpy(op->output_bias, d->output_bias, sizeof op->output_bias);
    memcpy(op->input_bias, d->input_bias, sizeof op->input_bias);
    if (e->crop) {
        op->crop = true;
        op->load_start_pos_w = (uint32_t)e->crop_x;
        op->load_start_pos_h = (uint32_t)e->crop_y;
        op->crop_size_w = (uint32_t)e->crop_w;
        op->crop_size_h = (uint32_t)e->crop_h;
    }
    if (e->scf) {
        op->resize = true;
        op->resize_output_w = (uint32_t)e->scf_out_w;
        op->resize_output_h = (uint32_t)e->scf_out_h;
    }
    if (e->padding) {
        op->padding = true;
        op->top_padding_size = (uint32_t)e->pad_top;
        op->bottom_padding_size = (uint32_t)e->pad_bottom;
        op->left_padding_size = (uint32_t)e->pad_left;
        op->right_padding_size = (uint32_t)e->pad_right;
    }
    for (int c = 0; c < 4; c++) {
        op->mean_chn[c] = e->mean[c];
        /* As the hardware holds them. */
        op->min_chn[c] = dvpp_f16_to_f32(dvpp_f32_to_f16(e->min[c]));
        op->var_reci_chn[c] = dvpp_f16_to_f32(dvpp_f32_to_f16(e->var_reci[c]));
    }
    return DVPP_OK;
}

/* --- the simple spec ------------------------------------------------------ */

void dvpp_norm_spec_init(dvpp_norm_spec *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 3; i++) {
        s->mean[i] = 0.0;
        s->std[i] = 1.0;
    }
    s->scale = 255.0;
    s->bgr = false;
    s->channels = 3;
    s->layout = DVPP_LAYOUT_NCHW;
    s->dtype = DVPP_DTYPE_F32;
}

dvpp_status dvpp_norm_spec_triple(const char *s, double out[3], const char *field,
                                  dvpp_err *err)
{
    double v[3];
    int n = 0;
    const char *p = s;

    if (!field)
        field = "value";
    if (!s || !out)
        return dvpp_err_set(err, DVPP_EINVAL, field, "%s: missing", field);
    for (;;) {
        char *e;
        while (*p == ' ' || *p == '\t')
            p++;
        if (n == 3)
            return dvpp_err_set(err, DVPP_EINVAL, field, "%s: want 1 or 3 numbers, got more",
                                field);
        errno = 0;
        double x = strtod(p, &e);
        if (e == p || errno == ERANGE || !isfinite(x))
            return dvpp_err_set(err, DVPP_EINVAL, field, "%s: bad number in '%.64s'", field, s);
        v[n++] = x;
        p = e;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (*p != ',')
            return dvpp_err_set(err, DVPP_EINVAL, field, "%s: bad number in '%.64s'", field, s);
        p++;
    }
    if (n == 2)
        return dvpp_err_set(err, DVPP_EINVAL, field, "%s: want 1 or 3 numbers, got 2", field);
    for (int i = 0; i < 3; i++)
        out[i] = n == 1 ? v[0] : v[i];
    return DVPP_OK;
}
