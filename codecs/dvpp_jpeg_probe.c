/* JPEG marker walk: probe, EXIF orientation, scan counting, and the DVPP
 * size predictions that only need the header. Never touches entropy-coded
 * data beyond scanning it for the next marker, and not at all after a
 * sequential frame's one interleaved scan. */
#define _GNU_SOURCE /* memrchr */
#include <string.h>

#include "dvpp_jpeg.h"
#include "jpeg_int.h"

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint16_t rd16(const uint8_t *p, bool le)
{
    return le ? (uint16_t)(p[1] << 8 | p[0]) : be16(p);
}

static uint32_t rd32(const uint8_t *p, bool le)
{
    return le ? (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
                    (uint32_t)p[1] << 8 | p[0]
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                    (uint32_t)p[2] << 8 | p[3];
}

uint8_t dvpp__jpeg_exif_orientation(const uint8_t *p, size_t n)
{
    uint32_t ifd, count;
    bool le;

    /* "Exif\0\0" then a TIFF header: byte order, 42, offset of IFD0. */
    if (n < 14 || memcmp(p, "Exif\0\0", 6) != 0)
        return 1;
    p += 6;
    n -= 6;
    if (p[0] == 'I' && p[1] == 'I')
        le = true;
    else if (p[0] == 'M' && p[1] == 'M')
        le = false;
    else
        return 1;
    if (rd16(p + 2, le) != 42)
        return 1;
    ifd = rd32(p + 4, le);
    if (ifd > n - 2 || ifd < 8)
        return 1;
    count = rd16(p + ifd, le);
    for (uint32_t i = 0; i < count; i++) {
        size_t e = (size_t)ifd + 2 + (size_t)i * 12;
        uint16_t v;
        if (e + 12 > n)
            break;
        if (rd16(p + e, le) != 0x0112)
            continue;
        /* SHORT, count 1: the value sits in the first two value bytes. */
        if (rd16(p + e + 2, le) != 3 || rd32(p + e + 4, le) != 1)
            return 1;
        v = rd16(p + e + 8, le);
        return v >= 1 && v <= 8 ? (uint8_t)v : 1;
    }
    return 1;
}

/* Skip entropy-coded data after an SOS segment: return the offset of the
 * next marker (0xFF followed by neither 0x00 stuffing, a fill 0xFF nor a
 * restart marker), or @len when the data ends first. */
static size_t skip_entropy(const uint8_t *d, size_t pos, size_t len)
{
    while (pos + 1 < len) {
        const uint8_t *ff = memchr(d + pos, 0xFF, len - pos - 1);
        uint8_t m;
        if (!ff)
            return len;
        pos = (size_t)(ff - d);
        m = d[pos + 1];
        if (m == 0x00 || m == 0xFF || (m >= 0xD0 && m <= 0xD7)) {
            pos += m == 0xFF ? 1 : 2;
            continue;
        }
        return pos;
    }
    return len;
}

/* Whether an EOI marker follows position @from (the start of a frame's
 * last scan): entropy-coded data never holds FF D9 (an FF there is
 * followed by 00 or a restart marker), so the last FF D9 after @from is
 * the scan's EOI, or one in data appended after it. Searched from the end:
 * one step for a file that ends with its EOI. */
static bool eoi_after(const uint8_t *d, size_t from, size_t len)
{
    size_t end = len; /* FF bytes at [from, end - 1) can start a pair */

    while (end > from + 1) {
        const uint8_t *ff = memrchr(d + from, 0xFF, end - 1 - from);
        if (!ff)
            return false;
        if (ff[1] == 0xD9)
            return true;
        end = (size_t)(ff - d) + 1;
    }
    return false;
}

static bool is_sof(uint8_t m)
{
    return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

static dvpp_jpeg_sampling classify_sampling(const dvpp_jpeg_info *in)
{
    unsigned h0, v0, h1, v1;

    if (in->components == 1)
        return DVPP_JPEG_400;
    if (in->components < 3)
        return DVPP_JPEG_SAMPLING_OTHER;
    h0 = in->h_samp[0], v0 = in->v_samp[0];
    h1 = in->h_samp[1], v1 = in->v_samp[1];
    if (h1 != in->h_samp[2] || v1 != in->v_samp[2] || !h1 || !v1 ||
        h0 % h1 || v0 % v1)
        return DVPP_JPEG_SAMPLING_OTHER;
    switch ((h0 / h1) << 4 | (v0 / v1)) {
    case 0x11:
        return DVPP_JPEG_444;
    case 0x21:
        return DVPP_JPEG_422;
    case 0x22:
        return DVPP_JPEG_420;
    case 0x12:
        return DVPP_JPEG_440;
    case 0x41:
        return DVPP_JPEG_411;
    }
    return DVPP_JPEG_SAMPLING_OTHER;
}

/* libjpeg's rule (jdapimin.c default_decompress_parms), so the probe and
 * the decoder agree on what a file contains. */
static dvpp_jpeg_colorspace classify_colorspace(const dvpp_jpeg_info *in,
                                                const jpeg_markers *mk)
{
    switch (in->components) {
    case 1:
        return DVPP_JPEG_CS_GRAY;
    case 3:
        if (mk->jfif)
            return DVPP_JPEG_CS_YCBCR;
        if (mk->adobe)
            return mk->adobe_transform == 0 ? DVPP_JPEG_CS_RGB
                                            : DVPP_JPEG_CS_YCBCR;
        if (mk->comp_id[0] == 'R' && mk->comp_id[1] == 'G' &&
            mk->comp_id[2] == 'B')
            return DVPP_JPEG_CS_RGB;
        return DVPP_JPEG_CS_YCBCR;
    case 4: /* Adobe transform 0: CMYK; anything else libjpeg takes as YCCK */
        return mk->adobe && mk->adobe_transform != 0 ? DVPP_JPEG_CS_YCCK
                                                     : DVPP_JPEG_CS_CMYK;
    }
    return DVPP_JPEG_CS_OTHER;
}

static dvpp_status read_sof(const uint8_t *seg, size_t n, uint8_t marker,
                            dvpp_jpeg_info *info, jpeg_markers *mk,
                            dvpp_err *err)
{
    unsigned nc;

    if (n < 6)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG frame header (SOF) is truncated");
    info->precision = seg[0];
    info->height = be16(seg + 1);
    info->width = be16(seg + 3);
    nc = seg[5];
    if (nc == 0 || nc > 4 || n < 6 + 3 * nc)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG frame header declares %u components", nc);
    info->components = (uint8_t)nc;
    for (unsigned i = 0; i < nc; i++) {
        mk->comp_id[i] = seg[6 + 3 * i];
        info->h_samp[i] = seg[7 + 3 * i] >> 4;
        info->v_samp[i] = seg[7 + 3 * i] & 15;
    }
    info->baseline = marker == 0xC0;
    info->progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA ||
                        marker == 0xCE;
    info->arithmetic = marker >= 0xC9;
    info->lossless = marker == 0xC3 || marker == 0xC7 || marker == 0xCB ||
                     marker == 0xCF;
    mk->have_sof = true;
    return DVPP_OK;
}

static void read_app(const uint8_t *seg, size_t n, uint8_t marker,
                     dvpp_jpeg_info *info, jpeg_markers *mk)
{
    /* libjpeg (jdmarker.c examine_app0) counts a JFIF APP0 only with its
     * APP0_DATA_LEN = 14 bytes (identifier, version, units, densities,
     * thumbnail size); a shorter one does not make the file YCbCr. */
    if (marker == 0xE0 && n >= 14 && memcmp(seg, "JFIF\0", 5) == 0)
        mk->jfif = true;
    if (marker == 0xE1 && !mk->have_exif && n >= 6 &&
        memcmp(seg, "Exif\0\0", 6) == 0) {
        mk->have_exif = true;
        info->orientation = dvpp__jpeg_exif_orientation(seg, n);
    }
    if (marker == 0xEE && n >= 12 && memcmp(seg, "Adobe", 5) == 0) {
        mk->adobe = true;
        mk->adobe_transform = seg[11];
    }
}

dvpp_status dvpp__jpeg_walk(const uint8_t *d, size_t len, dvpp_jpeg_info *info,
                            jpeg_markers *mk, dvpp_err *err)
{
    size_t pos = 2;
    dvpp_status st;

    memset(info, 0, sizeof(*info));
    memset(mk, 0, sizeof(*mk));
    info->orientation = 1;
    if (len < 4 || d[0] != 0xFF || d[1] != 0xD8)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "not a JPEG: the data does not start with an SOI "
                            "marker (FF D8)");
    while (pos + 1 < len) {
        uint8_t m;
        size_t seglen;
        if (d[pos] != 0xFF) { /* garbage between markers: libjpeg warns */
            pos++;
            continue;
        }
        m = d[pos + 1];
        if (m == 0xFF) {
            pos++;
            continue;
        }
        if (m == 0xD9) {
            info->complete = true;
            break;
        }
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD8)) {
            pos += 2;
            continue;
        }
        if (pos + 4 > len)
            break;
        seglen = be16(d + pos + 2);
        if (seglen < 2 || pos + 2 + seglen > len)
            break; /* truncated segment: the decoder reports it precisely */
        if (is_sof(m) && !mk->have_sof) {
            st = read_sof(d + pos + 4, seglen - 2, m, info, mk, err);
            if (st != DVPP_OK)
                return st;
        } else if (m >= 0xE0 && m <= 0xEF) {
            read_app(d + pos + 4, seglen - 2, m, info, mk);
        }
        pos += 2 + seglen;
        if (m == 0xDA) {
            info->scans++;
            /* A sequential frame whose first scan holds every component
             * has no other (libjpeg refuses a second SOS then: it decides
             * has_multiple_scans at the first SOS alone), so its entropy
             * data need not be walked (each of the three probes of a
             * request, front end, plan and decoder, walked all 0.5 MB of a
             * 1080p photo: 2 % of the daemon's CPU). Only the first: after
             * a one-component first scan libjpeg decodes every later SOS,
             * all of which the scan limit must count. */
            if (info->scans == 1 && mk->have_sof && !info->progressive && seglen > 2 &&
                d[pos - seglen + 2] == info->components) { /* Ns */
                info->complete = eoi_after(d, pos, len);
                break;
            }
            pos = skip_entropy(d, pos, len);
        }
    }
    if (!mk->have_sof)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG has no frame header (SOF marker) before its "
                            "data ends");
    info->sampling = classify_sampling(info);
    info->colorspace = classify_colorspace(info, mk);
    info->display_width = info->width;
    info->display_height = info->height;
    if (info->orientation >= 5) {
        info->display_width = info->height;
        info->display_height = info->width;
    }
    return DVPP_OK;
}

dvpp_status dvpp_jpeg_probe(const uint8_t *data, size_t len,
                            dvpp_jpeg_info *info, dvpp_err *err)
{
    jpeg_markers mk;
    dvpp_status st = dvpp__jpeg_walk(data, len, info, &mk, err);

    if (st == DVPP_OK && (info->width == 0 || info->height == 0))
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG frame header declares an empty %ux%u image",
                            info->width, info->height);
    return st;
}

const char *dvpp_jpeg_sampling_name(dvpp_jpeg_sampling s)
{
    switch (s) {
    case DVPP_JPEG_444:
        return "444";
    case DVPP_JPEG_422:
        return "422";
    case DVPP_JPEG_420:
        return "420";
    case DVPP_JPEG_400:
        return "400";
    case DVPP_JPEG_440:
        return "440";
    case DVPP_JPEG_411:
        return "411";
    case DVPP_JPEG_SAMPLING_OTHER:
        break;
    }
    return "other";
}

const char *dvpp_jpeg_colorspace_name(dvpp_jpeg_colorspace cs)
{
    static const char *const names[] = {"gray", "ycbcr", "rgb",
                                        "cmyk", "ycck",  "other"};
    return (unsigned)cs <= DVPP_JPEG_CS_OTHER ? names[cs] : "other";
}

uint8_t dvpp_jpeg_shrink_scale(uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                               uint32_t dst_h)
{
    for (uint8_t n = 1; n < 8; n++) {
        if (dvpp_jpeg_scaled_side(src_w, n) >= dst_w &&
            dvpp_jpeg_scaled_side(src_h, n) >= dst_h)
            return n;
    }
    return 8;
}

/* JPEGD's size rule for the header alone (dvpp-aipp.md §2). */
dvpp_status dvpp__jpeg_check_ascend_input(const dvpp_jpeg_info *in,
                                          dvpp_profile profile, dvpp_err *err)
{
    const char *chip = profile == DVPP_PROFILE_ASCEND310 ? "Ascend310"
                                                         : "Ascend310P";

    if (in->width < 32 || in->width > 8192)
        return dvpp_err_set(err, DVPP_EPROFILE, "width",
                            "%s JPEGD: image width(%u) should be between "
                            "[32, 8192]!", chip, in->width);
    if (in->height < 32 || in->height > 8192)
        return dvpp_err_set(err, DVPP_EPROFILE, "height",
                            "%s JPEGD: image height(%u) should be between "
                            "[32, 8192]!", chip, in->height);
    if (in->precision != 8)
        return dvpp_err_set(err, DVPP_EPROFILE, "jpeg",
                            "%s JPEGD: data precision %u is not supported, "
                            "only 8-bit!", chip, in->precision);
    if (in->arithmetic)
        return dvpp_err_set(err, DVPP_EPROFILE, "jpeg",
                            "%s JPEGD: arithmetic coding is not supported, "
                            "only Huffman!", chip);
    if (in->progressive || in->lossless)
        return dvpp_err_set(err, DVPP_EPROFILE, "jpeg",
                            "%s JPEGD: progressive or lossless JPEG is not "
                            "supported, only baseline sequential DCT!", chip);
    if (in->colorspace != DVPP_JPEG_CS_YCBCR && in->colorspace != DVPP_JPEG_CS_GRAY)
        return dvpp_err_set(err, DVPP_EPROFILE, "jpeg",
                            "%s JPEGD: colour space %s is not supported, only "
                            "YCbCr or gray!", chip,
                            dvpp_jpeg_colorspace_name(in->colorspace));
    if (in->sampling == DVPP_JPEG_411 || in->sampling == DVPP_JPEG_SAMPLING_OTHER)
        return dvpp_err_set(err, DVPP_EPROFILE, "jpeg",
                            "%s JPEGD: jpeg format %s is not supported, only "
                            "444/422/420/400/440!", chip,
                            dvpp_jpeg_sampling_name(in->sampling));
    return DVPP_OK;
}

dvpp_status dvpp_jpeg_predict_dec_size(const uint8_t *data, size_t len,
                                       dvpp_pixfmt format, dvpp_profile profile,
                                       uint32_t *size, dvpp_err *err)
{
    dvpp_jpeg_info in;
    dvpp_status st;
    uint64_t w, h, bytes;

    st = dvpp_jpeg_probe(data, len, &in, err);
    if (st != DVPP_OK)
        return st;
    st = dvpp__jpeg_check_ascend_input(&in, profile == DVPP_PROFILE_NATIVE
                                                ? DVPP_PROFILE_ASCEND310
                                                : profile, err);
    if (st != DVPP_OK)
        return st;
    w = dvpp_align_up(in.display_width, 128);
    h = dvpp_align_up(in.display_height, 16);
    /* The 310P's JPEGD also writes YUV_400 (the Y plane) from any source
     * (reference §5.4 lists it in the 310P's output set); sized as the
     * table's grey row, W*H*3/2, an upper bound of that plane, so a
     * prediction never refuses what the decoder accepts. */
    if (format == DVPP_PIXEL_NV12 || format == DVPP_PIXEL_NV21 ||
        (format == DVPP_PIXEL_YUV400 && profile == DVPP_PROFILE_ASCEND310P)) {
        bytes = w * h * 3 / 2;
    } else if (format == DVPP_PIXEL_UNKNOWN ||
               dvpp__jpeg_format_matches(format, in.sampling)) {
        switch (in.sampling) {
        case DVPP_JPEG_444:
            bytes = w * h * 3;
            break;
        case DVPP_JPEG_422:
        case DVPP_JPEG_440:
            bytes = w * h * 2;
            break;
        default: /* 420 and grey (sized like 420, as ACL does) */
            bytes = w * h * 3 / 2;
            break;
        }
    } else {
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "output format %s does not match the %s JPEG "
                            "(ACL_ERROR_FORMAT_NOT_MATCH)",
                            dvpp_pixfmt_name(format),
                            dvpp_jpeg_sampling_name(in.sampling));
    }
    *size = (uint32_t)bytes;
    return DVPP_OK;
}

bool dvpp__jpeg_format_matches(dvpp_pixfmt fmt, dvpp_jpeg_sampling s)
{
    switch (s) {
    case DVPP_JPEG_444:
        return fmt == DVPP_PIXEL_YUV444SP || fmt == DVPP_PIXEL_YVU444SP;
    case DVPP_JPEG_422:
        return fmt == DVPP_PIXEL_YUV422SP || fmt == DVPP_PIXEL_YVU422SP;
    case DVPP_JPEG_440:
        return fmt == DVPP_PIXEL_YUV440SP || fmt == DVPP_PIXEL_YVU440SP;
    case DVPP_JPEG_400:
        return fmt == DVPP_PIXEL_YUV400;
    default:
        return false;
    }
}
