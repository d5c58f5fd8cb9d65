/* dvppd_faults: DVPPD_FAULTS parsing and the failing allocator. */
#include "dvppd_faults.h"

#include <stdlib.h>
#include <string.h>

/* "name=N" into *out when @item is that name. */
static bool take_number(const char *item, const char *name, uint64_t *out)
{
    size_t n = strlen(name);
    char *end;

    if (strncmp(item, name, n) != 0 || item[n] != '=' || !item[n + 1])
        return false;
    *out = strtoull(item + n + 1, &end, 10);
    return *end == '\0' || *end == ',';
}

dvpp_status dvppd_faults_parse(dvppd_faults *f, const char *spec, dvpp_err *err)
{
    const char *p = spec;
    uint64_t ms;

    memset(f, 0, sizeof(*f));
    while (p && *p) {
        if (take_number(p, "alloc_fail", &f->alloc_fail_every) && f->alloc_fail_every) {
        } else if (take_number(p, "stall_ms", &ms) && ms && ms <= 600000) {
            f->stall_ns = ms * 1000000u;
        } else if (take_number(p, "ignore_cancel_ms", &ms) && ms && ms <= 600000) {
            f->deaf_ns = ms * 1000000u;
        } else {
            size_t len = strcspn(p, ",");
            return dvpp_err_set(err, DVPP_EINVAL, "DVPPD_FAULTS", "DVPPD_FAULTS: '%.*s' is "
                                "not alloc_fail=N, stall_ms=M or ignore_cancel_ms=M "
                                "(M in 1..600000)", (int)len, p);
        }
        p += strcspn(p, ",");
        if (*p == ',')
            p++;
    }
    return DVPP_OK;
}

static void *failing_alloc(void *ctx, size_t size, size_t align)
{
    dvppd_faults *f = ctx;

    if (atomic_load_explicit(&f->armed, memory_order_relaxed) &&
        atomic_fetch_add_explicit(&f->allocs, 1, memory_order_relaxed) % f->alloc_fail_every ==
            f->alloc_fail_every - 1) {
        atomic_fetch_add_explicit(&f->failed, 1, memory_order_relaxed);
        return NULL;
    }
    return f->next.alloc(f->next.ctx, size, align);
}

static void passing_free(void *ctx, void *ptr, size_t size)
{
    dvppd_faults *f = ctx;

    f->next.free(f->next.ctx, ptr, size);
}

void dvppd_faults_install(dvppd_faults *f)
{
    dvpp_allocator a = {failing_alloc, passing_free, f};

    if (!f->alloc_fail_every)
        return;
    f->next = dvpp_current_allocator();
    dvpp_replace_allocator(&a);
}

void dvppd_faults_arm(dvppd_faults *f)
{
    atomic_store(&f->armed, true);
}

void dvppd_faults_fini(dvppd_faults *f)
{
    if (f->alloc_fail_every)
        dvpp_replace_allocator(&f->next);
}
