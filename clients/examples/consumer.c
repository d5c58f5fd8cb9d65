/* consumer.c: a small inference app on libdvppclient, as a model for
 * integrators.
 *
 *   consumer SOCKET [--slots N] IMAGE|DIR...
 *
 * It connects to dvppd, opens a ring of N slots each sized for one
 * 1x3x224x224 float32 tensor, and streams the images through the daemon:
 * up to N jobs in flight, each tensor read where the daemon wrote it (no
 * copy), "inferred" (here: the mean of each channel stands in for a
 * model), and its slot given back. One line per image with its latency.
 *
 * Build: cc consumer.c $(pkg-config --cflags --libs dvppclient)
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "dvppclient.h"

/* The model's input: 1 x 3 x 224 x 224 float32, NCHW, ImageNet
 * normalisation. The spec is the JSON of docs/http-api.md; the daemon
 * decodes, resizes and normalises, and its last kernel writes the tensor
 * straight into our ring slot. */
#define SIDE 224
#define CHANNELS 3
#define TENSOR_BYTES ((uint64_t)CHANNELS * SIDE * SIDE * sizeof(float))
static const char SPEC[] =
    "{\"ops\":[{\"resize\":{\"w\":224,\"h\":224}}],"
    "\"normalize\":{\"mean\":[0.485,0.456,0.406],\"std\":[0.229,0.224,0.225]}}";

#define MAX_IMAGES 4096
#define MAX_SLOTS 64

/* One job in flight: the ticket dvppc_wait collects it by, and when it left. */
typedef struct job {
    const char *path;
    uint64_t ticket;
    double t0;
} job;

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static bool is_image(const char *name)
{
    const char *dot = strrchr(name, '.');

    return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") ||
                   !strcasecmp(dot, ".png"));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add @arg (a file, or the images of a directory, sorted) to @list. */
static void collect(const char *arg, char **list, size_t *n)
{
    struct stat st;
    struct dirent *e;
    size_t first = *n;
    DIR *d;

    if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (*n < MAX_IMAGES)
            list[(*n)++] = strdup(arg);
        return;
    }
    d = opendir(arg);
    if (!d)
        return;
    while ((e = readdir(d)) && *n < MAX_IMAGES) {
        char *p;
        if (e->d_name[0] == '.' || !is_image(e->d_name))
            continue;
        p = malloc(strlen(arg) + strlen(e->d_name) + 2);
        if (!p)
            break;
        sprintf(p, "%s/%s", arg, e->d_name);
        list[(*n)++] = p;
    }
    closedir(d);
    qsort(list + first, *n - first, sizeof(*list), by_name);
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    void *buf = NULL;
    long size;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)size);
        if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)size;
    }
    fclose(f);
    return buf;
}

/* Start one image: read it and hand it to the daemon. The library sends
 * the bytes (inline, or as a sealed memfd when large) before returning,
 * so the buffer can go at once. */
static int start(dvppc_conn *c, dvppc_ring *ring, job *j)
{
    dvppc_request q = {.kind = DVPPC_TENSOR, .spec = SPEC, .ring = ring, .input_fd = -1};
    dvppc_error err;
    void *bytes;
    int st;

    bytes = read_file(j->path, &q.input_len);
    if (!bytes) {
        fprintf(stderr, "%s: %s\n", j->path, strerror(errno ? errno : EIO));
        return -1;
    }
    q.input = bytes;
    j->t0 = now_ms();
    st = dvppc_submit_async(c, &q, &j->ticket, &err);
    free(bytes);
    if (st) {
        fprintf(stderr, "%s: submit: %s %s\n", j->path, err.code, err.message);
        return -1;
    }
    return 0;
}

/* The stand-in for inference: the mean of each channel, read straight
 * from the slot. The pointer is valid until dvppc_release (or the lease
 * timeout, lease_timeout_ms): an app that keeps a tensor longer copies it. */
static void infer(const dvppc_result *r, double mean[CHANNELS])
{
    const float *t = r->data;
    const size_t plane = (size_t)SIDE * SIDE;

    for (int ch = 0; ch < CHANNELS; ch++) {
        double sum = 0;
        for (size_t i = 0; i < plane; i++)
            sum += t[(size_t)ch * plane + i];
        mean[ch] = sum / (double)plane;
    }
}

/* The tensor must be what the model expects before we read it as one. */
static bool tensor_ok(const dvppc_result *r)
{
    const dvppc_meta *m = &r->meta;

    return r->data && r->len >= TENSOR_BYTES && !strcmp(m->dtype, "float32") &&
           !strcmp(m->layout, "NCHW") && m->ndim == 4 && m->shape[0] == 1 &&
           m->shape[1] == CHANNELS && m->shape[2] == SIDE && m->shape[3] == SIDE;
}

/* Collect the oldest job: wait for its result, use the tensor, release. */
static int finish(dvppc_conn *c, const job *j)
{
    dvppc_result r;
    dvppc_error err;
    double mean[CHANNELS], ms;
    int st = dvppc_wait(c, j->ticket, &r, -1, &err);

    ms = now_ms() - j->t0;
    if (st) {
        fprintf(stderr, "%s: %s %s%s%s\n", j->path, err.code, err.message,
                err.field[0] ? " field " : "", err.field);
        dvppc_release(c, &r); /* safe on a failed result */
        return -1;
    }
    if (!tensor_ok(&r)) {
        fprintf(stderr, "%s: unexpected tensor %s %s, %d dims, %zu bytes\n", j->path,
                r.meta.dtype, r.meta.layout, r.meta.ndim, r.len);
        dvppc_release(c, &r);
        return -1;
    }
    infer(&r, mean);
    /* give the slot back as soon as we are done with it: the ring has only
     * N, and the next job needs one */
    dvppc_release(c, &r);
    /* the daemon's stages: a resize fused with the normalisation (as here)
     * counts under post, not vpc */
    printf("%s: %.2f ms (daemon %.2f ms: queue %.2f decode %.2f vpc %.2f post %.2f) "
           "mean %.4f %.4f %.4f\n",
           j->path, ms, r.total_us / 1e3, r.queue_us / 1e3, r.decode_us / 1e3,
           r.vpc_us / 1e3, r.post_us / 1e3, mean[0], mean[1], mean[2]);
    return 0;
}

/* Keep up to @slots jobs in flight: one slot each, so a submit never finds
 * the ring full; results are collected in submission order. */
static int run(dvppc_conn *c, dvppc_ring *ring, uint32_t slots, char **paths, size_t n)
{
    job q[MAX_SLOTS];
    size_t next = 0, head = 0, inflight = 0;
    int failed = 0;

    while (next < n || inflight) {
        while (inflight < slots && next < n) {
            job *j = &q[(head + inflight) % slots];
            j->path = paths[next++];
            if (start(c, ring, j) == 0)
                inflight++;
            else
                failed++;
        }
        if (!inflight)
            break;
        if (finish(c, &q[head]) != 0)
            failed++;
        head = (head + 1) % slots;
        inflight--;
    }
    return failed;
}

int main(int argc, char **argv)
{
    static char *paths[MAX_IMAGES];
    const dvppc_server_info *info;
    dvppc_conn *c = NULL;
    dvppc_ring *ring = NULL;
    dvppc_error err;
    unsigned long slots = 4;
    size_t n = 0;
    double t0;
    int failed = 1;

    if (argc < 3) {
        fprintf(stderr, "usage: %s SOCKET [--slots N] IMAGE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--slots") && i + 1 < argc)
            slots = strtoul(argv[++i], NULL, 10);
        else
            collect(argv[i], paths, &n);
    }
    if (slots < 1 || slots > MAX_SLOTS || !n) {
        fprintf(stderr, "need 1..%d slots and at least one image\n", MAX_SLOTS);
        goto out;
    }
    if (dvppc_connect(argv[1], &c, &err) != 0) {
        fprintf(stderr, "connect %s: %s %s\n", argv[1], err.code, err.message);
        goto out;
    }
    info = dvppc_info(c);
    printf("dvppd %s (%s), max_inline %llu, lease %u ms\n", info->version, info->simd,
           (unsigned long long)info->max_inline, info->lease_timeout_ms);
    /* The ring: N slots of one tensor each, mapped read-only here. */
    if (dvppc_ring_open(c, NULL, (uint32_t)slots, TENSOR_BYTES, &ring, &err) != 0) {
        fprintf(stderr, "ring: %s %s\n", err.code, err.message);
        goto out;
    }
    t0 = now_ms();
    failed = run(c, ring, (uint32_t)slots, paths, n);
    printf("%zu images, %d failed, %.1f images/s\n", n, failed,
           (double)n / ((now_ms() - t0) / 1e3));
out:
    dvppc_ring_close(ring);
    dvppc_close(c);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    return failed ? 1 : 0;
}
