/* dvppd_live: reference-counted settings snapshots (see dvppd_live.h). */
#include "dvppd_live.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct dvppd_live {
    pthread_mutex_t mu;        /* guards cur against a concurrent publish */
    dvppd_settings *cur;
    atomic_uint_fast64_t generation;
};

dvpp_status dvppd_settings_new(const dvppd_config *c, dvppd_settings **out, dvpp_err *err)
{
    dvppd_settings *s = calloc(1, sizeof(*s));
    dvpp_status st;

    *out = NULL;
    if (!s)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "settings");
    s->cfg = *c;
    st = dvppd_aipp_set_load(&s->aipp, c, err);
    if (st == DVPP_OK) {
        st = dvppd_preset_set_load(&s->presets, c->presets, dvppd_aipp_find, &s->aipp, err);
        if (st != DVPP_OK)
            dvppd_aipp_set_fini(&s->aipp);
    }
    if (st != DVPP_OK) {
        free(s);
        return st;
    }
    s->generation = 1;
    atomic_init(&s->refs, 1);
    *out = s;
    return DVPP_OK;
}

void dvppd_settings_put(const dvppd_settings *cs)
{
    dvppd_settings *s = (dvppd_settings *)cs;

    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    dvppd_aipp_set_fini(&s->aipp);
    dvppd_preset_set_fini(&s->presets);
    free(s);
}

/* The keys a running process cannot change: sockets, thread pools and
 * per-connection structures sized at start. */
typedef struct restart_key {
    const char *name;
    size_t offset, size;
} restart_key;

#define RK(name, field) {name, offsetof(dvppd_config, field), sizeof(((dvppd_config *)0)->field)}

static const restart_key k_restart[] = {
    RK("http.listen", http_addr),
    RK("http.listen", http_port),
    RK("http.threads", http.threads),
    RK("http.max_connections", http.max_connections),
    RK("http.max_connections_per_ip", http.max_per_ip),
    RK("http.idle_timeout_s", http.idle_timeout_s),
    RK("http.connection_memory", http.connection_memory),
    RK("http.max_jobs", http.max_jobs),
    RK("http.job_ttl_s", http.job_ttl_s),
    RK("socket.path", socket_path),
    RK("socket.mode", socket_mode),
    RK("socket.max_connections", sock.max_connections),
    RK("socket.max_inline", sock.max_inline),
    RK("socket.max_rings", sock.max_rings),
    RK("device.queue_depth", queue_depth),
    RK("device.max_pixels_in_flight", max_pixels_in_flight),
    RK("device.max_bytes_in_flight", max_bytes_in_flight),
    RK("device.idle_trim_ms", idle_trim_ms),
    RK("device.idle_keep_bytes", idle_keep_bytes),
};

unsigned dvppd_settings_carry(const dvppd_config *running, dvppd_config *next,
                              const char **changed, unsigned cap)
{
    const char *last = NULL;
    unsigned n = 0;

    for (size_t i = 0; i < sizeof(k_restart) / sizeof(k_restart[0]); i++) {
        const restart_key *k = &k_restart[i];
        const char *was = (const char *)running + k->offset;
        char *now = (char *)next + k->offset;
        if (memcmp(was, now, k->size) == 0)
            continue;
        memcpy(now, was, k->size);
        if (k->name != last) { /* http.listen is two fields, one name */
            if (n < cap)
                changed[n] = k->name;
            n++;
            last = k->name;
        }
    }
    return n;
}

dvpp_status dvppd_live_new(dvppd_settings *first, dvppd_live **out, dvpp_err *err)
{
    dvppd_live *l = calloc(1, sizeof(*l));

    *out = NULL;
    if (!l)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "settings holder");
    pthread_mutex_init(&l->mu, NULL);
    first->generation = 1;
    l->cur = first;
    atomic_init(&l->generation, 1);
    *out = l;
    return DVPP_OK;
}

void dvppd_live_free(dvppd_live *l)
{
    if (!l)
        return;
    dvppd_settings_put(l->cur);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

const dvppd_settings *dvppd_live_get(dvppd_live *l)
{
    dvppd_settings *s;

    pthread_mutex_lock(&l->mu);
    s = l->cur;
    atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&l->mu);
    return s;
}

uint64_t dvppd_live_generation(dvppd_live *l)
{
    return atomic_load(&l->generation);
}

void dvppd_live_publish(dvppd_live *l, dvppd_settings *next)
{
    dvppd_settings *old;

    pthread_mutex_lock(&l->mu);
    old = l->cur;
    next->generation = old->generation + 1;
    l->cur = next;
    atomic_store(&l->generation, next->generation);
    pthread_mutex_unlock(&l->mu);
    dvppd_settings_put(old);
}
