/* dvppd_errlog: the last error answers, for the console's "recent errors".
 *
 * A fixed ring of DVPPD_ERRLOG_N entries (time, route, HTTP status, status
 * code, field, message): each error answer overwrites the oldest, so the
 * memory is bounded and nothing is ever allocated. The messages are the
 * ones the client was sent (already clean ASCII), so showing them leaks
 * nothing the caller did not get.
 *
 * Ownership: plain data inside its owner (dvppd_metrics), zeroed by
 * dvppd_errlog_init, nothing to free. Thread-safety: every function may
 * run concurrently with the others; a short spin lock (atomic_flag, no
 * init or teardown needed) guards the copy of one entry, and no other
 * lock is ever taken under it.
 */
#ifndef DVPPD_ERRLOG_H
#define DVPPD_ERRLOG_H

#include <stdatomic.h>
#include <stdint.h>

#include "dvpp_status.h"

#define DVPPD_ERRLOG_N 32

typedef struct dvppd_errlog_entry {
    uint64_t seq;                    /* 1, 2, ...: 0 = an empty slot */
    uint64_t time_ms;                /* wall clock, ms since the epoch */
    const char *route;               /* static route name */
    unsigned status;                 /* HTTP status answered */
    char code[24];                   /* "EINVAL" */
    char field[DVPP_ERR_FIELD_LEN];
    char message[160];               /* truncated */
} dvppd_errlog_entry;

typedef struct dvppd_errlog {
    atomic_flag lock;
    uint64_t next_seq;               /* under lock */
    dvppd_errlog_entry e[DVPPD_ERRLOG_N];
} dvppd_errlog;

void dvppd_errlog_init(dvppd_errlog *l);

/* Record one error answer (@field, @message may be NULL). */
void dvppd_errlog_add(dvppd_errlog *l, const char *route, unsigned status,
                      const char *code, const char *field, const char *message);

/* Copy the entries out, newest first, into @out (room for @cap); returns
 * how many. */
unsigned dvppd_errlog_read(dvppd_errlog *l, dvppd_errlog_entry *out, unsigned cap);

/* Error answers recorded since the start. */
uint64_t dvppd_errlog_total(dvppd_errlog *l);

#endif
