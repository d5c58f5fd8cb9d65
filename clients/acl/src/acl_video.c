/* acl_video.c: the callback side of VDEC/VENC channels (acl_video.h). */
#include "acl_video.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

uint64_t acli_video_thread_self(void)
{
    pthread_t self = pthread_self();
    uint64_t id = 0;

    memcpy(&id, &self, sizeof(self) < sizeof(id) ? sizeof(self) : sizeof(id));
    return id;
}

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

static int cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);

    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
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
    if (cond_init_monotonic(&s->cv) != 0) {
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

static void deadline_in(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

aclError acli_video_wait(acli_video_sync *s, const char *what)
{
    struct timespec until;
    uint64_t seen;
    aclError rc = ACL_SUCCESS;

    pthread_mutex_lock(&s->mu);
    seen = s->done;
    if (s->timeout_ms)
        deadline_in(&until, s->timeout_ms);
    while (s->done < s->posted) {
        int w = s->timeout_ms ? pthread_cond_timedwait(&s->cv, &s->mu, &until)
                              : pthread_cond_wait(&s->cv, &s->mu);
        if (s->done != seen) {
            /* progress: the next callback gets the whole timeout again */
            seen = s->done;
            if (s->timeout_ms)
                deadline_in(&until, s->timeout_ms);
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
    return s->thread_id == acli_video_thread_self();
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
