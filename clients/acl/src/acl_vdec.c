/* acl_vdec.c: aclvdec* (VDEC channels) over libdvpp's streaming decoder
 * (codecs/dvpp_vstream.h), part of libacl_dvpp.so.
 *
 * A channel is a private stream (acli_stream_create) whose tasks run on the
 * device's VDEC engine, one at a time and in send order, a dvpp_vstream
 * decoder those tasks own, and the count of its callbacks (acl_video.h).
 *
 * aclvdecSendFrame checks its arguments, copies the frame's bytes (so it
 * returns once the input is consumed: the program may reuse the buffer)
 * and queues a task. The task decodes the packet; each picture the decoder
 * completes goes into the output description of the earliest frame still
 * waiting for one, the way DVPP's VDEC fills the output buffers it was
 * given in the order pictures leave the decoder (display order, lagging
 * the input by the stream's reordering). Callbacks are posted to the
 * channel's ThreadId in send order, exactly one per frame: a frame whose
 * packet the decoder refused, whose picture came out damaged, or whose
 * output buffer is too small gets its callback with a non-zero retCode
 * (ACL_ERROR_RT_AICPU_EXCEPTION) and nothing written but the retCode; a
 * frame still without a picture at EOS likewise. A skipped frame
 * (aclvdecSendSkippedFrame) is decoded for reference: its picture fills no
 * output, its callback gets output NULL once the decoder has completed it.
 *
 * EOS (a stream description with eos = 1) flushes the decoder and waits
 * until every earlier callback has run; no callback is made for it.
 * aclvdecDestroyChannel sends EOS, waits, then unsubscribes the thread.
 * Either, called on the channel's own report thread, would wait for
 * itself: they fail with ACL_ERROR_INVALID_PARAM and say so.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "acl_dvpp_int.h"
#include "acl_int.h"
#include "acl_video.h"
#include "dvpp_device.h"
#include "dvpp_profile.h"
#include "dvpp_vstream.h"

/* DVPP VDEC's stream sizes (reference/dvpp-aipp.md section 6). */
#define VDEC_MIN_SIDE 128u
#define VDEC_MAX_SIDE 4096u
/* Channel ids: ascend310 0..31, ascend310p 0..255. */
#define VDEC_MAX_CHANNEL_310 31u
#define VDEC_MAX_CHANNEL_310P 255u
/* H.264 allows 16 reference frames. */
#define VDEC_MAX_REF_FRAMES 16u
/* What a failed frame's retCode holds: DVPP's code for a failed media
 * task. */
#define VDEC_FRAME_FAILED ((uint32_t)ACL_ERROR_RT_AICPU_EXCEPTION)

typedef struct vdec_chan vdec_chan;

struct aclvdecChannelDesc {
    uint32_t channel_id;
    uint64_t thread_id;           /* the report thread's pthread_t */
    aclvdecCallback callback;
    acldvppStreamFormat en_type;  /* H265_MAIN_LEVEL: H.265; else H.264 */
    acldvppPixelFormat out_format;/* NV12 (default) or NV21 */
    uint32_t out_width;           /* kept: the output takes the stream's size */
    uint32_t out_height;
    uint32_t ref_frame_num;       /* ascend310p only */
    uint32_t bit_depth;           /* kept */
    uint32_t out_mode;            /* 0 or 1 (see docs/acl.md) */
    uint32_t csc_matrix;          /* acldvppCscMatrix, kept (NV12/NV21 out) */
    vdec_chan *chan;              /* owned while the channel exists */
};

struct aclvdecFrameConfig {
    uint8_t reserved;             /* the type carries nothing yet */
};

/* A frame sent and not yet called back. */
typedef struct vdec_entry {
    acldvppStreamDesc *input;     /* the program's, handed back as is */
    acldvppPicDesc *output;       /* NULL for a skipped frame */
    void *user;
    uint64_t tag;                 /* its packet's tag in the decoder */
    acldvppPixelFormat format;    /* the output's format at send time */
    bool skipped;
    bool done;                    /* its callback may be posted */
    bool refused;                 /* the decoder refused its packet */
} vdec_entry;

struct vdec_chan {
    aclvdecCallback cb;
    int profile;                  /* dvpp_profile at creation */
    dvpp_pixfmt dec_format;       /* what the decoder converts to */
    uint64_t max_packet;          /* the decoder's max_video_bytes */
    acli_stream *stream;          /* private: the channel's tasks */
    acli_video_sync *sync;        /* the report thread and its callbacks */
    /* The decoder's side, touched only by the channel's tasks (one at a
     * time, in order) and by destroy once they are done: */
    dvpp_vstream *dec;
    vdec_entry *q;                /* a ring of q_cap entries */
    size_t q_head, q_len, q_cap;
    uint64_t next_tag;
};

/* --- descriptors ------------------------------------------------------------------ */

static aclError bad_desc(const char *what)
{
    return acli_video_not_live(what, "channelDesc", "aclvdecChannelDesc");
}

static bool desc_ok(const aclvdecChannelDesc *d)
{
    return acli_handle_ok(d, ACLI_VDEC_CHANNEL_DESC);
}

aclvdecChannelDesc *aclvdecCreateChannelDesc(void)
{
    aclvdecChannelDesc *d = acli_video_handle_new(sizeof(*d), ACLI_VDEC_CHANNEL_DESC,
                                                  "aclvdecCreateChannelDesc");

    if (!d)
        return NULL;
    d->en_type = H265_MAIN_LEVEL;
    d->out_format = PIXEL_FORMAT_YUV_SEMIPLANAR_420;
    return d;
}

aclError aclvdecDestroyChannelDesc(aclvdecChannelDesc *channelDesc)
{
    bool live = desc_ok(channelDesc);

    /* A program that skipped aclvdecDestroyChannel: the channel goes too
     * (EOS, every callback), not its memory and subscription forever. */
    if (live && channelDesc->chan)
        aclvdecDestroyChannel(channelDesc);
    return acli_video_desc_free(channelDesc, ACLI_VDEC_CHANNEL_DESC,
                                live && channelDesc->chan, "aclvdecDestroyChannelDesc",
                                "aclvdecChannelDesc");
}

/* The setters' checks, shared with aclvdecSetChannelDescParam. */

static aclError set_channel_id(aclvdecChannelDesc *d, uint32_t id)
{
    bool p310 = acli_profile() == DVPP_PROFILE_ASCEND310;
    uint32_t max = p310 ? VDEC_MAX_CHANNEL_310 : VDEC_MAX_CHANNEL_310P;

    if (id > max)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvdecSetChannelDescChannelId: channelId "
                         "%u is out of [0, %u] (%s)", id, max,
                         p310 ? "ascend310" : "ascend310p");
    d->channel_id = id;
    return ACL_SUCCESS;
}

static aclError set_en_type(aclvdecChannelDesc *d, acldvppStreamFormat t)
{
    aclError rc = acli_video_check_en_type(t, "aclvdecSetChannelDescEnType");

    if (rc == ACL_SUCCESS)
        d->en_type = t;
    return rc;
}

static aclError set_out_format(aclvdecChannelDesc *d, acldvppPixelFormat f)
{
    if (!acli_video_is_nv12_or_nv21(f))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "aclvdecSetChannelDescOutPicFormat: "
                         "the out format %d is not supported: VDEC outputs "
                         "PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or YVU (2)", (int)f);
    d->out_format = f;
    return ACL_SUCCESS;
}

static aclError set_ref_frame_num(aclvdecChannelDesc *d, uint32_t n)
{
    aclError rc = acli_video_refuse_on_310("aclvdecSetChannelDescRefFrameNum");

    if (rc != ACL_SUCCESS)
        return rc;
    if (n > VDEC_MAX_REF_FRAMES)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvdecSetChannelDescRefFrameNum: "
                         "refFrameNum %u is out of [0, %u]", n, VDEC_MAX_REF_FRAMES);
    d->ref_frame_num = n;
    return ACL_SUCCESS;
}

static aclError set_out_mode(aclvdecChannelDesc *d, uint32_t mode)
{
    if (mode > 1)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvdecSetChannelDescOutMode: outMode %u: "
                         "0 (default) or 1 (fast)", mode);
    d->out_mode = mode;
    return ACL_SUCCESS;
}

static aclError set_csc_matrix(aclvdecChannelDesc *d, uint32_t m)
{
    if (m > ACL_DVPP_CSC_MATRIX_BT2020_NARROW)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclvdecSetChannelDescParam: "
                         "ACL_VDEC_CSC_MATRIX_UINT32 %u is out of [0, %d]", m,
                         (int)ACL_DVPP_CSC_MATRIX_BT2020_NARROW);
    d->csc_matrix = m;
    return ACL_SUCCESS;
}

ACLI_VIDEO_SETTER(vdec, ChannelId, uint32_t, return set_channel_id(channelDesc, v))
ACLI_VIDEO_SETTER(vdec, ThreadId, uint64_t, channelDesc->thread_id = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(vdec, Callback, aclvdecCallback, channelDesc->callback = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(vdec, EnType, acldvppStreamFormat, return set_en_type(channelDesc, v))
ACLI_VIDEO_SETTER(vdec, OutPicFormat, acldvppPixelFormat, return set_out_format(channelDesc, v))
ACLI_VIDEO_SETTER(vdec, OutPicWidth, uint32_t, channelDesc->out_width = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(vdec, OutPicHeight, uint32_t, channelDesc->out_height = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(vdec, RefFrameNum, uint32_t, return set_ref_frame_num(channelDesc, v))
ACLI_VIDEO_SETTER(vdec, BitDepth, uint32_t, channelDesc->bit_depth = v; return ACL_SUCCESS)
ACLI_VIDEO_SETTER(vdec, OutMode, uint32_t, return set_out_mode(channelDesc, v))

ACLI_VIDEO_GETTER(vdec, ChannelId, uint32_t, channel_id, 0)
ACLI_VIDEO_GETTER(vdec, ThreadId, uint64_t, thread_id, 0)
ACLI_VIDEO_GETTER(vdec, Callback, aclvdecCallback, callback, NULL)
ACLI_VIDEO_GETTER(vdec, EnType, acldvppStreamFormat, en_type, H265_MAIN_LEVEL)
ACLI_VIDEO_GETTER(vdec, OutPicFormat, acldvppPixelFormat, out_format,
                  PIXEL_FORMAT_YUV_SEMIPLANAR_420)
ACLI_VIDEO_GETTER(vdec, OutPicWidth, uint32_t, out_width, 0)
ACLI_VIDEO_GETTER(vdec, OutPicHeight, uint32_t, out_height, 0)
ACLI_VIDEO_GETTER(vdec, RefFrameNum, uint32_t, ref_frame_num, 0)
ACLI_VIDEO_GETTER(vdec, BitDepth, uint32_t, bit_depth, 0)
ACLI_VIDEO_GETTER(vdec, OutMode, uint32_t, out_mode, 0)

/* The bytes a parameter's value takes (0: no such parameter). */
static size_t param_size(aclvdecChannelDescParamType t)
{
    switch (t) {
    case ACL_VDEC_THREAD_ID_UINT64:
        return sizeof(uint64_t);
    case ACL_VDEC_CALLBACK_PTR:
        return sizeof(aclvdecCallback);
    case ACL_VDEC_CSC_MATRIX_UINT32:
    case ACL_VDEC_OUT_MODE_UINT32:
    case ACL_VDEC_CHANNEL_ID_UINT32:
    case ACL_VDEC_ENCODE_TYPE_UINT32:
    case ACL_VDEC_OUT_PIC_FORMAT_UINT32:
    case ACL_VDEC_OUT_PIC_WIDTH_UINT32:
    case ACL_VDEC_OUT_PIC_HEIGHT_UINT32:
    case ACL_VDEC_REF_FRAME_NUM_UINT32:
    case ACL_VDEC_BIT_DEPTH_UINT32:
        return sizeof(uint32_t);
    }
    return 0;
}

aclError aclvdecSetChannelDescParam(aclvdecChannelDesc *channelDesc,
                                    aclvdecChannelDescParamType paramType, size_t length,
                                    const void *param)
{
    static const char what[] = "aclvdecSetChannelDescParam";
    size_t want = param_size(paramType);
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    aclvdecCallback cb = NULL;
    aclError rc;

    if (!desc_ok(channelDesc))
        return bad_desc(what);
    rc = acli_video_param_given(what, (int)paramType, want, param);
    if (rc == ACL_SUCCESS)
        rc = acli_video_param_length(what, (int)paramType, want, length, true);
    if (rc != ACL_SUCCESS)
        return rc;
    if (want == sizeof(uint32_t))
        memcpy(&u32, param, sizeof(u32));
    switch (paramType) {
    case ACL_VDEC_THREAD_ID_UINT64:
        memcpy(&u64, param, sizeof(u64));
        channelDesc->thread_id = u64;
        return ACL_SUCCESS;
    case ACL_VDEC_CALLBACK_PTR:
        memcpy(&cb, param, sizeof(cb));
        channelDesc->callback = cb;
        return ACL_SUCCESS;
    case ACL_VDEC_CSC_MATRIX_UINT32:
        return set_csc_matrix(channelDesc, u32);
    case ACL_VDEC_OUT_MODE_UINT32:
        return set_out_mode(channelDesc, u32);
    case ACL_VDEC_CHANNEL_ID_UINT32:
        return set_channel_id(channelDesc, u32);
    case ACL_VDEC_ENCODE_TYPE_UINT32:
        return set_en_type(channelDesc, (acldvppStreamFormat)u32);
    case ACL_VDEC_OUT_PIC_FORMAT_UINT32:
        return set_out_format(channelDesc, (acldvppPixelFormat)u32);
    case ACL_VDEC_OUT_PIC_WIDTH_UINT32:
        channelDesc->out_width = u32;
        return ACL_SUCCESS;
    case ACL_VDEC_OUT_PIC_HEIGHT_UINT32:
        channelDesc->out_height = u32;
        return ACL_SUCCESS;
    case ACL_VDEC_REF_FRAME_NUM_UINT32:
        return set_ref_frame_num(channelDesc, u32);
    case ACL_VDEC_BIT_DEPTH_UINT32:
        channelDesc->bit_depth = u32;
        return ACL_SUCCESS;
    }
    return ACL_ERROR_INVALID_PARAM; /* not reached: param_size knows every type */
}

aclError aclvdecGetChannelDescParam(const aclvdecChannelDesc *channelDesc,
                                    aclvdecChannelDescParamType paramType, size_t length,
                                    size_t *paramRetSize, void *param)
{
    static const char what[] = "aclvdecGetChannelDescParam";
    size_t want = param_size(paramType);
    uint32_t u32 = 0;
    aclError rc;

    if (!desc_ok(channelDesc))
        return bad_desc(what);
    rc = acli_video_param_given(what, (int)paramType, want, param);
    if (rc == ACL_SUCCESS && !paramRetSize)
        rc = acli_fail(ACL_ERROR_INVALID_PARAM, "%s: paramRetSize is NULL", what);
    if (rc == ACL_SUCCESS)
        rc = acli_video_param_length(what, (int)paramType, want, length, false);
    if (rc != ACL_SUCCESS)
        return rc;
    switch (paramType) {
    case ACL_VDEC_THREAD_ID_UINT64:
        memcpy(param, &channelDesc->thread_id, sizeof(uint64_t));
        break;
    case ACL_VDEC_CALLBACK_PTR:
        memcpy(param, &channelDesc->callback, sizeof(aclvdecCallback));
        break;
    case ACL_VDEC_CSC_MATRIX_UINT32: u32 = channelDesc->csc_matrix; break;
    case ACL_VDEC_OUT_MODE_UINT32: u32 = channelDesc->out_mode; break;
    case ACL_VDEC_CHANNEL_ID_UINT32: u32 = channelDesc->channel_id; break;
    case ACL_VDEC_ENCODE_TYPE_UINT32: u32 = (uint32_t)channelDesc->en_type; break;
    case ACL_VDEC_OUT_PIC_FORMAT_UINT32: u32 = (uint32_t)channelDesc->out_format; break;
    case ACL_VDEC_OUT_PIC_WIDTH_UINT32: u32 = channelDesc->out_width; break;
    case ACL_VDEC_OUT_PIC_HEIGHT_UINT32: u32 = channelDesc->out_height; break;
    case ACL_VDEC_REF_FRAME_NUM_UINT32: u32 = channelDesc->ref_frame_num; break;
    case ACL_VDEC_BIT_DEPTH_UINT32: u32 = channelDesc->bit_depth; break;
    }
    if (want == sizeof(uint32_t))
        memcpy(param, &u32, sizeof(u32));
    *paramRetSize = want;
    return ACL_SUCCESS;
}

/* --- frame configs ------------------------------------------------------------------ */

aclvdecFrameConfig *aclvdecCreateFrameConfig(void)
{
    return acli_video_handle_new(sizeof(aclvdecFrameConfig), ACLI_VDEC_FRAME_CONFIG,
                                 "aclvdecCreateFrameConfig");
}

aclError aclvdecDestroyFrameConfig(aclvdecFrameConfig *vdecFrameConfig)
{
    return acli_video_handle_free(vdecFrameConfig, ACLI_VDEC_FRAME_CONFIG,
                                  "aclvdecDestroyFrameConfig", "aclvdecFrameConfig");
}

/* --- the frames waiting for a picture (tasks only) --------------------------------------- */

static vdec_entry *entry_at(vdec_chan *ch, size_t i)
{
    return &ch->q[(ch->q_head + i) % ch->q_cap];
}

static vdec_entry *entry_push(vdec_chan *ch)
{
    if (ch->q_len == ch->q_cap) {
        size_t cap = ch->q_cap ? ch->q_cap * 2 : 16;
        vdec_entry *q = calloc(cap, sizeof(*q));
        if (!q)
            return NULL;
        for (size_t i = 0; i < ch->q_len; i++)
            q[i] = *entry_at(ch, i);
        free(ch->q);
        ch->q = q;
        ch->q_cap = cap;
        ch->q_head = 0;
    }
    ch->q_len++;
    return entry_at(ch, ch->q_len - 1);
}

/* The waiting skipped frame of @tag, or the earliest waiting normal frame
 * (the next output in line), or NULL. */
static vdec_entry *entry_for_picture(vdec_chan *ch, uint64_t tag, bool *from_refused)
{
    vdec_entry *first = NULL;

    *from_refused = false;
    for (size_t i = 0; i < ch->q_len; i++) {
        vdec_entry *e = entry_at(ch, i);
        if (e->tag == tag && e->skipped && !e->done)
            return e;
        if (e->tag == tag && e->refused)
            *from_refused = true;
        if (!first && !e->skipped && !e->done)
            first = e;
    }
    return first;
}

static vdec_entry *entry_of_tag(vdec_chan *ch, uint64_t tag)
{
    for (size_t i = 0; i < ch->q_len; i++)
        if (entry_at(ch, i)->tag == tag)
            return entry_at(ch, i);
    return NULL;
}

/* @e failed: only its retCode is written (the description stays as the
 * program set it, so it can be sent again). */
static void entry_fail(vdec_entry *e)
{
    e->done = true;
    if (e->output && acli_handle_ok(e->output, ACLI_PIC_DESC))
        acldvppSetPicDescRetCode(e->output, VDEC_FRAME_FAILED);
}

/* --- pictures into output descriptions (tasks only) --------------------------------------- */

/* The bytes the program's output buffer really has: its declared size, cut
 * to the registered block when the layer knows it. */
static size_t output_capacity(const void *data, uint32_t declared)
{
    size_t avail = acli_mem_avail(data);

    if (declared == 0)
        return avail;
    return avail && avail < declared ? avail : declared;
}

/* Copy @img (the decoder's NV12 or NV21) into @dst as @format (NV12 or
 * NV21: the chroma pairs swapped when they differ). */
static void copy_picture(uint8_t *dst, const dvpp_image *img, dvpp_pixfmt format)
{
    size_t luma = (size_t)img->width_stride * img->height_stride;

    if (format == img->format) {
        memcpy(dst, img->data, img->size);
        return;
    }
    memcpy(dst, img->data, luma);
    for (size_t i = luma; i + 1 < img->size; i += 2) {
        dst[i] = img->data[i + 1];
        dst[i + 1] = img->data[i];
    }
}

/* The decoder's picture @img into @e's output description: the pixels in
 * VDEC's layout (ALIGN(w,16) x ALIGN(h,2)), then the geometry written back,
 * or a retCode and nothing else when it cannot be. */
static void put_picture(vdec_chan *ch, vdec_entry *e, const dvpp_image *img)
{
    acldvppPicDesc *d = e->output;
    uint8_t *data;
    size_t cap;

    e->done = true;
    if (!acli_handle_ok(d, ACLI_PIC_DESC))
        return; /* destroyed before its callback: nothing to write into */
    if (dvpp_profile_is_ascend((dvpp_profile)ch->profile) &&
        (img->width < VDEC_MIN_SIDE || img->height < VDEC_MIN_SIDE)) {
        entry_fail(e); /* VDEC decodes 128x128 and up */
        return;
    }
    data = acldvppGetPicDescData(d);
    cap = output_capacity(data, acldvppGetPicDescSize(d));
    if (!data || img->size > cap) {
        entry_fail(e); /* never a byte past the buffer */
        return;
    }
    copy_picture(data, img, e->format == PIXEL_FORMAT_YVU_SEMIPLANAR_420 ? DVPP_PIXEL_NV21
                                                                          : DVPP_PIXEL_NV12);
    acldvppSetPicDescFormat(d, e->format);
    acldvppSetPicDescWidth(d, img->width);
    acldvppSetPicDescHeight(d, img->height);
    acldvppSetPicDescWidthStride(d, img->width_stride);
    acldvppSetPicDescHeightStride(d, img->height_stride);
    acldvppSetPicDescSize(d, (uint32_t)img->size);
    acldvppSetPicDescRetCode(d, 0);
}

/* The decoder's sink: each completed picture to the frame it belongs to. */
static dvpp_status picture_out(void *ctx, const dvpp_vstream_frame *f, dvpp_err *err)
{
    vdec_chan *ch = ctx;
    bool from_refused;
    vdec_entry *e = entry_for_picture(ch, f->tag, &from_refused);

    (void)err;
    /* A picture of a packet the decoder refused, or with no frame left to
     * hold it (a packet of two pictures): it fills no output. */
    if (!e || from_refused)
        return DVPP_OK;
    if (e->skipped)
        e->done = true;
    else if (f->status != DVPP_OK)
        entry_fail(e);
    else
        put_picture(ch, e, f->image);
    return DVPP_OK;
}

/* --- callbacks ------------------------------------------------------------------------- */

/* A frame's callback. The frame holds its output description from the
 * send until its callback has returned (acli_pic_hold): a program that
 * destroys it early gets it unregistered at once but not freed, so no
 * picture, retCode or callback of this frame reaches a description made
 * later at the same address. */
typedef struct vdec_report {
    aclvdecCallback cb;
    acldvppStreamDesc *input;
    acldvppPicDesc *output;       /* held (NULL for a skipped frame) */
    void *user;
} vdec_report;

static void run_report(void *arg)
{
    vdec_report *r = arg;
    vdec_report copy = *r;

    free(r);
    copy.cb(copy.input, copy.output, copy.user);
    acli_pic_release(copy.output);
}

static void post_callback(vdec_chan *ch, const vdec_entry *e)
{
    vdec_report *r = malloc(sizeof(*r));

    if (r)
        *r = (vdec_report){ch->cb, e->input, e->output, e->user};
    /* no memory, or the report thread's subscription is gone: the
     * callback is lost */
    if (!r || acli_video_post(ch->sync, run_report, r) != ACL_SUCCESS) {
        free(r);
        acli_pic_release(e->output);
    }
}

/* Post the callbacks of the frames at the head that are done, in order. */
static void release_done(vdec_chan *ch)
{
    while (ch->q_len && entry_at(ch, 0)->done) {
        post_callback(ch, entry_at(ch, 0));
        ch->q_head = (ch->q_head + 1) % ch->q_cap;
        ch->q_len--;
    }
}

/* EOS: every frame still without a picture has none coming. */
static void finish_all(vdec_chan *ch)
{
    for (size_t i = 0; i < ch->q_len; i++) {
        vdec_entry *e = entry_at(ch, i);
        if (e->done)
            continue;
        if (e->skipped)
            e->done = true;
        else
            entry_fail(e);
    }
    release_done(ch);
}

/* --- tasks -------------------------------------------------------------------------------- */

typedef enum { TASK_FRAME, TASK_SKIPPED, TASK_EOS } vdec_task_kind;

typedef struct vdec_task {
    vdec_chan *ch;
    vdec_task_kind kind;
    uint8_t *bytes;               /* the packet's copy (owned) */
    size_t len;
    acldvppStreamDesc *input;
    acldvppPicDesc *output;
    acldvppPixelFormat format;
    void *user;
    bool ran;
} vdec_task;

static aclError run_task(void *ctx, acli_task *t)
{
    vdec_task *k = ctx;
    vdec_chan *ch = k->ch;
    vdec_entry *e;
    dvpp_err err;
    dvpp_status st;

    (void)t;
    k->ran = true;
    if (k->kind == TASK_EOS) {
        dvpp_vstream_flush(ch->dec, picture_out, ch, &err);
        finish_all(ch);
        return ACL_SUCCESS;
    }
    e = entry_push(ch);
    if (!e) {
        k->ran = false; /* fini calls it back as failed */
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclvdecSendFrame: no memory for the frame");
    }
    *e = (vdec_entry){k->input, k->output, k->user, ch->next_tag++, k->format,
                      k->kind == TASK_SKIPPED, false, false};
    st = dvpp_vstream_send(ch->dec, k->bytes, k->len, e->tag, picture_out, ch, &err);
    if (st != DVPP_OK) {
        /* The packet was refused (damaged, over the limits): its own frame
         * fails, whatever it left for the earlier ones. */
        vdec_entry *own = entry_of_tag(ch, ch->next_tag - 1);
        if (own && !own->done) {
            own->refused = true;
            if (own->skipped)
                own->done = true;
            else
                entry_fail(own);
        } else if (own) {
            own->refused = true;
        }
    }
    release_done(ch);
    return ACL_SUCCESS;
}

static void fini_task(void *ctx, aclError status)
{
    vdec_task *k = ctx;

    (void)status;
    if (!k->ran && k->kind != TASK_EOS) {
        /* Never decoded (the device went away): its callback still comes. */
        vdec_entry e = {k->input, k->output, k->user, 0, k->format,
                        k->kind == TASK_SKIPPED, true, true};
        if (!e.skipped)
            entry_fail(&e);
        post_callback(k->ch, &e);
    }
    free(k->bytes);
    free(k);
}

/* --- channels -------------------------------------------------------------------------- */

static aclError chan_of(aclvdecChannelDesc *d, const char *what, vdec_chan **ch)
{
    if (!desc_ok(d))
        return bad_desc(what);
    if (!d->chan)
        return acli_video_no_channel(what, "aclvdec");
    *ch = d->chan;
    return ACL_SUCCESS;
}

static void chan_free(vdec_chan *ch)
{
    if (ch->stream)
        acli_stream_destroy(ch->stream);
    /* frames never called back (their tasks stopped with the device) */
    for (size_t i = 0; i < ch->q_len; i++)
        acli_pic_release(entry_at(ch, i)->output);
    dvpp_vstream_close(ch->dec);
    acli_video_sync_close(ch->sync);
    free(ch->q);
    free(ch);
}

aclError aclvdecCreateChannel(aclvdecChannelDesc *channelDesc)
{
    static const char what[] = "aclvdecCreateChannel";
    dvpp_vstream_opts o;
    dvpp_limits lim = dvpp_limits_default();
    vdec_chan *ch = NULL;
    dvpp_err err;
    dvpp_status st;
    aclError rc;

    if (!desc_ok(channelDesc))
        return bad_desc(what);
    rc = acli_video_check_create(what, "aclvdec", channelDesc->chan != NULL,
                                 channelDesc->callback != NULL, channelDesc->thread_id);
    if (rc != ACL_SUCCESS)
        return rc;
    ch = calloc(1, sizeof(*ch));
    if (!ch)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory", what);
    ch->cb = channelDesc->callback;
    ch->profile = acli_profile();
    ch->dec_format = channelDesc->out_format == PIXEL_FORMAT_YVU_SEMIPLANAR_420
                         ? DVPP_PIXEL_NV21 : DVPP_PIXEL_NV12;
    dvpp_vstream_opts_init(&o);
    o.codec = channelDesc->en_type == H265_MAIN_LEVEL ? DVPP_VIDEO_H265 : DVPP_VIDEO_H264;
    o.format = ch->dec_format;
    /* VDEC takes streams up to 4096x4096: larger SPSs are refused before
     * anything is decoded for them. */
    lim.max_side = VDEC_MAX_SIDE;
    lim.max_pixels = (uint64_t)VDEC_MAX_SIDE * VDEC_MAX_SIDE;
    dvpp_err_clear(&err);
    ch->max_packet = lim.max_video_bytes;
    st = dvpp_vstream_open(&o, &lim, &ch->dec, &err);
    if (st != DVPP_OK) {
        free(ch);
        return acli_from_dvpp(st, err.msg);
    }
    rc = acli_stream_create(&ch->stream);
    if (rc == ACL_SUCCESS)
        rc = acli_video_sync_new(channelDesc->thread_id, what, &ch->sync);
    if (rc != ACL_SUCCESS) {
        chan_free(ch);
        return rc;
    }
    channelDesc->chan = ch;
    return ACL_SUCCESS;
}

static aclError submit(vdec_chan *ch, vdec_task *k)
{
    aclError rc;

    acli_pic_hold(k->output); /* until the frame's callback has returned */
    rc = acli_submit(ch->stream, DVPP_ENGINE_VDEC, run_task, fini_task, k);
    if (rc != ACL_SUCCESS) {
        acli_pic_release(k->output);
        free(k->bytes);
        free(k);
    }
    return rc;
}

/* EOS: flush, then wait for every callback. Not on the report thread. */
static aclError send_eos(vdec_chan *ch, const char *what)
{
    vdec_task *k;
    aclError rc = acli_video_refuse_on_report_thread(ch->sync, what);

    if (rc != ACL_SUCCESS)
        return rc;
    k = calloc(1, sizeof(*k));
    if (!k)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory", what);
    *k = (vdec_task){.ch = ch, .kind = TASK_EOS};
    rc = submit(ch, k);
    if (rc != ACL_SUCCESS)
        return rc;
    return acli_video_drain(ch->stream, ch->sync, what);
}

/* A frame (or a skipped one: @output NULL) of @input into a task. */
static aclError send_packet(vdec_chan *ch, acldvppStreamDesc *input, acldvppPicDesc *output,
                            void *user, const char *what)
{
    const uint8_t *data = acldvppGetStreamDescData(input);
    uint32_t size = acldvppGetStreamDescSize(input);
    size_t avail = acli_mem_avail(data);
    vdec_task *k;

    if (!data || size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the input stream has no data (only an "
                         "EOS may be empty)", what);
    if (avail && size > avail)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the input size %u is past the %zu "
                         "bytes of its buffer", what, size, avail);
    /* The decoder would refuse it; refused here before it is copied (the
     * layer cannot hold the size to memory it did not allocate). */
    if (size > ch->max_packet)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the input size %u is above the "
                         "decoder's max_video_bytes (%llu)", what, size,
                         (unsigned long long)ch->max_packet);
    k = calloc(1, sizeof(*k));
    if (k)
        k->bytes = malloc(size);
    if (!k || !k->bytes) {
        free(k);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory for a frame of %u bytes", what,
                         size);
    }
    memcpy(k->bytes, data, size);
    k->ch = ch;
    k->kind = output ? TASK_FRAME : TASK_SKIPPED;
    k->len = size;
    k->input = input;
    k->output = output;
    k->format = output ? acldvppGetPicDescFormat(output) : PIXEL_FORMAT_YUV_SEMIPLANAR_420;
    k->user = user;
    return submit(ch, k);
}

/* What both send calls check first: a created channel (into @ch), a live
 * input, a live config or none. */
static aclError check_send(aclvdecChannelDesc *channelDesc, const acldvppStreamDesc *input,
                           const aclvdecFrameConfig *config, const char *what,
                           vdec_chan **ch)
{
    aclError rc = chan_of(channelDesc, what, ch);

    if (rc != ACL_SUCCESS)
        return rc;
    if (!acli_handle_ok(input, ACLI_STREAM_DESC))
        return acli_video_not_live(what, "input", "acldvppStreamDesc");
    if (config && !acli_handle_ok(config, ACLI_VDEC_FRAME_CONFIG))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: config is not a live "
                         "aclvdecFrameConfig", what);
    return ACL_SUCCESS;
}

aclError aclvdecSendFrame(aclvdecChannelDesc *channelDesc, acldvppStreamDesc *input,
                          acldvppPicDesc *output, aclvdecFrameConfig *config, void *userData)
{
    static const char what[] = "aclvdecSendFrame";
    vdec_chan *ch = NULL;
    aclError rc = check_send(channelDesc, input, config, what, &ch);

    if (rc != ACL_SUCCESS)
        return rc;
    if (acldvppGetStreamDescEos(input))
        return send_eos(ch, what);
    if (!acli_handle_ok(output, ACLI_PIC_DESC))
        return acli_video_not_live(what, "output", "acldvppPicDesc");
    if (!acli_video_is_nv12_or_nv21(acldvppGetPicDescFormat(output)))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "%s: the out format %d is not supported: "
                         "VDEC outputs PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or YVU (2)", what,
                         (int)acldvppGetPicDescFormat(output));
    if (!acldvppGetPicDescData(output))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the output has no data "
                         "(acldvppSetPicDescData)", what);
    return send_packet(ch, input, output, userData, what);
}

aclError aclvdecSendSkippedFrame(aclvdecChannelDesc *channelDesc, acldvppStreamDesc *input,
                                 aclvdecFrameConfig *config, void *userData)
{
    static const char what[] = "aclvdecSendSkippedFrame";
    vdec_chan *ch = NULL;
    aclError rc = check_send(channelDesc, input, config, what, &ch);

    if (rc != ACL_SUCCESS)
        return rc;
    if (acldvppGetStreamDescEos(input))
        return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: a skipped frame cannot be an EOS "
                         "(send EOS with aclvdecSendFrame)", what);
    return send_packet(ch, input, NULL, userData, what);
}

aclError aclvdecDestroyChannel(aclvdecChannelDesc *channelDesc)
{
    static const char what[] = "aclvdecDestroyChannel";
    vdec_chan *ch = NULL;
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
