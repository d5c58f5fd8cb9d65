#include "dvpp_scratch.h"

#include "dvpp_mem.h"

void dvpp_scratch_init(dvpp_scratch *s)
{
    for (int i = 0; i < DVPP_SCRATCH_SLOTS; i++) {
        s->block[i] = NULL;
        s->cap[i] = 0;
    }
}

void *dvpp_scratch_get(dvpp_scratch *s, int slot, size_t size)
{
    size_t cap;
    void *p;

    if (slot < 0 || slot >= DVPP_SCRATCH_SLOTS)
        return NULL;
    if (size <= s->cap[slot] && s->block[slot])
        return s->block[slot];
    /* Grow by half again so a stream of slowly growing requests settles. */
    cap = size + size / 2;
    if (cap < size)
        cap = size;
    p = dvpp_malloc(cap ? cap : 1);
    if (!p)
        return NULL;
    dvpp_free(s->block[slot], s->cap[slot]);
    s->block[slot] = p;
    s->cap[slot] = cap ? cap : 1;
    return p;
}

void dvpp_scratch_fini(dvpp_scratch *s)
{
    for (int i = 0; i < DVPP_SCRATCH_SLOTS; i++)
        dvpp_free(s->block[i], s->cap[i]);
    dvpp_scratch_init(s);
}

size_t dvpp_scratch_trim(dvpp_scratch *s, size_t keep)
{
    size_t freed = 0;

    for (int i = 0; i < DVPP_SCRATCH_SLOTS; i++) {
        if (s->block[i] && s->cap[i] > keep) {
            freed += s->cap[i];
            dvpp_free(s->block[i], s->cap[i]);
            s->block[i] = NULL;
            s->cap[i] = 0;
        }
    }
    return freed;
}
