/* acl_video.h: the callback side VDEC and VENC channels share
 * (acl_vdec.c, acl_venc.c; implemented in acl_video.c).
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
#include <stdint.h>

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

/* The calling thread's id as programs pass it ((uint64_t)pthread_self()). */
uint64_t acli_video_thread_self(void);

/* The channel's wait for a callback in ms (0: for ever), for the other
 * waits on the report thread's progress (VENC's output area). */
long acli_video_timeout_ms(const acli_video_sync *s);

/* Callbacks posted and callbacks run so far (for tests and messages). */
void acli_video_counts(acli_video_sync *s, uint64_t *posted, uint64_t *done);

#endif
