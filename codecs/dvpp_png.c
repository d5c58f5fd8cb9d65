/* dvpp_png: PNG probe, decode (PNGD) and encode through libpng 1.6.
 *
 * Decoding runs in three stages so that a bad input costs as little as
 * possible and every rejection has its own sentence:
 *
 *   1. A hand parse of the signature and IHDR (with its CRC) and a walk over
 *      the chunk headers. It names the exact damage (which signature byte,
 *      which IHDR field, a missing IDAT, a truncated chunk) and applies the
 *      size limits, the per-chunk limit and the profile rules before libpng
 *      or any pixel buffer exists.
 *   2. libpng reads the image, reduced to 8-bit grey, grey+alpha, RGB or
 *      RGBA (palette expanded, low bit depths scaled, 16-bit samples cut to
 *      their high byte, tRNS turned into alpha only when alpha is wanted,
 *      Adam7 de-interlaced). No gamma is applied: Pillow applies none.
 *   3. Our own row converter turns that into the requested layout (grey
 *      replication, Pillow's L weights, alpha drop/keep/composite, BGR
 *      order) at the output stride. When libpng's layout already is the
 *      requested one, libpng writes straight into the output rows.
 *
 * libpng reports errors by longjmp. Each libpng entry point of this file
 * (read_with_libpng, write_with_libpng) is one function with its own setjmp;
 * every value that changes after setjmp lives in a struct reached through a
 * pointer, never in a local, so the jump cannot clobber it. No jump leaves
 * this file.
 */
#include "dvpp_png.h"

#include <png.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The 8-byte PNG signature: \211 P N G \r \n \032 \n. */
static const uint8_t k_png_signature[8] = {0x89, 0x50, 0x4e, 0x47,
                                           0x0d, 0x0a, 0x1a, 0x0a};

/* Signature (8) + IHDR length and type (8) + IHDR data (13) + CRC (4). */
#define IHDR_END 33u
/* Byte offset of the IHDR data (width) in the file. */
#define IHDR_DATA 16u
/* PNG integers (lengths, width, height) must fit 31 bits (PNG spec 7.1). */
#define PNG_UINT31_MAX 0x7fffffffu
/* Length, type and CRC around every chunk's data. */
#define CHUNK_OVERHEAD 12u
/* The largest PLTE (256 entries x 3 bytes). libpng applies its chunk limit
 * to every chunk; this floor keeps the limit about ancillary chunks. */
#define PLTE_MAX_BYTES 768u

/* Ascend PNGD (dvpp-aipp.md section 4). */
#define ASCEND_MIN_SIDE 32u
#define ASCEND_MAX_SIDE 4096u
#define ASCEND_ALIGN_W 128u /* output width stride, in pixels */
#define ASCEND_ALIGN_H 16u  /* output height stride, in rows */
/* acldvppPngPredictDecSize refuses predictions above 4096*4096*4*2. */
#define ASCEND_PREDICT_MAX ((uint64_t)4096 * 4096 * 4 * 2)

/* zlib level used when the caller passes -1 (zlib's own default). */
#define PNG_DEFAULT_LEVEL 6

/* ------------------------------------------------------------------------ */
/* Byte helpers and CRC-32                                                   */

static uint32_t read_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

/* CRC-32 as PNG defines it (ISO 3309, reflected polynomial 0xedb88320).
 * Bitwise and table-free: it only ever runs over the 17 IHDR bytes, and
 * libpng checks every other CRC itself. */
static uint32_t png_crc32(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;

    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

/* Chunk type as text for messages: letters as they are, anything else as
 * \xNN, so a damaged type cannot inject control characters. */
static const char *chunk_name(const uint8_t *type, char buf[20])
{
    size_t o = 0;

    for (int i = 0; i < 4; i++) {
        uint8_t c = type[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, 5, "\\x%02x", c);
    }
    buf[o] = '\0';
    return buf;
}

/* Bit 5 of the first type byte (lower case) marks an ancillary chunk. */
static bool chunk_is_ancillary(const uint8_t *type)
{
    return (type[0] & 0x20) != 0;
}

/* ------------------------------------------------------------------------ */
/* Signature                                                                 */

/* Explain a signature mismatch at byte @i. libpng's own rule (png_read_sig)
 * tells two cases apart: when the first four bytes ("\211PNG") are wrong the
 * input is not a PNG; when only the last four (CR LF ^Z LF) are wrong it is
 * a PNG damaged by a text-mode transfer. We keep that rule and add which
 * byte, which value, and which transfer did it. */
static dvpp_status signature_error(const uint8_t *data, size_t len, size_t i,
                                   dvpp_err *err)
{
    uint8_t got = data[i], want = k_png_signature[i];
    const char *how = "";

    if (len < 4 || png_sig_cmp(data, 0, 4) != 0) {
        if (i == 0 && got == (want & 0x7f))
            how = "; the high bit was stripped by a 7-bit transfer";
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "not a PNG: signature byte %zu is 0x%02x "
                            "(expected 0x%02x)%s",
                            i, got, want, how);
    }
    if (got == 0x0a && want == 0x0d)
        how = " (CR became LF)";
    else if (got == 0x0d && want == 0x0a)
        how = " (LF became CR)";
    else if (want == 0x1a)
        how = " (the DOS end-of-file byte 0x1a was altered)";
    return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                        "PNG file corrupted by ASCII conversion: signature "
                        "byte %zu is 0x%02x, expected 0x%02x%s",
                        i, got, want, how);
}

static dvpp_status check_signature(const uint8_t *data, size_t len,
                                   dvpp_err *err)
{
    size_t n = len < sizeof(k_png_signature) ? len : sizeof(k_png_signature);

    for (size_t i = 0; i < n; i++)
        if (data[i] != k_png_signature[i])
            return signature_error(data, len, i, err);
    if (len == 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "not a PNG: the input is empty");
    if (len < sizeof(k_png_signature))
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "not a PNG: the input is %zu bytes, shorter than "
                            "the 8-byte PNG signature",
                            len);
    return DVPP_OK;
}

/* ------------------------------------------------------------------------ */
/* IHDR                                                                      */

/* Bit depths PNG allows per colour type (PNG spec table 11.1), as a bit set
 * over depth values, plus the text used in messages. */
typedef struct color_rule {
    const char *name;   /* colour type as words */
    unsigned depths;    /* bit d set: depth d allowed */
    const char *listed; /* the same set, for messages */
    uint8_t channels;   /* samples per pixel, palette counted as RGB */
} color_rule;

static const color_rule *color_rule_get(unsigned color_type)
{
    static const color_rule k_rules[7] = {
        [0] = {"greyscale", 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8 | 1u << 16,
               "1, 2, 4, 8, 16", 1},
        [2] = {"RGB", 1u << 8 | 1u << 16, "8, 16", 3},
        [3] = {"palette", 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8, "1, 2, 4, 8",
               3},
        [4] = {"greyscale+alpha", 1u << 8 | 1u << 16, "8, 16", 2},
        [6] = {"RGBA", 1u << 8 | 1u << 16, "8, 16", 4},
    };

    if (color_type >= 7 || k_rules[color_type].name == NULL)
        return NULL;
    return &k_rules[color_type];
}

/* Validate the IHDR chunk at byte 8 (its CRC first: when the CRC is wrong
 * no field can be trusted) and fill the header part of @info. */
static dvpp_status parse_ihdr(const uint8_t *data, size_t len,
                              dvpp_png_info *info, dvpp_err *err)
{
    const uint8_t *d = data + IHDR_DATA;
    const color_rule *rule;
    uint32_t length, stored, computed, width, height;
    unsigned depth, ctype;
    char name[20];

    if (len < IHDR_DATA)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: truncated: the input ends at byte %zu, "
                            "before the IHDR chunk header",
                            len);
    length = read_be32(data + 8);
    if (memcmp(data + 12, "IHDR", 4) != 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: the first chunk is '%s', expected IHDR",
                            chunk_name(data + 12, name));
    if (length != 13)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: IHDR: length is %u bytes, expected 13",
                            length);
    if (len < IHDR_END)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: truncated: the input ends at byte %zu, "
                            "inside the IHDR chunk (which ends at byte %u)",
                            len, IHDR_END);
    stored = read_be32(data + 29);
    computed = png_crc32(data + 12, 17);
    if (stored != computed)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: IHDR: CRC error (stored 0x%08x, computed "
                            "0x%08x)",
                            stored, computed);

    width = read_be32(d);
    height = read_be32(d + 4);
    depth = d[8];
    ctype = d[9];
    if (width == 0 || width > PNG_UINT31_MAX)
        return dvpp_err_set(err, DVPP_ECORRUPT, "width",
                            "PNG: IHDR: width %u is invalid (must be "
                            "1..2147483647)",
                            width);
    if (height == 0 || height > PNG_UINT31_MAX)
        return dvpp_err_set(err, DVPP_ECORRUPT, "height",
                            "PNG: IHDR: height %u is invalid (must be "
                            "1..2147483647)",
                            height);
    rule = color_rule_get(ctype);
    if (!rule)
        return dvpp_err_set(err, DVPP_ECORRUPT, "color_type",
                            "PNG: IHDR: colour type %u is invalid (must be 0, "
                            "2, 3, 4 or 6)",
                            ctype);
    if (depth > 16 || !(rule->depths & (1u << depth)))
        return dvpp_err_set(err, DVPP_ECORRUPT, "bit_depth",
                            "PNG: IHDR: bit depth %u is invalid for colour "
                            "type %u (%s allows %s)",
                            depth, ctype, rule->name, rule->listed);
    if (d[10] != 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: IHDR: compression method %u is invalid "
                            "(must be 0)",
                            d[10]);
    if (d[11] != 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: IHDR: filter method %u is invalid (must be "
                            "0)",
                            d[11]);
    if (d[12] > 1)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: IHDR: interlace method %u is invalid (must "
                            "be 0 or 1)",
                            d[12]);

    memset(info, 0, sizeof(*info));
    info->width = width;
    info->height = height;
    info->bit_depth = (uint8_t)depth;
    info->color_type = (uint8_t)ctype;
    info->channels = rule->channels;
    info->interlaced = d[12] == 1;
    info->has_alpha = ctype == PNG_COLOR_TYPE_GRAY_ALPHA ||
                      ctype == PNG_COLOR_TYPE_RGB_ALPHA;
    return DVPP_OK;
}

/* ------------------------------------------------------------------------ */
/* Chunk walk                                                                */

/* Walk the chunk headers after IHDR. Only lengths and types are read (libpng
 * checks the CRCs). It records tRNS before the first IDAT and rejects an
 * IEND that comes before any IDAT. With @lim (decode) it is strict: it
 * walks to IEND, a chunk that runs past the input or a missing IEND is a
 * truncation, and an ancillary chunk longer than max_png_chunk is a limit
 * error, found before libpng allocates anything for it. Without @lim
 * (probe) it stops at the first IDAT or at the end of the data, so a
 * prefix of a file can be probed. */
static dvpp_status walk_chunks(const uint8_t *data, size_t len,
                               const dvpp_limits *lim, dvpp_png_info *info,
                               dvpp_err *err)
{
    size_t pos = IHDR_END;
    bool seen_idat = false;
    char name[20];

    while (len - pos >= 8) {
        uint32_t length = read_be32(data + pos);
        const uint8_t *type = data + pos + 4;

        if (length > PNG_UINT31_MAX)
            return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                                "PNG: chunk '%s' at byte %zu declares length "
                                "%u, over the PNG maximum of 2^31-1",
                                chunk_name(type, name), pos, length);
        if (memcmp(type, "IEND", 4) == 0) {
            if (!seen_idat)
                return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                                    "PNG: no image data: IEND at byte %zu "
                                    "comes before any IDAT chunk",
                                    pos);
            return DVPP_OK;
        }
        if (memcmp(type, "IDAT", 4) == 0) {
            seen_idat = true;
            if (!lim)
                return DVPP_OK;
        } else if (memcmp(type, "tRNS", 4) == 0 && !seen_idat) {
            info->has_trns = true;
        }
        if (lim && (uint64_t)length + CHUNK_OVERHEAD > len - pos)
            return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                                "PNG: truncated: chunk '%s' at byte %zu "
                                "needs %llu bytes, the input has %zu left",
                                chunk_name(type, name), pos,
                                (unsigned long long)length + CHUNK_OVERHEAD,
                                len - pos);
        /* APNG frame data (fdAT) is image data of frames we skip without
         * reading, not metadata: it costs nothing and stays unlimited. */
        if (lim && chunk_is_ancillary(type) && memcmp(type, "fdAT", 4) != 0 &&
            length > lim->max_png_chunk)
            return dvpp_err_set(err, DVPP_ELIMIT, "max_png_chunk",
                                "PNG: chunk '%s' at byte %zu is %u bytes, "
                                "over max_png_chunk %u",
                                chunk_name(type, name), pos, length,
                                lim->max_png_chunk);
        if ((uint64_t)length + CHUNK_OVERHEAD > len - pos)
            return DVPP_OK; /* probe of a prefix: stop where data stops */
        pos += length + CHUNK_OVERHEAD;
    }
    if (!lim)
        return DVPP_OK;
    if (!seen_idat)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: truncated: the input ends at byte %zu "
                            "before any IDAT chunk",
                            len);
    return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                        "PNG: truncated: the input ends at byte %zu without "
                        "an IEND chunk",
                        len);
}

/* Signature, IHDR and chunk walk; fills every field of @info. */
static dvpp_status parse_header(const uint8_t *data, size_t len,
                                const dvpp_limits *lim, dvpp_png_info *info,
                                dvpp_err *err)
{
    dvpp_status st;

    st = check_signature(data, len, err);
    if (st != DVPP_OK)
        return st;
    st = parse_ihdr(data, len, info, err);
    if (st != DVPP_OK)
        return st;
    st = walk_chunks(data, len, lim, info, err);
    if (st != DVPP_OK)
        return st;
    /* tRNS adds alpha to grey, RGB and palette images (it is invalid, and
     * ignored by libpng, on the types that already have alpha). */
    if (info->has_trns && !info->has_alpha) {
        info->has_alpha = true;
        info->channels++;
    }
    return DVPP_OK;
}

dvpp_status dvpp_png_probe(const uint8_t *data, size_t len,
                           dvpp_png_info *info, dvpp_err *err)
{
    if (!info || (!data && len))
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "dvpp_png_probe: NULL data or info");
    if (!data)
        data = (const uint8_t *)"";
    return parse_header(data, len, NULL, info, err);
}

/* ------------------------------------------------------------------------ */
/* Options and the decode plan                                               */

void dvpp_png_decode_opts_init(dvpp_png_decode_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->format = DVPP_PIXEL_UNKNOWN;
    o->alpha = DVPP_PNG_ALPHA_AUTO;
    o->profile = DVPP_PROFILE_NATIVE;
}

/* Byte order of one output pixel. */
typedef enum out_order {
    ORDER_GRAY,
    ORDER_RGB,
    ORDER_BGR,
    ORDER_RGBA,
    ORDER_BGRA,
} out_order;

/* Everything decided before libpng runs: the output layout and what to do
 * with alpha. Plain data; built by plan_decode(). */
typedef struct decode_plan {
    dvpp_png_info src;  /* header facts from the hand parse */
    dvpp_pixfmt format; /* output format, UNKNOWN already resolved */
    out_order order;    /* byte order of an output pixel */
    uint8_t out_bpp;    /* bytes per output pixel */
    bool want_alpha;    /* ask libpng for alpha (keep or composite it) */
    bool composite;     /* blend onto @bg, output alpha 255 */
    uint8_t bg[3];      /* R, G, B background for composite */
    uint32_t align_w;   /* width stride alignment, pixels */
    uint32_t align_h;   /* height stride alignment, rows */
} decode_plan;

static bool format_to_order(dvpp_pixfmt f, out_order *order, uint8_t *bpp)
{
    switch (f) {
    case DVPP_PIXEL_GRAY:
    case DVPP_PIXEL_YUV400:
        *order = ORDER_GRAY;
        *bpp = 1;
        return true;
    case DVPP_PIXEL_RGB:
        *order = ORDER_RGB;
        *bpp = 3;
        return true;
    case DVPP_PIXEL_BGR:
        *order = ORDER_BGR;
        *bpp = 3;
        return true;
    case DVPP_PIXEL_RGBA:
        *order = ORDER_RGBA;
        *bpp = 4;
        return true;
    case DVPP_PIXEL_BGRA:
        *order = ORDER_BGRA;
        *bpp = 4;
        return true;
    default:
        return false;
    }
}

/* The source's natural format (UNKNOWN in native): grey stays grey, every
 * source with alpha (grey+alpha and tRNS included) becomes RGBA. */
static dvpp_pixfmt natural_format(const dvpp_png_info *src)
{
    if (src->has_alpha)
        return DVPP_PIXEL_RGBA;
    if (src->color_type == PNG_COLOR_TYPE_GRAY)
        return DVPP_PIXEL_GRAY;
    return DVPP_PIXEL_RGB;
}

/* Ascend PNGD rules (dvpp-aipp.md section 4): colour types 0/2/4/6, sides
 * 32..4096, RGB888 or RGBA8888 out; UNKNOWN keeps the source (grey and RGB
 * -> RGB888, with alpha -> RGBA8888, by colour type as DVPP's header parse
 * sees it); strides ALIGN(w,128) pixels and ALIGN(h,16) rows. */
static dvpp_status plan_ascend(const dvpp_png_decode_opts *o,
                               decode_plan *plan, dvpp_err *err)
{
    const char *prof = dvpp_profile_name(o->profile);
    const dvpp_png_info *s = &plan->src;

    if (s->color_type == PNG_COLOR_TYPE_PALETTE)
        return dvpp_err_set(err, DVPP_EPROFILE, "color_type",
                            "%s PNGD: FORMAT_NOT_MATCH: palette PNG (colour "
                            "type 3) is not supported; colour types 0, 2, 4 "
                            "and 6 are",
                            prof);
    if (s->width < ASCEND_MIN_SIDE || s->width > ASCEND_MAX_SIDE)
        return dvpp_err_set(err, DVPP_EPROFILE, "width",
                            "%s PNGD: width %u is outside %u..%u", prof,
                            s->width, ASCEND_MIN_SIDE, ASCEND_MAX_SIDE);
    if (s->height < ASCEND_MIN_SIDE || s->height > ASCEND_MAX_SIDE)
        return dvpp_err_set(err, DVPP_EPROFILE, "height",
                            "%s PNGD: height %u is outside %u..%u", prof,
                            s->height, ASCEND_MIN_SIDE, ASCEND_MAX_SIDE);
    if (o->format == DVPP_PIXEL_UNKNOWN)
        plan->format = s->color_type == PNG_COLOR_TYPE_GRAY_ALPHA ||
                               s->color_type == PNG_COLOR_TYPE_RGB_ALPHA
                           ? DVPP_PIXEL_RGBA
                           : DVPP_PIXEL_RGB;
    else if (o->format == DVPP_PIXEL_RGB || o->format == DVPP_PIXEL_RGBA)
        plan->format = o->format;
    else
        return dvpp_err_set(err, DVPP_EPROFILE, "format",
                            "%s PNGD: output format %s is not supported; "
                            "PNGD writes rgb (RGB888) or rgba (RGBA8888)",
                            prof, dvpp_pixfmt_name(o->format));
    if (o->alpha == DVPP_PNG_ALPHA_COMPOSITE)
        return dvpp_err_set(err, DVPP_EPROFILE, "alpha",
                            "%s PNGD: alpha compositing is not available; "
                            "PNGD drops alpha (rgb) or keeps it (rgba)",
                            prof);
    /* A larger multiple still meets the hardware's alignment rule. */
    if (o->align_w % ASCEND_ALIGN_W || o->align_h % ASCEND_ALIGN_H)
        return dvpp_err_set(err, DVPP_EPROFILE,
                            o->align_w % ASCEND_ALIGN_W ? "align_w" : "align_h",
                            "%s PNGD: stride alignment %ux%u is not a "
                            "multiple of %ux%u",
                            prof, o->align_w, o->align_h, ASCEND_ALIGN_W,
                            ASCEND_ALIGN_H);
    plan->align_w = o->align_w ? o->align_w : ASCEND_ALIGN_W;
    plan->align_h = o->align_h ? o->align_h : ASCEND_ALIGN_H;
    return DVPP_OK;
}

static dvpp_status plan_native(const dvpp_png_decode_opts *o,
                               decode_plan *plan, dvpp_err *err)
{
    out_order order;
    uint8_t bpp;

    plan->format = o->format == DVPP_PIXEL_UNKNOWN ? natural_format(&plan->src)
                                                   : o->format;
    if (!format_to_order(plan->format, &order, &bpp))
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "PNG decode cannot write %s; it writes rgb, bgr, "
                            "rgba, bgra or gray",
                            dvpp_pixfmt_name(plan->format));
    /* Native is tight unless the caller asks otherwise. */
    plan->align_w = o->align_w ? o->align_w : 1;
    plan->align_h = o->align_h ? o->align_h : 1;
    return DVPP_OK;
}

static dvpp_status plan_decode(const dvpp_png_decode_opts *o,
                               const dvpp_png_info *src, decode_plan *plan,
                               dvpp_err *err)
{
    dvpp_status st;
    bool out_alpha;

    memset(plan, 0, sizeof(*plan));
    plan->src = *src;
    if ((unsigned)o->alpha > DVPP_PNG_ALPHA_COMPOSITE)
        return dvpp_err_set(err, DVPP_EINVAL, "alpha",
                            "unknown PNG alpha mode %d", (int)o->alpha);
    if ((unsigned)o->profile > DVPP_PROFILE_ASCEND310P)
        return dvpp_err_set(err, DVPP_EINVAL, "profile",
                            "unknown compatibility profile %d",
                            (int)o->profile);
    st = dvpp_profile_is_ascend(o->profile) ? plan_ascend(o, plan, err)
                                            : plan_native(o, plan, err);
    if (st != DVPP_OK)
        return st;
    (void)format_to_order(plan->format, &plan->order, &plan->out_bpp);
    out_alpha = plan->order == ORDER_RGBA || plan->order == ORDER_BGRA;
    plan->composite = o->alpha == DVPP_PNG_ALPHA_COMPOSITE;
    plan->want_alpha = plan->composite ||
                       (out_alpha && o->alpha != DVPP_PNG_ALPHA_DROP);
    memcpy(plan->bg, o->background, sizeof(plan->bg));
    return DVPP_OK;
}

/* ------------------------------------------------------------------------ */
/* Row conversion                                                            */

/* Pillow's ITU-R 601-2 luma in 16-bit fixed point (Convert.c L24). The
 * weights sum to 65536, so grey -> RGB -> grey is exact. */
static uint8_t luma_pillow(unsigned r, unsigned g, unsigned b)
{
    return (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

/* c over bg with coverage a, rounded to nearest: (c*a + bg*(255-a) + 127)
 * / 255. a = 255 gives c and a = 0 gives bg exactly. */
static uint8_t blend(unsigned c, unsigned bg, unsigned a)
{
    return (uint8_t)((c * a + bg * (255u - a) + 127u) / 255u);
}

/* Convert one row of libpng output (@src_ch interleaved 8-bit samples:
 * G, GA, RGB or RGBA) into the output layout of @plan. */
static void convert_row(const decode_plan *plan, const uint8_t *src,
                        unsigned src_ch, uint8_t *dst, uint32_t width)
{
    for (uint32_t x = 0; x < width; x++, src += src_ch) {
        unsigned r, g, b, a;

        if (src_ch <= 2) {
            r = g = b = src[0];
            a = src_ch == 2 ? src[1] : 255u;
        } else {
            r = src[0];
            g = src[1];
            b = src[2];
            a = src_ch == 4 ? src[3] : 255u;
        }
        if (!plan->want_alpha) {
            a = 255u;
        } else if (plan->composite) {
            r = blend(r, plan->bg[0], a);
            g = blend(g, plan->bg[1], a);
            b = blend(b, plan->bg[2], a);
            a = 255u;
        }
        switch (plan->order) {
        case ORDER_GRAY:
            *dst++ = luma_pillow(r, g, b);
            break;
        case ORDER_RGB:
            dst[0] = (uint8_t)r, dst[1] = (uint8_t)g, dst[2] = (uint8_t)b;
            dst += 3;
            break;
        case ORDER_BGR:
            dst[0] = (uint8_t)b, dst[1] = (uint8_t)g, dst[2] = (uint8_t)r;
            dst += 3;
            break;
        case ORDER_RGBA:
            dst[0] = (uint8_t)r, dst[1] = (uint8_t)g, dst[2] = (uint8_t)b;
            dst[3] = (uint8_t)a;
            dst += 4;
            break;
        case ORDER_BGRA:
            dst[0] = (uint8_t)b, dst[1] = (uint8_t)g, dst[2] = (uint8_t)r;
            dst[3] = (uint8_t)a;
            dst += 4;
            break;
        }
    }
}

/* True when libpng's rows already are the output rows: same channels in
 * the same order, and alpha kept as it is. */
static bool layout_is_direct(const decode_plan *plan, unsigned src_ch)
{
    switch (plan->order) {
    case ORDER_GRAY:
        return src_ch == 1;
    case ORDER_RGB:
        return src_ch == 3;
    case ORDER_RGBA:
        return src_ch == 4 && plan->want_alpha && !plan->composite;
    default:
        return false;
    }
}

/* ------------------------------------------------------------------------ */
/* libpng plumbing shared by read and write                                  */

/* State libpng's callbacks reach through error_ptr and mem_ptr. */
typedef struct png_session {
    bool alloc_failed;       /* a dvpp_malloc request failed */
    char error[DVPP_ERR_LEN]; /* libpng's last error text */
} png_session;

/* libpng's free callback gets no size but dvpp_free needs one, so every
 * block carries its total size in a header, padded so the payload keeps the
 * alignment of max_align_t that libpng expects from malloc. */
#define BLOCK_HEADER                                                           \
    ((sizeof(size_t) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *    \
     _Alignof(max_align_t))

static png_voidp PNGCBAPI png_mem_alloc(png_structp png, png_alloc_size_t size)
{
    png_session *s = png_get_mem_ptr(png);
    size_t total;
    uint8_t *block = NULL;

    if (dvpp_size_add(size, BLOCK_HEADER, &total))
        block = dvpp_malloc(total);
    if (!block) {
        s->alloc_failed = true;
        return NULL;
    }
    memcpy(block, &total, sizeof(total));
    return block + BLOCK_HEADER;
}

static void PNGCBAPI png_mem_free(png_structp png, png_voidp ptr)
{
    uint8_t *block;
    size_t total;

    (void)png;
    if (!ptr)
        return;
    block = (uint8_t *)ptr - BLOCK_HEADER;
    memcpy(&total, block, sizeof(total));
    dvpp_free(block, total);
}

/* Keep libpng's text and jump back to the setjmp of the wrapper function.
 * Returning instead would make libpng print to stderr first. */
static void PNGCBAPI png_on_error(png_structp png, png_const_charp msg)
{
    png_session *s = png_get_error_ptr(png);

    snprintf(s->error, sizeof(s->error), "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

/* Warnings (a damaged ancillary chunk, an sRGB profile libpng dislikes) do
 * not change the pixels we return; a daemon must not print them. */
static void PNGCBAPI png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* ------------------------------------------------------------------------ */
/* Decode                                                                    */

/* One decode's libpng state. Lives on dvpp_png_decode's stack; every field
 * that changes after setjmp is here so a longjmp cannot clobber it. */
typedef struct png_reader {
    png_session s;         /* error text and allocation failures */
    const uint8_t *data;   /* input (borrowed) */
    size_t len;            /* input bytes */
    size_t pos;            /* next byte libpng reads */
    bool truncated;        /* libpng asked for bytes past the end */
    png_structp png;       /* owned; destroyed by read_with_libpng */
    png_infop info;        /* owned, same */
    unsigned passes;       /* 1, or 7 for Adam7 */
    unsigned src_ch;       /* channels of libpng's output rows */
    size_t src_rowbytes;   /* bytes of one libpng output row */
    bool direct;           /* libpng writes the output rows itself */
    uint8_t *scratch;      /* libpng rows before conversion, owned */
    size_t scratch_size;   /* bytes at scratch */
    bool owns_pixels;      /* we allocated out->data */
} png_reader;

static void PNGCBAPI read_from_memory(png_structp png, png_bytep dst,
                                      size_t n)
{
    png_reader *r = png_get_io_ptr(png);

    if (n > r->len - r->pos) {
        r->truncated = true;
        png_error(png, "read beyond end of data");
    }
    memcpy(dst, r->data + r->pos, n);
    r->pos += n;
}

/* The dvpp_status and sentence for a libpng error. */
static dvpp_status status_from_libpng(const png_reader *r, dvpp_err *err)
{
    if (r->s.alloc_failed)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL,
                            "PNG: out of memory while decoding (libpng: %s)",
                            r->s.error);
    if (r->truncated)
        return dvpp_err_set(err, DVPP_ECORRUPT, "data",
                            "PNG: truncated: the input ends after %zu bytes "
                            "while libpng needed more",
                            r->len);
    /* The chunk walk applies max_png_chunk first; this is libpng's own copy
     * of the same limit (png_set_chunk_malloc_max) firing. */
    if (strstr(r->s.error, "chunk data is too large"))
        return dvpp_err_set(err, DVPP_ELIMIT, "max_png_chunk", "PNG: %s",
                            r->s.error);
    if (strstr(r->s.error, "exceeds user limit"))
        return dvpp_err_set(err, DVPP_ELIMIT, "max_side", "PNG: %s",
                            r->s.error);
    return dvpp_err_set(err, DVPP_ECORRUPT, "data", "PNG: %s", r->s.error);
}

/* Hand our limits to libpng as a second line of defence (the hand parse
 * has already applied them exactly). */
static void set_libpng_limits(png_structp png, const dvpp_limits *lim)
{
    png_uint_32 side = lim->max_side < PNG_UINT31_MAX ? lim->max_side
                                                      : PNG_UINT31_MAX;
    png_uint_32 cache;

    png_set_user_limits(png, side, side);
    /* libpng applies this to every chunk, PLTE included, and reads 0 as
     * "no limit"; the floor keeps it about ancillary chunks and above 0. */
    png_set_chunk_malloc_max(png, lim->max_png_chunk > PLTE_MAX_BYTES
                                      ? lim->max_png_chunk
                                      : PLTE_MAX_BYTES);
    /* libpng's cache counter holds N+2 to admit N chunks (it skips when it
     * reaches 1, and 0 means "no limit"), so add 2, saturating. With every
     * ancillary chunk skipped (below) nothing reaches the cache today; this
     * keeps the bound if that ever changes. */
    cache = lim->max_png_chunks > UINT32_MAX - 2 ? UINT32_MAX
                                                  : lim->max_png_chunks + 2;
    png_set_chunk_cache_max(png, cache);
    /* dvppd returns pixels only: skip every ancillary chunk but tRNS
     * unread (CRC-checked, never allocated or inflated), which takes text,
     * iCCP and zTXt bombs off the table. */
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
}

/* Reduce every PNG to 8-bit G, GA, RGB or RGBA; tRNS becomes alpha only
 * when the plan wants alpha. No gamma: Pillow applies none. */
static void set_transforms(png_reader *r, const decode_plan *plan)
{
    png_structp png = r->png;
    int ctype = png_get_color_type(png, r->info);
    int depth = png_get_bit_depth(png, r->info);

    if (ctype == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png); /* x255, x85, x17 */
    if (plan->want_alpha && png_get_valid(png, r->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    if (depth == 16)
        png_set_strip_16(png); /* high byte, as Pillow */
    r->passes = (unsigned)png_set_interlace_handling(png);
}

/* Check libpng's transformed layout is the one set_transforms asked for. */
static dvpp_status check_row_layout(png_reader *r, const decode_plan *plan,
                                    dvpp_err *err)
{
    r->src_ch = png_get_channels(r->png, r->info);
    r->src_rowbytes = png_get_rowbytes(r->png, r->info);
    if (png_get_bit_depth(r->png, r->info) != 8 || r->src_ch < 1 ||
        r->src_ch > 4 ||
        r->src_rowbytes != (size_t)plan->src.width * r->src_ch)
        return dvpp_err_set(err, DVPP_ECODEC, NULL,
                            "PNG: libpng produced %u-bit rows of %u "
                            "channels and %zu bytes for width %u",
                            png_get_bit_depth(r->png, r->info), r->src_ch,
                            r->src_rowbytes, plan->src.width);
    r->direct = layout_is_direct(plan, r->src_ch);
    return DVPP_OK;
}

/* Scratch for libpng's rows when they need converting: one row, or the
 * whole image for Adam7 (each pass fills in pixels of earlier rows). */
static dvpp_status alloc_scratch(png_reader *r, const decode_plan *plan,
                                 const dvpp_limits *lim, dvpp_err *err)
{
    size_t rows = r->passes > 1 ? plan->src.height : 1, size;

    if (r->direct)
        return DVPP_OK;
    if (!dvpp_size_mul(r->src_rowbytes, rows, &size) ||
        size > lim->max_decode_memory)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_decode_memory",
                            "PNG: de-interlacing %ux%u needs %llu bytes of "
                            "working memory, over max_decode_memory %llu",
                            plan->src.width, plan->src.height,
                            (unsigned long long)r->src_rowbytes *
                                (unsigned long long)rows,
                            (unsigned long long)lim->max_decode_memory);
    r->scratch = dvpp_malloc(size);
    if (!r->scratch)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL,
                            "PNG: cannot allocate %zu bytes of row scratch",
                            size);
    r->scratch_size = size;
    return DVPP_OK;
}

/* Zero what the decoder never writes in a caller's buffer (row tails past
 * the pixels, rows past the height) so strided output is deterministic, as
 * it is for buffers from dvpp_image_alloc. */
static void clear_padding(dvpp_image *out, const dvpp_planes *pl)
{
    const dvpp_plane *p = &pl->p[0];

    if (p->stride > p->row_bytes)
        for (uint32_t y = 0; y < p->rows; y++)
            memset(dvpp_image_row(out, pl, 0, y) + p->row_bytes, 0,
                   p->stride - p->row_bytes);
    if (p->alloc_rows > p->rows)
        memset(dvpp_image_row(out, pl, 0, p->rows), 0,
               (size_t)(p->alloc_rows - p->rows) * p->stride);
}

/* Allocate the output (when the caller gave no buffer) now that the
 * header chunks libpng needs (PLTE, tRNS) have proved readable. */
static dvpp_status prepare_output(png_reader *r, dvpp_image *out,
                                  dvpp_planes *pl, dvpp_err *err)
{
    dvpp_status st;

    if (out->data) {
        clear_padding(out, pl);
        return DVPP_OK;
    }
    st = dvpp_image_alloc(out, err);
    if (st != DVPP_OK)
        return st;
    r->owns_pixels = true;
    return dvpp_image_planes(out, pl, err);
}

/* Pull every row through libpng into the output. Runs inside
 * read_with_libpng's setjmp; its locals die with the jump. */
static void read_rows(png_reader *r, const decode_plan *plan, dvpp_image *out,
                      const dvpp_planes *pl)
{
    uint32_t h = plan->src.height;

    if (r->direct) {
        for (unsigned pass = 0; pass < r->passes; pass++)
            for (uint32_t y = 0; y < h; y++)
                png_read_row(r->png, dvpp_image_row(out, pl, 0, y), NULL);
        return;
    }
    if (r->passes > 1) {
        for (unsigned pass = 0; pass < r->passes; pass++)
            for (uint32_t y = 0; y < h; y++)
                png_read_row(r->png, r->scratch + (size_t)y * r->src_rowbytes,
                             NULL);
        for (uint32_t y = 0; y < h; y++)
            convert_row(plan, r->scratch + (size_t)y * r->src_rowbytes,
                        r->src_ch, dvpp_image_row(out, pl, 0, y),
                        plan->src.width);
        return;
    }
    for (uint32_t y = 0; y < h; y++) {
        png_read_row(r->png, r->scratch, NULL);
        convert_row(plan, r->scratch, r->src_ch, dvpp_image_row(out, pl, 0, y),
                    plan->src.width);
    }
}

/* The libpng entry point for decoding: the one setjmp of the read side.
 * @out already carries the output geometry (and maybe a caller buffer
 * checked against it). On error the pixels it allocated are freed and
 * out->data is NULL again. */
static dvpp_status read_with_libpng(png_reader *r, const decode_plan *plan,
                                    const dvpp_limits *lim, dvpp_image *out,
                                    dvpp_planes *pl, dvpp_err *err)
{
    volatile dvpp_status st;

    r->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &r->s,
                                      png_on_error, png_on_warning, &r->s,
                                      png_mem_alloc, png_mem_free);
    if (!r->png)
        return r->s.alloc_failed
                   ? dvpp_err_set(err, DVPP_ENOMEM, NULL,
                                  "PNG: out of memory creating the decoder")
                   : dvpp_err_set(err, DVPP_ECODEC, NULL,
                                  "PNG: libpng %s refused to start: %s",
                                  PNG_LIBPNG_VER_STRING, r->s.error);
    r->info = png_create_info_struct(r->png);
    if (!r->info) {
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL,
                          "PNG: out of memory creating the decoder");
        goto out_destroy;
    }
    if (setjmp(png_jmpbuf(r->png))) {
        st = status_from_libpng(r, err);
        goto out_destroy;
    }
    png_set_read_fn(r->png, r, read_from_memory);
    set_libpng_limits(r->png, lim);
    png_read_info(r->png, r->info);
    set_transforms(r, plan);
    png_read_update_info(r->png, r->info);
    st = check_row_layout(r, plan, err);
    if (st != DVPP_OK)
        goto out_destroy;
    st = alloc_scratch(r, plan, lim, err);
    if (st != DVPP_OK)
        goto out_destroy;
    st = prepare_output(r, out, pl, err);
    if (st != DVPP_OK)
        goto out_destroy;
    read_rows(r, plan, out, pl);
    /* Strict: finish the zlib stream (its Adler-32) and every chunk up to
     * IEND, so a damaged tail is an error, not a silently partial image. */
    png_read_end(r->png, NULL);
    st = DVPP_OK;
out_destroy:
    if (st != DVPP_OK && r->owns_pixels)
        dvpp_image_free(out);
    dvpp_free(r->scratch, r->scratch_size);
    r->scratch = NULL;
    png_destroy_read_struct(&r->png, r->info ? &r->info : NULL, NULL);
    return st;
}

/* Output geometry for @plan, checked against a caller buffer if any. */
static dvpp_status layout_output(const decode_plan *plan, dvpp_image *out,
                                 dvpp_planes *pl, dvpp_err *err)
{
    dvpp_image geom;
    dvpp_status st;

    st = dvpp_image_init(&geom, plan->format, plan->src.width,
                         plan->src.height, plan->align_w, plan->align_h, err);
    if (st != DVPP_OK)
        return st;
    geom.data = out->data;
    geom.size = out->data ? out->size : 0;
    st = dvpp_image_planes(&geom, pl, err);
    if (st != DVPP_OK)
        return st;
    *out = geom;
    return DVPP_OK;
}

dvpp_status dvpp_png_decode_geometry_info(const dvpp_png_info *info,
                                          const dvpp_png_decode_opts *o,
                                          dvpp_image *out, dvpp_err *err)
{
    decode_plan plan;
    dvpp_planes pl;
    dvpp_status st = plan_decode(o, info, &plan, err);

    out->data = NULL;
    if (st == DVPP_OK)
        st = layout_output(&plan, out, &pl, err);
    if (st == DVPP_OK)
        out->size = pl.total;
    return st;
}

dvpp_status dvpp_png_decode(const uint8_t *data, size_t len,
                            const dvpp_png_decode_opts *o,
                            const dvpp_limits *lim, dvpp_image *out,
                            dvpp_err *err)
{
    dvpp_png_decode_opts defaults;
    dvpp_limits default_limits;
    dvpp_png_info info;
    decode_plan plan;
    dvpp_planes pl;
    png_reader r;
    dvpp_status st;

    if (!out || (!data && len))
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "dvpp_png_decode: NULL data or output image");
    if (!data)
        data = (const uint8_t *)"";
    if (!o) {
        dvpp_png_decode_opts_init(&defaults);
        o = &defaults;
    }
    if (!lim) {
        default_limits = dvpp_limits_default();
        lim = &default_limits;
    }
    st = dvpp_limits_check_encoded(lim, len, err);
    if (st != DVPP_OK)
        return st;
    st = parse_header(data, len, lim, &info, err);
    if (st != DVPP_OK)
        return st;
    st = dvpp_limits_check_image(lim, info.width, info.height, err);
    if (st != DVPP_OK)
        return st;
    st = plan_decode(o, &info, &plan, err);
    if (st != DVPP_OK)
        return st;
    st = layout_output(&plan, out, &pl, err);
    if (st != DVPP_OK)
        return st;

    memset(&r, 0, sizeof(r));
    r.data = data;
    r.len = len;
    return read_with_libpng(&r, &plan, lim, out, &pl, err);
}

/* ------------------------------------------------------------------------ */
/* PredictDecSize                                                            */

dvpp_status dvpp_png_predict_dec_size(const uint8_t *data, size_t len,
                                      dvpp_pixfmt format, uint32_t *size,
                                      dvpp_err *err)
{
    dvpp_png_info info;
    uint64_t w, h, row_bytes, total;
    unsigned samples;
    dvpp_status st;

    if (!size || (!data && len))
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "dvpp_png_predict_dec_size: NULL data or size");
    st = dvpp_png_probe(data, len, &info, err);
    if (st != DVPP_OK)
        return st;
    if (info.color_type == PNG_COLOR_TYPE_PALETTE)
        return dvpp_err_set(err, DVPP_EPROFILE, "color_type",
                            "PngPredictDecSize: FORMAT_NOT_MATCH: palette PNG "
                            "(colour type 3) is not supported");
    if (format == DVPP_PIXEL_RGB)
        samples = 3;
    else if (format == DVPP_PIXEL_RGBA || format == DVPP_PIXEL_UNKNOWN)
        samples = 4;
    else
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "PngPredictDecSize: output format %s is not "
                            "supported; use rgb, rgba or unknown",
                            dvpp_pixfmt_name(format));
    /* Sides are < 2^31, so every product below fits 64 bits. */
    w = dvpp_align_up(info.width, ASCEND_ALIGN_W);
    h = dvpp_align_up(info.height, ASCEND_ALIGN_H);
    row_bytes = (w * info.bit_depth * samples + 7) >> 3;
    total = row_bytes * h;
    if (total > ASCEND_PREDICT_MAX)
        return dvpp_err_set(err, DVPP_EPROFILE, "size",
                            "PngPredictDecSize: %ux%u needs %llu bytes, over "
                            "the PNGD maximum of %llu",
                            info.width, info.height,
                            (unsigned long long)total,
                            (unsigned long long)ASCEND_PREDICT_MAX);
    *size = (uint32_t)total;
    return DVPP_OK;
}

/* ------------------------------------------------------------------------ */
/* Encode                                                                    */

/* One encode's libpng state, on dvpp_png_encode's stack. */
typedef struct png_writer {
    png_session s;   /* error text and allocation failures */
    dvpp_buf *out;   /* borrowed; bytes are appended */
    png_structp png; /* owned; destroyed by write_with_libpng */
    png_infop info;  /* owned, same */
} png_writer;

static void PNGCBAPI write_to_buf(png_structp png, png_bytep src, size_t n)
{
    png_writer *w = png_get_io_ptr(png);

    if (dvpp_buf_append(w->out, src, n) != DVPP_OK) {
        w->s.alloc_failed = true;
        png_error(png, "cannot grow the output buffer");
    }
}

static void PNGCBAPI flush_nothing(png_structp png)
{
    (void)png; /* memory output: nothing is buffered below us */
}

/* PNG colour type and BGR flag for an encoder input format. */
static bool encode_layout(dvpp_pixfmt f, int *ctype, bool *bgr)
{
    *bgr = f == DVPP_PIXEL_BGR || f == DVPP_PIXEL_BGRA;
    switch (f) {
    case DVPP_PIXEL_GRAY:
    case DVPP_PIXEL_YUV400:
        *ctype = PNG_COLOR_TYPE_GRAY;
        return true;
    case DVPP_PIXEL_RGB:
    case DVPP_PIXEL_BGR:
        *ctype = PNG_COLOR_TYPE_RGB;
        return true;
    case DVPP_PIXEL_RGBA:
    case DVPP_PIXEL_BGRA:
        *ctype = PNG_COLOR_TYPE_RGB_ALPHA;
        return true;
    default:
        return false;
    }
}

/* Feed every row to libpng at the input's stride. Runs inside
 * write_with_libpng's setjmp. */
static void write_rows(png_structp png, const dvpp_image *in,
                       const dvpp_planes *pl)
{
    for (uint32_t y = 0; y < in->height; y++)
        png_write_row(png, dvpp_image_row(in, pl, 0, y));
}

/* The libpng entry point for encoding: the one setjmp of the write side.
 * On error @out is cut back to its length on entry. */
static dvpp_status write_with_libpng(png_writer *w, const dvpp_image *in,
                                     const dvpp_planes *pl, int ctype,
                                     bool bgr, int level, dvpp_err *err)
{
    size_t start_len = w->out->len;
    volatile dvpp_status st;

    w->png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, &w->s,
                                       png_on_error, png_on_warning, &w->s,
                                       png_mem_alloc, png_mem_free);
    if (!w->png)
        return w->s.alloc_failed
                   ? dvpp_err_set(err, DVPP_ENOMEM, NULL,
                                  "PNG: out of memory creating the encoder")
                   : dvpp_err_set(err, DVPP_ECODEC, NULL,
                                  "PNG: libpng %s refused to start: %s",
                                  PNG_LIBPNG_VER_STRING, w->s.error);
    w->info = png_create_info_struct(w->png);
    if (!w->info) {
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL,
                          "PNG: out of memory creating the encoder");
        goto out_destroy;
    }
    if (setjmp(png_jmpbuf(w->png))) {
        st = w->s.alloc_failed
                 ? dvpp_err_set(err, DVPP_ENOMEM, NULL,
                                "PNG: out of memory while encoding (%s)",
                                w->s.error)
                 : dvpp_err_set(err, DVPP_ECODEC, NULL, "PNG encode: %s",
                                w->s.error);
        goto out_destroy;
    }
    png_set_write_fn(w->png, w, write_to_buf, flush_nothing);
    /* libpng's default write limit is 10^6 px per side; PNG allows 2^31-1. */
    png_set_user_limits(w->png, PNG_UINT31_MAX, PNG_UINT31_MAX);
    png_set_compression_level(w->png, level);
    png_set_IHDR(w->png, w->info, in->width, in->height, 8, ctype,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(w->png, w->info);
    if (bgr)
        png_set_bgr(w->png);
    write_rows(w->png, in, pl);
    png_write_end(w->png, NULL);
    st = DVPP_OK;
out_destroy:
    if (st != DVPP_OK)
        w->out->len = start_len;
    png_destroy_write_struct(&w->png, w->info ? &w->info : NULL);
    return st;
}

dvpp_status dvpp_png_encode_check(const dvpp_image *in, const dvpp_png_encode_opts *o,
                                  dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st;
    int ctype, level;
    bool bgr;

    if (!encode_layout(in->format, &ctype, &bgr))
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "PNG encode takes rgb, bgr, rgba, bgra, gray or "
                            "yuv400, not %s",
                            dvpp_pixfmt_name(in->format));
    st = dvpp_image_planes(in, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (in->width > PNG_UINT31_MAX || in->height > PNG_UINT31_MAX)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "PNG cannot store %ux%u (sides are at most "
                            "2^31-1)",
                            in->width, in->height);
    level = o ? o->level : -1;
    if (level < -1 || level > 9)
        return dvpp_err_set(err, DVPP_EINVAL, "level",
                            "PNG compression level %d is outside -1..9", level);
    return DVPP_OK;
}

dvpp_status dvpp_png_encode(const dvpp_image *in, const dvpp_png_encode_opts *o,
                            dvpp_buf *out, dvpp_err *err)
{
    png_writer w;
    dvpp_planes pl;
    dvpp_status st;
    int ctype, level;
    bool bgr;

    if (!in || !out || !in->data)
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "dvpp_png_encode: NULL image, pixels or output");
    if (!encode_layout(in->format, &ctype, &bgr))
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "PNG encode takes rgb, bgr, rgba, bgra, gray or "
                            "yuv400, not %s",
                            dvpp_pixfmt_name(in->format));
    st = dvpp_image_planes(in, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (in->width > PNG_UINT31_MAX || in->height > PNG_UINT31_MAX)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "PNG cannot store %ux%u (sides are at most "
                            "2^31-1)",
                            in->width, in->height);
    level = o ? o->level : -1;
    if (level < -1 || level > 9)
        return dvpp_err_set(err, DVPP_EINVAL, "level",
                            "PNG compression level %d is outside -1..9", level);
    if (level == -1)
        level = PNG_DEFAULT_LEVEL;

    memset(&w, 0, sizeof(w));
    w.out = out;
    return write_with_libpng(&w, in, &pl, ctype, bgr, level, err);
}
