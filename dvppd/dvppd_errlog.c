/* dvppd_errlog: a bounded ring of the last error answers. */
#include "dvppd_errlog.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void dvppd_errlog_init(dvppd_errlog *l)
{
    memset(l, 0, sizeof(*l));
    atomic_flag_clear(&l->lock);
}

static void errlog_lock(dvppd_errlog *l)
{
    while (atomic_flag_test_and_set_explicit(&l->lock, memory_order_acquire))
        ; /* held for one entry's copy: a few hundred bytes */
}

static void errlog_unlock(dvppd_errlog *l)
{
    atomic_flag_clear_explicit(&l->lock, memory_order_release);
}

static uint64_t errlog_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void dvppd_errlog_add(dvppd_errlog *l, const char *route, unsigned status,
                      const char *code, const char *field, const char *message)
{
    dvppd_errlog_entry n;

    /* Built outside the lock; only the slot copy is under it. */
    memset(&n, 0, sizeof(n));
    n.time_ms = errlog_now_ms();
    n.route = route ? route : "";
    n.status = status;
    snprintf(n.code, sizeof(n.code), "%s", code ? code : "");
    snprintf(n.field, sizeof(n.field), "%s", field ? field : "");
    snprintf(n.message, sizeof(n.message), "%s", message ? message : "");
    errlog_lock(l);
    n.seq = ++l->next_seq;
    l->e[(n.seq - 1) % DVPPD_ERRLOG_N] = n;
    errlog_unlock(l);
}

unsigned dvppd_errlog_read(dvppd_errlog *l, dvppd_errlog_entry *out, unsigned cap)
{
    unsigned n = 0;

    errlog_lock(l);
    for (uint64_t s = l->next_seq; s > 0 && n < cap && n < DVPPD_ERRLOG_N; s--)
        out[n++] = l->e[(s - 1) % DVPPD_ERRLOG_N];
    errlog_unlock(l);
    return n;
}

uint64_t dvppd_errlog_total(dvppd_errlog *l)
{
    uint64_t n;

    errlog_lock(l);
    n = l->next_seq;
    errlog_unlock(l);
    return n;
}
