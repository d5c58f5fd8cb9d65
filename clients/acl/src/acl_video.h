/* acl_video.h: what VDEC and VENC channels share (acl_vdec.c, acl_venc.c;
 * implemented in acl_video.c): the callback side, and the checks and
 * plumbing of their descriptions, which follow the same rules.
 *
 * A channel's callbacks run on the program's report thread (the channel
 * desc's ThreadId) inside its aclrtProcessReport. aclvdecCreateChannel and
 * aclvencCreateChannel subscribe that thread themselves (the program never
 * calls aclrtSubscribeReport for them); the channel's tasks post each
 * callback through acli_video_post, which counts it; EOS and destroy wait
 * until every posted callback has run (acli_video_wait).
 *
 * Waiting for callbacks on the report thread itself would never end (only
 * that thread runs them): acli_video_on_report_thread lets EOS and destroy
 * refuse instead. A report thread that stops running callbacks would hang
 * the wait as it hangs the chip's: the wait gives up when no callback has
 * run for DVPP_ACL_CALLBACK_TIMEOUT_MS milliseconds (environment, read when
 * the channel is made; default 30000, 0 waits for ever) with
 * ACL_ERROR_WAIT_CALLBACK_TIMEOUT.
 *
 * Memory: the sync object is reference-counted; every post holds a
 * reference until its callback has run, so a channel destroyed after a
 * timed-out wait frees nothing a late callback still touches.
 * Thread-safety: every function may be called from any thread.
 */
#ifndef ACL_VIDEO_H
#define ACL_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/ops/acl_dvpp.h"
#include "acl_int.h"

typedef struct acli_video_sync acli_video_sync;

/* Subscribe @thread_id (a channel's ThreadId, not 0) and make the count of
 * its callbacks. @what names the caller in messages. ACL_ERROR_BAD_ALLOC,
 * or the subscription's error. */
aclError acli_video_sync_new(uint64_t thread_id, const char *what, acli_video_sync **out);

/* Unsubscribe the thread and drop the channel's reference (callbacks still
 * queued run later, or never; they keep what they need). NULL: no-op. */
void acli_video_sync_close(acli_video_sync *s);

/* Queue fn(arg) for the report thread, counted until it has run. Never
 * blocks. On failure (the thread's subscription is gone, no memory) fn is
 * not called and the caller still owns @arg. */
aclError acli_video_post(acli_video_sync *s, void (*fn)(void *arg), void *arg);

/* Wait until every callback posted so far has run: ACL_SUCCESS, or
 * ACL_ERROR_WAIT_CALLBACK_TIMEOUT when none ran for the timeout. */
aclError acli_video_wait(acli_video_sync *s, const char *what);

/* True when the calling thread is the report thread of @s. */
bool acli_video_on_report_thread(const acli_video_sync *s);

/* The channel's wait for a callback in ms (0: for ever), for the other
 * waits on the report thread's progress (VENC's output area). */
long acli_video_timeout_ms(const acli_video_sync *s);

/* Callbacks posted and callbacks run so far (for tests and messages). */
void acli_video_counts(acli_video_sync *s, uint64_t *posted, uint64_t *done);

/* --- EOS and destroy ------------------------------------------------------------
 * Both channels' EOS: refused on the report thread, else the EOS task is
 * submitted and drained; destroy keeps a channel whose EOS was refused. */

/* ACL_ERROR_INVALID_PARAM (and why) when the caller is the report thread
 * of @s (an EOS would wait for itself), else ACL_SUCCESS. */
aclError acli_video_refuse_on_report_thread(const acli_video_sync *s, const char *what);
/* Wait for the channel's tasks, then for every callback they posted: the
 * stream's first error, else the callbacks' wait's result. */
aclError acli_video_drain(acli_stream *stream, acli_video_sync *s, const char *what);
/* True when a destroy's EOS failed with @eos_rc because it was called on
 * the report thread: the channel stays (destroy it from another thread). */
bool acli_video_destroy_refused(aclError eos_rc, const acli_video_sync *s);

/* --- descriptions ---------------------------------------------------------------
 * @what names the public call in messages ("aclvdecSetChannelDescParam"),
 * @api its family ("aclvdec" or "aclvenc"). */

/* "@what: @name is NULL or not a live @type" as ACL_ERROR_INVALID_PARAM. */
aclError acli_video_not_live(const char *what, const char *name, const char *type);
/* @size zeroed bytes registered as @kind (the caller owns them; free with
 * acli_video_handle_free or acli_handle_remove + free); NULL with
 * "@what: no memory" when either fails. */
void *acli_video_handle_new(size_t size, acli_kind kind, const char *what);
/* Forget and free @p: NULL is a success; one that is not a live @kind
 * gets "@what: not a live @type" (ACL_ERROR_INVALID_PARAM), nothing freed. */
aclError acli_video_handle_free(void *p, acli_kind kind, const char *what, const char *type);
/* DestroyChannelDesc's end, once the caller destroyed a channel still made
 * (@channel_left: it could not be): NULL is a success; with a channel left,
 * or not a live @kind, ACL_ERROR_INVALID_PARAM and nothing freed; else
 * unregistered and freed. */
aclError acli_video_desc_free(void *desc, acli_kind kind, bool channel_left, const char *what,
                              const char *type);
/* ACL_ERROR_FEATURE_UNSUPPORTED ("@what: not supported on ascend310") for
 * the settings only ascend310p has, else ACL_SUCCESS. */
aclError acli_video_refuse_on_310(const char *what);
/* An enType both take: H265_MAIN_LEVEL or H264_BASELINE/MAIN/HIGH_LEVEL. */
aclError acli_video_check_en_type(acldvppStreamFormat t, const char *what);
/* The only pictures VDEC writes and VENC reads: NV12 or NV21. */
bool acli_video_is_nv12_or_nv21(acldvppPixelFormat f);
/* Set/GetChannelDescParam's checks, in this order: a known paramType
 * (@want: its value's size, 0 for an unknown one) and a non-NULL @param;
 * then @length: exactly @want (set) or at least (@exact false: get). */
aclError acli_video_param_given(const char *what, int type, size_t want, const void *param);
aclError acli_video_param_length(const char *what, int type, size_t want, size_t length,
                                 bool exact);
/* CreateChannel's checks of its description: no channel yet, a callback
 * and a callback thread set. */
aclError acli_video_check_create(const char *what, const char *api, bool created,
                                 bool has_callback, uint64_t thread_id);
/* "@what: the channel is not created (@apiCreateChannel)". */
aclError acli_video_no_channel(const char *what, const char *api);

/* A description's typed setter and getter, the same in both families:
 * aclvdecSetChannelDescX(desc, v) checks the description, then runs @body
 * (which returns); aclvdecGetChannelDescX(desc) reads @field, or @dflt
 * for a NULL or dead description. The including file defines
 * `static bool desc_ok(const acl<api>ChannelDesc *)` and
 * `static aclError bad_desc(const char *what)`. */
#define ACLI_VIDEO_SETTER(api, X, T, body)                                          \
    aclError acl##api##SetChannelDesc##X(acl##api##ChannelDesc *channelDesc, T v)  \
    {                                                                              \
        if (!desc_ok(channelDesc))                                                 \
            return bad_desc("acl" #api "SetChannelDesc" #X);                       \
        body;                                                                      \
    }
#define ACLI_VIDEO_GETTER(api, X, T, field, dflt)                                   \
    T acl##api##GetChannelDesc##X(const acl##api##ChannelDesc *channelDesc)        \
    {                                                                              \
        return desc_ok(channelDesc) ? channelDesc->field : (dflt);                 \
    }

#endif
