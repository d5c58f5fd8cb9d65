/* acl_rt_handle.c: the registry of live handles (acli_handle_*): a hash
 * set keyed by pointer, with the handle's kind as its value.
 *
 * Open addressing with linear probing at a load of at most 1/2, and
 * backward-shift deletion (no tombstones, so lookups stay short however
 * many handles come and go). The table is freed when the last handle goes,
 * so a program that destroys what it made leaves nothing behind.
 */
#include <stdlib.h>
#include <string.h>

#include "acl_rt_int.h"

#define HANDLES_MIN_CAP 64u

static size_t slot_of(const void *p, size_t cap)
{
    /* Fibonacci hashing of the address: allocations share their low bits
     * (alignment), the multiply spreads the rest over the top bits. */
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* The slot holding @p, or the empty slot where it would go. */
static size_t find_slot(const acli_handles *H, const void *p)
{
    size_t i = slot_of(p, H->cap);

    while (H->slots[i].p && H->slots[i].p != p)
        i = (i + 1) & (H->cap - 1);
    return i;
}

static bool grow(acli_handles *H)
{
    size_t cap = H->cap ? H->cap * 2 : HANDLES_MIN_CAP;
    acli_handle_slot *old = H->slots;
    size_t old_cap = H->cap;
    acli_handle_slot *slots = calloc(cap, sizeof(*slots));

    if (!slots)
        return false;
    H->slots = slots;
    H->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].p)
            H->slots[find_slot(H, old[i].p)] = old[i];
    }
    free(old);
    return true;
}

bool acli_handle_add(const void *p, acli_kind kind)
{
    acli_handles *H = &acli_proc()->handles;
    bool ok = true;
    size_t i;

    if (!p)
        return false;
    pthread_mutex_lock(&H->mu);
    if ((H->count + 1) * 2 > H->cap && !grow(H)) {
        ok = false;
        goto out;
    }
    i = find_slot(H, p);
    if (!H->slots[i].p)
        H->count++;
    /* A live pointer handed out again can only be a new object at the
     * address of one destroyed without being removed: the new kind wins. */
    H->slots[i].p = p;
    H->slots[i].kind = (int)kind;
out:
    pthread_mutex_unlock(&H->mu);
    return ok;
}

/* True when @p (not NULL) is registered as @kind, with its slot in @i
 * (H->mu held). */
static bool find_live(const acli_handles *H, const void *p, acli_kind kind, size_t *i)
{
    if (!H->cap)
        return false;
    *i = find_slot(H, p);
    return H->slots[*i].p == p && H->slots[*i].kind == (int)kind;
}


/* Empty slot @i and move later members of its probe run back, so that no
 * lookup stops early at the hole. */
static void remove_at(acli_handles *H, size_t i)
{
    size_t mask = H->cap - 1;
    size_t j = i;

    H->slots[i].p = NULL;
    for (;;) {
        size_t home;

        j = (j + 1) & mask;
        if (!H->slots[j].p)
            break;
        home = slot_of(H->slots[j].p, H->cap);
        /* Move j into the hole unless its home lies cyclically in (i, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            H->slots[i] = H->slots[j];
            H->slots[j].p = NULL;
            i = j;
        }
    }
    H->count--;
}

/* Whether @p is a live handle of @kind; with @forget, it is no longer one
 * (and the table goes once empty). */
static bool lookup(const void *p, acli_kind kind, bool forget)
{
    acli_handles *H = &acli_proc()->handles;
    size_t i = 0;
    bool ok;

    if (!p)
        return false;
    pthread_mutex_lock(&H->mu);
    ok = find_live(H, p, kind, &i);
    if (forget && ok)
        remove_at(H, i);
    if (forget && H->cap && H->count == 0) {
        free(H->slots);
        H->slots = NULL;
        H->cap = 0;
    }
    pthread_mutex_unlock(&H->mu);
    return ok;
}

bool acli_handle_ok(const void *p, acli_kind kind)
{
    return lookup(p, kind, false);
}

bool acli_handle_remove(const void *p, acli_kind kind)
{
    return lookup(p, kind, true);
}
