/* dvpp_video_sps: the H.264 and H.265 sequence parameter sets of a
 * stream, read by hand (see video_int.h).
 *
 * FFmpeg drops an SPS whose picture it cannot represent
 * (av_image_check_size: (8w + 1024)(h + 128) < 2^31, so 16384 x 16384 is
 * out) and then reports no size at all; its probing decoders allocate
 * per-macroblock tables for a size they do accept before max_pixels stops
 * the frame buffers (about 50 MB for 16384 x 8192); and after probing its
 * codec parameters hold the size of whichever SPS it parsed last, which in
 * a stream whose resolution changes need not be the first frame's. So the
 * SPS is read here: its coded size (the claim held to the limits), and the
 * cropping that makes it a frame, as libavcodec applies it. */
#include "video_int.h"

#include <string.h>

typedef struct bitr {
    const uint8_t *p;
    size_t bits, pos;
    bool over;                  /* read past the end */
} bitr;

static uint32_t rd_bits(bitr *b, unsigned n)
{
    uint32_t v = 0;

    for (unsigned i = 0; i < n; i++, b->pos++) {
        if (b->pos >= b->bits) {
            b->over = true;
            return 0;
        }
        v = v << 1 | ((b->p[b->pos / 8] >> (7 - b->pos % 8)) & 1);
    }
    return v;
}

/* ue(v); se(v) is skipped the same way. */
static uint32_t rd_ue(bitr *b)
{
    unsigned zeros = 0;

    while (!b->over && rd_bits(b, 1) == 0)
        if (++zeros > 31) {
            b->over = true;
            return 0;
        }
    return zeros ? (uint32_t)((1ull << zeros) - 1 + rd_bits(b, zeros)) : 0;
}

static void skip_scaling_list(bitr *b, int size)
{
    int last = 8, next = 8;

    for (int j = 0; j < size && !b->over; j++) {
        if (next != 0) {
            uint32_t u = rd_ue(b);
            int delta = u & 1 ? (int)((u + 1) / 2) : -(int)(u / 2);
            next = (last + delta + 256) % 256;
        }
        last = next ? next : last;
    }
}

static bool high_profile(uint32_t p)
{
    static const uint8_t high[] = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139,
                                   134, 135};

    for (size_t i = 0; i < sizeof(high); i++)
        if (p == high[i])
            return true;
    return false;
}

/* The first bytes of the RBSP of NAL @nal (@n bytes, @hdr header bytes
 * first, emulation prevention bytes in place) into @rbsp: how many. */
static size_t nal_rbsp(const uint8_t *nal, size_t n, size_t hdr, uint8_t *rbsp, size_t cap)
{
    size_t len = 0;
    unsigned zeros = 0;

    for (size_t i = hdr; i < n && len < cap; i++) {
        if (zeros >= 2 && nal[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = nal[i] == 0 ? zeros + 1 : 0;
        rbsp[len++] = nal[i];
    }
    return len;
}

/* The left crop that av_frame_apply_cropping (libavutil 57) keeps: it
 * moves each plane's start by the crop, and when that would leave a plane
 * start less than 32-byte aligned it shortens the crop to a multiple of
 * 2^(5 + chroma shift - log2 bytes per sample), so a frame is wider than
 * the SPS says (a 4:2:0 8-bit left crop of 8 is no crop at all). */
static uint64_t aligned_left_crop(uint64_t left, bool subsampled_x, uint32_t depth)
{
    unsigned bits = 5 + (subsampled_x ? 1u : 0u) - (depth > 8 ? 1u : 0u);

    return left & ~(((uint64_t)1 << bits) - 1);
}

/* The frame of @p after cropping @l, @r, @t, @b samples (libavcodec's
 * cropping; @sub_x: the frames' chroma is subsampled across). */
static void crop_frame(video_pic *p, uint64_t l, uint64_t r, uint64_t t, uint64_t b,
                       bool sub_x, uint32_t depth)
{
    uint64_t left = aligned_left_crop(l, sub_x, depth);

    p->w = p->coded_w - left - r;
    p->h = p->coded_h - t - b;
    p->top_left = l != 0 || t != 0;
    p->framed = true;
}

/* H.264 (ITU-T H.264 7.3.2.1.1). The frame: frame_cropping in units of
 * (SubWidthC, SubHeightC x (2 - frame_mbs_only)), as h264_ps.c reads it;
 * a crop that leaves no picture makes libavcodec refuse the SPS. Frames
 * of any chroma format but 4:4:4 come out with subsampled chroma (4:0:0
 * as 4:2:0 with grey chroma). */
static bool avc_sps(const uint8_t *nal, size_t n, video_pic *pic)
{
    uint8_t rbsp[512];
    bitr b;
    uint32_t profile, poc, wmb, hmu, chroma = 1, depth = 8, fmo;
    uint64_t crop[4] = {0, 0, 0, 0}, step_x, step_y;

    b = (bitr){rbsp, nal_rbsp(nal, n, 1, rbsp, sizeof(rbsp)) * 8, 0, false};
    profile = rd_bits(&b, 8);
    rd_bits(&b, 16);                    /* constraint flags, level_idc */
    rd_ue(&b);                          /* seq_parameter_set_id */
    if (high_profile(profile)) {
        chroma = rd_ue(&b);
        if (chroma == 3)
            rd_bits(&b, 1);             /* separate_colour_plane_flag */
        depth = 8 + rd_ue(&b);          /* bit_depth_luma_minus8 */
        rd_ue(&b);                      /* bit_depth_chroma_minus8 */
        rd_bits(&b, 1);                 /* qpprime_y_zero_transform_bypass */
        if (rd_bits(&b, 1))             /* seq_scaling_matrix_present_flag */
            for (int i = 0; i < (chroma == 3 ? 12 : 8) && !b.over; i++)
                if (rd_bits(&b, 1))
                    skip_scaling_list(&b, i < 6 ? 16 : 64);
    }
    rd_ue(&b);                          /* log2_max_frame_num_minus4 */
    poc = rd_ue(&b);
    if (poc == 0) {
        rd_ue(&b);
    } else if (poc == 1) {
        uint32_t cycle;
        rd_bits(&b, 1), rd_ue(&b), rd_ue(&b);
        cycle = rd_ue(&b);
        for (uint32_t i = 0; i < cycle && i < 256; i++)
            rd_ue(&b);
    }
    rd_ue(&b);                          /* max_num_ref_frames */
    rd_bits(&b, 1);                     /* gaps_in_frame_num_value_allowed_flag */
    wmb = rd_ue(&b);
    hmu = rd_ue(&b);
    fmo = rd_bits(&b, 1);               /* frame_mbs_only_flag */
    memset(pic, 0, sizeof(*pic));
    pic->coded_w = ((uint64_t)wmb + 1) * 16;
    pic->coded_h = ((uint64_t)hmu + 1) * 16 * (fmo ? 1 : 2);
    if (b.over)
        return false;
    if (!fmo)
        rd_bits(&b, 1);                 /* mb_adaptive_frame_field_flag */
    rd_bits(&b, 1);                     /* direct_8x8_inference_flag */
    if (rd_bits(&b, 1))                 /* frame_cropping_flag */
        for (int i = 0; i < 4; i++)
            crop[i] = rd_ue(&b);        /* left, right, top, bottom */
    step_x = chroma == 1 || chroma == 2 ? 2 : 1;
    step_y = (chroma == 1 ? 2 : 1) * (fmo ? 1u : 2u);
    if (b.over || chroma > 3 || (crop[0] + crop[1]) * step_x >= pic->coded_w ||
        (crop[2] + crop[3]) * step_y >= pic->coded_h)
        return true;                    /* the claim stands; no frame size */
    crop_frame(pic, crop[0] * step_x, crop[1] * step_x, crop[2] * step_y, crop[3] * step_y,
               chroma != 3, depth);
    return true;
}

/* H.265 (ITU-T H.265 7.3.2.2.1): pic_width/height_in_luma_samples (false
 * when 0 or cut short); the frame: the conformance window in units of
 * (SubWidthC, SubHeightC), its left offset first made a multiple of 32
 * (16 above 8 bits) as hevc_ps.c does; a window that leaves no picture
 * makes libavcodec refuse the SPS. 4:0:0 (and separate colour planes)
 * come out as grey frames, without chroma planes. */
static bool hevc_sps(const uint8_t *nal, size_t n, video_pic *pic)
{
    static const uint8_t sub_w[4] = {1, 2, 2, 1}, sub_h[4] = {1, 2, 1, 1};
    uint8_t rbsp[512];
    bool prof[8], level[8];
    uint32_t sub, chroma, depth;
    uint64_t win[4] = {0, 0, 0, 0};
    bitr b;

    b = (bitr){rbsp, nal_rbsp(nal, n, 2, rbsp, sizeof(rbsp)) * 8, 0, false};
    rd_bits(&b, 4);                     /* sps_video_parameter_set_id */
    sub = rd_bits(&b, 3);               /* sps_max_sub_layers_minus1 */
    rd_bits(&b, 1);                     /* sps_temporal_id_nesting_flag */
    /* profile_tier_level(1, sub): the general profile (88 bits), level (8) */
    rd_bits(&b, 32), rd_bits(&b, 32), rd_bits(&b, 32);
    for (uint32_t i = 0; i < sub; i++) {
        prof[i] = rd_bits(&b, 1);       /* sub_layer_profile_present_flag */
        level[i] = rd_bits(&b, 1);      /* sub_layer_level_present_flag */
    }
    if (sub > 0)
        for (uint32_t i = sub; i < 8; i++)
            rd_bits(&b, 2);             /* reserved_zero_2bits */
    for (uint32_t i = 0; i < sub; i++) {
        if (prof[i])
            rd_bits(&b, 32), rd_bits(&b, 32), rd_bits(&b, 24);
        if (level[i])
            rd_bits(&b, 8);
    }
    rd_ue(&b);                          /* sps_seq_parameter_set_id */
    chroma = rd_ue(&b);                 /* chroma_format_idc */
    if (chroma == 3 && rd_bits(&b, 1))  /* separate_colour_plane_flag */
        chroma = 0;
    memset(pic, 0, sizeof(*pic));
    pic->coded_w = rd_ue(&b);
    pic->coded_h = rd_ue(&b);
    if (b.over || !pic->coded_w || !pic->coded_h)
        return false;
    if (rd_bits(&b, 1))                 /* conformance_window_flag */
        for (int i = 0; i < 4; i++)
            win[i] = rd_ue(&b);         /* left, right, top, bottom */
    depth = 8 + rd_ue(&b);              /* bit_depth_luma_minus8 */
    if (b.over || chroma > 3)
        return true;
    win[0] *= sub_w[chroma], win[1] *= sub_w[chroma];
    win[2] *= sub_h[chroma], win[3] *= sub_h[chroma];
    win[0] &= ~(uint64_t)(depth > 8 ? 15 : 31);
    if (win[0] + win[1] >= pic->coded_w || win[2] + win[3] >= pic->coded_h)
        return true;
    crop_frame(pic, win[0], win[1], win[2], win[3], chroma == 1 || chroma == 2, depth);
    return true;
}

bool dvpp__video_sps_read(bool hevc, const uint8_t *nal, size_t n, video_pic *pic)
{
    return hevc ? hevc_sps(nal, n, pic) : avc_sps(nal, n, pic);
}

static bool is_sps(bool hevc, uint8_t header)
{
    return hevc ? (header >> 1 & 0x3f) == 33 : (header & 0x1f) == 7;
}

/* --- records and packets ----------------------------------------------------------- */

static bool is_avcc(bool hevc, const uint8_t *p, size_t n)
{
    return !hevc && n > 8 && p[0] == 1;
}

static bool is_hvcc(bool hevc, const uint8_t *p, size_t n)
{
    return hevc && n > 23 && p[0] == 1;
}

unsigned dvpp__video_nal_length_size(bool hevc, const uint8_t *p, size_t n)
{
    if (is_avcc(hevc, p, n))
        return (p[4] & 3u) + 1;
    if (is_hvcc(hevc, p, n))
        return (p[21] & 3u) + 1;
    return 0;
}

/* The SPS NALs of an avcC record (ISO 14496-15 5.3.3.1): @fn for each;
 * @first: stop after the first. */
static bool avcc_sps(const uint8_t *p, size_t n, bool first, video_sps_fn fn, void *ctx)
{
    unsigned count = p[5] & 0x1fu;
    size_t pos = 6;
    bool ok = false;

    for (unsigned k = 0; k < count && pos + 2 <= n; k++) {
        size_t len = (size_t)p[pos] << 8 | p[pos + 1];
        video_pic pic;
        pos += 2;
        if (len == 0 || len > n - pos)
            return false;
        ok = dvpp__video_sps_read(false, p + pos, len, &pic);
        fn(ctx, &pic, ok);
        if (first)
            return ok;
        pos += len;
    }
    return ok;
}

/* The SPS NALs of an hvcC record (ISO 14496-15 8.3.3.1), as avcc_sps. */
static bool hvcc_sps(const uint8_t *p, size_t n, bool first, video_sps_fn fn, void *ctx)
{
    size_t pos = 23;
    bool ok = false;

    for (unsigned a = 0; a < p[22] && pos + 3 <= n; a++) {
        unsigned type = p[pos] & 0x3f, count = (unsigned)p[pos + 1] << 8 | p[pos + 2];
        pos += 3;
        for (unsigned k = 0; k < count && pos + 2 <= n; k++) {
            size_t len = (size_t)p[pos] << 8 | p[pos + 1];
            video_pic pic;
            pos += 2;
            if (len > n - pos)
                return false;
            if (type == 33) {
                ok = dvpp__video_sps_read(true, p + pos, len, &pic);
                fn(ctx, &pic, ok);
                if (first)
                    return ok;
            }
            pos += len;
        }
    }
    return ok;
}

/* The SPS NALs of Annex-B bytes, in order, as avcc_sps. */
static bool annexb_sps(bool hevc, const uint8_t *p, size_t n, bool first, video_sps_fn fn,
                       void *ctx)
{
    bool ok = false;

    for (size_t i = 0; i + 4 < n; i++) {
        size_t end;
        video_pic pic;
        if (!(p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1 && is_sps(hevc, p[i + 3])))
            continue;
        end = i + 3;
        while (end + 2 < n && !(p[end] == 0 && p[end + 1] == 0 && p[end + 2] <= 1))
            end++;
        end = end + 2 < n ? end : n;
        ok = dvpp__video_sps_read(hevc, p + i + 3, end - (i + 3), &pic);
        fn(ctx, &pic, ok);
        if (first)
            return ok;
        i = end - 1;
    }
    return ok;
}

void dvpp__video_each_record_sps(bool hevc, const uint8_t *p, size_t n, video_sps_fn fn,
                                 void *ctx)
{
    if (is_hvcc(hevc, p, n))
        hvcc_sps(p, n, false, fn, ctx);
    else if (is_avcc(hevc, p, n))
        avcc_sps(p, n, false, fn, ctx);
    else
        annexb_sps(hevc, p, n, false, fn, ctx);
}

void dvpp__video_each_packet_sps(bool hevc, const uint8_t *p, size_t n, unsigned nal_len,
                                 video_sps_fn fn, void *ctx)
{
    size_t pos = 0;

    if (nal_len == 0) {
        annexb_sps(hevc, p, n, false, fn, ctx);
        return;
    }
    while (n - pos > nal_len) {
        size_t len = 0;
        video_pic pic;
        for (unsigned k = 0; k < nal_len; k++)
            len = len << 8 | p[pos + k];
        pos += nal_len;
        if (len == 0 || len > n - pos)
            return;                     /* damaged: the decoder will say so */
        if (is_sps(hevc, p[pos])) {
            bool ok = dvpp__video_sps_read(hevc, p + pos, len, &pic);
            fn(ctx, &pic, ok);
        }
        pos += len;
    }
}

/* Keeps the SPS handed to it. */
static void keep_pic(void *ctx, const video_pic *pic, bool read)
{
    (void)read;
    *(video_pic *)ctx = *pic;
}

bool dvpp__video_first_sps(bool hevc, const uint8_t *p, size_t n, video_pic *pic)
{
    if (is_hvcc(hevc, p, n))
        return hvcc_sps(p, n, true, keep_pic, pic);
    if (is_avcc(hevc, p, n) && (p[5] & 0x1f) > 0)
        return avcc_sps(p, n, true, keep_pic, pic);
    return annexb_sps(hevc, p, n, true, keep_pic, pic);
}

bool dvpp__video_container_crops(const video_pic *pic, uint64_t w, uint64_t h)
{
    return pic->framed && !pic->top_left && w > 0 && h > 0 && w <= pic->w && h <= pic->h &&
           (w + 15) / 16 == (pic->w + 15) / 16 && (h + 15) / 16 == (pic->h + 15) / 16;
}

/* --- the first SPS of an MPEG-TS elementary stream ---------------------------------- */

/* MPEG-TS carries no picture size, and its SPS arrives in-band, in the
 * PES payload of the stream's PID, cut wherever a 184-byte packet payload
 * ends: libavformat only finds it (as extradata) while its probing
 * decoders already run on it. So the payload of that PID is walked here,
 * byte by byte through the TS and PES headers, up to its first SPS. */

#define TS_PACKET 188u

/* A start-code scanner that keeps the first SPS NAL (header byte first). */
typedef struct nal_scan {
    bool hevc;
    uint32_t hist;          /* the last three bytes before the current one */
    bool in, done;          /* inside the SPS / it is complete */
    size_t n;
    uint8_t nal[640];       /* enough for the parsers' 512 RBSP bytes */
} nal_scan;

static void scan_byte(nal_scan *s, uint8_t c)
{
    if (s->in) {
        /* 00 00 00 / 00 00 01 cannot occur inside a NAL: the next one */
        if (s->n >= 2 && !s->nal[s->n - 1] && !s->nal[s->n - 2] && c <= 1) {
            s->n -= 2;
            s->done = true;
            return;
        }
        s->nal[s->n++] = c;
        s->done = s->n == sizeof(s->nal);
        return;
    }
    if ((s->hist & 0xffffffu) == 1 && is_sps(s->hevc, c)) {
        s->in = true;
        s->nal[s->n++] = c;
        return;
    }
    s->hist = s->hist << 8 | c;
}

/* Packet size (188, 192 with a 4-byte time code first, 204 with 16 FEC
 * bytes last) and the offset of the first sync byte: three syncs in a row,
 * or as many as there are packets. */
static bool ts_layout(const uint8_t *d, size_t len, size_t *size, size_t *sync)
{
    static const size_t sizes[] = {188, 192, 204};

    for (size_t k = 0; k < 3; k++) {
        size_t sz = sizes[k], pre = sz == 192 ? 4 : 0;
        for (size_t o = pre; o < sz + pre && o + TS_PACKET <= len; o++) {
            unsigned good = 0;
            for (size_t p = o; good < 3 && p + TS_PACKET <= len && d[p] == 0x47; p += sz)
                good++;
            if (good == 3 || (good > 0 && o + good * sz + TS_PACKET > len)) {
                *size = sz, *sync = o;
                return true;
            }
        }
    }
    return false;
}

/* Where the elementary stream starts in a packet payload that begins a
 * PES packet (@i at its first byte): after the PES header. */
static size_t pes_payload(const uint8_t *p, size_t i)
{
    unsigned sid;

    if (i + 9 > TS_PACKET || p[i] || p[i + 1] || p[i + 2] != 1)
        return i;
    sid = p[i + 3];
    /* streams without the optional header (ISO 13818-1, 2.4.3.7) */
    if (sid == 0xbc || sid == 0xbe || sid == 0xbf || sid == 0xf0 || sid == 0xf1 ||
        sid == 0xf2 || sid == 0xf8 || sid == 0xff)
        return i + 6;
    return i + 9 + p[i + 8];
}

bool dvpp__video_ts_first_sps(bool hevc, int pid, const uint8_t *d, size_t len,
                              video_pic *pic)
{
    nal_scan s;
    size_t size, pos;

    if (!ts_layout(d, len, &size, &pos))
        return false;
    memset(&s, 0, sizeof(s));
    s.hevc = hevc;
    s.hist = 0xffffffu;
    for (; pos + TS_PACKET <= len && !s.done; pos += size) {
        const uint8_t *p = d + pos;
        unsigned afc = p[3] >> 4 & 3;
        size_t i = 4;
        if (p[0] != 0x47 || ((p[1] & 0x1fu) << 8 | p[2]) != (unsigned)pid || !(afc & 1))
            continue;
        if (afc & 2)
            i += 1 + (size_t)p[4];
        if (i < TS_PACKET && (p[1] & 0x40))
            i = pes_payload(p, i);
        for (; i < TS_PACKET && !s.done; i++)
            scan_byte(&s, p[i]);
    }
    return s.in && dvpp__video_sps_read(hevc, s.nal, s.n, pic);
}
