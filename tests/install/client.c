/* client.c: a program built only from what `make install` lays out, as an
 * integrator would build it (tests/e2e/test_install.py compiles it with
 * nothing but `pkg-config --cflags --libs dvppclient` against the staged
 * tree, then runs it against a real dvppd):
 *
 *   cc client.c $(pkg-config --cflags --libs dvppclient) -o client
 *   client SOCKET IMAGE.jpg W H
 *
 * It connects, opens a ring, sends one preprocess job (resize to W x H,
 * ImageNet normalisation) and prints the result as one line:
 *
 *   ok protocol=1 dtype=float32 layout=NCHW shape=1,3,H,W bytes=N mean=X,Y,Z
 *
 * Exit status 0 only when the tensor has that shape and finite values.
 * Not under tests/e2e/: the build compiles every C file there against the
 * source tree, which is exactly what this program must not see.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvppclient.h>
#include <dvpp_ring.h>

static const char SPEC_FMT[] =
    "{\"ops\":[{\"resize\":{\"w\":%u,\"h\":%u}}],"
    "\"normalize\":{\"mean\":[0.485,0.456,0.406],\"std\":[0.229,0.224,0.225]}}";

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len)) != NULL && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        *n = (size_t)len;
    fclose(f);
    return buf;
}

static int fail(const char *what, int rc, const dvppc_error *e)
{
    fprintf(stderr, "client: %s: %d %s %s (field %s)\n", what, rc, e->code, e->message, e->field);
    return 1;
}

int main(int argc, char **argv)
{
    dvppc_error err = {0};
    dvppc_conn *c = NULL;
    dvppc_ring *ring = NULL;
    dvppc_result r;
    char spec[256];
    unsigned w, h;
    size_t n = 0;
    unsigned char *jpeg;
    int rc, bad = 0;

    if (argc != 5) {
        fprintf(stderr, "usage: client SOCKET IMAGE W H\n");
        return 2;
    }
    w = (unsigned)strtoul(argv[3], NULL, 10);
    h = (unsigned)strtoul(argv[4], NULL, 10);
    jpeg = read_file(argv[2], &n);
    if (!jpeg || !w || !h) {
        fprintf(stderr, "client: cannot read %s or bad size\n", argv[2]);
        return 2;
    }
    snprintf(spec, sizeof(spec), SPEC_FMT, w, h);

    if ((rc = dvppc_connect(argv[1], &c, &err)) != DVPPC_OK)
        return fail("connect", rc, &err);
    if ((rc = dvppc_ring_open(c, NULL, 2, (uint64_t)3 * w * h * sizeof(float), &ring, &err)))
        return fail("ring_open", rc, &err);
    /* The mapping has the layout of the installed dvpp_ring.h. */
    size_t map = 0;
    const unsigned char *base = dvppc_ring_base(ring, &map);
    const dvpp_ring_header *hd = (const void *)base;
    if (!hd || map < sizeof(*hd) || hd->magic != DVPP_RING_MAGIC ||
        hd->version != DVPP_RING_VERSION || hd->slot_count != 2 ||
        hd->desc_bytes != sizeof(dvpp_ring_slot)) {
        fprintf(stderr, "client: ring header does not match dvpp_ring.h\n");
        return 1;
    }
    dvppc_request q = {.kind = DVPPC_TENSOR, .spec = spec, .input = jpeg, .input_len = n,
                       .ring = ring};
    if ((rc = dvppc_submit(c, &q, &r, &err)) != DVPPC_OK)
        return fail("submit", rc, &err);

    const dvppc_meta *m = &r.meta;
    const float *x = r.data;
    double mean[3] = {0, 0, 0};
    size_t plane = (size_t)w * h;
    if (strcmp(m->dtype, "float32") || strcmp(m->layout, "NCHW") || m->ndim != 4 ||
        m->shape[0] != 1 || m->shape[1] != 3 || m->shape[2] != h || m->shape[3] != w ||
        m->bytes != 3 * plane * sizeof(float) || r.len < m->bytes || !x)
        bad = 1;
    /* The slot's descriptor in the ring says the same. */
    const dvpp_ring_slot *sd = (const void *)(base + hd->header_bytes +
                                              (size_t)r.slot * hd->desc_bytes);
    if (r.ring != ring || r.slot >= hd->slot_count || sd->status != DVPP_RING_SLOT_READY ||
        sd->dtype != DVPP_RING_DTYPE_F32 || sd->layout != DVPP_RING_LAYOUT_NCHW ||
        sd->ndim != 4 || sd->shape[2] != h || sd->shape[3] != w ||
        sd->byte_length != m->bytes || base + sd->payload_offset != (const void *)x)
        bad = 1;
    for (size_t ch = 0; !bad && ch < 3; ch++) {
        for (size_t i = 0; i < plane; i++) {
            float v = x[ch * plane + i];
            if (!isfinite(v)) {
                bad = 1;
                break;
            }
            mean[ch] += v;
        }
        mean[ch] /= (double)plane;
    }
    printf("%s protocol=%u dtype=%s layout=%s shape=%lld,%lld,%lld,%lld bytes=%llu "
           "mean=%.4f,%.4f,%.4f\n", bad ? "bad" : "ok", dvppc_info(c)->protocol, m->dtype,
           m->layout, (long long)m->shape[0], (long long)m->shape[1], (long long)m->shape[2],
           (long long)m->shape[3], (unsigned long long)m->bytes, mean[0], mean[1], mean[2]);
    dvppc_release(c, &r);
    dvppc_ring_close(ring);
    dvppc_close(c);
    free(jpeg);
    return bad;
}
