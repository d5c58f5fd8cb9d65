/* dvpp_dump: a folder of every intermediate image of one pipeline run, the
 * final answer and a manifest.json (dvppd's ?dump=1, dvppctl's --dump DIR;
 * docs/dump.md).
 *
 * A dump is driven by the run's dvpp_pipe_watch (its image hook): each
 * image the run shows is written as it is shown, "NN-STAGE.EXT" with NN the
 * order the images came in (00-decoded, 01-crop, 02-resize, ...,
 * NN-post_input). Packed RGB/BGR/RGBA/BGRA and grey (GRAY, YUV400) become
 * 8-bit PNG, which holds those samples exactly (BGR/BGRA are stored in
 * PNG's RGB order: the same pixels); every other format (NV12, NV21, I420,
 * the 4:2:2 and 4:4:4 layouts...) becomes a .npy of its bytes as laid out
 * (multi-plane: rows of width_stride bytes, every plane; packed: H x W x C),
 * with the geometry in the manifest, never a lossy conversion.
 *
 * Files are created relative to the dump's own O_DIRECTORY descriptor
 * (openat, O_NOFOLLOW, O_EXCL unless the dump replaces), with names this
 * module makes: nothing a request says reaches a path.
 *
 * Bounds: a dump holds at most @max_bytes of files, its manifest included:
 * when that room is at most a quarter of the bound, the manifest's worst
 * case (dvpp_dump_manifest_reserve) is kept out of what the files may
 * take, so retention, which counts the manifest, sees the folder within
 * its bound. An image that would go
 * past it (checked on its raw size before anything is encoded or
 * allocated, then on the encoded size) is skipped, listed with
 * "skipped": true and a note in the manifest. Write failures (a full disk)
 * become notes too: a dump never fails the run it watches.
 *
 * Threads: a dvpp_dump is used by one thread at a time (the run's worker
 * during the run, then the caller); its watch's image hook copies (writes)
 * the borrowed image during the call.
 *
 * Ownership: a dvpp_dump is caller memory; dvpp_dump_open gives it a
 * directory descriptor that dvpp_dump_finish or dvpp_dump_close closes.
 */
#ifndef DVPP_DUMP_H
#define DVPP_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_image.h"
#include "dvpp_png.h"
#include "dvpp_status.h"
#include "dvpp_tensor.h"

/* Files one dump lists: the decoded image, DVPP_PIPE_MAX_OPS op outputs,
 * post_input, the answer, with room to spare. */
#define DVPP_DUMP_MAX_FILES (DVPP_PIPE_MAX_OPS + 8)
#define DVPP_DUMP_MAX_NOTES 4
#define DVPP_DUMP_NOTE_LEN 160
/* A dump folder's name: "YYYYMMDDTHHMMSS.uuuuuuZ-NNNNNNNN" (32) + NUL. */
#define DVPP_DUMP_NAME_LEN 33

typedef struct dvpp_dump_file {
    char name[40];          /* "02-resize.png" */
    char stage[16];         /* "decoded", an op kind, "post_input", "tensor", "output" */
    int index;              /* the op's index; -1 for the others */
    dvpp_pixfmt format;     /* images; DVPP_PIXEL_UNKNOWN for the answer */
    uint32_t width, height, width_stride, height_stride;
    uint64_t bytes;         /* bytes of the file (0 when skipped) */
    bool skipped;           /* over the dump's bound or not written: see notes */
} dvpp_dump_file;

typedef struct dvpp_dump {
    int dirfd;              /* the dump's folder, owned; -1 once closed */
    bool replace;           /* truncate existing files (dvppctl) instead of O_EXCL */
    uint64_t max_bytes;     /* bound on the files together, manifest included */
    uint64_t reserve;       /* of max_bytes, kept for the manifest */
    uint64_t written;       /* bytes written so far */
    unsigned seq;           /* NN of the next image */
    unsigned nfiles;
    dvpp_dump_file files[DVPP_DUMP_MAX_FILES];
    unsigned nnotes;
    char notes[DVPP_DUMP_MAX_NOTES][DVPP_DUMP_NOTE_LEN];
    dvpp_pipe_watch watch;  /* image hook -> dvpp_dump_image on this dump */
} dvpp_dump;

/* What the manifest says besides the files. Every pointer may be NULL. */
typedef struct dvpp_dump_meta {
    const char *request;       /* the request's id (dvppd: the folder name) */
    const char *spec_json;     /* a JSON text, inserted as it is: the caller
                                  made it (json_dumps), so it is valid */
    const char *input_format;  /* "jpeg", "png", "raw" */
    uint32_t input_width, input_height;
    uint64_t input_bytes;
    const dvpp_tensor *tensor; /* shape, dtype, layout */
    const dvpp_pipe_geom *geom;
    const char *error;         /* the run's failure, if it failed */
} dvpp_dump_meta;

/* Make folder @name under @parent_fd (AT_FDCWD: the working directory)
 * with mode 0700 and open it (O_DIRECTORY | O_NOFOLLOW). @replace (dvppctl):
 * an existing folder is used and its files replaced; otherwise the folder
 * must not exist (EEXIST is DVPP_EIO). DVPP_EINVAL ("dump") for a name
 * with a '/' or "..", DVPP_EIO with the system's reason. */
dvpp_status dvpp_dump_open(dvpp_dump *d, int parent_fd, const char *name, bool replace,
                           uint64_t max_bytes, dvpp_err *err);

/* Open the folder @name of @parent_fd again for a dump that was opened and
 * then closed (dvpp_dump_close keeps the file list): a batch's item folder
 * is open only while its images are written. A no-op when open; DVPP_EIO. */
dvpp_status dvpp_dump_reopen(dvpp_dump *d, int parent_fd, const char *name, dvpp_err *err);

/* The manifest's worst case for a spec of @spec_len bytes when it is at
 * most a quarter of @max_bytes, else 0 (a tiny bound keeps all of itself
 * for the files, and its manifest may then pass it). */
uint64_t dvpp_dump_manifest_reserve(uint64_t max_bytes, size_t spec_len);

/* Keep room for a manifest holding a spec of @spec_len bytes (open keeps
 * room for one without a spec). */
void dvpp_dump_reserve_spec(dvpp_dump *d, size_t spec_len);

/* The watch to put in dvpp_pipeline.watch: its image hook writes into @d
 * (span hook NULL). Valid while @d is. */
const dvpp_pipe_watch *dvpp_dump_watch(dvpp_dump *d);

/* Write @img as the next "NN-@stage" file (PNG or .npy, above); failures
 * become notes. */
void dvpp_dump_image(dvpp_dump *d, const char *stage, int index, const dvpp_image *img);

/* Write file @name (a fixed name of the caller's: "tensor.npy",
 * "output.png") of @head then @data, listed with @stage. DVPP_ELIMIT
 * ("dump") past the bound (listed as skipped), DVPP_EIO. */
dvpp_status dvpp_dump_bytes(dvpp_dump *d, const char *name, const char *stage,
                            const void *head, size_t head_len, const void *data,
                            size_t len, dvpp_err *err);

/* Write manifest.json (never skipped: the room kept for it is above) and
 * close the folder. Non-finite geometry is written as null. DVPP_EIO, DVPP_ENOMEM; the folder is closed anyway. */
dvpp_status dvpp_dump_finish(dvpp_dump *d, const dvpp_dump_meta *m, dvpp_err *err);

/* Close the folder without a manifest (idempotent). */
void dvpp_dump_close(dvpp_dump *d);

/* The folder name for a dump made at @unix_ns (CLOCK_REALTIME) as the
 * daemon's @counter-th: "YYYYMMDDTHHMMSS.uuuuuuZ-NNNNNNNN" (UTC), so name
 * order is time order. @out holds DVPP_DUMP_NAME_LEN bytes. */
void dvpp_dump_name(char *out, uint64_t unix_ns, uint64_t counter);

/* True for a name dvpp_dump_name makes (the only folders pruning removes). */
bool dvpp_dump_name_is_valid(const char *name);

/* True for a folder retention must not remove (in progress, or just
 * finished): it is counted but passed over. */
typedef bool (*dvpp_dump_keep_fn)(void *ctx, const char *name);

/* Retention under the directory @root_fd: remove the oldest dump folders
 * (name order) until at most @max_requests remain and their files take at
 * most @max_bytes together, never one @keep (may be NULL) keeps: the
 * bounds may then stay exceeded until the kept folders finish. Entries
 * whose names dvpp_dump_name did not make are left alone and not counted.
 * *@removed (may be NULL) counts the folders removed. DVPP_EIO when the
 * directory cannot be read. */
dvpp_status dvpp_dump_prune(int root_fd, uint32_t max_requests, uint64_t max_bytes,
                            dvpp_dump_keep_fn keep, void *keep_ctx, unsigned *removed,
                            dvpp_err *err);

#endif
