/* acl_video.c: what VDEC and VENC channels share (acl_video.h). */
#include "acl_video.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "dvpp_profile.h"

/* How long EOS and destroy wait for the next callback to run before they
 * give up (ms), unless DVPP_ACL_CALLBACK_TIMEOUT_MS says otherwise. */
#define CALLBACK_TIMEOUT_MS_DEFAULT 30000L

struct acli_video_sync {
    uint64_t thread_id;       /* the report thread */
    long timeout_ms;          /* 0: no timeout */
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* a callback has run */
    uint64_t posted;          /* (mu) */
    uint64_t done;            /* (mu) */
    unsigned refs;            /* (mu) the channel's + one per queued post */
};

/* One queued callback. */
typedef struct video_post {
    acli_video_sync *s;
    void (*fn)(void *arg);
    void *arg;
} video_post;

/* DVPP_ACL_CALLBACK_TIMEOUT_MS, or the default for unset or bad values. */
static long timeout_from_env(void)
{
    const char *v = getenv("DVPP_ACL_CALLBACK_TIMEOUT_MS");
    char *end;
    long ms;

    if (!v || !*v)
        return CALLBACK_TIMEOUT_MS_DEFAULT;
    errno = 0;
    ms = strtol(v, &end, 10);
    if (errno || *end || ms < 0)
        return CALLBACK_TIMEOUT_MS_DEFAULT;
    return ms;
}

aclError acli_video_sync_new(uint64_t thread_id, const char *what, acli_video_sync **out)
{
    acli_video_sync *s = calloc(1, sizeof(*s));
    aclError rc;

    *out = NULL;
    if (!s)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory for the channel", what);
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: pthread_mutex_init", what);
    }
    if (acli_cond_init(&s->cv) != 0) {
        pthread_mutex_destroy(&s->mu);
        free(s);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: pthread_cond_init", what);
    }
    s->thread_id = thread_id;
    s->timeout_ms = timeout_from_env();
    s->refs = 1;
    rc = acli_report_subscribe(thread_id, s);
    if (rc != ACL_SUCCESS) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return rc;
    }
    *out = s;
    return ACL_SUCCESS;
}

/* Drop one reference (@s->mu held; released here). */
static void unref_locked(acli_video_sync *s)
{
    bool last = --s->refs == 0;

    pthread_mutex_unlock(&s->mu);
    if (!last)
        return;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void acli_video_sync_close(acli_video_sync *s)
{
    if (!s)
        return;
    acli_report_unsubscribe(s->thread_id, s);
    pthread_mutex_lock(&s->mu);
    unref_locked(s);
}

/* On the report thread: the callback, then its count. */
static void run_post(void *arg)
{
    video_post *p = arg;
    acli_video_sync *s = p->s;

    p->fn(p->arg);
    free(p);
    pthread_mutex_lock(&s->mu);
    s->done++;
    pthread_cond_broadcast(&s->cv);
    unref_locked(s);
}

aclError acli_video_post(acli_video_sync *s, void (*fn)(void *arg), void *arg)
{
    video_post *p = malloc(sizeof(*p));
    aclError rc;

    if (!p)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "no memory for a callback");
    *p = (video_post){s, fn, arg};
    pthread_mutex_lock(&s->mu);
    s->posted++;
    s->refs++;
    pthread_mutex_unlock(&s->mu);
    rc = acli_report_post(s->thread_id, run_post, p);
    if (rc != ACL_SUCCESS) {
        free(p);
        pthread_mutex_lock(&s->mu);
        s->posted--;
        pthread_cond_broadcast(&s->cv);
        unref_locked(s);
    }
    return rc;
}

aclError acli_video_wait(acli_video_sync *s, const char *what)
{
    struct timespec until;
    uint64_t seen;
    aclError rc = ACL_SUCCESS;

    pthread_mutex_lock(&s->mu);
    seen = s->done;
    if (s->timeout_ms)
        acli_deadline_ms(&until, s->timeout_ms);
    while (s->done < s->posted) {
        int w = s->timeout_ms ? pthread_cond_timedwait(&s->cv, &s->mu, &until)
                              : pthread_cond_wait(&s->cv, &s->mu);
        if (s->done != seen) {
            /* progress: the next callback gets the whole timeout again */
            seen = s->done;
            if (s->timeout_ms)
                acli_deadline_ms(&until, s->timeout_ms);
        } else if (w == ETIMEDOUT) {
            rc = acli_fail(ACL_ERROR_WAIT_CALLBACK_TIMEOUT,
                           "%s: %llu of %llu callbacks have not run after %ld ms: is thread "
                           "%llu (the channel's ThreadId) calling aclrtProcessReport?",
                           what, (unsigned long long)(s->posted - s->done),
                           (unsigned long long)s->posted, s->timeout_ms,
                           (unsigned long long)s->thread_id);
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

bool acli_video_on_report_thread(const acli_video_sync *s)
{
    return s->thread_id == acli_thread_self();
}

long acli_video_timeout_ms(const acli_video_sync *s)
{
    return s->timeout_ms;
}

void acli_video_counts(acli_video_sync *s, uint64_t *posted, uint64_t *done)
{
    pthread_mutex_lock(&s->mu);
    if (posted)
        *posted = s->posted;
    if (done)
        *done = s->done;
    pthread_mutex_unlock(&s->mu);
}

/* --- what VDEC and VENC descriptions share ------------------------------------ */

aclError acli_video_not_live(const char *what, const char *name, const char *type)
{
    return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL or not a live %s", what, name,
                     type);
}

void *acli_video_handle_new(size_t size, acli_kind kind, const char *what)
{
    void *p = calloc(1, size);

    if (!p || !acli_handle_add(p, kind)) {
        free(p);
        acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory", what);
        return NULL;
    }
    return p;
}

aclError acli_video_handle_free(void *p, acli_kind kind, const char *what, const char *type)
{
    if (!p)
        return ACL_SUCCESS;
    if (!acli_handle_remove(p, kind))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: not a live %s", what, type);
    free(p);
    return ACL_SUCCESS;
}

aclError acli_video_desc_free(void *desc, acli_kind kind, bool channel_left, const char *what,
                              const char *type)
{
    if (!desc)
        return ACL_SUCCESS;
    if (channel_left)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: its channel could not be destroyed",
                         what);
    if (!acli_handle_remove(desc, kind))
        return acli_video_not_live(what, "channelDesc", type);
    free(desc);
    return ACL_SUCCESS;
}

aclError acli_video_refuse_on_310(const char *what)
{
    if (acli_profile() != DVPP_PROFILE_ASCEND310)
        return ACL_SUCCESS;
    return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: not supported on ascend310", what);
}

aclError acli_video_check_en_type(acldvppStreamFormat t, const char *what)
{
    if ((unsigned)t > H264_HIGH_LEVEL)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: enType %d: H265_MAIN_LEVEL (0) or "
                         "H264_BASELINE/MAIN/HIGH_LEVEL (1..3)", what, (int)t);
    return ACL_SUCCESS;
}

bool acli_video_is_nv12_or_nv21(acldvppPixelFormat f)
{
    return f == PIXEL_FORMAT_YUV_SEMIPLANAR_420 || f == PIXEL_FORMAT_YVU_SEMIPLANAR_420;
}

aclError acli_video_param_given(const char *what, int type, size_t want, const void *param)
{
    if (want == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown paramType %d", what, type);
    if (!param)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: param is NULL", what);
    return ACL_SUCCESS;
}

aclError acli_video_param_length(const char *what, int type, size_t want, size_t length,
                                 bool exact)
{
    if (exact ? length != want : length < want)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: paramType %d takes %zu bytes, length "
                         "is %zu", what, type, want, length);
    return ACL_SUCCESS;
}

aclError acli_video_check_create(const char *what, const char *api, bool created,
                                 bool has_callback, uint64_t thread_id)
{
    if (created)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the channel is already created", what);
    if (!has_callback)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: no callback (%sSetChannelDescCallback)",
                         what, api);
    if (!thread_id)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: no callback thread "
                         "(%sSetChannelDescThreadId)", what, api);
    return ACL_SUCCESS;
}

aclError acli_video_no_channel(const char *what, const char *api)
{
    return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the channel is not created "
                     "(%sCreateChannel)", what, api);
}

/* --- EOS and destroy ------------------------------------------------------------ */

aclError acli_video_refuse_on_report_thread(const acli_video_sync *s, const char *what)
{
    if (!acli_video_on_report_thread(s))
        return ACL_SUCCESS;
    return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: EOS on the channel's callback thread "
                     "(its ThreadId) would wait for callbacks only this thread runs: send "
                     "EOS or destroy the channel from another thread", what);
}

aclError acli_video_drain(acli_stream *stream, acli_video_sync *s, const char *what)
{
    aclError rc = acli_stream_sync(stream);
    aclError wait = acli_video_wait(s, what);

    return rc != ACL_SUCCESS ? rc : wait;
}

bool acli_video_destroy_refused(aclError eos_rc, const acli_video_sync *s)
{
    return eos_rc == ACL_ERROR_INVALID_PARAM && acli_video_on_report_thread(s);
}
