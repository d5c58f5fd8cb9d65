/* sock_cache: what a connection keeps between its jobs: its input memfds
 * mapped, and the last spec it sent parsed. Socket thread.
 *
 * A sealed input memfd stays mapped for the connection: its bytes cannot
 * change (checked seals), so a client that reuses its input buffers pays
 * no mmap/munmap per job. Only the bytes inputs use are mapped (a sealed
 * sparse memfd may claim terabytes), and the cache holds at most
 * SOCK_MAPCACHE entries and SOCK_MAPCACHE_BYTES mapped. An entry is found
 * by (device, inode) but used only once kcmp proves the job's descriptor
 * is the same open file as the one the entry keeps: memfd inode numbers
 * may repeat (they wrap at 2^32 and are not checked for uniqueness), so an
 * inode number alone could return another file's bytes. Where kcmp is
 * unavailable the cache is not used. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* F_DUPFD_CLOEXEC */
#endif
#include "sock_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- input mappings ---------------------------------------------------------------------- */

void sock_unmap_inputs(sjob *j)
{
    for (size_t i = 0; i < j->nmaps; i++) {
        input_map *m = &j->maps[i];
        if (m->cached >= 0)
            j->c->maps[m->cached].refs--;
        else if (m->addr)
            munmap(m->addr, m->len);
    }
    free(j->maps);
    j->maps = NULL;
    j->nmaps = 0;
}

static void cache_entry_drop(conn *c, cached_map *e)
{
    munmap(e->addr, e->len);
    close(e->fd);
    c->maps_bytes -= e->len;
    *e = (cached_map){.fd = -1};
}

/* The entry holding @fd's file with at least @len bytes mapped: 1 (into
 * *k), 0 when none does, -1 when the file's identity cannot be proven
 * (then neither use nor add an entry). */
static int cache_find(conn *c, int fd, const struct stat *sb, size_t len, int *k)
{
    for (int i = 0; i < SOCK_MAPCACHE; i++) {
        cached_map *e = &c->maps[i];
        int same;
        if (!e->addr || e->dev != sb->st_dev || e->ino != sb->st_ino)
            continue;
        same = ipc_same_file(e->fd, fd);
        if (same < 0)
            return -1;
        if (same && e->len >= len) {
            *k = i;
            return 1;
        }
    }
    return 0;
}

/* Room for a mapping of @len bytes: a free entry (idle ones evicted, least
 * recently used first, until the entry and byte caps allow it), or -1. */
static int cache_make_room(conn *c, size_t len)
{
    if (len > SOCK_MAPCACHE_BYTES)
        return -1;
    for (;;) {
        int free_k = -1, victim = -1;
        for (int i = 0; i < SOCK_MAPCACHE; i++) {
            cached_map *e = &c->maps[i];
            if (!e->addr && free_k < 0)
                free_k = i;
            else if (e->addr && e->refs == 0 &&
                     (victim < 0 || e->last_use < c->maps[victim].last_use))
                victim = i;
        }
        if (free_k >= 0 && c->maps_bytes + len <= SOCK_MAPCACHE_BYTES)
            return free_k;
        if (victim < 0)
            return -1;
        cache_entry_drop(c, &c->maps[victim]);
    }
}

/* Idle entries go (a closing connection; busy ones go with their jobs). */
static void cache_drop_all(conn *c)
{
    for (int i = 0; i < SOCK_MAPCACHE; i++)
        if (c->maps[i].addr && c->maps[i].refs == 0)
            cache_entry_drop(c, &c->maps[i]);
}

/* Map the first @want bytes of sealed memfd @fd read-only, through the
 * connection's cache when it can. */
dvpp_status sock_map_input(conn *c, int fd, uint64_t want, input_map *m, dvpp_err *err)
{
    dvppd_sock *s = c->s;
    struct stat sb;
    uint64_t size;
    void *addr;
    int k = -1, found, keep;

    m->cached = -1;
    if (!ipc_memfd_is_sealed(fd, &size) || fstat(fd, &sb) != 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input_fd", "the input fd must be a memfd "
                            "sealed with F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE");
    if (want == 0 || want > size || want > s->set->cfg.limits.max_encoded_bytes)
        return dvpp_err_set(err, want > size ? DVPP_EINVAL : DVPP_ELIMIT, "input_len",
                            "input_len %llu: the memfd has %llu bytes, the limit is %llu",
                            (unsigned long long)want, (unsigned long long)size,
                            (unsigned long long)s->set->cfg.limits.max_encoded_bytes);
    found = cache_find(c, fd, &sb, (size_t)want, &k);
    if (found == 1) {
        cached_map *e = &c->maps[k];
        e->refs++;
        e->last_use = ++c->map_clock;
        *m = (input_map){e->addr, (size_t)want, k};
        return DVPP_OK;
    }
    /* want <= max_encoded_bytes: never the memfd's claimed size */
    addr = mmap(NULL, (size_t)want, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED)
        return dvpp_err_set(err, DVPP_ESYS, "input_fd", "cannot map the input: %s",
                            strerror(errno));
    *m = (input_map){addr, (size_t)want, -1};
    keep = found == 0 ? cache_make_room(c, (size_t)want) : -1;
    if (keep >= 0) {
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (dup >= 0) {
            c->maps[keep] = (cached_map){dup, sb.st_dev, sb.st_ino, addr, (size_t)want, 1,
                                         ++c->map_clock};
            c->maps_bytes += (size_t)want;
            m->cached = keep;
        }
    }
    return DVPP_OK;
}

dvpp_status sock_map_job_input(sjob *j, int fd, uint64_t len, dvpp_err *err)
{
    dvpp_status st;

    j->maps = calloc(1, sizeof(*j->maps));
    if (!j->maps)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "input");
    j->nmaps = 1;
    st = sock_map_input(j->c, fd, len, &j->maps[0], err);
    j->in = j->maps[0].addr;
    j->in_len = j->maps[0].len;
    return st;
}

/* --- the spec parse ------------------------------------------------------------------------ */

static bool same_text(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* Remember @spec's parse for the next job that repeats it (most clients
 * send one spec many times). */
static void remember_spec(conn *c, int kind, const char *spec, const char *aipp,
                          const dvppd_spec *parsed)
{
    char *a = strdup(spec ? spec : ""), *b = strdup(aipp ? aipp : "");

    if (!a || !b) {
        free(a), free(b);
        return;
    }
    free(c->last_spec), free(c->last_aipp);
    c->last_spec = a, c->last_aipp = b;
    c->last_kind = kind;
    c->last_gen = c->s->set->generation;
    c->last = *parsed;
}

dvpp_status sock_job_spec(sjob *j, dvppd_spec_kind kind, const char *spec,
                          const char *aipp, dvpp_err *err)
{
    conn *c = j->c;
    dvppd_spec_env env = {kind, dvppd_aipp_find, (void *)&c->s->set->aipp,
                          aipp && *aipp ? aipp : NULL, aipp ? strlen(aipp) : 0,
                          dvppd_preset_find, (void *)&c->s->set->presets};
    dvpp_status st;

    /* A reload may have changed the named AIPP configs or the limits the
     * kept parse was validated with: only a parse of this generation. */
    if (c->last_spec && c->last_kind == (int)kind && c->last_gen == c->s->set->generation &&
        same_text(c->last_spec, spec) && same_text(c->last_aipp, aipp)) {
        j->spec = c->last; /* validated when it was parsed */
        return DVPP_OK;
    }
    st = spec && *spec ? dvppd_spec_from_json(&env, spec, strlen(spec), &j->spec, err)
                       : dvppd_spec_from_query(&env, NULL, 0, &j->spec, err);
    if (st == DVPP_OK && j->spec.ring[0])
        st = dvpp_err_set(err, DVPP_EINVAL, "output.ring",
                          "rings are named in the message, not the spec");
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&j->spec.pipe, &c->s->set->cfg.limits, err);
    if (st == DVPP_OK)
        remember_spec(c, (int)kind, spec, aipp, &j->spec);
    return st;
}

void sock_caches_free(conn *c)
{
    cache_drop_all(c);
    free(c->last_spec);
    free(c->last_aipp);
    c->last_spec = c->last_aipp = NULL;
}
