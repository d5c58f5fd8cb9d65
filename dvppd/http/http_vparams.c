/* http_vparams: the parameters of the video routes, parsed on the HTTP
 * thread before any work: a decode's sampling (every, fps, keyframes,
 * start, end, max_frames), frame format, output (npy, raw, jpeg) and the
 * frames' pipeline (the image routes' parameters or a JSON spec); an
 * encode's codec settings and the .npy header of its frames (no pixel is
 * touched). docs/http-api.md lists them. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

#define VIDEO_MAX_THREADS 16   /* codec threads one request may ask for */
#define VIDEO_MAX_ALIGN 4096   /* stride alignment, pixels or rows */

/* A finite number >= 0. */
static bool parse_seconds(const char *v, double *out)
{
    char *end;

    if (!v || !*v || *v == '-' || *v == '+')
        return false;
    errno = 0;
    *out = strtod(v, &end);
    return !errno && !*end && *out >= 0 && *out < 1e9;
}

/* "WxH", both 1..@max. */
static bool parse_wxh(const char *v, uint32_t max, uint32_t *w, uint32_t *h)
{
    char a[16];
    const char *x = v ? strchr(v, 'x') : NULL;

    if (!x || x == v || (size_t)(x - v) >= sizeof(a))
        return false;
    memcpy(a, v, (size_t)(x - v));
    a[x - v] = '\0';
    return dvppd_parse_u32(a, max, w) && dvppd_parse_u32(x + 1, max, h) && *w && *h;
}

/* "N" or "N/D" frames per second. */
static bool parse_rate(const char *v, uint32_t *num, uint32_t *den)
{
    char a[16];
    const char *slash = v ? strchr(v, '/') : NULL;

    *den = 1;
    if (!slash)
        return dvppd_parse_u32(v, 240, num) && *num;
    if ((size_t)(slash - v) >= sizeof(a))
        return false;
    memcpy(a, v, (size_t)(slash - v));
    a[slash - v] = '\0';
    return dvppd_parse_u32(a, 240000, num) && dvppd_parse_u32(slash + 1, 100000, den) && *num &&
           *den;
}

static dvpp_status bad_param(dvpp_err *err, const char *key, const char *want)
{
    return dvpp_err_set(err, DVPP_EINVAL, key, "%s: want %s", key, want);
}

/* One sampling/output parameter of a decode; false when @k is not one. */
static bool decode_sampling_param(http_video *v, const char *k, const char *s,
                                  dvpp_status *st, dvpp_err *err)
{
    dvpp_vdec_opts *o = &v->rq.vdec;
    uint32_t n;

    *st = DVPP_OK;
    if (!strcmp(k, "every")) {
        if (!dvppd_parse_u32(s, UINT32_MAX, &o->every) || !o->every)
            *st = bad_param(err, k, "a frame interval >= 1");
    } else if (!strcmp(k, "fps")) {
        if (!parse_seconds(s, &o->fps) || o->fps <= 0)
            *st = bad_param(err, k, "frames per second > 0");
    } else if (!strcmp(k, "keyframes")) {
        if (!dvppd_parse_flag(s, &o->keyframes_only))
            *st = bad_param(err, k, "0 or 1");
    } else if (!strcmp(k, "start")) {
        if (!parse_seconds(s, &o->start_s))
            *st = bad_param(err, k, "seconds >= 0");
    } else if (!strcmp(k, "end")) {
        if (!parse_seconds(s, &o->end_s) || o->end_s <= 0)
            *st = bad_param(err, k, "seconds > 0");
    } else if (!strcmp(k, "max_frames")) {
        if (!dvppd_parse_u32(s, UINT32_MAX, &o->max_frames) || !o->max_frames)
            *st = bad_param(err, k, "a frame count >= 1");
    } else if (!strcmp(k, "format")) {
        if (!s || !dvpp_pixfmt_parse(s, &o->format) ||
            (o->format != DVPP_PIXEL_NV12 && o->format != DVPP_PIXEL_NV21 &&
             o->format != DVPP_PIXEL_RGB && o->format != DVPP_PIXEL_BGR))
            *st = bad_param(err, k, "nv12, nv21, rgb or bgr");
    } else if (!strcmp(k, "align")) {
        if (!parse_wxh(s, VIDEO_MAX_ALIGN, &o->align_w, &o->align_h))
            *st = bad_param(err, k, "WxH, pixels x rows, 1..4096");
    } else if (!strcmp(k, "threads")) {
        if (!dvppd_parse_u32(s, VIDEO_MAX_THREADS, &n))
            *st = bad_param(err, k, "0..16 decoder threads");
        else
            o->threads = n;
    } else if (!strcmp(k, "out")) {
        if (s && !strcmp(s, "npy"))
            v->kind = HTTP_VOUT_NPY;
        else if (s && !strcmp(s, "raw"))
            v->kind = HTTP_VOUT_RAW;
        else if (s && !strcmp(s, "jpeg"))
            v->kind = HTTP_VOUT_JPEG;
        else
            *st = bad_param(err, k, "npy, raw or jpeg");
    } else if (!strcmp(k, "quality")) {
        if (!dvppd_parse_u32(s, 100, &n) || !n)
            *st = bad_param(err, k, "1..100");
        else
            v->quality = (int)n;
    } else {
        return false;
    }
    return true;
}

/* Pipeline parameters that make no sense for video frames (the frames
 * are the input; a ring or a batch mode has no video form). */
static bool video_refuses_param(const char *k)
{
    return !strcmp(k, "input") || !strcmp(k, "raw") || !strcmp(k, "ring") ||
           !strcmp(k, "strict");
}

/* The frames' pipeline, from the pipeline parameters (@kv) or a JSON
 * spec: a tensor, or (out=jpeg) resized RGB images. */
static dvpp_status decode_frames_pipeline(http_req *r, http_video *v, const http_query *q,
                                          const dvppd_kv *kv, size_t n, dvpp_err *err)
{
    dvppd_spec_env env = {v->kind == HTTP_VOUT_JPEG ? DVPPD_SPEC_DECODE : DVPPD_SPEC_TENSOR,
                          dvppd_aipp_find, (void *)&r->set->aipp, NULL, 0,
                          dvppd_preset_find, (void *)&r->set->presets};
    dvppd_spec *s = &r->spec;
    const char *json;
    size_t json_len;
    dvpp_pipeline check;
    /* As http_spec_build: one JSON spec (query, header or multipart part),
     * and an inline AIPP config from the "aipp" part. */
    dvpp_status st = http_spec_source(r, q, &env, &json, &json_len, err);

    if (st != DVPP_OK)
        return st;
    if (json && n)
        return dvpp_err_set(err, DVPP_EINVAL, kv[0].key,
                            "%s: give it in the JSON spec, not beside it", kv[0].key);
    if (!json && !n && !env.aipp_text)
        return DVPP_OK; /* raw frames */
    st = json ? dvppd_spec_from_json(&env, json, json_len, s, err)
              : dvppd_spec_from_query(&env, kv, n, s, err);
    if (st != DVPP_OK)
        return st;
    if (s->ring[0])
        return dvpp_err_set(err, DVPP_EINVAL, "ring", "video frames are not delivered to "
                            "rings over HTTP (the socket has video channels)");
    if (s->raw_out && v->kind == HTTP_VOUT_NPY)
        v->kind = HTTP_VOUT_RAW; /* "output": {"out": "raw"} in a spec */
    /* The output format of a jpeg pipeline is the JPEG encoder's input. */
    if (v->kind == HTTP_VOUT_JPEG && s->pipe.out_format != DVPP_PIXEL_RGB &&
        s->pipe.out_format != DVPP_PIXEL_BGR)
        return dvpp_err_set(err, DVPP_EINVAL, "format", "out=jpeg frames are rgb");
    v->rq.has_pipe = true;
    v->rq.pipe = s->pipe;
    /* Validate here for a 400 before any work: the frame replaces the
     * input (dvpp_video_run does the same with the real frame). */
    check = s->pipe;
    check.input = DVPP_PIPE_IN_RAW;
    check.raw = (dvpp_pipe_raw){v->rq.vdec.format, 16, 16, 0, 0};
    return dvpp_pipeline_validate(&check, &r->set->cfg.limits, err);
}

/* The most a decode's answer may hold: 4 x limits.max_decode_memory (the
 * library's bound) and limits.max_output_bytes, whichever is less. */
static uint64_t decode_max_bytes(const dvpp_limits *l)
{
    uint64_t dec = l->max_decode_memory > UINT64_MAX / 4 ? UINT64_MAX : l->max_decode_memory * 4;

    return l->max_output_bytes < dec ? l->max_output_bytes : dec;
}

dvpp_status http_vparams_decode(http_req *r, http_video *v, dvpp_err *err)
{
    dvppd_kv pipe_kv[HTTP_MAX_QUERY_ARGS];
    size_t npipe = 0;
    bool format_set = false;
    http_query q;
    dvpp_status st = http_query_read(r, &q, err);

    dvpp_video_request_init(&v->rq);
    v->rq.max_bytes = decode_max_bytes(&r->set->cfg.limits);
    v->kind = HTTP_VOUT_NPY;
    v->quality = 0;
    for (size_t i = 0; st == DVPP_OK && i < q.n; i++) {
        const char *k = q.kv[i].key, *s = q.kv[i].value;
        if (decode_sampling_param(v, k, s, &st, err)) {
            format_set |= !strcmp(k, "format");
            continue;
        }
        if (video_refuses_param(k))
            st = dvpp_err_set(err, DVPP_EINVAL, k, "%s: not for video (the decoded frames "
                              "are the input)", k);
        else if (dvppd_spec_is_param(k))
            pipe_kv[npipe++] = q.kv[i];
        else
            st = dvpp_err_set(err, DVPP_EINVAL, k, "unknown parameter '%.64s'", k);
    }
    if (st != DVPP_OK)
        return st;
    if (v->rq.vdec.end_s > 0 && v->rq.vdec.end_s < v->rq.vdec.start_s)
        return dvpp_err_set(err, DVPP_EINVAL, "end", "end: before start");
    if (v->quality && v->kind != HTTP_VOUT_JPEG)
        return dvpp_err_set(err, DVPP_EINVAL, "quality", "quality: only with out=jpeg");
    if (v->kind == HTTP_VOUT_JPEG && !format_set)
        v->rq.vdec.format = DVPP_PIXEL_RGB; /* JPEGs are made from RGB frames */
    if (!v->quality)
        v->quality = 95;
    st = decode_frames_pipeline(r, v, &q, pipe_kv, npipe, err);
    /* A .npy of packed pixels is H x W x 3: no stride padding in it. */
    if (st == DVPP_OK && !v->rq.has_pipe && v->kind != HTTP_VOUT_RAW &&
        dvpp_pixfmt_get(v->rq.vdec.format)->planes == 1)
        v->rq.vdec.align_w = v->rq.vdec.align_h = 1;
    return st;
}

static dvpp_status encode_setting_param(http_video *v, const char *k, const char *s,
                                        bool *format_set, dvpp_pixfmt *fmt, const char **idr,
                                        dvpp_err *err)
{
    static const char *const presets[] = {"ultrafast", "superfast", "veryfast", "faster",
                                          "fast", "medium", "slow", "slower", "veryslow"};
    dvpp_venc_opts *o = &v->eo;
    uint32_t n;

    if (!strcmp(k, "codec")) {
        if (!s || !dvpp_video_codec_parse(s, &o->codec))
            return dvpp_err_set(err, DVPP_EUNSUPPORTED, k, "codec '%.32s': dvppd encodes "
                                "h264 and h265", s ? s : "");
    } else if (!strcmp(k, "bitrate")) {
        if (!dvppd_parse_u32(s, 500000, &o->bitrate_kbps) || o->bitrate_kbps < 10)
            return bad_param(err, k, "kbit/s, 10..500000");
        v->bitrate_set = true;
    } else if (!strcmp(k, "gop")) {
        if (!dvppd_parse_u32(s, 65536, &o->gop) || !o->gop)
            return bad_param(err, k, "a key frame interval, 1..65536");
    } else if (!strcmp(k, "fps")) {
        if (!parse_rate(s, &o->fps_num, &o->fps_den))
            return bad_param(err, k, "N or N/D frames per second");
    } else if (!strcmp(k, "rc")) {
        if (!s || !dvpp_venc_rc_parse(s, &o->rc))
            return bad_param(err, k, "cbr, vbr or crf");
        v->rc_set = true;
    } else if (!strcmp(k, "crf")) {
        if (!dvppd_parse_u32(s, 51, &o->crf))
            return bad_param(err, k, "0..51");
        v->crf_set = true;
    } else if (!strcmp(k, "profile")) {
        if (!s || !*s || strlen(s) >= sizeof(o->profile) ||
            strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(s))
            return bad_param(err, k, "a codec profile (baseline, main, high)");
        memcpy(o->profile, s, strlen(s) + 1);
    } else if (!strcmp(k, "preset")) {
        size_t i = 0;
        while (i < sizeof(presets) / sizeof(presets[0]) && (!s || strcmp(s, presets[i])))
            i++;
        if (i == sizeof(presets) / sizeof(presets[0]))
            return bad_param(err, k, "an x264/x265 preset (ultrafast .. veryslow)");
        memcpy(o->preset, s, strlen(s) + 1);
    } else if (!strcmp(k, "container")) {
        if (s && !strcmp(s, "annexb"))
            o->container = DVPP_VENC_ANNEXB;
        else if (s && !strcmp(s, "mp4"))
            o->container = DVPP_VENC_MP4;
        else
            return bad_param(err, k, "annexb or mp4");
    } else if (!strcmp(k, "format")) {
        if (!s || !dvpp_pixfmt_parse(s, fmt) ||
            (*fmt != DVPP_PIXEL_NV12 && *fmt != DVPP_PIXEL_NV21 && *fmt != DVPP_PIXEL_RGB &&
             *fmt != DVPP_PIXEL_BGR))
            return bad_param(err, k, "rgb, bgr, nv12 or nv21");
        *format_set = true;
    } else if (!strcmp(k, "idr")) {
        *idr = s ? s : "";
    } else if (!strcmp(k, "threads")) {
        if (!dvppd_parse_u32(s, VIDEO_MAX_THREADS, &n))
            return bad_param(err, k, "0..16 encoder threads");
        o->threads = n;
    } else {
        return dvpp_err_set(err, DVPP_EINVAL, k, "unknown parameter '%.64s'", k);
    }
    return DVPP_OK;
}

/* idr=0,30,...: frame numbers below @n, into v->idr. */
static dvpp_status encode_idr_list(http_video *v, const char *s, dvpp_err *err)
{
    const char *p = s;

    while (*p) {
        char num[24];
        size_t len = strcspn(p, ",");
        uint32_t f;
        if (len == 0 || len >= sizeof(num))
            return bad_param(err, "idr", "frame numbers, comma separated");
        memcpy(num, p, len);
        num[len] = '\0';
        if (!dvppd_parse_u32(num, UINT32_MAX, &f))
            return bad_param(err, "idr", "frame numbers, comma separated");
        if (f >= v->nframes)
            return dvpp_err_set(err, DVPP_EINVAL, "idr", "idr: frame %" PRIu64 " of %" PRIu64
                                " frames", (uint64_t)f, v->nframes);
        v->idr[f] = true;
        p += len + (p[len] == ',');
    }
    return DVPP_OK;
}

/* The frames of the .npy body: T x H x W x 3 (rgb, bgr) or T x (H*3/2) x W
 * (nv12, nv21, tight); the format from the query or, without one, the
 * number of dimensions. */
static dvpp_status encode_frames_header(http_req *r, http_video *v, bool format_set,
                                        dvpp_pixfmt fmt, dvpp_err *err)
{
    char descr[16];
    int64_t shape[5];
    int ndim = 0;
    size_t off = 0, bytes;
    uint64_t w, h;
    dvpp_status st = dvpp_npy_parse(v->in, v->in_len, descr, sizeof(descr), shape, 5,
                                    &ndim, &off, err);

    if (st != DVPP_OK)
        return st;
    if (strcmp(descr, "|u1") && strcmp(descr, "<u1") && strcmp(descr, ">u1"))
        return dvpp_err_set(err, DVPP_EINVAL, "body", "frames are uint8, not '%s'", descr);
    if (!format_set)
        fmt = ndim == 4 ? DVPP_PIXEL_RGB : DVPP_PIXEL_NV12;
    if (fmt == DVPP_PIXEL_RGB || fmt == DVPP_PIXEL_BGR) {
        if (ndim != 4 || shape[3] != 3)
            return dvpp_err_set(err, DVPP_EINVAL, "body", "%s frames are a T x H x W x 3 "
                                "array", dvpp_pixfmt_name(fmt));
        h = (uint64_t)shape[1], w = (uint64_t)shape[2];
    } else {
        if (ndim != 3 || shape[1] % 3)
            return dvpp_err_set(err, DVPP_EINVAL, "body", "%s frames are a T x (H*3/2) x W "
                                "array", dvpp_pixfmt_name(fmt));
        h = (uint64_t)shape[1] / 3 * 2, w = (uint64_t)shape[2];
    }
    if (shape[0] < 1)
        return dvpp_err_set(err, DVPP_EINVAL, "body", "no frames");
    st = dvpp_limits_check_image(&r->set->cfg.limits, w, h, err);
    if (st == DVPP_OK && (w > UINT32_MAX || h > UINT32_MAX))
        st = dvpp_err_set(err, DVPP_ELIMIT, "max_side", "frames of %" PRIu64 "x%" PRIu64, w, h);
    if (st == DVPP_OK)
        st = dvpp_image_init(&v->frame, fmt, (uint32_t)w, (uint32_t)h, 1, 1, err);
    if (st != DVPP_OK)
        return st;
    bytes = fmt == DVPP_PIXEL_RGB || fmt == DVPP_PIXEL_BGR ? (size_t)(w * h * 3)
                                                           : (size_t)(w * h / 2 * 3);
    v->frame_bytes = bytes;
    v->nframes = (uint64_t)shape[0];
    if (v->nframes > r->set->cfg.limits.max_video_frames)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_frames", "%" PRIu64 " frames, above "
                            "max_video_frames (%u)", v->nframes,
                            r->set->cfg.limits.max_video_frames);
    v->in += off;
    v->in_len -= off;
    if (v->nframes > v->in_len / bytes) /* dvpp_npy_parse checked it; stay safe */
        return dvpp_err_set(err, DVPP_ECORRUPT, "body", "the .npy data is short");
    v->eo.width = (uint32_t)w;
    v->eo.height = (uint32_t)h;
    return DVPP_OK;
}

dvpp_status http_vparams_encode(http_req *r, http_video *v, dvpp_err *err)
{
    bool format_set = false;
    dvpp_pixfmt fmt = DVPP_PIXEL_RGB;
    const char *idr = NULL;
    http_query q;
    dvpp_status st = http_query_read(r, &q, err);

    dvpp_venc_opts_init(&v->eo);
    if (st == DVPP_OK && q.spec)
        st = dvpp_err_set(err, DVPP_EINVAL, "spec", "unknown parameter 'spec'");
    for (size_t i = 0; st == DVPP_OK && i < q.n; i++)
        st = encode_setting_param(v, q.kv[i].key, q.kv[i].value, &format_set, &fmt, &idr, err);
    /* As dvppctl video-encode: bitrate alone is VBR (capped at it), crf
     * goes with rc=crf. */
    if (st == DVPP_OK && !v->rc_set)
        v->eo.rc = v->bitrate_set ? DVPP_VENC_RC_VBR : DVPP_VENC_RC_CRF;
    if (st == DVPP_OK && v->eo.rc == DVPP_VENC_RC_CRF && v->bitrate_set)
        st = dvpp_err_set(err, DVPP_EINVAL, "bitrate", "bitrate: needs rc=cbr or rc=vbr");
    if (st == DVPP_OK && v->eo.rc != DVPP_VENC_RC_CRF && v->crf_set)
        st = dvpp_err_set(err, DVPP_EINVAL, "crf", "crf: goes with rc=crf");
    if (st == DVPP_OK)
        st = encode_frames_header(r, v, format_set, fmt, err);
    if (st == DVPP_OK && !(v->idr = calloc(v->nframes, sizeof(*v->idr))))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "idr list");
    if (st == DVPP_OK && idr)
        st = encode_idr_list(v, idr, err);
    return st;
}

