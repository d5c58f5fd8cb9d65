/* batch_items_client: libdvppclient's dvppc_batch_submit_items from the
 * command line, for tests/e2e/test_item_specs.py.
 *
 *   batch_items_client SOCKET INPUT OUT SLOT_BYTES SPEC ITEM_SPEC...
 *
 * Submits one batch of as many copies of the file INPUT as there are
 * ITEM_SPECs (item i running ITEM_SPEC i; "-" as the only ITEM_SPEC: one
 * item, no item specs, SPEC for all), into a one-slot ring of SLOT_BYTES,
 * waits for its result and writes the tensor bytes to the file OUT. Prints
 * {"status":S,"code":"C","field":"F","items":N} (S 0, or the refusal or
 * failure the daemon answered with).
 *
 * Exit status 0 when it got an answer (a refusal included), 1 when a call
 * failed otherwise (stderr says which), 2 for usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvppclient.h"

/* The whole file @path (malloc'd) and its size, or NULL. */
static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    void *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

static void answer(const dvppc_error *e, int status, size_t items)
{
    printf("{\"status\":%d,\"code\":\"%s\",\"field\":\"%s\",\"items\":%zu}\n", status,
           status ? e->code : "", status ? e->field : "", items);
}

static int write_out(const char *path, const dvppc_result *r)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(r->data, 1, r->len, f) == r->len;

    if (f && fclose(f) != 0)
        ok = 0;
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    dvppc_conn *c = NULL;
    dvppc_ring *ring = NULL;
    dvppc_result res;
    dvppc_error e;
    const void **inputs = NULL;
    size_t *lens = NULL, len = 0, n;
    const char *const *items;
    uint64_t ticket = 0, batch = 0;
    void *data = NULL;
    int rc = 1, st;

    if (argc < 7)
        return fprintf(stderr, "usage: batch_items_client SOCKET INPUT OUT SLOT_BYTES "
                               "SPEC ITEM_SPEC...\n"), 2;
    n = (size_t)(argc - 6);
    items = (const char *const *)(argv + 6);
    if (n == 1 && !strcmp(items[0], "-"))
        items = NULL;
    data = slurp(argv[2], &len);
    inputs = calloc(n, sizeof(*inputs));
    lens = calloc(n, sizeof(*lens));
    if (!data || !inputs || !lens) {
        fprintf(stderr, "batch_items_client: cannot read %s\n", argv[2]);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        inputs[i] = data, lens[i] = len;
    if (dvppc_connect(argv[1], &c, &e) != 0 ||
        dvppc_ring_open(c, NULL, 1, strtoull(argv[4], NULL, 10), &ring, &e) != 0) {
        fprintf(stderr, "batch_items_client: %s\n", e.message);
        goto out;
    }
    st = dvppc_batch_submit_items(c, argv[5], items, inputs, lens, n, ring, false, &ticket,
                                  &batch, &e);
    if (st != 0) {
        answer(&e, st, n);
        rc = 0;
        goto out;
    }
    st = dvppc_wait(c, ticket, &res, 30000, &e);
    if (st)
        answer(&e, st, n);
    else
        answer(&res.error, res.status, res.items);
    rc = st ? 0 : write_out(argv[3], &res);
    if (!st)
        dvppc_release(c, &res);
out:
    if (ring)
        dvppc_ring_close(ring);
    dvppc_close(c);
    free(data);
    free(inputs);
    free(lens);
    return rc;
}
