/* A main() for the libFuzzer targets without libFuzzer: any compiler (gcc
 * too), any sanitizer. Calls LLVMFuzzerInitialize (when the target has
 * one), then LLVMFuzzerTestOneInput once on every file named on the
 * command line; a directory stands for its regular files, in name order.
 * `make check` links each tests/fuzz/fuzz_*.c with this file and replays
 * tests/fuzz/regressions/<target>/: a crash, a sanitizer report or a leak
 * fails, exactly as it did under the fuzzer.
 *
 * usage: replay_fuzz_X [-v] FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int verbose;
static unsigned long replayed;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long len;

    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "replay: cannot size %s\n", path);
        fclose(f);
        return -1;
    }
    /* An exact-size copy, so ASan sees any read past the input. */
    buf = malloc(len ? (size_t)len : 1);
    if (!buf || (len && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    if (verbose)
        fprintf(stderr, "replay: %s (%ld bytes)\n", path, len);
    LLVMFuzzerTestOneInput(buf, (size_t)len);
    free(buf);
    replayed++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path;
        struct stat sb;
        if (e->d_name[0] == '.')
            continue; /* ., .., and hidden files (.gitkeep) */
        path = malloc(len);
        if (!path)
            break;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            char **m = realloc(names, (cap ? cap * 2 : 64) * sizeof(*names));
            if (!m) {
                free(path);
                break;
            }
            names = m;
            cap = cap ? cap * 2 : 64;
        }
        names[n++] = path;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        if (run_file(names[i]) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;

    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
            continue;
        }
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: no such file %s\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(sb.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) {
            rc = 1;
        }
    }
    fprintf(stderr, "replay: %s: %lu input(s)\n", argv[0], replayed);
    return rc;
}
