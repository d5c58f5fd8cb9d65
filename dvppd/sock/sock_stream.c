/* sock_stream: client streams (StreamCreate, StreamSync, StreamDestroy: a
 * device stream whose jobs run in order, and the first failure since the
 * last sync), and the pool of device streams a connection keeps for its
 * unordered jobs. Socket thread. */
#include "sock_int.h"

#include <stdlib.h>

sstream *sock_find_stream(conn *c, uint64_t id)
{
    sstream *st = c->streams;

    while (st && st->id != id)
        st = st->next;
    return st;
}

void sock_stream_free(conn *c, sstream *st)
{
    sstream **pp = &c->streams;

    while (*pp && *pp != st)
        pp = &(*pp)->next;
    if (*pp)
        *pp = st->next;
    dvpp_stream_free(st->ds);
    c->nwaiters -= (uint32_t)st->nwaiters;
    c->nstreams--;
    free(st->waiters);
    free(st);
}

/* Answer StreamSync / StreamDestroy waiting for @st to go idle. */
void sock_stream_settle(conn *c, sstream *st)
{
    if (st->pending)
        return;
    for (size_t i = 0; i < st->nwaiters; i++) {
        if (st->first_error != DVPP_OK)
            sock_send_err(c, st->waiters[i], &st->first_err);
        else
            sock_send_ack(c, st->waiters[i]);
        st->first_error = DVPP_OK;
    }
    c->nwaiters -= (uint32_t)st->nwaiters;
    st->nwaiters = 0;
    if (st->destroy_id) {
        sock_send_ack(c, st->destroy_id);
        sock_stream_free(c, st);
    }
}

void sock_on_stream_create(conn *c, uint64_t id)
{
    Dvpp__Envelope e;
    Dvpp__StreamCreated sc;
    sstream *st;
    dvpp_err err;

    if (c->nstreams >= c->s->set->cfg.sock.max_streams) {
        dvpp_err_set(&err, DVPP_ELIMIT, "max_streams", "this connection has %u streams "
                     "(socket.max_streams): destroy one first", c->nstreams);
        sock_send_err(c, id, &err);
        return;
    }
    st = calloc(1, sizeof(*st));
    if (!st || dvpp_stream_new(c->s->device, 0, &st->ds, &err) != DVPP_OK) {
        free(st);
        sock_send_error(c, id, DVPP_ENOMEM, NULL, "cannot create a stream");
        return;
    }
    st->id = ++c->next_stream;
    st->next = c->streams;
    c->streams = st;
    c->nstreams++;
    sock_envelope_init(&e, id);
    dvpp__stream_created__init(&sc);
    sc.stream = st->id;
    e.body_case = DVPP__ENVELOPE__BODY_STREAM_CREATED;
    e.stream_created = &sc;
    sock_send_env(c, &e, NULL, 0);
}

void sock_on_stream_wait(conn *c, uint64_t id, uint64_t stream, bool destroy)
{
    sstream *st = sock_find_stream(c, stream);
    uint64_t *w;

    if (!st || st->destroy_id) {
        sock_send_error(c, id, DVPP_ENOTFOUND, "stream", "no such stream");
        return;
    }
    if (destroy) {
        st->destroy_id = id;
    } else if (st->pending && c->nwaiters >= c->s->set->cfg.sock.max_sync_waiters) {
        dvpp_err err;
        dvpp_err_set(&err, DVPP_ELIMIT, "max_sync_waiters", "%u StreamSyncs are waiting on "
                     "this connection (socket.max_sync_waiters)", c->nwaiters);
        sock_send_err(c, id, &err);
        return;
    } else {
        w = realloc(st->waiters, (st->nwaiters + 1) * sizeof(*w));
        if (!w) {
            sock_send_error(c, id, DVPP_ENOMEM, NULL, "out of memory");
            return;
        }
        st->waiters = w;
        st->waiters[st->nwaiters++] = id;
        c->nwaiters++;
    }
    sock_stream_settle(c, st);
}

void sock_stream_fail(sstream *ss, dvpp_status st, const dvpp_err *err)
{
    if (ss && ss->first_error == DVPP_OK) {
        ss->first_error = st;
        ss->first_err = *err;
        ss->first_err.status = st;
    }
}

/* --- the pool of per-job streams --------------------------------------------------------- */

dvpp_status sock_stream_take(conn *c, dvpp_stream **out, dvpp_err *err)
{
    if (c->nidle) {
        *out = c->idle[--c->nidle];
        return DVPP_OK;
    }
    return dvpp_stream_new(c->s->device, 0, out, err);
}

/* Keep a per-job stream for the connection's next unordered job. */
void sock_stream_recycle(conn *c, dvpp_stream *ds)
{
    if (!ds)
        return;
    if (!c->closed && c->nidle < SOCK_STREAM_POOL)
        c->idle[c->nidle++] = ds;
    else
        dvpp_stream_free(ds);
}

void sock_stream_pool_free(conn *c)
{
    while (c->nidle)
        dvpp_stream_free(c->idle[--c->nidle]);
}
