/* dvppclient.h: libdvppclient, the C client of dvppd's Unix socket.
 *
 *   dvppc_conn *c;
 *   dvppc_ring *ring;
 *   dvppc_result r;
 *   dvppc_connect("/run/dvppd/dvppd.sock", &c, &err);
 *   dvppc_ring_open(c, NULL, 8, 224 * 224 * 3 * 4, &ring, &err);
 *   dvppc_request q = {.kind = DVPPC_TENSOR, .spec = "{\"ops\":[...]}",
 *                      .input = jpeg, .input_len = n, .ring = ring};
 *   dvppc_submit(c, &q, &r, &err);       // r.data points into the ring slot
 *   ... use r.data (r.meta.shape, r.meta.dtype) ...
 *   dvppc_release(c, &r);                 // the slot goes back to the daemon
 *
 * Video (channels, see "video channels" below):
 *   dvppc_vdec_opts vo = {.every = 5};    // decode: every 5th frame, NV12
 *   dvppc_video_decode(c, &vo, h264, n, ring, on_frame, ctx, &err);
 *   dvppc_venc_opts eo = {.codec = "h265", .width = 1280, .height = 720,
 *                         .input_format = "rgb"};
 *   dvppc_video_encode(c, &eo, frames, nframes, 1280 * 720 * 3, NULL, 0,
 *                      write_bytes, file, &counts, &err);
 *
 * Protocol: proto/dvpp.proto (one protobuf message per SOCK_SEQPACKET
 * packet), proto/PROTOCOL.md; ring layout: proto/dvpp_ring.h.
 *
 * Thread-safety: every function may be called from several threads on the
 * same connection (one mutex per connection; waiting threads read the
 * socket in turn and hand each answer to the thread that asked for it).
 * Rings and results belong to their connection; do not use them after
 * dvppc_close.
 *
 * Errors: functions return 0, or a negative status code (dvppc_status
 * below: the values of dvppd's core/dvpp_status.h, -1 EINVAL, -3 EAGAIN,
 * ...) with detail in @err (which may be NULL). Transport failures (the
 * daemon went away, broke the protocol) use DVPPC_EIO (-10); failed system
 * calls DVPPC_ESYS (-11). Once the transport failed, every later call on
 * the connection returns that same failure.
 */
#ifndef DVPPCLIENT_H
#define DVPPCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DVPPC_PROTOCOL 1u

/* Exported symbols (the library is built with -fvisibility=hidden). */
#if defined(__GNUC__)
#define DVPPC_API __attribute__((visibility("default")))
#else
#define DVPPC_API
#endif

/* Status codes: the values of dvppd's dvpp_status (part of the wire
 * contract, never renumbered). */
typedef enum dvppc_status {
    DVPPC_OK = 0,
    DVPPC_EINVAL = -1,       /* invalid argument */
    DVPPC_ENOMEM = -2,       /* out of memory */
    DVPPC_EAGAIN = -3,       /* try again (ring full, admission refused) */
    DVPPC_ELIMIT = -4,       /* input exceeds a configured limit */
    DVPPC_ECORRUPT = -5,     /* corrupt or truncated data */
    DVPPC_EUNSUPPORTED = -6, /* unsupported input or request */
    DVPPC_EFORMAT = -7,      /* unsupported or mismatched pixel format */
    DVPPC_EOVERFLOW = -8,    /* size arithmetic overflows 64 bits */
    DVPPC_ECODEC = -9,       /* codec error */
    DVPPC_EIO = -10,         /* transport or protocol failure */
    DVPPC_ESYS = -11,        /* a system call failed */
    DVPPC_ESTRIDE = -12,     /* stride or alignment rule violated */
    DVPPC_ENOSPC = -13,      /* destination (slot) too small */
    DVPPC_ECANCELED = -14,   /* operation canceled */
    DVPPC_ETIMEDOUT = -15,   /* deadline exceeded / nothing came in time */
    DVPPC_ENOTFOUND = -16,   /* not found */
    DVPPC_EBUSY = -17,       /* busy */
    DVPPC_EPROFILE = -18,    /* rejected by the compatibility profile */
} dvppc_status;

typedef struct dvppc_conn dvppc_conn;
typedef struct dvppc_ring dvppc_ring;

/* Detail of a failure: the daemon's (or the library's) status, its name,
 * a sentence and the field at fault. */
typedef struct dvppc_error {
    int status;
    char code[24];
    char message[256];
    char field[64];
} dvppc_error;

/* What the daemon said in its Welcome (copied; valid while connected). */
typedef struct dvppc_server_info {
    uint32_t protocol;
    char version[32];
    char simd[16];
    uint64_t max_inline;
    uint64_t max_input_bytes;
    uint32_t max_rings, max_slots, max_inflight, lease_timeout_ms, max_batch_items;
    uint64_t max_ring_bytes;
} dvppc_server_info;

/* --- connection ------------------------------------------------------------ */

/* Connect to the socket at @path and do the Hello/Welcome handshake.
 * The connection is owned by the caller (dvppc_close). */
DVPPC_API int dvppc_connect(const char *path, dvppc_conn **out, dvppc_error *err);

/* Close the connection: every ring closes (its leases end, mappings are
 * unmapped), jobs in flight are forgotten (the daemon still finishes them).
 * NULL is a no-op. */
DVPPC_API void dvppc_close(dvppc_conn *c);

/* The server's Welcome. Borrowed from @c. */
DVPPC_API const dvppc_server_info *dvppc_info(const dvppc_conn *c);

/* The socket's fd (for poll() on unsolicited notices); owned by @c. */
DVPPC_API int dvppc_fd(const dvppc_conn *c);

/* --- streams ------------------------------------------------------------------ */

/* Jobs on one stream run in submission order; stream 0 is unordered. */
DVPPC_API int dvppc_stream_create(dvppc_conn *c, uint64_t *stream, dvppc_error *err);
DVPPC_API int dvppc_stream_destroy(dvppc_conn *c, uint64_t stream, dvppc_error *err);
/* Wait until every job submitted on @stream has completed. Returns 0 or
 * the first job error since the previous sync. Results of those jobs
 * remain to be collected with dvppc_wait. */
DVPPC_API int dvppc_stream_sync(dvppc_conn *c, uint64_t stream, dvppc_error *err);

/* --- rings ---------------------------------------------------------------------- */

/* Open a ring of @slots slots of @slot_bytes (rounded up to 4096) and map
 * it read-only. @name (may be NULL; at most 63 bytes, no '@', unique among
 * the rings of this uid) names it; no HTTP request can deliver into it
 * (see dvppc_ring_open_flags). Owned by @c; dvppc_ring_close or dvppc_close
 * end it. */
DVPPC_API int dvppc_ring_open(dvppc_conn *c, const char *name, uint32_t slots,
                    uint64_t slot_bytes, dvppc_ring **out, dvppc_error *err);

/* dvppc_ring_open_flags: HTTP requests may deliver into the ring
 * (?ring=NAME, or ?ring=NAME@UID with this process's uid); needs a name. */
#define DVPPC_RING_HTTP 1u

/* dvppc_ring_open with @flags (DVPPC_RING_*). */
DVPPC_API int dvppc_ring_open_flags(dvppc_conn *c, const char *name, uint32_t slots,
                                    uint64_t slot_bytes, unsigned flags, dvppc_ring **out,
                                    dvppc_error *err);
/* Close @r: RingClose, waiting for the daemon's Ack (slots still being
 * written finish first), then unmap. Results that point into it must not
 * be used afterwards; results of it still to be collected come with data
 * NULL. NULL is a no-op. */
DVPPC_API void dvppc_ring_close(dvppc_ring *r);

/* The ring's id on the connection, its slot count and slot size, and the
 * read-only mapping of the whole memfd (header at offset 0,
 * proto/dvpp_ring.h). Borrowed. */
DVPPC_API uint32_t dvppc_ring_id(const dvppc_ring *r);
DVPPC_API uint32_t dvppc_ring_slots(const dvppc_ring *r);
DVPPC_API uint64_t dvppc_ring_slot_bytes(const dvppc_ring *r);
DVPPC_API const void *dvppc_ring_base(const dvppc_ring *r, size_t *map_bytes);
/* The ring's memfd (read-only; owned by the ring). For tests and tools. */
DVPPC_API int dvppc_ring_fd(const dvppc_ring *r);

/* --- jobs ------------------------------------------------------------------------ */

typedef enum dvppc_kind {
    DVPPC_TENSOR = 0, /* a tensor (/v1/preprocess) */
    DVPPC_IMAGE = 1,  /* an encoded JPEG/PNG (/v1/image) */
    DVPPC_PIXELS = 2, /* raw pixels (/v1/decode) */
} dvppc_kind;

typedef struct dvppc_request {
    dvppc_kind kind;
    const char *spec;       /* JSON spec (docs/http-api.md), NULL = defaults */
    const void *input;      /* encoded image bytes (borrowed for the call) */
    size_t input_len;       /* inline when <= max_inline, else sent as a
                               sealed memfd the library makes */
    int input_fd;           /* or, with @input NULL: a memfd the caller
                               sealed (F_SEAL_SHRINK|GROW|WRITE), its first
                               @input_len bytes (0: all of it); borrowed.
                               Ignored while @input is set, so a request
                               initialised as in the example above (fd 0)
                               sends its bytes */
    dvppc_ring *ring;       /* deliver into this ring (NULL: inline output,
                               at most max_inline bytes) */
    uint64_t stream;        /* 0 = unordered */
    const char *aipp_config;/* inline aipp_op text, or NULL */
    uint32_t deadline_ms;   /* 0 = the daemon's default */
} dvppc_request;

typedef struct dvppc_meta {
    char dtype[12];          /* "float32" "float16" "uint8" "int8" */
    char layout[12];         /* "NCHW" "NHWC" "NC1HWC0", "" for images */
    char format[16];         /* images: pixel format or "jpeg"/"png" */
    int ndim;
    int64_t shape[5];
    uint64_t bytes;
    uint32_t width, height, width_stride, height_stride;
} dvppc_meta;

/* A finished job. @data points into the ring slot (zero copy; valid until
 * dvppc_release, the slot's lease timeout, or the ring's close) or, for
 * inline outputs, into memory the result owns (dvppc_release frees it).
 * A result for a ring closed before it was collected has @data NULL and
 * @ring NULL (the daemon freed the slot with the ring). Every field is
 * zeroed first, so dvppc_release is safe on any result a call filled. */
typedef struct dvppc_result {
    int status;              /* 0 or a negative dvpp status */
    dvppc_error error;       /* when status != 0 */
    dvppc_meta meta;
    const void *data;
    size_t len;
    dvppc_ring *ring;        /* NULL for inline outputs */
    uint32_t slot, generation;
    double scale_x, scale_y, pad_x, pad_y;
    uint64_t queue_us, decode_us, vpc_us, post_us, total_us;
    uint64_t batch;          /* batch results */
    uint32_t items;
    int32_t *item_status;    /* batch results: items entries (owned) */
    bool from_http;          /* an unsolicited delivery of ?ring=NAME */
    void *priv_;             /* library use */
} dvppc_result;

/* Submit and wait: 0 with @res filled (give the slot back with
 * dvppc_release), or the job's error (status in @res too). DVPPC_EAGAIN when
 * the ring is full or the daemon's admission refused it: retry after
 * releasing slots or later. */
DVPPC_API int dvppc_submit(dvppc_conn *c, const dvppc_request *q, dvppc_result *res,
                 dvppc_error *err);

/* dvppc_submit with a trace (Submit.trace): the daemon records the job
 * (docs/tracing.md) and *@trace_id names the trace for dvppc_trace_get
 * (0 when the job was refused before it started). */
DVPPC_API int dvppc_submit_traced(dvppc_conn *c, const dvppc_request *q, dvppc_result *res,
                                  uint64_t *trace_id, dvppc_error *err);

/* Submit without waiting; @ticket names the job for dvppc_wait. */
DVPPC_API int dvppc_submit_async(dvppc_conn *c, const dvppc_request *q, uint64_t *ticket,
                       dvppc_error *err);

/* Wait up to @timeout_ms (-1 = forever) for the result of @ticket (0 =
 * the next unsolicited HTTP delivery into one of this connection's rings;
 * up to 1024 undelivered ones are kept, later ones are dropped, counted
 * (dvppc_notices_dropped) and their slots given back at once).
 * DVPPC_ETIMEDOUT when it has not come (the ticket stays valid); DVPPC_EBUSY
 * when another thread already waits for @ticket. A ticket is spent once
 * its result is returned. The caller owns @res (dvppc_release). */
DVPPC_API int dvppc_wait(dvppc_conn *c, uint64_t ticket, dvppc_result *res, int timeout_ms,
               dvppc_error *err);

/* How many unsolicited deliveries were dropped past the 1024 kept for
 * dvppc_wait(0) since dvppc_connect (their slots were given back). 0 for
 * NULL. Thread-safe. */
DVPPC_API uint64_t dvppc_notices_dropped(dvppc_conn *c);

/* Give the result's slot back (SlotRelease) or free its inline data; the
 * result's data must not be used afterwards. Safe on a failed result. */
DVPPC_API void dvppc_release(dvppc_conn *c, dvppc_result *res);

/* --- batch jobs --------------------------------------------------------------- */

/* @n inputs through one pipeline into one N x C x H x W tensor in a slot
 * of @ring (which must hold it). Returns once the daemon accepted it
 * (@batch = its id); the result comes through dvppc_wait(@ticket). Inputs
 * larger than max_inline travel as memfds. */
DVPPC_API int dvppc_batch_submit(dvppc_conn *c, const char *spec, const void *const *inputs,
                       const size_t *lens, size_t n, dvppc_ring *ring, bool strict,
                       uint64_t *ticket, uint64_t *batch, dvppc_error *err);

/* dvppc_batch_submit with one JSON spec per input (BatchSubmit.item_specs):
 * item i runs @item_specs[i] (e.g. its own crop and flip), each making
 * @spec's tensor, else the daemon refuses the batch naming item_specs[i].
 * @item_specs NULL: every item runs @spec. The strings are borrowed for
 * the call. */
DVPPC_API int dvppc_batch_submit_items(dvppc_conn *c, const char *spec,
                                       const char *const *item_specs,
                                       const void *const *inputs, const size_t *lens,
                                       size_t n, dvppc_ring *ring, bool strict,
                                       uint64_t *ticket, uint64_t *batch,
                                       dvppc_error *err);

typedef struct dvppc_progress {
    uint32_t total, done, failed;
    bool finished;
} dvppc_progress;

DVPPC_API int dvppc_batch_progress(dvppc_conn *c, uint64_t batch, dvppc_progress *p,
                         dvppc_error *err);
DVPPC_API int dvppc_batch_cancel(dvppc_conn *c, uint64_t batch, dvppc_error *err);

/* --- video channels ----------------------------------------------------------- */
/* A channel is one video stream (VideoOpen .. VideoClose, proto/PROTOCOL.md
 * "Video channels"). The requests of a channel take a block of ids, so its
 * frames, data and answers are routed to the thread that runs it, in the
 * order the daemon sent them; other threads' requests on the connection
 * are unaffected. */

/* Decode options. A zeroed struct (or NULL) decodes every frame to NV12. */
typedef struct dvppc_vdec_opts {
    const char *spec;        /* per-frame pipeline: a tensor spec (JSON,
                                docs/http-api.md) run on every kept frame;
                                NULL or "": the frame's pixels */
    const char *format;      /* the frames' pixels: "nv12" (NULL: VDEC strides
                                ALIGN(w,16) x ALIGN(h,2)), "nv21", "rgb", "bgr" */
    uint32_t every;          /* keep decoded frame n when n % every == 0 (0, 1:
                                all) */
    double fps;              /* keep at most this many frames a second (0: all) */
    bool keyframes_only;     /* keep key frames only */
    double start_s;          /* keep frames with time >= start_s ... */
    double end_s;            /* ... and <= end_s (0: to the end) */
    uint32_t max_frames;     /* stop after this many kept frames (0: no cap) */
} dvppc_vdec_opts;

/* One decoded frame, as the callback sees it. */
typedef struct dvppc_frame {
    dvppc_result result;     /* the ring slot: data, len, meta (pixels: format,
                                width, height, width_stride = bytes of a row of
                                plane 0, height_stride = its rows; with a spec:
                                the tensor's dtype, layout, shape), geometry */
    uint64_t index;          /* decoded frame number (0 = the first frame) */
    int64_t pts;             /* in the stream's time base; INT64_MIN when the
                                stream has none (Annex-B) */
    double time_s;           /* presentation time in seconds (without pts:
                                index / the stream's frame rate) */
    bool key;                /* a key frame */
} dvppc_frame;

/* Called for each kept frame, in presentation order, on the thread that
 * called dvppc_video_decode, without any library lock held. Return 0 and
 * the library releases the slot after the call; return 1 to keep it: copy
 * f->result and give it back later with dvppc_release (any thread; the
 * daemon takes it back after Welcome.lease_timeout_ms anyway). Return a
 * negative status to stop: later frames are released unseen and
 * dvppc_video_decode returns that status once the daemon has finished.
 * While the ring has no free slot the daemon's decoder waits (holding no
 * worker; the whole decode must end within the daemon's
 * socket.video_deadline_ms, 5 minutes by default, else it fails with
 * DVPPC_ETIMEDOUT): frames are never dropped, so a callback that keeps
 * slots must make sure they are released. f->result.data is NULL when the
 * ring was closed meanwhile. */
typedef int (*dvppc_frame_fn)(void *ctx, const dvppc_frame *f);

/* Decode the video in @data (@len bytes: an Annex-B H.264/H.265 stream, or
 * an MP4, MKV or MPEG-TS file) into slots of @ring, calling @fn for every
 * kept frame: opens a decode channel with @o (NULL: defaults), sends the
 * bytes (inline packets of at most max_inline bytes for up to
 * DVPPC_VIDEO_INLINE_PACKETS of them, else one sealed memfd the library
 * makes), the end of the stream, delivers the frames until the daemon's
 * answer to it, then closes the channel. @data is borrowed for the call.
 * Returns 0 when every frame was delivered, or the failure: the daemon's
 * (DVPPC_ECORRUPT for a damaged or truncated stream, after the frames
 * decoded before the damage; DVPPC_ELIMIT over the size limits;
 * DVPPC_ETIMEDOUT when slots were not released in time; DVPPC_ENOSPC when a
 * frame does not fit a slot), a negative return of @fn, or the
 * transport's. Thread-safe: several threads may decode (and submit) on
 * one connection at once. */
#define DVPPC_VIDEO_INLINE_PACKETS 16
DVPPC_API int dvppc_video_decode(dvppc_conn *c, const dvppc_vdec_opts *o, const void *data,
                                 size_t len, dvppc_ring *ring, dvppc_frame_fn fn, void *ctx,
                                 dvppc_error *err);

/* Encode options. Strings may be NULL (the default); numbers 0 (the
 * default). */
typedef struct dvppc_venc_opts {
    const char *codec;       /* "h264" (default) or "h265" */
    uint32_t width;          /* frame width, even, 16..8192 (required) */
    uint32_t height;         /* frame height, even, 16..8192 (required) */
    uint32_t fps_num;        /* frame rate numerator (default 30) */
    uint32_t fps_den;        /* frame rate denominator (default 1) */
    uint32_t gop;            /* key frame interval (default 30); a forced IDR
                                starts a new GOP */
    const char *rc;          /* rate control "crf" (default) "cbr" "vbr" */
    uint32_t bitrate_kbps;   /* CBR/VBR target (default 2000) */
    uint32_t crf;            /* CRF quality 0..51 (default 23) */
    const char *profile;     /* "baseline" "main" "high" (H.264), "main" (H.265) */
    bool mp4;                /* an MP4 file (delivered at the end) instead of
                                an Annex-B stream (delivered as it comes) */
    const char *input_format;/* the raw frames: "nv12" (default) "nv21" "i420"
                                "rgb" "bgr", tight rows */
} dvppc_venc_opts;

/* Where encoded bytes go: called in stream order with each VideoData's
 * bytes (borrowed for the call), on the thread that called the encode
 * function, without any library lock held. Return 0 to go on; anything
 * else fails the encode with that status (DVPPC_ECANCELED for a positive
 * value). */
typedef int (*dvppc_buf_fn)(void *ctx, const void *data, size_t len);

/* What an encode produced: the encoder's packets (one per frame) and how
 * many of them are key frames, as the daemon counted them, and the bytes
 * handed to the sink. */
typedef struct dvppc_venc_counts {
    uint64_t packets;
    uint64_t keyframes;
    uint64_t bytes;
} dvppc_venc_counts;

typedef struct dvppc_venc dvppc_venc;

/* Open an encode channel: VideoOpen with @o, answered VideoOpened. Encoded
 * bytes are handed to @sink as they arrive during later calls. The
 * encoder is owned by the caller (dvppc_video_encode_finish or
 * dvppc_video_encode_close free it) and used by one thread at a time;
 * other threads may use the connection meanwhile. */
DVPPC_API int dvppc_video_encode_open(dvppc_conn *c, const dvppc_venc_opts *o,
                                      dvppc_buf_fn sink, void *ctx, dvppc_venc **out,
                                      dvppc_error *err);

/* Send one raw frame (@len bytes, tight rows: width x height x 3 for
 * rgb/bgr, x 3/2 for nv12/nv21/i420; borrowed for the call); @force_idr
 * makes it an IDR frame. A @len that does not fit the format and size is
 * refused here (DVPPC_EINVAL, nothing sent, the encoder stays usable). A
 * frame larger than max_inline travels as a sealed memfd made for it (one
 * per frame: a sealed memfd cannot be refilled; closed once sent, with a
 * page of zeros after the frame, which dvppd 0.1.0's conversion may read).
 * Hands the bytes that came back meanwhile to the sink. Flow control: while DVPPC_VENC_WINDOW frames
 * (at most half of Welcome.max_inflight) have no encoded packet yet, it
 * waits for one, but not longer than DVPPC_VENC_STALL_MS (the encoder's
 * look-ahead holds some frames back). The first failure (the daemon's
 * refusal of a frame, the sink's status, the transport) is returned by
 * this and every later call on @v. */
#define DVPPC_VENC_WINDOW 64
#define DVPPC_VENC_STALL_MS 2000
DVPPC_API int dvppc_video_encode_frame(dvppc_venc *v, const void *frame, size_t len,
                                       bool force_idr, dvppc_error *err);

/* End the stream (an eos packet), hand every remaining byte to the sink
 * (an MP4 comes whole now), wait for the daemon's Ack, close the channel
 * and free @v (always, also on failure). @counts (may be NULL) gets the
 * totals. Returns 0 or the first failure of the encode. */
DVPPC_API int dvppc_video_encode_finish(dvppc_venc *v, dvppc_venc_counts *counts,
                                        dvppc_error *err);

/* Abandon an encode and free @v: the bytes still coming are dropped. The
 * frames already sent are still encoded by the daemon (the stream is
 * ended and its Ack awaited) before the channel is closed. NULL is a
 * no-op. */
DVPPC_API void dvppc_video_encode_close(dvppc_venc *v);

/* All in one call: open, send @nframes frames of @frame_bytes each (frame
 * i is an IDR when i is one of the @nidr entries of @idr, which may be
 * NULL), finish. Same ownership, flow control and errors as the calls
 * above; @counts may be NULL. */
DVPPC_API int dvppc_video_encode(dvppc_conn *c, const dvppc_venc_opts *o,
                                 const void *const *frames, size_t nframes, size_t frame_bytes,
                                 const uint32_t *idr, size_t nidr, dvppc_buf_fn sink, void *ctx,
                                 dvppc_venc_counts *counts, dvppc_error *err);

/* --- statistics --------------------------------------------------------------- */

/* Trace @id's Chrome Trace JSON (@len bytes, NUL-terminated; the caller
 * frees it with free()). The daemon's errors: DVPPC_ENOTFOUND (unknown,
 * dropped, tracing off), DVPPC_ELIMIT field "trace" (larger than
 * max_inline: GET /v1/traces/<id> serves it). */
DVPPC_API int dvppc_trace_get(dvppc_conn *c, uint64_t id, char **json, size_t *len,
                              dvppc_error *err);

/* The daemon's counters as a JSON object text (caller frees with free()). */
DVPPC_API int dvppc_stats_json(dvppc_conn *c, char **json, dvppc_error *err);

/* Text of a status code ("EAGAIN"). */
DVPPC_API const char *dvppc_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif
