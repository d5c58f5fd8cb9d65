/* libFuzzer target: VDEC. H.264 and H.265 in Annex-B, MP4, MKV and MPEG-TS
 * (the demuxer detects which from the bytes) through dvpp_video_decode,
 * capped as the daemon is, only tighter so each run is fast: 1920x1088
 * pixels, 64 decoded frames, 1 MiB of stream.
 *
 * Input: one option byte, then the stream.
 *   bits 0-1  frame format: nv12, nv21, rgb, bgr
 *   bit  2    keyframes only
 *   bit  3    every 2nd frame
 *   bit  4    at most 3 frames kept
 *   bit  5    fps 2 sampling
 *   bit  6    a time range [0.1, 0.5] s
 *   bit  7    2 decoder threads
 * Every delivered frame is read whole (ASan sees a short buffer) and its
 * geometry checked against the planes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dvpp_video.h"

typedef struct sink_state {
    uint64_t frames;
    uint32_t sum;
} sink_state;

static dvpp_status sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    sink_state *s = ctx;
    const dvpp_image *img = f->image;
    dvpp_planes pl;

    if (dvpp_image_planes(img, &pl, err) != DVPP_OK)
        abort(); /* the decoder hands out an image it laid out itself */
    if (pl.total > img->size || img->width == 0 || img->height == 0 ||
        (uint64_t)img->width * img->height > 1920u * 1088u || f->kept != s->frames)
        abort();
    for (size_t i = 0; i < pl.total; i++)
        s->sum += img->data[i];
    s->frames++;
    return DVPP_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const dvpp_pixfmt fmts[] = {DVPP_PIXEL_NV12, DVPP_PIXEL_NV21, DVPP_PIXEL_RGB,
                                       DVPP_PIXEL_BGR};
    dvpp_limits lim = dvpp_limits_default();
    dvpp_vdec_opts o;
    dvpp_video_info info;
    dvpp_video_sizes sizes;
    sink_state s = {0, 0};
    uint8_t flags;

    if (size < 1)
        return 0;
    flags = data[0];
    data++, size--;
    lim.max_pixels = 1920u * 1088u;
    lim.max_side = 4096;
    lim.max_video_bytes = 1u << 20;
    lim.max_video_frames = 64;
    lim.max_decode_memory = 64u << 20;

    (void)dvpp_video_probe(data, size, &lim, &info, NULL);
    if (dvpp_video_scan_sizes(data, size, &lim, &sizes, NULL) == DVPP_OK) {
        if (sizes.count > DVPP_VIDEO_SIZES)
            abort();
        for (uint32_t i = 0; i < sizes.count; i++)
            if (sizes.size[i].width > sizes.max_width ||
                sizes.size[i].height > sizes.max_height)
                abort(); /* the maxima bound every size listed */
    }
    dvpp_vdec_opts_init(&o);
    o.format = fmts[flags & 3];
    o.keyframes_only = flags & 4;
    o.every = flags & 8 ? 2 : 1;
    o.max_frames = flags & 16 ? 3 : 0;
    o.fps = flags & 32 ? 2.0 : 0.0;
    if (flags & 64)
        o.start_s = 0.1, o.end_s = 0.5;
    o.threads = flags & 128 ? 2 : 1;
    if (flags & 1)
        o.align_w = 64, o.align_h = 16;
    if (dvpp_video_decode(data, size, &o, &lim, sink, &s, &info, NULL) == DVPP_OK &&
        o.max_frames && s.frames > o.max_frames)
        abort();
    return 0;
}
