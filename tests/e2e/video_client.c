/* video_client: libdvppclient's video channels from the command line, for
 * tests/e2e/test_socket_video.py.
 *
 *   video_client SOCKET encode RAW OUT -c CODEC -s WxH -f FORMAT [-g GOP]
 *                [-n FRAMES] [-i IDR,IDR,...] [--mp4] [--stream]
 *       encode the tight raw frames in RAW into OUT (dvppc_video_encode, or
 *       with --stream dvppc_video_encode_open/frame/finish); prints
 *       {"packets":P,"keyframes":K,"bytes":B}
 *   video_client SOCKET decode IN OUT [-e EVERY] [-k] [-m MAX] [-f FORMAT]
 *                [--spec JSON] [--slots N] [--slot-bytes B] [--keep]
 *                [--threads T]
 *       decode IN into a ring, append each frame's slot bytes to OUT (OUT.t
 *       per thread with --threads, all on one connection); one JSON line
 *       per frame, then {"frames":N,"status":S,"code":"..."}; --keep keeps
 *       each slot until the next frame (the callback returns 1)
 *
 * Exit status 0 when the call succeeded, 1 when it failed (the last line
 * says how), 2 for usage errors.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvppclient.h"

#define MAX_THREADS 8

typedef struct args {
    const char *sock, *cmd, *in, *out;
    const char *codec, *format, *spec, *idr;
    uint32_t w, h, gop, every, max, slots, nframes, threads;
    uint64_t slot_bytes;
    bool keyframes, keep, mp4, stream;
} args;

/* --- files ---------------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    buf = malloc((size_t)n);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    *len = (size_t)n;
out:
    fclose(f);
    return buf;
}

static int write_all(void *ctx, const void *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : DVPPC_ESYS;
}

/* --- arguments -------------------------------------------------------------------- */

static int usage(void)
{
    fprintf(stderr, "usage: video_client SOCKET encode RAW OUT -c CODEC -s WxH -f FMT "
                    "[-g GOP] [-n N] [-i IDRS] [--mp4] [--stream]\n"
                    "       video_client SOCKET decode IN OUT [-e N] [-k] [-m N] [-f FMT] "
                    "[--spec JSON] [--slots N] [--slot-bytes B] [--keep] [--threads T]\n");
    return 2;
}

static bool opt_value(int argc, char **argv, int *i, args *a)
{
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;

    if (!v)
        return false;
    ++*i;
    if (!strcmp(o, "-c"))
        a->codec = v;
    else if (!strcmp(o, "-s"))
        return sscanf(v, "%ux%u", &a->w, &a->h) == 2;
    else if (!strcmp(o, "-f"))
        a->format = v;
    else if (!strcmp(o, "-g"))
        a->gop = (uint32_t)strtoul(v, NULL, 10);
    else if (!strcmp(o, "-n"))
        a->nframes = (uint32_t)strtoul(v, NULL, 10);
    else if (!strcmp(o, "-i"))
        a->idr = v;
    else if (!strcmp(o, "-e"))
        a->every = (uint32_t)strtoul(v, NULL, 10);
    else if (!strcmp(o, "-m"))
        a->max = (uint32_t)strtoul(v, NULL, 10);
    else if (!strcmp(o, "--spec"))
        a->spec = v;
    else if (!strcmp(o, "--slots"))
        a->slots = (uint32_t)strtoul(v, NULL, 10);
    else if (!strcmp(o, "--slot-bytes"))
        a->slot_bytes = strtoull(v, NULL, 10);
    else if (!strcmp(o, "--threads"))
        a->threads = (uint32_t)strtoul(v, NULL, 10);
    else
        return false;
    return true;
}

static bool parse(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof(*a));
    a->slots = 4;
    a->threads = 1;
    if (argc < 5)
        return false;
    a->sock = argv[1], a->cmd = argv[2], a->in = argv[3], a->out = argv[4];
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "-k"))
            a->keyframes = true;
        else if (!strcmp(argv[i], "--keep"))
            a->keep = true;
        else if (!strcmp(argv[i], "--mp4"))
            a->mp4 = true;
        else if (!strcmp(argv[i], "--stream"))
            a->stream = true;
        else if (!opt_value(argc, argv, &i, a))
            return false;
    }
    return a->threads >= 1 && a->threads <= MAX_THREADS;
}

/* --- encode ------------------------------------------------------------------------ */

static size_t parse_idrs(const char *s, uint32_t *idr, size_t cap)
{
    size_t n = 0;
    char *end;

    while (s && *s && n < cap) {
        idr[n++] = (uint32_t)strtoul(s, &end, 10);
        s = *end == ',' ? end + 1 : NULL;
    }
    return n;
}

static size_t frame_bytes(const args *a)
{
    size_t px = (size_t)a->w * a->h;

    return a->format && (!strcmp(a->format, "rgb") || !strcmp(a->format, "bgr")) ? px * 3
                                                                                 : px * 3 / 2;
}

/* The stream API, frame by frame. */
static int encode_stream(dvppc_conn *c, const dvppc_venc_opts *o, const void *const *frames,
                         size_t n, size_t fb, const uint32_t *idr, size_t nidr, FILE *out,
                         dvppc_venc_counts *counts, dvppc_error *err)
{
    dvppc_venc *v;
    int st = dvppc_video_encode_open(c, o, write_all, out, &v, err);

    for (size_t i = 0; !st && i < n; i++) {
        bool force = false;
        for (size_t k = 0; k < nidr; k++)
            force = force || idr[k] == i;
        st = dvppc_video_encode_frame(v, frames[i], fb, force, err);
    }
    if (st) {
        dvppc_video_encode_close(v);
        return st;
    }
    return dvppc_video_encode_finish(v, counts, err);
}

static int run_encode(dvppc_conn *c, const args *a, FILE *out, dvppc_error *err)
{
    dvppc_venc_opts o = {.codec = a->codec, .width = a->w, .height = a->h, .gop = a->gop,
                         .input_format = a->format, .mp4 = a->mp4};
    uint32_t idr[256];
    size_t nidr = parse_idrs(a->idr, idr, 256), len = 0, fb = frame_bytes(a), n;
    const void **frames = NULL;
    dvppc_venc_counts counts;
    uint8_t *raw = slurp(a->in, &len);
    int st = DVPPC_EINVAL;

    n = fb ? len / fb : 0;
    if (a->nframes && a->nframes < n)
        n = a->nframes;
    frames = n ? calloc(n, sizeof(*frames)) : NULL;
    if (!raw || !frames) {
        snprintf(err->message, sizeof(err->message), "no frames in %s", a->in);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        frames[i] = raw + i * fb;
    if (a->stream)
        st = encode_stream(c, &o, frames, n, fb, idr, nidr, out, &counts, err);
    else
        st = dvppc_video_encode(c, &o, frames, n, fb, idr, nidr, write_all, out, &counts,
                                err);
    if (!st)
        printf("{\"packets\":%llu,\"keyframes\":%llu,\"bytes\":%llu}\n",
               (unsigned long long)counts.packets, (unsigned long long)counts.keyframes,
               (unsigned long long)counts.bytes);
out:
    free(frames);
    free(raw);
    return st;
}

/* --- decode ------------------------------------------------------------------------ */

typedef struct dec_run {
    dvppc_conn *c;
    dvppc_ring *ring;
    const args *a;
    const uint8_t *data;
    size_t len;
    FILE *out;
    pthread_mutex_t *print_mu;
    dvppc_result kept;       /* --keep: the previous frame's slot */
    bool have_kept;
    unsigned frames;
    int st;
    dvppc_error err;
} dec_run;

static int on_frame(void *ctx, const dvppc_frame *f)
{
    dec_run *r = ctx;
    const dvppc_meta *m = &f->result.meta;

    if (!f->result.data || fwrite(f->result.data, 1, f->result.len, r->out) != f->result.len)
        return DVPPC_ESYS;
    pthread_mutex_lock(r->print_mu);
    printf("{\"index\":%llu,\"pts\":%lld,\"time_s\":%.6f,\"key\":%s,\"bytes\":%zu,"
           "\"format\":\"%s\",\"width\":%u,\"height\":%u,\"width_stride\":%u,"
           "\"height_stride\":%u,\"dtype\":\"%s\",\"ndim\":%d}\n",
           (unsigned long long)f->index, (long long)f->pts, f->time_s,
           f->key ? "true" : "false", f->result.len, m->format, m->width, m->height,
           m->width_stride, m->height_stride, m->dtype, m->ndim);
    pthread_mutex_unlock(r->print_mu);
    r->frames++;
    if (!r->a->keep)
        return 0;
    if (r->have_kept)
        dvppc_release(r->c, &r->kept);
    r->kept = f->result;
    r->have_kept = true;
    return 1;
}

static void *decode_thread(void *arg)
{
    dec_run *r = arg;
    const args *a = r->a;
    dvppc_vdec_opts o = {.spec = a->spec, .format = a->format, .every = a->every,
                         .keyframes_only = a->keyframes, .max_frames = a->max};

    r->st = dvppc_video_decode(r->c, &o, r->data, r->len, r->ring, on_frame, r, &r->err);
    if (r->have_kept)
        dvppc_release(r->c, &r->kept);
    return NULL;
}

static int run_decode(dvppc_conn *c, const args *a, dvppc_error *err)
{
    dec_run runs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    dvppc_ring *ring = NULL;
    size_t len = 0;
    uint8_t *data = slurp(a->in, &len);
    int st = data ? 0 : DVPPC_EINVAL;
    unsigned total = 0;

    if (!data)
        snprintf(err->message, sizeof(err->message), "cannot read %s", a->in);

    if (!st)
        st = dvppc_ring_open(c, NULL, a->slots, a->slot_bytes ? a->slot_bytes : 4u << 20,
                             &ring, err);
    for (uint32_t t = 0; !st && t < a->threads; t++) {
        char path[4096];
        runs[t] = (dec_run){.c = c, .ring = ring, .a = a, .data = data, .len = len,
                            .print_mu = &mu};
        if (a->threads == 1)
            snprintf(path, sizeof(path), "%s", a->out);
        else
            snprintf(path, sizeof(path), "%s.%u", a->out, t);
        runs[t].out = fopen(path, "wb");
        if (!runs[t].out || pthread_create(&tids[t], NULL, decode_thread, &runs[t])) {
            fprintf(stderr, "cannot start thread %u\n", t);
            return DVPPC_ESYS; /* a test tool: the process ends now */
        }
    }
    for (uint32_t t = 0; data && ring && t < a->threads; t++) {
        pthread_join(tids[t], NULL);
        fclose(runs[t].out);
        total += runs[t].frames;
        if (runs[t].st && !st) {
            st = runs[t].st;
            *err = runs[t].err;
        }
    }
    printf("{\"frames\":%u,\"status\":%d,\"code\":\"%s\"}\n", total, st,
           st ? err->code : "OK");
    dvppc_ring_close(ring);
    free(data);
    return st;
}

int main(int argc, char **argv)
{
    dvppc_error err = {0};
    dvppc_conn *c = NULL;
    FILE *out = NULL;
    args a;
    int st;

    if (!parse(argc, argv, &a) || (strcmp(a.cmd, "encode") && strcmp(a.cmd, "decode")))
        return usage();
    st = dvppc_connect(a.sock, &c, &err);
    if (!st && !strcmp(a.cmd, "encode")) {
        out = fopen(a.out, "wb");
        st = out ? run_encode(c, &a, out, &err) : DVPPC_ESYS;
        if (out)
            fclose(out);
    } else if (!st) {
        st = run_decode(c, &a, &err);
    }
    if (st)
        fprintf(stderr, "video_client: %s %s (%s)\n", err.code, err.message, err.field);
    dvppc_close(c);
    return st ? 1 : 0;
}
