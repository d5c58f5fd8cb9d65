/* Helpers shared by the aclvdec/aclvenc tests (tests/acl/test_video_*.c):
 * the runtime brought up under one profile with a context, a report thread
 * looping aclrtProcessReport as programs write it, streams made by the
 * ffmpeg command line at test time and cut into access units by
 * libavformat, libdvpp's own whole-buffer decode of them (the reference:
 * the bytes of `dvppctl video-decode` and `ffmpeg -pix_fmt nv12`), and
 * error assertions that also check the thread's message is the call's.
 * Every test program includes it once. */
#ifndef TEST_VIDEO_COMMON_H
#define TEST_VIDEO_COMMON_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <libavformat/avformat.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "dvpp_video.h"

/* --- the runtime ------------------------------------------------------------------ */

typedef struct video_env {
    const char *profile;      /* "ascend310" / "ascend310p" */
    aclrtContext ctx;
} video_env;

static video_env g_venv;

static inline int venv_up(const char *profile)
{
    setenv("DVPP_ACL_PROFILE", profile, 1);
    unsetenv("DVPP_ACL_CHANNELS");
    unsetenv("DVPP_ACL_DEVICES");
    unsetenv("DVPP_ACL_CALLBACK_TIMEOUT_MS");
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1); /* the expected errors stay quiet */
    g_venv.profile = profile;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtGetCurrentContext(&g_venv.ctx) != ACL_SUCCESS)
        return -1;
    return 0;
}

static inline int venv_down(void)
{
    int bad = 0;

    bad |= aclrtResetDevice(0) != ACL_SUCCESS;
    bad |= aclFinalize() != ACL_SUCCESS;
    return bad ? -1 : 0;
}

static inline bool venv_310p(void)
{
    return strcmp(g_venv.profile, "ascend310p") == 0;
}

/* --- the report thread ---------------------------------------------------------------- */

/* A thread that loops aclrtProcessReport(100) until told to stop, as the
 * CANN samples write it: it starts before the channel exists and ignores
 * the return codes. */
typedef struct report_thread {
    pthread_t tid;
    atomic_bool stop;
    atomic_bool paused;       /* while set it runs no callback (report_pause) */
    atomic_bool held;         /* it saw paused, outside aclrtProcessReport */
} report_thread;

static void *report_main(void *arg)
{
    report_thread *r = arg;

    aclrtSetCurrentContext(g_venv.ctx);
    while (!atomic_load(&r->stop)) {
        if (atomic_load(&r->paused)) {
            atomic_store(&r->held, true);
            usleep(2000);
            continue;
        }
        /* Cleared before paused is looked at again: a report_pause that
         * read held as true is seen here, so no call starts after it. */
        atomic_store(&r->held, false);
        if (atomic_load(&r->paused))
            continue;
        (void)aclrtProcessReport(100);
    }
    return NULL;
}

static inline void report_start(report_thread *r)
{
    atomic_init(&r->stop, false);
    atomic_init(&r->paused, false);
    atomic_init(&r->held, false);
    assert_int_equal(pthread_create(&r->tid, NULL, report_main, r), 0);
}

static inline uint64_t vnow_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* No callback runs from the return until report_resume. Setting paused
 * alone is not enough: the thread may already be inside
 * aclrtProcessReport(100) (it was started just before), and would run
 * the first callback that comes; so wait until it says it is held (it
 * leaves the call within 100 ms; 30 s is for a loaded machine). */
static inline void report_pause(report_thread *r)
{
    uint64_t until = vnow_ms() + 30000;

    atomic_store(&r->paused, true);
    while (!atomic_load(&r->held)) {
        if (vnow_ms() > until)
            fail_msg("the report thread did not pause within 30 s");
        usleep(1000);
    }
}

static inline void report_resume(report_thread *r)
{
    atomic_store(&r->paused, false);
}

static inline void report_stop(report_thread *r)
{
    atomic_store(&r->stop, true);
    pthread_join(r->tid, NULL);
}

static inline uint64_t thread_id_of(pthread_t t)
{
    uint64_t id = 0;

    memcpy(&id, &t, sizeof(t) < sizeof(id) ? sizeof(t) : sizeof(id));
    return id;
}

/* --- messages ------------------------------------------------------------------------ */

/* Leave a known message, so a later check can tell a failing call wrote
 * its own. */
#define VSENTINEL "acldvppCreateBatchPicDesc: batchSize(100000) should be between [1, 256]"

static inline void varm(void)
{
    assert_null(acldvppCreateBatchPicDesc(100000));
    assert_non_null(aclGetRecentErrMsg());
}

static inline void vcheck_fail(aclError got, aclError want, const char *text, int line)
{
    const char *m = aclGetRecentErrMsg();

    if (got != want || !m || !m[0] || strcmp(m, VSENTINEL) == 0) {
        fprintf(stderr, "line %d: %s: got %d want %d, message '%s'\n", line, text, got, want,
                m ? m : "(null)");
        fail();
    }
}

/* @call fails with @want and says why. */
#define VFAIL(call, want)                                  \
    do {                                                   \
        varm();                                            \
        vcheck_fail((call), (want), #call, __LINE__);      \
    } while (0)

static inline void vexpect_message(const char *needle)
{
    const char *m = aclGetRecentErrMsg();

    if (!m || !strstr(m, needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", m ? m : "(null)", needle);
        fail();
    }
}

/* --- streams -------------------------------------------------------------------------- */

#define VMAX_PACKETS 64
#define VMAX_FRAMES 64

typedef struct vframe {
    uint32_t width, height;
    size_t size;
    uint8_t *data;            /* the whole image, VDEC strides (malloc'd) */
} vframe;

typedef struct vstream {
    dvpp_video_codec codec;
    uint8_t *data;            /* the whole stream */
    size_t len;
    unsigned npackets;
    size_t pos[VMAX_PACKETS]; /* each access unit's place */
    size_t plen[VMAX_PACKETS];
    unsigned nframes;
    vframe ref[VMAX_FRAMES];  /* dvpp_video_decode's frames (NV12 unless asked) */
} vstream;

static char g_vdir[128];

static inline const char *vdir(void)
{
    const char *tmp = getenv("TMPDIR");

    if (!g_vdir[0]) {
        snprintf(g_vdir, sizeof(g_vdir), "%s/acl-video.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(g_vdir)) {
            fprintf(stderr, "mkdtemp failed\n");
            exit(1);
        }
    }
    return g_vdir;
}

static inline void vdir_remove(void)
{
    char cmd[256];

    if (!g_vdir[0])
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_vdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_vdir);
    g_vdir[0] = '\0';
}

static inline int vrun(const char *cmd)
{
    int rc = system(cmd);

    if (rc != 0)
        fprintf(stderr, "failed (%d): %s\n", rc, cmd);
    return rc;
}

static inline uint8_t *vread_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *d = NULL;
    long n;

    *len = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc((size_t)n)) != NULL) {
        if (fread(d, 1, (size_t)n, f) == (size_t)n) {
            *len = (size_t)n;
        } else {
            free(d);
            d = NULL;
        }
    }
    fclose(f);
    return d;
}

static dvpp_status vref_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    vstream *s = ctx;
    vframe *v;

    (void)err;
    if (s->nframes == VMAX_FRAMES)
        return DVPP_ENOSPC;
    v = &s->ref[s->nframes++];
    v->width = f->image->width;
    v->height = f->image->height;
    v->size = f->image->size;
    v->data = malloc(v->size);
    if (!v->data)
        return DVPP_ENOMEM;
    memcpy(v->data, f->image->data, v->size);
    return DVPP_OK;
}

static inline void vstream_free_refs(vstream *s)
{
    for (unsigned i = 0; i < s->nframes; i++)
        free(s->ref[i].data);
    s->nframes = 0;
}

/* libdvpp's whole-buffer decode of @s as @fmt into s->ref. */
static inline int vstream_reference(vstream *s, dvpp_pixfmt fmt)
{
    dvpp_vdec_opts o;
    dvpp_err err;

    vstream_free_refs(s);
    dvpp_vdec_opts_init(&o);
    o.format = fmt;
    if (dvpp_video_decode(s->data, s->len, &o, NULL, vref_sink, s, NULL, &err) != DVPP_OK) {
        fprintf(stderr, "reference decode: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Raw H.264/H.265 from the ffmpeg command line: each of @parts (lavfi
 * input and encoder options) appended to one file @name, cut into access
 * units, decoded whole as the reference. */
static inline int vstream_make(vstream *s, const char *name, dvpp_video_codec codec,
                               const char *const *parts, unsigned nparts)
{
    char path[256], cmd[1024];
    const AVInputFormat *in;
    AVFormatContext *fmt = NULL;
    AVPacket *pkt;
    int rc = -1;

    memset(s, 0, sizeof(*s));
    s->codec = codec;
    snprintf(path, sizeof(path), "%s/%s", vdir(), name);
    for (unsigned k = 0; k < nparts; k++) {
        snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -y -f lavfi -i %s -f %s - %s '%s'",
                 parts[k], codec == DVPP_VIDEO_H265 ? "hevc" : "h264", k ? ">>" : ">", path);
        if (vrun(cmd) != 0)
            return -1;
    }
    s->data = vread_file(path, &s->len);
    in = av_find_input_format(codec == DVPP_VIDEO_H265 ? "hevc" : "h264");
    pkt = av_packet_alloc();
    if (!s->data || !pkt || avformat_open_input(&fmt, path, in, NULL) < 0)
        goto out;
    while (av_read_frame(fmt, pkt) >= 0) {
        if (s->npackets == VMAX_PACKETS || pkt->pos < 0) {
            av_packet_unref(pkt);
            goto out;
        }
        s->pos[s->npackets] = (size_t)pkt->pos;
        s->plen[s->npackets++] = (size_t)pkt->size;
        av_packet_unref(pkt);
    }
    rc = vstream_reference(s, DVPP_PIXEL_NV12);
out:
    avformat_close_input(&fmt);
    av_packet_free(&pkt);
    return rc;
}

static inline void vstream_free(vstream *s)
{
    vstream_free_refs(s);
    free(s->data);
    s->data = NULL;
}

/* --- DVPP memory ----------------------------------------------------------------------- */

static inline void *vmalloc(size_t n)
{
    void *p = NULL;

    assert_int_equal(acldvppMalloc(&p, n), ACL_SUCCESS);
    assert_non_null(p);
    return p;
}

/* Access unit @i of @s in DVPP memory, in a new stream description. */
static inline acldvppStreamDesc *vpacket(const vstream *s, unsigned i)
{
    acldvppStreamDesc *d = acldvppCreateStreamDesc();
    void *p = vmalloc(s->plen[i]);

    assert_non_null(d);
    memcpy(p, s->data + s->pos[i], s->plen[i]);
    assert_int_equal(acldvppSetStreamDescData(d, p), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescSize(d, (uint32_t)s->plen[i]), ACL_SUCCESS);
    return d;
}

static inline void vpacket_free(acldvppStreamDesc *d)
{
    if (!d)
        return;
    if (acldvppGetStreamDescData(d))
        assert_int_equal(acldvppFree(acldvppGetStreamDescData(d)), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyStreamDesc(d), ACL_SUCCESS);
}

static inline uint32_t valign(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

#endif
