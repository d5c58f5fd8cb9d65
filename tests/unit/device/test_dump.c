/* Tests of dvpp_dump's manifest and retention (docs/dump.md):
 * - non-finite geometry is written as null (JSON has no NaN or infinity),
 *   finite values as %.17g, so the manifest always parses;
 * - the manifest's room is kept inside the bound: files stop short of it;
 * - retention never removes a folder its keep hook keeps (a dump in
 *   progress, the one just finished), still counts it, and removes the
 *   oldest of the others first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/dvpp_dump.h"

/* A fresh private directory, opened: its descriptor; its path into @path. */
static int temp_dir(char path[64])
{
    int fd;

    snprintf(path, 64, "/tmp/dvpp-dump-test-XXXXXX");
    assert_non_null(mkdtemp(path));
    fd = open(path, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

static void rm_tree(const char *path)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    assert_int_equal(system(cmd), 0);
}

/* The whole of file @name under @dirfd, NUL-terminated (caller frees). */
static char *slurp(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY);
    char *buf = calloc(1, 65536);
    ssize_t n;

    assert_true(fd >= 0);
    assert_non_null(buf);
    n = read(fd, buf, 65535);
    assert_true(n > 0);
    close(fd);
    return buf;
}

static void test_nonfinite_geometry_is_null(void **state)
{
    char root[64];
    int rfd = temp_dir(root);
    dvpp_dump d;
    dvpp_err err;
    dvpp_pipe_geom g;
    dvpp_dump_meta m;
    char *text;
    int dfd;

    (void)state;
    memset(&g, 0, sizeof(g));
    g.scale_x = NAN, g.scale_y = INFINITY, g.pad_x = 0.25, g.pad_y = -INFINITY;
    m = (dvpp_dump_meta){.request = "r", .geom = &g};
    dvpp_err_clear(&err);
    assert_int_equal(dvpp_dump_open(&d, rfd, "a", false, 1u << 20, &err), DVPP_OK);
    assert_int_equal(dvpp_dump_finish(&d, &m, &err), DVPP_OK);
    dfd = openat(rfd, "a", O_RDONLY | O_DIRECTORY);
    text = slurp(dfd, "manifest.json");
    assert_non_null(strstr(text, "\"geometry\": {\"scale_x\": null, \"scale_y\": null, "
                                 "\"pad_x\": 0.25, \"pad_y\": null}"));
    assert_null(strstr(text, "nan"));
    assert_null(strstr(text, "inf"));
    free(text);
    close(dfd);
    close(rfd);
    rm_tree(root);
}

/* With a bound large enough, the files stop before the manifest's room:
 * a write that would fill the bound to the byte is skipped. */
static void test_manifest_room_inside_bound(void **state)
{
    char root[64];
    int rfd = temp_dir(root);
    uint64_t max = 1u << 20;
    uint64_t reserve = dvpp_dump_manifest_reserve(max, 0);
    static uint8_t data[1u << 20];
    dvpp_dump d;
    dvpp_err err;

    (void)state;
    assert_true(reserve > 0 && reserve <= max / 4);
    assert_int_equal(dvpp_dump_manifest_reserve(4096, 0), 0); /* tiny bound: none */
    dvpp_err_clear(&err);
    assert_int_equal(dvpp_dump_open(&d, rfd, "a", false, max, &err), DVPP_OK);
    assert_int_equal(dvpp_dump_bytes(&d, "full.bin", "x", NULL, 0, data, (size_t)max, &err),
                     DVPP_ELIMIT);
    assert_int_equal(dvpp_dump_bytes(&d, "fits.bin", "x", NULL, 0, data,
                                     (size_t)(max - reserve), &err),
                     DVPP_OK);
    assert_int_equal(dvpp_dump_bytes(&d, "one.bin", "x", NULL, 0, data, 1, &err), DVPP_ELIMIT);
    dvpp_dump_close(&d);
    close(rfd);
    rm_tree(root);
}

static const char *kept_name;

static bool keep_one(void *ctx, const char *name)
{
    (void)ctx;
    return !strcmp(name, kept_name);
}

static bool exists(int rfd, const char *name)
{
    struct stat sb;

    return fstatat(rfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_prune_passes_over_kept(void **state)
{
    char root[64], names[4][DVPP_DUMP_NAME_LEN];
    int rfd = temp_dir(root);
    unsigned removed = 9;
    dvpp_err err;

    (void)state;
    for (int i = 0; i < 4; i++) {
        dvpp_dump_name(names[i], 1700000000000000000ull + (uint64_t)i * 1000u, (uint64_t)i);
        assert_int_equal(mkdirat(rfd, names[i], 0700), 0);
    }
    assert_int_equal(mkdirat(rfd, "not-a-dump", 0700), 0);
    /* max 1 with the oldest kept (in progress): it stays and counts, so
     * the three others go; a name that is not a dump's is left alone */
    kept_name = names[0];
    dvpp_err_clear(&err);
    assert_int_equal(dvpp_dump_prune(rfd, 1, UINT64_MAX, keep_one, NULL, &removed, &err),
                     DVPP_OK);
    assert_int_equal(removed, 3);
    assert_true(exists(rfd, names[0]));
    for (int i = 1; i < 4; i++)
        assert_false(exists(rfd, names[i]));
    assert_true(exists(rfd, "not-a-dump"));
    /* a newer one, max 2 and nothing kept: both stay */
    assert_int_equal(mkdirat(rfd, names[3], 0700), 0);
    assert_int_equal(dvpp_dump_prune(rfd, 2, UINT64_MAX, NULL, NULL, &removed, &err),
                     DVPP_OK);
    assert_int_equal(removed, 0);
    /* max 1, the newest kept: the older goes */
    kept_name = names[3];
    assert_int_equal(dvpp_dump_prune(rfd, 1, UINT64_MAX, keep_one, NULL, &removed, &err),
                     DVPP_OK);
    assert_int_equal(removed, 1);
    assert_false(exists(rfd, names[0]));
    assert_true(exists(rfd, names[3]));
    close(rfd);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonfinite_geometry_is_null),
        cmocka_unit_test(test_manifest_room_inside_bound),
        cmocka_unit_test(test_prune_passes_over_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
