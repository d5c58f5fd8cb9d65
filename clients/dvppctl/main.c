/* dvppctl: the command-line door to libdvpp.
 *
 * Offline subcommands run in-process on libdvpp (the same code the daemon
 * runs). Exit status: 0 success, 1 the input or operation failed (one line
 * on stderr says why), 2 usage error.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

typedef enum input_kind { INPUT_UNKNOWN, INPUT_JPEG, INPUT_PNG } input_kind;

void ctl_usage(FILE *f)
{
    fprintf(f,
        "usage: dvppctl <command> [options] INPUT... -o OUT\n"
        "\n"
        "commands:\n"
        "  info FILE                 print what the header says, as JSON\n"
        "  decode FILE -o OUT        decode a JPEG or PNG\n"
        "  resize IN --size WxH -o OUT   [--mode stretch|fit|fill|letterbox|shorter|longer]\n"
        "  crop IN --roi L,T,R,B -o OUT  [--size WxH: scale the ROI to it]\n"
        "  convert IN --format F -o OUT  colour conversion, same size\n"
        "  make-border IN --margins T,B,L,R -o OUT\n"
        "  batch-crop IN... --roi [i:]L,T,R,B ... --size WxH -o OUT.npy|OUT_%%d.ext\n"
        "  aipp IN --config aipp.cfg -o OUT.npy   run an ATC aipp_op (decode,\n"
        "                            [--size WxH] resize to its source size)\n"
        "  aipp-check aipp.cfg       validate a config, print it with defaults\n"
        "  preset import preprocessor_config.json [--name N]\n"
        "                            a Hugging Face image processor config as a\n"
        "                            dvppd preset (docs/presets.md)\n"
        "  preset list [--config dvppd.conf]   the presets: name, kind, source,\n"
        "                            description (tab-separated)\n"
        "  preprocess IN --size WxH --mean M --std S -o OUT.npy   the whole\n"
        "                            still-image pipeline into a tensor\n"
        "  preprocess IN --preset NAME [--config dvppd.conf] -o OUT.npy   a dvppd\n"
        "                            preset's pipeline (the daemon's bytes; with\n"
        "                            --socket the daemon resolves NAME)\n"
        "  batch FILES|DIRS... --size WxH -o OUT.npy   a batch job through the device\n"
        "                            model: N x C x H x W tensor ([--channels N]\n"
        "                            [--strict]; preprocess flags). Any number of\n"
        "                            inputs (up to 1048576), run 64 at a time, the\n"
        "                            rows written as each chunk completes. --shard I/N:\n"
        "                            only block I (0-based) of N of the input list\n"
        "                            (numpy.array_split's blocks: the N outputs in\n"
        "                            order are the whole batch; failed items keep\n"
        "                            their index in the whole list), e.g. --shard\n"
        "                            ${JOB_COMPLETION_INDEX}/N in an Indexed Job\n"
        "  video-info FILE           codec, container, size, rate of a video, as JSON\n"
        "  video-decode FILE -o OUT.npy   H.264/H.265 (Annex-B, MP4, MKV, TS) to\n"
        "                            frames: T x rows x stride (nv12/nv21) or\n"
        "                            T x H x W x 3 (rgb/bgr); with --size and the\n"
        "                            preprocess flags a T x C x H x W tensor. One\n"
        "                            JSON line lists the frames kept\n"
        "  video-encode FRAMES.npy --codec h264|h265 -o OUT.mp4|OUT.h264|OUT.h265\n"
        "                            frames to a stream (.mp4: MP4, else Annex-B)\n"
        "  version                   print version, SIMD level and codecs (and the\n"
        "                            daemon's with --socket)\n"
        "  stats --socket PATH       the daemon's counters, as JSON\n"
        "  bench --socket PATH FILE [--size WxH] [-n N] [--concurrency K]\n"
        "                            one preprocess job N times, K in flight: one\n"
        "                            JSON line of throughput and latency\n"
        "\n"
        "--socket PATH (or DVPPD_SOCKET): run the pixel commands (decode, resize,\n"
        "  crop, convert, make-border, batch-crop, preprocess, aipp, batch,\n"
        "  video-decode, video-encode) in a running dvppd; the output files are the\n"
        "  same bytes. batch also takes directories (their .jpg/.jpeg/.png files,\n"
        "  sorted).\n"
        "\n"
        "inputs: JPEG, PNG, .npy (uint8 HxWx3 = rgb, HxWx4 = rgba, HxW = gray, or\n"
        "  --input FMT[:WxH]) or raw pixels (--input FMT:WxH, tight layout).\n"
        "outputs by extension: .npy .png .jpg, anything else raw bytes.\n"
        "\n"
        "decode options:\n"
        "  --format F          rgb bgr rgba bgra argb abgr gray nv12 nv21 i420 yv12\n"
        "                      yuv400 yuv422sp yvu422sp yuv444sp yvu444sp yuv440sp\n"
        "                      yvu440sp unknown (JPEG: keep source sampling)\n"
        "  --align WxH         stride alignment in pixels x rows (e.g. 128x16)\n"
        "  --profile P         native (default) | ascend310 | ascend310p\n"
        "  --scale N           JPEG DCT scaling N/8, N in 1..8\n"
        "  --shrink-on-load WxH|auto  smallest DCT scale that still covers WxH\n"
        "                      (auto: the resize target)\n"
        "  --roi L,T,R,B       region (inclusive corners, as DVPP)\n"
        "  --no-orient         ignore the EXIF orientation\n"
        "  --allow-partial     accept truncated or corrupt data\n"
        "  --fast-dct --nosmooth   djpeg -dct fast / -nosmooth\n"
        "  --alpha auto|drop|composite  --background RRGGBB   PNG alpha\n"
        "  --quality Q         quality of a .jpg output (1..100, default 95)\n"
        "  --max-bytes N --max-pixels N --max-side N --max-scans N  limits\n"
        "\n"
        "VPC options:\n"
        "  --interp nearest|bilinear|bicubic|area|lanczos|box|hamming\n"
        "  --parity cv2|pil|tf|ascend   --ascend-mode 0..4\n"
        "  --round nearest|floor   the side --mode shorter|longer computes (floor:\n"
        "                      torchvision's int())\n"
        "  --pad RRGGBB        letterbox colour    --decode-format F\n"
        "  --csc bt601|bt709   --range narrow|full\n"
        "  --margins T,B,L,R --border-type constant|replicate|reflect|reflect101\n"
        "  --value v0[,v1,v2,v3]   constant border value per channel\n"
        "\n"
        "AIPP / normalise options:\n"
        "  --config aipp.cfg --op N --dynamic BLOB   ATC config, block, params\n"
        "  --mean R,G,B --std R,G,B    (x/255 - mean)/std (torchvision)\n"
        "  --scale S                   preprocess: (x - mean) * S (blobFromImage)\n"
        "  --order rgb|bgr --layout nchw|nhwc|nc1hwc0 --dtype f32|f16|i8|u8\n"
        "\n"
        "video options (video-decode; with --socket: no --threads N > 1, and\n"
        "  nv12/nv21 frames only in VDEC's 16x2 alignment):\n"
        "  --every N | --fps F | --keyframes   keep frame n %% N == 0 / at most F per\n"
        "                      second / key frames only (as ffmpeg -vf select)\n"
        "  --start S --end S   keep frames with S <= t <= E seconds\n"
        "  --max-frames N      stop after N kept frames\n"
        "  --format nv12|nv21|rgb|bgr   --align WxH (default 16x2, VDEC's)\n"
        "  --threads N         decoder (or encoder) threads\n"
        "video-encode options:\n"
        "  --codec h264|h265 --gop N --fps F (N or N/D, default 30)\n"
        "  --rc crf|cbr|vbr --crf Q (default 23) --bitrate KBIT/S (alone: vbr)\n"
        "  --profile baseline|main|high   --idr 0,30,...  frames forced to IDR\n"
        "  --low-delay         one packet per frame, none held back (DVPP VENC's\n"
        "                      output, as libacl_dvpp's aclvenc* channels encode)\n"
        "  --format rgb|bgr (T x H x W x 3) | nv12|nv21|i420 (T x rows x stride,\n"
        "                      with --size WxH or --input FMT:WxH)\n");
}

static input_kind sniff(const dvpp_buf *b, const char *path)
{
    const char *dot = strrchr(path, '.');

    if (b->len >= 3 && b->data[0] == 0xFF && b->data[1] == 0xD8 && b->data[2] == 0xFF)
        return INPUT_JPEG;
    if (b->len >= 4 && memcmp(b->data + 1, "PNG", 3) == 0)
        return INPUT_PNG;
    /* A damaged signature still deserves the decoder's precise error. */
    if (dot && strcasecmp(dot, ".png") == 0)
        return INPUT_PNG;
    if (dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0))
        return INPUT_JPEG;
    return INPUT_UNKNOWN;
}

static json_t *jpeg_json(const dvpp_jpeg_info *in)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:i, s:i, s:s, s:s, s:b, s:b, "
                     "s:b, s:b, s:i, s:I, s:b}",
                     "type", "jpeg", "width", (json_int_t)in->width, "height",
                     (json_int_t)in->height, "display_width",
                     (json_int_t)in->display_width, "display_height",
                     (json_int_t)in->display_height, "components",
                     in->components, "precision", in->precision, "sampling",
                     dvpp_jpeg_sampling_name(in->sampling), "colorspace",
                     dvpp_jpeg_colorspace_name(in->colorspace), "baseline",
                     in->baseline, "progressive", in->progressive, "arithmetic",
                     in->arithmetic, "lossless", in->lossless, "orientation",
                     in->orientation, "scans", (json_int_t)in->scans,
                     "complete", in->complete);
}

static json_t *png_json(const dvpp_png_info *in)
{
    return json_pack("{s:s, s:I, s:I, s:i, s:i, s:i, s:b, s:b, s:b}", "type",
                     "png", "width", (json_int_t)in->width, "height",
                     (json_int_t)in->height, "bit_depth", in->bit_depth,
                     "color_type", in->color_type, "channels", in->channels,
                     "interlaced", in->interlaced, "has_trns", in->has_trns,
                     "has_alpha", in->has_alpha);
}

static int cmd_info(int argc, char **argv)
{
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err err;
    dvpp_buf b;
    json_t *j = NULL;
    int rc = 1;

    if (argc != 2) {
        ctl_usage(stderr);
        return 2;
    }
    dvpp_err_clear(&err);
    dvpp_buf_init(&b);
    if (dvpp_buf_read_file(&b, argv[1], lim.max_encoded_bytes, &err) != DVPP_OK)
        goto out_fail;
    if (sniff(&b, argv[1]) == INPUT_JPEG) {
        dvpp_jpeg_info in;
        if (dvpp_jpeg_probe(b.data, b.len, &in, &err) != DVPP_OK)
            goto out_fail;
        j = jpeg_json(&in);
    } else if (sniff(&b, argv[1]) == INPUT_PNG) {
        dvpp_png_info in;
        if (dvpp_png_probe(b.data, b.len, &in, &err) != DVPP_OK)
            goto out_fail;
        j = png_json(&in);
    } else {
        dvpp_err_set(&err, DVPP_EUNSUPPORTED, "file",
                     "not a JPEG or PNG file");
        goto out_fail;
    }
    json_object_set_new(j, "file", json_string(argv[1]));
    json_object_set_new(j, "bytes", json_integer((json_int_t)b.len));
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    fputc('\n', stdout);
    json_decref(j);
    rc = 0;
    goto out_free;
out_fail:
    rc = ctl_fail(argv[1], &err);
out_free:
    dvpp_buf_fini(&b);
    return rc;
}

static int cmd_decode(int argc, char **argv)
{
    ctl_args a;
    dvpp_image img = {0};
    dvpp_err err;
    dvpp_status st;
    int rc;

    rc = ctl_parse_args(argc, argv, &a);
    if (rc)
        return rc;
    if (a.ninputs != 1) {
        fprintf(stderr, "dvppctl decode: one input FILE\n");
        return 2;
    }
    if (a.nrois == 1) { /* --roi L,T,R,B (inclusive) -> region decode */
        a.jpeg.has_roi = true;
        a.jpeg.roi = (dvpp_jpeg_roi){a.rois[0].left, a.rois[0].top,
                                     dvpp_roi_width(&a.rois[0]),
                                     dvpp_roi_height(&a.rois[0])};
    }
    if (ctl_use_socket(&a))
        return ctl_remote_run("decode", &a);
    dvpp_err_clear(&err);
    st = ctl_load_image(a.inputs[0], &a,
                        a.format_set ? a.format : DVPP_PIXEL_RGB, &img, &err);
    if (st == DVPP_OK && a.format_set && img.format != a.format &&
        a.format != DVPP_PIXEL_UNKNOWN)
        st = dvpp_err_set(&err, DVPP_EFORMAT, "format",
                          "this input cannot be decoded to %s (use dvppctl "
                          "convert)", dvpp_pixfmt_name(a.format));
    if (st == DVPP_OK)
        st = ctl_write_image(a.out, &img, a.quality, &err);
    dvpp_image_free(&img);
    return st == DVPP_OK ? 0 : ctl_fail(a.inputs[0], &err);
}

/* This build's version; with a daemon (--socket), its Welcome too. */
static int cmd_version(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    int rc;

    if (!a)
        return 1;
    rc = ctl_parse_options(argc, argv, a);
    if (!rc && a->ninputs) {
        fprintf(stderr, "dvppctl version: takes no FILE\n");
        rc = 2;
    }
    if (!rc) {
        printf("dvppctl %s\nsimd: %s (cpu supports %s)\ncodecs: jpeg (%s), png\n",
               DVPP_VERSION, dvpp_simd_name(dvpp_simd_active()),
               dvpp_simd_name(dvpp_cpu_detect()), dvpp_jpeg_library());
        fflush(stdout);
        if (ctl_use_socket(a))
            rc = ctl_remote_run("version", a);
    }
    free(a);
    return rc;
}

/* Remove --socket PATH / --socket=PATH from @argv for the commands that
 * never need the daemon (info, aipp-check, video-info). Returns the new
 * argc. */
static int drop_socket(int argc, char **argv)
{
    int n = 1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            i++;
            continue;
        }
        if (strncmp(argv[i], "--socket=", 9) == 0)
            continue;
        argv[n++] = argv[i];
    }
    argv[n] = NULL;
    return n;
}

/* "dvppctl --socket PATH CMD ..." is "dvppctl CMD --socket PATH ...": the
 * global option moves behind the command, whose parser reads it. Returns
 * the argv to use (@argv itself, or a copy the caller frees). */
static char **hoist_socket(int argc, char **argv)
{
    int skip = 0;
    char **out;

    if (argc >= 3 && strncmp(argv[1], "--socket=", 9) == 0)
        skip = 1;
    else if (argc >= 4 && strcmp(argv[1], "--socket") == 0)
        skip = 2;
    if (!skip)
        return argv;
    out = calloc((size_t)argc + 1, sizeof(*out));
    if (!out)
        return NULL;
    out[0] = argv[0];
    out[1] = argv[1 + skip];
    for (int i = 0; i < skip; i++)
        out[2 + i] = argv[1 + i];
    for (int i = 2 + skip; i < argc; i++)
        out[i] = argv[i];
    return out;
}

static int dispatch(int argc, char **argv)
{
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(drop_socket(argc - 1, argv + 1), argv + 1);
    if (strcmp(argv[1], "decode") == 0)
        return cmd_decode(argc - 1, argv + 1);
    if (strcmp(argv[1], "resize") == 0)
        return ctl_cmd_resize(argc - 1, argv + 1);
    if (strcmp(argv[1], "crop") == 0)
        return ctl_cmd_crop(argc - 1, argv + 1);
    if (strcmp(argv[1], "convert") == 0)
        return ctl_cmd_convert(argc - 1, argv + 1);
    if (strcmp(argv[1], "make-border") == 0)
        return ctl_cmd_make_border(argc - 1, argv + 1);
    if (strcmp(argv[1], "batch-crop") == 0)
        return ctl_cmd_batch_crop(argc - 1, argv + 1);
    if (strcmp(argv[1], "aipp") == 0)
        return ctl_cmd_aipp(argc - 1, argv + 1);
    if (strcmp(argv[1], "preset") == 0)
        return ctl_cmd_preset(argc - 1, argv + 1);
    if (strcmp(argv[1], "aipp-check") == 0)
        return ctl_cmd_aipp_check(drop_socket(argc - 1, argv + 1), argv + 1);
    if (strcmp(argv[1], "preprocess") == 0)
        return ctl_cmd_preprocess(argc - 1, argv + 1);
    if (strcmp(argv[1], "batch") == 0)
        return ctl_cmd_batch(argc - 1, argv + 1);
    if (strcmp(argv[1], "video-info") == 0)
        return ctl_cmd_video_info(drop_socket(argc - 1, argv + 1), argv + 1);
    if (strcmp(argv[1], "video-decode") == 0)
        return ctl_cmd_video_decode(argc - 1, argv + 1);
    if (strcmp(argv[1], "video-encode") == 0)
        return ctl_cmd_video_encode(argc - 1, argv + 1);
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0)
        return cmd_version(argc - 1, argv + 1);
    if (strcmp(argv[1], "stats") == 0)
        return ctl_cmd_stats(argc - 1, argv + 1);
    if (strcmp(argv[1], "bench") == 0)
        return ctl_cmd_bench(argc - 1, argv + 1);
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        ctl_usage(stdout);
        return 0;
    }
    fprintf(stderr, "dvppctl: unknown command '%s'\n", argv[1]);
    ctl_usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    char **args;
    int rc;

    if (argc < 2) {
        ctl_usage(stderr);
        return 2;
    }
    args = hoist_socket(argc, argv);
    if (!args) {
        fprintf(stderr, "dvppctl: out of memory\n");
        return 1;
    }
    rc = dispatch(argc, args);
    if (args != argv)
        free(args);
    return rc;
}
