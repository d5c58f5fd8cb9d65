/* acl_venc.c: aclvenc* (VENC channels) over libdvpp's encoder
 * (codecs/dvpp_video.h), part of libacl_dvpp.so.
 *
 * A channel is a private stream whose tasks run on the device's VENC
 * engine, one at a time and in send order, a libdvpp encoder those tasks
 * own (libx264/libx265 in low-delay mode: one packet out per frame in,
 * during that frame, as DVPP's VENC; dvppctl video-encode --low-delay makes
 * the same bytes), the count of its callbacks (acl_video.h) and an output
 * area of 3,686,400 bytes (DVPP V100's; on ascend310p the program's
 * BufAddr/BufSize when it gives them).
 *
 * aclvencSendFrame checks its arguments, copies the frame (reading only
 * the bytes that are there: a heightStride over-declared past the rows the
 * buffer holds reads the chroma right after the rows), and queues a task,
 * so it returns once the input is consumed. The task encodes the frame,
 * copies the packet into the next free part of the output area, and posts
 * the callback (input picDesc, an acldvppStreamDesc the library made
 * pointing into the area, userdata) to the channel's ThreadId; the stream
 * description is destroyed and its part of the area freed right after the
 * callback returns. A frame that cannot be encoded (or whose packet does
 * not fit the area) gets its callback with retCode != 0 and no data.
 * ForceIFrame = 1 makes the frame an IDR frame.
 *
 * EOS (aclvencSendFrame(ch, NULL, NULL, cfg{eos = 1}, NULL)) ends the
 * stream and waits until every callback has run, none made for the EOS;
 * frames sent after it start a new stream. aclvencDestroyChannel sends
 * EOS, waits, unsubscribes. On the report thread both refuse (they would
 * wait for themselves).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "acl_int.h"
#include "acl_video.h"
#include "dvpp_device.h"
#include "dvpp_profile.h"
#include "dvpp_video.h"

/* DVPP V100's VENC output buffer (reference/acl-api.md section 5.9). */
#define VENC_AREA_BYTES 3686400u
/* Sizes (reference/dvpp-aipp.md section 6): 128..1920 (ascend310),
 * 128..4096 with H.264 at most 4096x2304 in area (ascend310p). */
#define VENC_MIN_SIDE 128u
#define VENC_MAX_SIDE_310 1920u
#define VENC_MAX_SIDE_310P 4096u
#define VENC_H264_MAX_AREA_310P (4096u * 2304u)
#define VENC_MAX_GOP 65536u
/* Frame rates: 0 (the default, 30) or 1..120 (ascend310), 1..240. */
#define VENC_MAX_FPS_310 120u
#define VENC_MAX_FPS_310P 240u
#define VENC_DEFAULT_FPS 30u
/* MaxBitRate in kbit/s: 0 (the default) or 10..30000, default 300
 * (ascend310); 2..614400, default 2000 (ascend310p). */
#define VENC_MIN_KBPS_310 10u
#define VENC_MAX_KBPS_310 30000u
#define VENC_DEFAULT_KBPS_310 300u
#define VENC_MIN_KBPS_310P 2u
#define VENC_MAX_KBPS_310P 614400u
#define VENC_DEFAULT_KBPS_310P 2000u
/* KeyFrameInterval left unset: libdvpp's default GOP. */
#define VENC_DEFAULT_GOP 30u
/* RcMode */
#define VENC_RC_DEFAULT 0u
#define VENC_RC_VBR 1u
#define VENC_RC_CBR 2u
#define VENC_FRAME_FAILED ((uint32_t)ACL_ERROR_RT_AICPU_EXCEPTION)

typedef struct venc_chan venc_chan;

struct aclvencChannelDesc {
    uint64_t thread_id;           /* the report thread's pthread_t */
    aclvencCallback callback;
    acldvppStreamFormat en_type;  /* H265_MAIN_LEVEL: H.265; else H.264 */
    acldvppPixelFormat pic_format;/* NV12 or NV21 */
    uint32_t pic_width;
    uint32_t pic_height;
    uint32_t key_frame_interval;  /* the GOP; 0: VENC_DEFAULT_GOP */
    void *buf_addr;               /* ascend310p: the output area */
    uint32_t buf_size;
    uint32_t rc_mode;             /* 0 default, 1 VBR, 2 CBR */
    uint32_t src_rate;            /* fps; 0: VENC_DEFAULT_FPS */
    uint32_t max_bit_rate;        /* kbit/s; 0: the profile's default */
    uint32_t max_ip_prop;         /* kept */
    uint32_t channel_id;          /* given by aclvencCreateChannel */
    venc_chan *chan;              /* owned while the channel exists */
};

struct aclvencFrameConfig {
    uint8_t force_i_frame;
    uint8_t eos;
};

/* The output area: packets in FIFO order, each freed when its callback
 * returned. Reference-counted: a callback still queued keeps it. */
typedef struct venc_slot {
    size_t off, len;
} venc_slot;

typedef struct venc_ring {
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* a slot was freed */
    uint8_t *area;
    size_t size;
    bool owned;                   /* acli_mem_alloc'd (else the program's) */
    venc_slot *slots;             /* (mu) a ring of cap */
    size_t head, len, cap;        /* (mu) */
    unsigned refs;                /* (mu) the channel's + one per callback */
} venc_ring;

struct venc_chan {
    aclvencCallback cb;
    acldvppStreamFormat en_type;
    dvpp_venc_opts opts;
    acli_stream *stream;
    acli_video_sync *sync;
    venc_ring *ring;
    /* The encoder's side, touched only by the channel's tasks: */
    dvpp_venc *enc;               /* NULL before the first frame and after EOS */
    dvpp_buf out;                 /* the frame's packet */
};

/* --- descriptors ------------------------------------------------------------------ */

static aclError bad_desc(const char *what)
{
    return acli_video_not_live(what, "channelDesc", "aclvencChannelDesc");
}

static bool desc_ok(const aclvencChannelDesc *d)
{
    return acli_handle_ok(d, ACLI_VENC_CHANNEL_DESC);
}

static bool is_310(void)
{
    return acli_profile() == DVPP_PROFILE_ASCEND310;
}

aclvencChannelDesc *aclvencCreateChannelDesc(void)
{
    aclvencChannelDesc *d = acli_video_handle_new(sizeof(*d), ACLI_VENC_CHANNEL_DESC,
                                                  "aclvencCreateChannelDesc");

    if (!d)
        return NULL;
    d->en_type = H265_MAIN_LEVEL;
    return d;
}

aclError aclvencDestroyChannelDesc(aclvencChannelDesc *channelDesc)
{
    bool live = desc_ok(channelDesc);

    /* A channel the program did not destroy goes with its description. */
    if (live && channelDesc->chan)
        aclvencDestroyChannel(channelDesc);
    return acli_video_desc_free(channelDesc, ACLI_VENC_CHANNEL_DESC,
                                live && channelDesc->chan, "aclvencDestroyChannelDesc",
                                "aclvencChannelDesc");
}

static aclError set_en_type(aclvencChannelDesc *d, acldvppStreamFormat t)
{
    aclError rc = acli_video_check_en_type(t, "aclvencSetChannelDescEnType");

    if (rc == ACL_SUCCESS)
        d->en_type = t;
    return rc;
}

static aclError set_pic_format(aclvencChannelDesc *d, acldvppPixelFormat f)
{
    if (!acli_video_is_nv12_or_nv21(f))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "aclvencSetChannelDescPicFormat: format "
                         "%d is not supported: VENC takes PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) "
                         "or YVU (2)", (int)f);
    d->pic_format = f;
    return ACL_SUCCESS;
}

static aclError set_gop(aclvencChannelDesc *d, uint32_t n)
{
    if (n < 1 || n > VENC_MAX_GOP)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvencSetChannelDescKeyFrameInterval: "
                         "keyFrameInterval %u is out of [1, %u]", n, VENC_MAX_GOP);
    d->key_frame_interval = n;
    return ACL_SUCCESS;
}

static aclError set_buf_addr(aclvencChannelDesc *d, void *p)
{
    aclError rc = acli_video_refuse_on_310("aclvencSetChannelDescBufAddr");

    if (rc == ACL_SUCCESS)
        d->buf_addr = p;
    return rc;
}

static aclError set_buf_size(aclvencChannelDesc *d, uint32_t n)
{
    aclError rc = acli_video_refuse_on_310("aclvencSetChannelDescBufSize");

    if (rc == ACL_SUCCESS)
        d->buf_size = n;
    return rc;
}

static aclError set_rc_mode(aclvencChannelDesc *d, uint32_t m)
{
    if (m > VENC_RC_CBR)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvencSetChannelDescRcMode: rcMode %u: 0 "
                         "(default), 1 (VBR) or 2 (CBR)", m);
    d->rc_mode = m;
    return ACL_SUCCESS;
}

static aclError set_src_rate(aclvencChannelDesc *d, uint32_t fps)
{
    uint32_t max = is_310() ? VENC_MAX_FPS_310 : VENC_MAX_FPS_310P;

    if (fps > max)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvencSetChannelDescSrcRate: srcRate %u "
                         "is out of 0 or [1, %u]", fps, max);
    d->src_rate = fps;
    return ACL_SUCCESS;
}

static aclError set_max_bit_rate(aclvencChannelDesc *d, uint32_t kbps)
{
    uint32_t lo = is_310() ? VENC_MIN_KBPS_310 : VENC_MIN_KBPS_310P;
    uint32_t hi = is_310() ? VENC_MAX_KBPS_310 : VENC_MAX_KBPS_310P;

    if (kbps != 0 && (kbps < lo || kbps > hi))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvencSetChannelDescMaxBitRate: "
                         "maxBitRate %u kbit/s is out of 0 or [%u, %u]", kbps, lo, hi);
    d->max_bit_rate = kbps;
    return ACL_SUCCESS;
}

ACLI_VIDEO_SETTER(venc, ThreadId, uint64_t, channelDesc->thread_id = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(venc, Callback, aclvencCallback, channelDesc->callback = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(venc, EnType, acldvppStreamFormat, return set_en_type(channelDesc, v))
ACLI_VIDEO_SETTER(venc, PicFormat, acldvppPixelFormat, return set_pic_format(channelDesc, v))
ACLI_VIDEO_SETTER(venc, PicWidth, uint32_t, channelDesc->pic_width = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(venc, PicHeight, uint32_t, channelDesc->pic_height = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(venc, KeyFrameInterval, uint32_t, return set_gop(channelDesc, v))
ACLI_VIDEO_SETTER(venc, BufAddr, void *, return set_buf_addr(channelDesc, v))
ACLI_VIDEO_SETTER(venc, BufSize, uint32_t, return set_buf_size(channelDesc, v))
ACLI_VIDEO_SETTER(venc, RcMode, uint32_t, return set_rc_mode(channelDesc, v))
ACLI_VIDEO_SETTER(venc, SrcRate, uint32_t, return set_src_rate(channelDesc, v))
ACLI_VIDEO_SETTER(venc, MaxBitRate, uint32_t, return set_max_bit_rate(channelDesc, v))

ACLI_VIDEO_GETTER(venc, ChannelId, uint32_t, channel_id, 0)
ACLI_VIDEO_GETTER(venc, ThreadId, uint64_t, thread_id, 0)
ACLI_VIDEO_GETTER(venc, Callback, aclvencCallback, callback, NULL)
ACLI_VIDEO_GETTER(venc, EnType, acldvppStreamFormat, en_type, H265_MAIN_LEVEL)
ACLI_VIDEO_GETTER(venc, PicFormat, acldvppPixelFormat, pic_format, PIXEL_FORMAT_YUV_400)
ACLI_VIDEO_GETTER(venc, PicWidth, uint32_t, pic_width, 0)
ACLI_VIDEO_GETTER(venc, PicHeight, uint32_t, pic_height, 0)
ACLI_VIDEO_GETTER(venc, KeyFrameInterval, uint32_t, key_frame_interval, 0)
ACLI_VIDEO_GETTER(venc, BufAddr, void *, buf_addr, NULL)
ACLI_VIDEO_GETTER(venc, BufSize, uint32_t, buf_size, 0)
ACLI_VIDEO_GETTER(venc, RcMode, uint32_t, rc_mode, 0)
ACLI_VIDEO_GETTER(venc, SrcRate, uint32_t, src_rate, 0)
ACLI_VIDEO_GETTER(venc, MaxBitRate, uint32_t, max_bit_rate, 0)

static size_t param_size(aclvencChannelDescParamType t)
{
    switch (t) {
    case ACL_VENC_THREAD_ID_UINT64:
        return sizeof(uint64_t);
    case ACL_VENC_CALLBACK_PTR:
        return sizeof(aclvencCallback);
    case ACL_VENC_BUF_ADDR_PTR:
        return sizeof(void *);
    case ACL_VENC_PIXEL_FORMAT_UINT32:
    case ACL_VENC_ENCODE_TYPE_UINT32:
    case ACL_VENC_PIC_WIDTH_UINT32:
    case ACL_VENC_PIC_HEIGHT_UINT32:
    case ACL_VENC_KEY_FRAME_INTERVAL_UINT32:
    case ACL_VENC_BUF_SIZE_UINT32:
    case ACL_VENC_RC_MODE_UINT32:
    case ACL_VENC_SRC_RATE_UINT32:
    case ACL_VENC_MAX_BITRATE_UINT32:
    case ACL_VENC_MAX_IP_PROP_UINT32:
        return sizeof(uint32_t);
    }
    return 0;
}

/* The size check both param calls make: 0 or the value's size. */
static aclError param_check(const aclvencChannelDesc *d, aclvencChannelDescParamType t,
                            size_t length, bool exact, const void *param, const char *what,
                            size_t *want)
{
    aclError rc;

    *want = param_size(t);
    if (!desc_ok(d))
        return bad_desc(what);
    rc = acli_video_param_given(what, (int)t, *want, param);
    if (rc == ACL_SUCCESS)
        rc = acli_video_param_length(what, (int)t, *want, length, exact);
    return rc;
}

aclError aclvencSetChannelDescParam(aclvencChannelDesc *channelDesc,
                                    aclvencChannelDescParamType paramType, size_t length,
                                    const void *param)
{
    size_t want;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    void *ptr = NULL;
    aclvencCallback cb = NULL;
    aclError rc = param_check(channelDesc, paramType, length, true, param,
                              "aclvencSetChannelDescParam", &want);

    if (rc != ACL_SUCCESS)
        return rc;
    if (want == sizeof(uint32_t))
        memcpy(&u32, param, sizeof(u32));
    switch (paramType) {
    case ACL_VENC_THREAD_ID_UINT64:
        memcpy(&u64, param, sizeof(u64));
        channelDesc->thread_id = u64;
        return ACL_SUCCESS;
    case ACL_VENC_CALLBACK_PTR:
        memcpy(&cb, param, sizeof(cb));
        channelDesc->callback = cb;
        return ACL_SUCCESS;
    case ACL_VENC_BUF_ADDR_PTR:
        memcpy(&ptr, param, sizeof(ptr));
        return set_buf_addr(channelDesc, ptr);
    case ACL_VENC_PIXEL_FORMAT_UINT32:
        return set_pic_format(channelDesc, (acldvppPixelFormat)u32);
    case ACL_VENC_ENCODE_TYPE_UINT32:
        return set_en_type(channelDesc, (acldvppStreamFormat)u32);
    case ACL_VENC_PIC_WIDTH_UINT32:
        channelDesc->pic_width = u32;
        return ACL_SUCCESS;
    case ACL_VENC_PIC_HEIGHT_UINT32:
        channelDesc->pic_height = u32;
        return ACL_SUCCESS;
    case ACL_VENC_KEY_FRAME_INTERVAL_UINT32:
        return set_gop(channelDesc, u32);
    case ACL_VENC_BUF_SIZE_UINT32:
        return set_buf_size(channelDesc, u32);
    case ACL_VENC_RC_MODE_UINT32:
        return set_rc_mode(channelDesc, u32);
    case ACL_VENC_SRC_RATE_UINT32:
        return set_src_rate(channelDesc, u32);
    case ACL_VENC_MAX_BITRATE_UINT32:
        return set_max_bit_rate(channelDesc, u32);
    case ACL_VENC_MAX_IP_PROP_UINT32:
        channelDesc->max_ip_prop = u32;
        return ACL_SUCCESS;
    }
    return ACL_ERROR_INVALID_PARAM; /* not reached: param_size knows every type */
}

aclError aclvencGetChannelDescParam(const aclvencChannelDesc *channelDesc,
                                    aclvencChannelDescParamType paramType, size_t length,
                                    size_t *paramRetSize, void *param)
{
    size_t want;
    uint32_t u32 = 0;
    aclError rc = param_check(channelDesc, paramType, length, false, param,
                              "aclvencGetChannelDescParam", &want);

    if (rc != ACL_SUCCESS)
        return rc;
    if (!paramRetSize)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvencGetChannelDescParam: paramRetSize "
                         "is NULL");
    switch (paramType) {
    case ACL_VENC_THREAD_ID_UINT64:
        memcpy(param, &channelDesc->thread_id, sizeof(uint64_t));
        break;
    case ACL_VENC_CALLBACK_PTR:
        memcpy(param, &channelDesc->callback, sizeof(aclvencCallback));
        break;
    case ACL_VENC_BUF_ADDR_PTR:
        memcpy(param, &channelDesc->buf_addr, sizeof(void *));
        break;
    case ACL_VENC_PIXEL_FORMAT_UINT32: u32 = (uint32_t)channelDesc->pic_format; break;
    case ACL_VENC_ENCODE_TYPE_UINT32: u32 = (uint32_t)channelDesc->en_type; break;
    case ACL_VENC_PIC_WIDTH_UINT32: u32 = channelDesc->pic_width; break;
    case ACL_VENC_PIC_HEIGHT_UINT32: u32 = channelDesc->pic_height; break;
    case ACL_VENC_KEY_FRAME_INTERVAL_UINT32: u32 = channelDesc->key_frame_interval; break;
    case ACL_VENC_BUF_SIZE_UINT32: u32 = channelDesc->buf_size; break;
    case ACL_VENC_RC_MODE_UINT32: u32 = channelDesc->rc_mode; break;
    case ACL_VENC_SRC_RATE_UINT32: u32 = channelDesc->src_rate; break;
    case ACL_VENC_MAX_BITRATE_UINT32: u32 = channelDesc->max_bit_rate; break;
    case ACL_VENC_MAX_IP_PROP_UINT32: u32 = channelDesc->max_ip_prop; break;
    }
    if (want == sizeof(uint32_t))
        memcpy(param, &u32, sizeof(u32));
    *paramRetSize = want;
    return ACL_SUCCESS;
}

/* --- frame configs ------------------------------------------------------------------ */

static bool config_ok(const aclvencFrameConfig *c)
{
    return acli_handle_ok(c, ACLI_VENC_FRAME_CONFIG);
}

aclvencFrameConfig *aclvencCreateFrameConfig(void)
{
    return acli_video_handle_new(sizeof(aclvencFrameConfig), ACLI_VENC_FRAME_CONFIG,
                                 "aclvencCreateFrameConfig");
}

aclError aclvencDestroyFrameConfig(aclvencFrameConfig *config)
{
    return acli_video_handle_free(config, ACLI_VENC_FRAME_CONFIG, "aclvencDestroyFrameConfig",
                                  "aclvencFrameConfig");
}

static aclError set_flag(aclvencFrameConfig *c, uint8_t v, uint8_t *field, const char *what)
{
    if (!config_ok(c))
        return acli_video_not_live(what, "config", "aclvencFrameConfig");
    if (v > 1)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %u is not 0 or 1", what, v);
    *field = v;
    return ACL_SUCCESS;
}

aclError aclvencSetFrameConfigForceIFrame(aclvencFrameConfig *config, uint8_t forceIFrame)
{
    return set_flag(config, forceIFrame, config_ok(config) ? &config->force_i_frame : NULL,
                    "aclvencSetFrameConfigForceIFrame");
}

aclError aclvencSetFrameConfigEos(aclvencFrameConfig *config, uint8_t eos)
{
    return set_flag(config, eos, config_ok(config) ? &config->eos : NULL,
                    "aclvencSetFrameConfigEos");
}

/* A NULL or dead config reads as the documented error value -1 (255). */
uint8_t aclvencGetFrameConfigForceIFrame(const aclvencFrameConfig *config)
{
    return config_ok(config) ? config->force_i_frame : UINT8_MAX;
}

uint8_t aclvencGetFrameConfigEos(const aclvencFrameConfig *config)
{
    return config_ok(config) ? config->eos : UINT8_MAX;
}

/* --- the output area -------------------------------------------------------------------- */

static void ring_unref_locked(venc_ring *r)
{
    bool last = --r->refs == 0;

    pthread_mutex_unlock(&r->mu);
    if (!last)
        return;
    if (r->owned)
        acli_mem_free(r->area, ACLI_MEM_DVPP);
    free(r->slots);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* The area: @addr/@size from the program (ascend310p), else our own. */
static aclError ring_new(void *addr, uint32_t size, venc_ring **out)
{
    venc_ring *r = calloc(1, sizeof(*r));
    aclError rc;

    *out = NULL;
    if (!r)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclvencCreateChannel: no memory");
    if (pthread_mutex_init(&r->mu, NULL) != 0 || acli_cond_init(&r->cv) != 0) {
        free(r);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclvencCreateChannel: no mutex");
    }
    r->refs = 1;
    if (addr && size) {
        size_t avail = acli_mem_avail(addr);
        r->area = addr;
        r->size = avail && avail < size ? avail : size;
    } else {
        rc = acli_mem_alloc((void **)&r->area, VENC_AREA_BYTES, ACLI_MEM_DVPP);
        if (rc != ACL_SUCCESS) {
            pthread_mutex_lock(&r->mu);
            ring_unref_locked(r);
            return rc;
        }
        r->owned = true;
        r->size = VENC_AREA_BYTES;
    }
    *out = r;
    return ACL_SUCCESS;
}

/* Where @len bytes fit after the packets in flight (mu held). */
static bool ring_fit(const venc_ring *r, size_t len, size_t *off)
{
    const venc_slot *first, *last;
    size_t start, end;

    if (r->len == 0) {
        *off = 0;
        return len <= r->size;
    }
    first = &r->slots[r->head];
    last = &r->slots[(r->head + r->len - 1) % r->cap];
    start = first->off;
    end = last->off + last->len;
    if (end > start) { /* in flight: [start, end) */
        if (r->size - end >= len) {
            *off = end;
            return true;
        }
        if (start >= len) {
            *off = 0;
            return true;
        }
        return false;
    }
    /* wrapped: in flight [start, size) and [0, end) */
    if (start - end >= len) {
        *off = end;
        return true;
    }
    return false;
}

static bool ring_push(venc_ring *r, size_t off, size_t len)
{
    if (r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        venc_slot *s = calloc(cap, sizeof(*s));
        if (!s)
            return false;
        for (size_t i = 0; i < r->len; i++)
            s[i] = r->slots[(r->head + i) % r->cap];
        free(r->slots);
        r->slots = s;
        r->cap = cap;
        r->head = 0;
    }
    r->slots[(r->head + r->len) % r->cap] = (venc_slot){off, len};
    r->len++;
    return true;
}

/* A part of the area for @len bytes, waiting (up to @timeout_ms per freed
 * slot; 0: for ever) for callbacks to give parts back. False when the
 * packet can never fit, the wait timed out, or no memory. */
static bool ring_take(venc_ring *r, size_t len, long timeout_ms, size_t *off)
{
    struct timespec until;
    bool ok = false;

    pthread_mutex_lock(&r->mu);
    if (len > r->size) {
        pthread_mutex_unlock(&r->mu);
        return false;
    }
    if (timeout_ms)
        acli_deadline_ms(&until, timeout_ms);
    for (;;) {
        size_t had = r->len;
        int w;
        if (ring_fit(r, len, off)) {
            ok = ring_push(r, *off, len);
            break;
        }
        w = timeout_ms ? pthread_cond_timedwait(&r->cv, &r->mu, &until)
                       : pthread_cond_wait(&r->cv, &r->mu);
        if (r->len < had && timeout_ms)
            acli_deadline_ms(&until, timeout_ms);
        else if (w == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* The oldest packet's callback returned: its part is free. */
static void ring_release(venc_ring *r)
{
    pthread_mutex_lock(&r->mu);
    if (r->len) {
        r->head = (r->head + 1) % r->cap;
        r->len--;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* --- callbacks ------------------------------------------------------------------------- */

typedef struct venc_report {
    venc_ring *ring;              /* a reference */
    aclvencCallback cb;
    acldvppPicDesc *input;        /* the program's, handed back as is */
    acldvppStreamDesc *output;    /* ours: destroyed after the callback */
    void *user;
    bool holds_slot;
} venc_report;

static void run_report(void *arg)
{
    venc_report *r = arg;

    r->cb(r->input, r->output, r->user);
    acldvppDestroyStreamDesc(r->output);
    if (r->holds_slot)
        ring_release(r->ring);
    pthread_mutex_lock(&r->ring->mu);
    ring_unref_locked(r->ring);
    free(r);
}

/* The callback of one frame: its packet at @off (@len bytes) in the area,
 * or (@ret != 0) a failure with no data. */
static void post_callback(venc_chan *ch, acldvppPicDesc *input, void *user, bool holds_slot,
                          size_t off, size_t len, uint32_t ret)
{
    venc_report *r = malloc(sizeof(*r));
    acldvppStreamDesc *out = acldvppCreateStreamDesc();

    if (!r || !out) {
        free(r);
        acldvppDestroyStreamDesc(out);
        if (holds_slot)
            ring_release(ch->ring);
        return; /* no memory: the callback is lost */
    }
    if (ret == 0) {
        acldvppSetStreamDescData(out, ch->ring->area + off);
        acldvppSetStreamDescSize(out, (uint32_t)len);
    }
    acldvppSetStreamDescFormat(out, ch->en_type);
    acldvppSetStreamDescRetCode(out, ret);
    *r = (venc_report){ch->ring, ch->cb, input, out, user, holds_slot};
    pthread_mutex_lock(&ch->ring->mu);
    ch->ring->refs++;
    pthread_mutex_unlock(&ch->ring->mu);
    if (acli_video_post(ch->sync, run_report, r) != ACL_SUCCESS) {
        acldvppDestroyStreamDesc(out);
        if (holds_slot)
            ring_release(ch->ring);
        pthread_mutex_lock(&ch->ring->mu);
        ring_unref_locked(ch->ring);
        free(r);
    }
}

/* --- tasks -------------------------------------------------------------------------------- */

typedef struct venc_task {
    venc_chan *ch;
    bool eos;
    bool force_idr;
    dvpp_image img;               /* the frame's copy (data owned) */
    acldvppPicDesc *input;
    void *user;
    bool ran;
} venc_task;

/* Encode one frame and call back with its packet. */
static void encode_frame(venc_chan *ch, venc_task *k)
{
    dvpp_err err;
    size_t off = 0;
    dvpp_status st = DVPP_OK;

    if (!ch->enc)
        st = dvpp_venc_open(&ch->opts, &ch->out, &ch->enc, &err);
    ch->out.len = 0;
    if (st == DVPP_OK)
        st = dvpp_venc_frame(ch->enc, &k->img, k->force_idr, &err);
    /* Low delay: the frame's whole packet is out now; none is a failure. */
    if (st != DVPP_OK || ch->out.len == 0 ||
        !ring_take(ch->ring, ch->out.len, acli_video_timeout_ms(ch->sync), &off)) {
        post_callback(ch, k->input, k->user, false, 0, 0, VENC_FRAME_FAILED);
        return;
    }
    memcpy(ch->ring->area + off, ch->out.data, ch->out.len);
    post_callback(ch, k->input, k->user, true, off, ch->out.len, 0);
}

static aclError run_task(void *ctx, acli_task *t)
{
    venc_task *k = ctx;
    venc_chan *ch = k->ch;
    dvpp_err err;

    (void)t;
    k->ran = true;
    if (!k->eos) {
        encode_frame(ch, k);
        return ACL_SUCCESS;
    }
    /* EOS: the stream ends (low delay leaves nothing to flush); the next
     * frame opens a new one. */
    if (ch->enc)
        dvpp_venc_finish(ch->enc, &err);
    dvpp_venc_close(ch->enc);
    ch->enc = NULL;
    ch->out.len = 0;
    return ACL_SUCCESS;
}

static void fini_task(void *ctx, aclError status)
{
    venc_task *k = ctx;

    (void)status;
    if (!k->ran && !k->eos) /* never encoded (the device went away) */
        post_callback(k->ch, k->input, k->user, false, 0, 0, VENC_FRAME_FAILED);
    free(k->img.data);
    free(k);
}

/* --- channels -------------------------------------------------------------------------- */

static aclError chan_of(aclvencChannelDesc *d, const char *what, venc_chan **ch)
{
    if (!desc_ok(d))
        return bad_desc(what);
    if (!d->chan)
        return acli_video_no_channel(what, "aclvenc");
    *ch = d->chan;
    return ACL_SUCCESS;
}

static void chan_free(venc_chan *ch)
{
    if (ch->stream)
        acli_stream_destroy(ch->stream);
    dvpp_venc_close(ch->enc);
    dvpp_buf_fini(&ch->out);
    acli_video_sync_close(ch->sync);
    if (ch->ring) {
        pthread_mutex_lock(&ch->ring->mu);
        ring_unref_locked(ch->ring);
    }
    free(ch);
}

/* The channel's size under the profile's rules. */
static aclError check_size(const aclvencChannelDesc *d, const char *what)
{
    bool p310 = is_310();
    uint32_t max = p310 ? VENC_MAX_SIDE_310 : VENC_MAX_SIDE_310P;
    uint32_t w = d->pic_width, h = d->pic_height;

    if (w < VENC_MIN_SIDE || h < VENC_MIN_SIDE || w > max || h > max || (w & 1) || (h & 1))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: picture %ux%u: width and height are "
                         "even, in [%u, %u] (%s)", what, w, h, VENC_MIN_SIDE, max,
                         p310 ? "ascend310" : "ascend310p");
    if (!p310 && d->en_type != H265_MAIN_LEVEL && (uint64_t)w * h > VENC_H264_MAX_AREA_310P)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: H.264 picture %ux%u is above 4096x2304 "
                         "in area (ascend310p)", what, w, h);
    return ACL_SUCCESS;
}

/* libdvpp's encoder options for @d (docs/acl.md: the dvppctl command with
 * the same bytes). */
static void encoder_opts(const aclvencChannelDesc *d, dvpp_venc_opts *o)
{
    static const char *const h264_profiles[] = {"", "baseline", "main", "high"};
    bool p310 = is_310();
    uint32_t rc = d->rc_mode;

    dvpp_venc_opts_init(o);
    o->codec = d->en_type == H265_MAIN_LEVEL ? DVPP_VIDEO_H265 : DVPP_VIDEO_H264;
    if (o->codec == DVPP_VIDEO_H264)
        snprintf(o->profile, sizeof(o->profile), "%s", h264_profiles[d->en_type]);
    o->width = d->pic_width;
    o->height = d->pic_height;
    o->fps_num = d->src_rate ? d->src_rate : VENC_DEFAULT_FPS;
    o->fps_den = 1;
    o->gop = d->key_frame_interval ? d->key_frame_interval : VENC_DEFAULT_GOP;
    /* RcMode 0: the chip's default, CBR on ascend310, VBR on ascend310p. */
    if (rc == VENC_RC_DEFAULT)
        rc = p310 ? VENC_RC_CBR : VENC_RC_VBR;
    o->rc = rc == VENC_RC_CBR ? DVPP_VENC_RC_CBR : DVPP_VENC_RC_VBR;
    o->bitrate_kbps = d->max_bit_rate ? d->max_bit_rate
                      : p310 ? VENC_DEFAULT_KBPS_310 : VENC_DEFAULT_KBPS_310P;
    o->low_delay = true;
    o->container = DVPP_VENC_ANNEXB;
}

aclError aclvencCreateChannel(aclvencChannelDesc *channelDesc)
{
    static const char what[] = "aclvencCreateChannel";
    venc_chan *ch = NULL;
    dvpp_err err;
    dvpp_status st;
    aclError rc;

    if (!desc_ok(channelDesc))
        return bad_desc(what);
    rc = acli_video_check_create(what, "aclvenc", channelDesc->chan != NULL,
                                 channelDesc->callback != NULL, channelDesc->thread_id);
    if (rc != ACL_SUCCESS)
        return rc;
    if (!acli_video_is_nv12_or_nv21(channelDesc->pic_format))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "%s: picture format %d: VENC takes "
                         "PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or YVU (2) "
                         "(aclvencSetChannelDescPicFormat)", what,
                         (int)channelDesc->pic_format);
    rc = check_size(channelDesc, what);
    if (rc != ACL_SUCCESS)
        return rc;
    ch = calloc(1, sizeof(*ch));
    if (!ch)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory", what);
    ch->cb = channelDesc->callback;
    ch->en_type = channelDesc->en_type;
    dvpp_buf_init(&ch->out);
    encoder_opts(channelDesc, &ch->opts);
    /* The encoder now, so that settings it refuses fail here. */
    dvpp_err_clear(&err);
    st = dvpp_venc_open(&ch->opts, &ch->out, &ch->enc, &err);
    if (st != DVPP_OK) {
        free(ch);
        return acli_from_dvpp(st, err.msg);
    }
    rc = ring_new(channelDesc->buf_addr, channelDesc->buf_size, &ch->ring);
    if (rc == ACL_SUCCESS)
        rc = acli_stream_create(&ch->stream);
    if (rc == ACL_SUCCESS)
        rc = acli_video_sync_new(channelDesc->thread_id, what, &ch->sync);
    if (rc != ACL_SUCCESS) {
        chan_free(ch);
        return rc;
    }
    channelDesc->channel_id = (uint32_t)acli_next_id();
    channelDesc->chan = ch;
    return ACL_SUCCESS;
}

static aclError submit(venc_chan *ch, venc_task *k)
{
    aclError rc = acli_submit(ch->stream, DVPP_ENGINE_VENC, run_task, fini_task, k);

    if (rc != ACL_SUCCESS) {
        free(k->img.data);
        free(k);
    }
    return rc;
}

static aclError send_eos(venc_chan *ch, const char *what)
{
    venc_task *k;
    aclError rc = acli_video_refuse_on_report_thread(ch->sync, what);

    if (rc != ACL_SUCCESS)
        return rc;
    k = calloc(1, sizeof(*k));
    if (!k)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory", what);
    k->ch = ch;
    k->eos = true;
    rc = submit(ch, k);
    if (rc != ACL_SUCCESS)
        return rc;
    return acli_video_drain(ch->stream, ch->sync, what);
}

/* The bytes @img's layout takes with strides @ws x @hs (libdvpp's NV12
 * layout: the chroma plane has ceil(hs/2) rows), SIZE_MAX when they
 * cannot hold the picture. */
static size_t layout_bytes(dvpp_image *img, uint32_t ws, uint32_t hs)
{
    dvpp_planes pl;

    img->width_stride = ws;
    img->height_stride = hs;
    return dvpp_image_planes(img, &pl, NULL) == DVPP_OK ? pl.total : SIZE_MAX;
}

/* The frame's layout from @input, reading only what is there: its strides
 * (0: ALIGN(w,16) when the bytes hold it, else w; the picture's height),
 * or, when the declared heightStride's rows are not all there, the chroma
 * right after the picture's rows. Fills @img (no data) or fails. */
static aclError frame_layout(const venc_chan *ch, const acldvppPicDesc *input, size_t bytes,
                             dvpp_image *img, const char *what)
{
    uint32_t w = ch->opts.width, h = ch->opts.height;
    uint32_t ws = acldvppGetPicDescWidthStride(input);
    uint32_t hs = acldvppGetPicDescHeightStride(input);
    uint32_t ws16 = (uint32_t)dvpp_align_up(w, 16);
    dvpp_pixfmt f = acldvppGetPicDescFormat(input) == PIXEL_FORMAT_YVU_SEMIPLANAR_420
                        ? DVPP_PIXEL_NV21 : DVPP_PIXEL_NV12;
    size_t need;

    if (!ws)
        ws = (uint64_t)ws16 * h * 3 / 2 <= bytes ? ws16 : w;
    if (!hs)
        hs = h;
    if (ws < w || hs < h)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: widthStride %u x heightStride %u does "
                         "not hold a %ux%u picture", what, ws, hs, w, h);
    /* The 310's VENC reads rows at 16-byte multiples (its input rule). */
    if (acli_profile() == DVPP_PROFILE_ASCEND310 && ws % 16 != 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: widthStride %u is not 16 aligned "
                         "(ascend310 VENC input)", what, ws);
    if (dvpp_image_init(img, f, w, h, 1, 1, NULL) != DVPP_OK)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: bad picture", what);
    need = layout_bytes(img, ws, hs);
    if (need > bytes) /* over-declared: the rows that are there */
        need = layout_bytes(img, ws, h);
    if (need > bytes)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: widthStride %u x %u rows of NV12 is %zu "
                         "bytes, the input has %zu", what, ws, h, need, bytes);
    img->size = need;
    return ACL_SUCCESS;
}

aclError aclvencSendFrame(aclvencChannelDesc *channelDesc, acldvppPicDesc *input, void *reserve,
                          aclvencFrameConfig *config, void *userdata)
{
    static const char what[] = "aclvencSendFrame";
    venc_chan *ch = NULL;
    venc_task *k;
    const uint8_t *data;
    uint64_t w, h, lo, hi;
    size_t bytes, avail;
    uint32_t size;
    dvpp_image img;
    aclError rc = chan_of(channelDesc, what, &ch);

    if (rc != ACL_SUCCESS)
        return rc;
    if (!config_ok(config))
        return acli_video_not_live(what, "config", "aclvencFrameConfig");
    if (reserve)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: reserve must be NULL (user output "
                         "mode is not supported)", what);
    if (config->eos)
        return send_eos(ch, what);
    if (!acli_handle_ok(input, ACLI_PIC_DESC))
        return acli_video_not_live(what, "input", "acldvppPicDesc");
    data = acldvppGetPicDescData(input);
    size = acldvppGetPicDescSize(input);
    if (!data)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the input has no data", what);
    if (!acli_video_is_nv12_or_nv21(acldvppGetPicDescFormat(input)))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "%s: input format %d: VENC takes "
                         "PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or YVU (2)", what,
                         (int)acldvppGetPicDescFormat(input));
    w = ch->opts.width, h = ch->opts.height;
    if ((acldvppGetPicDescWidth(input) && acldvppGetPicDescWidth(input) != w) ||
        (acldvppGetPicDescHeight(input) && acldvppGetPicDescHeight(input) != h))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: input %ux%u, the channel encodes "
                         "%llux%llu", what, acldvppGetPicDescWidth(input),
                         acldvppGetPicDescHeight(input), (unsigned long long)w,
                         (unsigned long long)h);
    lo = w * h * 3 / 2;
    hi = w * h * 3;
    if (size < lo || size >= hi)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: input size %u is out of [%llu, %llu) "
                         "(PicWidth x PicHeight x 3/2 .. x 3)", what, size,
                         (unsigned long long)lo, (unsigned long long)hi);
    avail = acli_mem_avail(data);
    bytes = avail && avail < size ? avail : size;
    rc = frame_layout(ch, input, bytes, &img, what);
    if (rc != ACL_SUCCESS)
        return rc;
    k = calloc(1, sizeof(*k));
    if (k)
        k->img.data = malloc(img.size);
    if (!k || !k->img.data) {
        free(k);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory for a frame of %zu bytes", what,
                         img.size);
    }
    memcpy(k->img.data, data, img.size);
    k->img = (dvpp_image){.format = img.format, .width = img.width, .height = img.height,
                          .width_stride = img.width_stride, .height_stride = img.height_stride,
                          .size = img.size, .data = k->img.data};
    k->ch = ch;
    k->force_idr = config->force_i_frame == 1;
    k->input = input;
    k->user = userdata;
    return submit(ch, k);
}

aclError aclvencDestroyChannel(aclvencChannelDesc *channelDesc)
{
    static const char what[] = "aclvencDestroyChannel";
    venc_chan *ch = NULL;
    aclError rc = chan_of(channelDesc, what, &ch);

    if (rc != ACL_SUCCESS)
        return rc;
    rc = send_eos(ch, what);
    if (acli_video_destroy_refused(rc, ch->sync))
        return rc;
    chan_free(ch);
    channelDesc->chan = NULL;
    return rc;
}
