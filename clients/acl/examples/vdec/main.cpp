/*
 * vdec: decode an H.264 or H.265 Annex-B stream into NV12 frames with
 * aclvdecSendFrame, the results arriving on a callback thread.
 *
 *   vdec IN.h264|IN.h265 OUT.yuv --codec h264|h265 --size WxH
 *        [--format nv12|nv21] [--sloppy] [--eos]
 *
 * The stream is cut into access units (one frame each) at its NAL units;
 * each is copied into its own DVPP buffer and sent with an output picture
 * of VDEC's layout (ALIGN(w,16) x ALIGN(h,2), 3/2 bytes a pixel) sized from
 * --size. With --sloppy the output descriptor gets only its data, size and
 * format, as some programs do (VDEC then writes the stream's geometry
 * back). The callback, on the report thread, frees the input, appends the
 * frame (the descriptor's size bytes) to OUT and frees the output. --eos
 * sends an explicit end-of-stream before aclvdecDestroyChannel (which
 * sends one itself and waits for every callback); only then does the
 * report thread stop. Prints what the callbacks saw as one JSON line.
 *
 * Exit status 0 on success, 1 on a failed call or frame (its code and
 * aclGetRecentErrMsg on stderr), 2 on a usage error.
 */
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"

/* --- what every sample does ------------------------------------------------- */

const int32_t kDeviceId = 0;

uint32_t AlignUp(uint32_t value, uint32_t align)
{
    return (value + align - 1) / align * align;
}

/* Report a failed call with its code and the runtime's message. */
bool Ok(aclError ret, const char *call)
{
    if (ret == ACL_SUCCESS)
        return true;
    const char *msg = aclGetRecentErrMsg();
    fprintf(stderr, "vdec: %s failed: error %d: %s\n", call, static_cast<int>(ret),
            msg != nullptr ? msg : "(no message)");
    return false;
}

bool ReadFile(const char *path, std::vector<uint8_t> &data)
{
    FILE *f = fopen(path, "rb");
    if (f == nullptr) {
        fprintf(stderr, "vdec: cannot open %s\n", path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) {
        fprintf(stderr, "vdec: %s is empty\n", path);
        fclose(f);
        return false;
    }
    data.resize(static_cast<size_t>(len));
    bool ok = fread(data.data(), 1, data.size(), f) == data.size();
    fclose(f);
    if (!ok)
        fprintf(stderr, "vdec: cannot read %s\n", path);
    return ok;
}

/* The process-wide resources every DVPP program sets up first. */
struct Resources {
    bool initialized = false;
    bool deviceSet = false;
    aclrtContext context = nullptr;
    aclrtStream stream = nullptr;
    acldvppChannelDesc *channel = nullptr;
    bool channelCreated = false;
    aclrtRunMode runMode = ACL_HOST;
};

bool Setup(Resources &r)
{
    if (!Ok(aclInit(nullptr), "aclInit"))
        return false;
    r.initialized = true;
    if (!Ok(aclrtSetDevice(kDeviceId), "aclrtSetDevice"))
        return false;
    r.deviceSet = true;
    if (!Ok(aclrtCreateContext(&r.context, kDeviceId), "aclrtCreateContext"))
        return false;
    if (!Ok(aclrtCreateStream(&r.stream), "aclrtCreateStream"))
        return false;
    if (!Ok(aclrtGetRunMode(&r.runMode), "aclrtGetRunMode"))
        return false;
    return true;
}

void Teardown(Resources &r)
{
    if (r.channelCreated)
        (void)acldvppDestroyChannel(r.channel);
    if (r.channel != nullptr)
        (void)acldvppDestroyChannelDesc(r.channel);
    if (r.stream != nullptr)
        (void)aclrtDestroyStream(r.stream);
    if (r.context != nullptr)
        (void)aclrtDestroyContext(r.context);
    if (r.deviceSet)
        (void)aclrtResetDevice(kDeviceId);
    if (r.initialized)
        (void)aclFinalize();
}

/* A DVPP buffer of @allocSize bytes holding the @size bytes at @host,
 * copied as the run mode asks (from the host over PCIe, or on the device). */
void *ToDvpp(const Resources &r, const void *host, size_t size, size_t allocSize)
{
    void *dev = nullptr;
    if (!Ok(acldvppMalloc(&dev, allocSize), "acldvppMalloc"))
        return nullptr;
    aclrtMemcpyKind kind = r.runMode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE
                                                 : ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (!Ok(aclrtMemcpy(dev, allocSize, host, size, kind), "aclrtMemcpy")) {
        (void)acldvppFree(dev);
        return nullptr;
    }
    return dev;
}

/* Write @size bytes of the DVPP buffer @dev to @path (through a host copy
 * when the program runs on a host). */
bool SaveDvpp(const Resources &r, const char *path, const void *dev, size_t size)
{
    const void *data = dev;
    void *host = nullptr;
    if (r.runMode == ACL_HOST) {
        if (!Ok(aclrtMallocHost(&host, size), "aclrtMallocHost"))
            return false;
        if (!Ok(aclrtMemcpy(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST),
                "aclrtMemcpy")) {
            (void)aclrtFreeHost(host);
            return false;
        }
        data = host;
    }
    FILE *f = fopen(path, "wb");
    bool ok = f != nullptr && fwrite(data, 1, size, f) == size;
    if (f != nullptr && fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "vdec: cannot write %s\n", path);
    if (host != nullptr)
        (void)aclrtFreeHost(host);
    return ok;
}

/* --- pictures in VPC's layout ------------------------------------------------ */

struct FormatName {
    const char *name;
    acldvppPixelFormat format;
};

const FormatName kFormats[] = {
    {"nv12", PIXEL_FORMAT_YUV_SEMIPLANAR_420},
    {"nv21", PIXEL_FORMAT_YVU_SEMIPLANAR_420},
    {"yuv400", PIXEL_FORMAT_YUV_400},
    {"rgb", PIXEL_FORMAT_RGB_888},
    {"bgr", PIXEL_FORMAT_BGR_888},
    {"rgba", PIXEL_FORMAT_RGBA_8888},
    {"bgra", PIXEL_FORMAT_BGRA_8888},
};

bool ParseFormat(const char *name, acldvppPixelFormat &format)
{
    for (const FormatName &f : kFormats) {
        if (strcmp(f.name, name) == 0) {
            format = f.format;
            return true;
        }
    }
    fprintf(stderr, "vdec: unknown format %s\n", name);
    return false;
}

bool IsYuv420sp(acldvppPixelFormat f)
{
    return f == PIXEL_FORMAT_YUV_SEMIPLANAR_420 || f == PIXEL_FORMAT_YVU_SEMIPLANAR_420;
}

/* VPC's width stride in bytes: ALIGN(w,16) for YUV, times the bytes of a
 * pixel for packed formats. */
uint32_t VpcWidthStride(acldvppPixelFormat f, uint32_t width)
{
    switch (f) {
    case PIXEL_FORMAT_RGB_888:
    case PIXEL_FORMAT_BGR_888:
        return AlignUp(width * 3, 16);
    case PIXEL_FORMAT_RGBA_8888:
    case PIXEL_FORMAT_BGRA_8888:
        return AlignUp(width * 4, 16);
    default:
        return AlignUp(width, 16);
    }
}

/* The bytes of a VPC picture: 3/2 per stride pixel for YUV420SP (and, as
 * the 310 wants it, for YUV400), one per stride byte otherwise. */
uint32_t VpcBufferSize(acldvppPixelFormat f, uint32_t widthStride, uint32_t heightStride)
{
    const char *soc = aclrtGetSocName();
    bool legacy400 = soc == nullptr || strcmp(soc, "Ascend310P3") != 0;
    if (IsYuv420sp(f) || (f == PIXEL_FORMAT_YUV_400 && legacy400))
        return widthStride * heightStride * 3 / 2;
    return widthStride * heightStride;
}

/* A picture: its DVPP buffer and descriptor (both owned). */
struct Picture {
    void *data = nullptr;
    uint32_t size = 0;
    acldvppPicDesc *desc = nullptr;
};

void FreePicture(Picture &p)
{
    if (p.desc != nullptr)
        (void)acldvppDestroyPicDesc(p.desc);
    if (p.data != nullptr)
        (void)acldvppFree(p.data);
    p = Picture();
}

/* Fill @desc for a @f picture of @width x @height with VPC's strides. */
bool DescribePicture(acldvppPicDesc *desc, void *data, uint32_t size, acldvppPixelFormat f,
                     uint32_t width, uint32_t height)
{
    return Ok(acldvppSetPicDescData(desc, data), "acldvppSetPicDescData") &&
           Ok(acldvppSetPicDescSize(desc, size), "acldvppSetPicDescSize") &&
           Ok(acldvppSetPicDescFormat(desc, f), "acldvppSetPicDescFormat") &&
           Ok(acldvppSetPicDescWidth(desc, width), "acldvppSetPicDescWidth") &&
           Ok(acldvppSetPicDescHeight(desc, height), "acldvppSetPicDescHeight") &&
           Ok(acldvppSetPicDescWidthStride(desc, VpcWidthStride(f, width)),
              "acldvppSetPicDescWidthStride") &&
           Ok(acldvppSetPicDescHeightStride(desc, AlignUp(height, 2)),
              "acldvppSetPicDescHeightStride");
}

/* An output picture: a fresh DVPP buffer and its descriptor. */
bool MakeOutput(acldvppPixelFormat f, uint32_t width, uint32_t height, Picture &p)
{
    p.size = VpcBufferSize(f, VpcWidthStride(f, width), AlignUp(height, 2));
    if (!Ok(acldvppMalloc(&p.data, p.size), "acldvppMalloc"))
        return false;
    p.desc = acldvppCreatePicDesc();
    if (p.desc == nullptr) {
        fprintf(stderr, "vdec: acldvppCreatePicDesc failed\n");
        return false;
    }
    return DescribePicture(p.desc, p.data, p.size, f, width, height);
}

/* Copy a tight YUV420SP frame (@width x @height, even) into a host buffer
 * laid out with VPC's strides. */
bool StrideYuv420sp(const uint8_t *tight, uint32_t width, uint32_t height,
                    std::vector<uint8_t> &strided)
{
    uint32_t ws = AlignUp(width, 16), hs = AlignUp(height, 2);
    strided.assign(static_cast<size_t>(ws) * hs * 3 / 2, 0);
    for (uint32_t y = 0; y < height; y++)
        memcpy(&strided[static_cast<size_t>(y) * ws], tight + static_cast<size_t>(y) * width,
               width);
    const uint8_t *uv = tight + static_cast<size_t>(width) * height;
    for (uint32_t y = 0; y < height / 2; y++)
        memcpy(&strided[static_cast<size_t>(ws) * hs + static_cast<size_t>(y) * ws],
               uv + static_cast<size_t>(y) * width, width);
    return true;
}

/* Load a tight NV12/NV21 file of @width x @height into a VPC input picture. */
bool LoadYuv420sp(const Resources &r, const char *path, acldvppPixelFormat f,
                  uint32_t width, uint32_t height, Picture &p)
{
    std::vector<uint8_t> tight, strided;
    if (width % 2 || height % 2) {
        fprintf(stderr, "vdec: %s: a YUV420SP file needs an even size, not %ux%u\n",
                path, width, height);
        return false;
    }
    if (!ReadFile(path, tight))
        return false;
    if (tight.size() != static_cast<size_t>(width) * height * 3 / 2) {
        fprintf(stderr, "vdec: %s holds %zu bytes, a %ux%u frame %zu\n", path,
                tight.size(), width, height, static_cast<size_t>(width) * height * 3 / 2);
        return false;
    }
    StrideYuv420sp(tight.data(), width, height, strided);
    p.size = static_cast<uint32_t>(strided.size());
    p.data = ToDvpp(r, strided.data(), strided.size(), strided.size());
    if (p.data == nullptr)
        return false;
    p.desc = acldvppCreatePicDesc();
    if (p.desc == nullptr) {
        fprintf(stderr, "vdec: acldvppCreatePicDesc failed\n");
        return false;
    }
    return DescribePicture(p.desc, p.data, p.size, f, width, height);
}

/* The fields a VPC call wrote back into @desc, as JSON. */
void PrintPicture(const acldvppPicDesc *desc)
{
    printf("{\"width\": %u, \"height\": %u, \"width_stride\": %u, \"height_stride\": %u, "
           "\"size\": %u, \"format\": %d, \"ret_code\": %u}",
           acldvppGetPicDescWidth(desc), acldvppGetPicDescHeight(desc),
           acldvppGetPicDescWidthStride(desc), acldvppGetPicDescHeightStride(desc),
           acldvppGetPicDescSize(desc), static_cast<int>(acldvppGetPicDescFormat(desc)),
           acldvppGetPicDescRetCode(desc));
}

bool ParseUint(const char *s, uint32_t &v)
{
    char *end = nullptr;
    unsigned long n = strtoul(s, &end, 10);
    if (end == s || *end != '\0' || n > 0xFFFFFFFFul) {
        fprintf(stderr, "vdec: %s is not a number\n", s);
        return false;
    }
    v = static_cast<uint32_t>(n);
    return true;
}

/* "WxH" */
bool ParseSize(const char *s, uint32_t &w, uint32_t &h)
{
    char tail = 0;
    if (sscanf(s, "%ux%u%c", &w, &h, &tail) != 2) {
        fprintf(stderr, "vdec: %s is not WxH\n", s);
        return false;
    }
    return true;
}

/* "L,T,R,B", inclusive corners, into acldvppCreateRoiConfig's order
 * (left, right, top, bottom). */
acldvppRoiConfig *ParseRoi(const char *s)
{
    uint32_t l, t, rr, b;
    char tail = 0;
    if (sscanf(s, "%u,%u,%u,%u%c", &l, &t, &rr, &b, &tail) != 4) {
        fprintf(stderr, "vdec: %s is not L,T,R,B\n", s);
        return nullptr;
    }
    acldvppRoiConfig *roi = acldvppCreateRoiConfig(l, rr, t, b);
    if (roi == nullptr)
        fprintf(stderr, "vdec: acldvppCreateRoiConfig(%u, %u, %u, %u) failed\n", l, rr, t,
                b);
    return roi;
}

namespace {

/* --- the thread that runs the callbacks ------------------------------------- */

/* VDEC/VENC deliver their results to a thread of the program: the channel
 * names it (pthread_t as uint64_t) and the callbacks run inside its
 * aclrtProcessReport. It runs until the channel is destroyed. */
struct ReportThread {
    aclrtContext context = nullptr;
    std::atomic<bool> stop{false};
    pthread_t tid = 0;
    bool started = false;
};

void *ReportLoop(void *arg)
{
    ReportThread *t = static_cast<ReportThread *>(arg);
    /* Callbacks call the runtime: the thread needs the context. */
    (void)aclrtSetCurrentContext(t->context);
    while (!t->stop.load())
        (void)aclrtProcessReport(100); /* a timeout just loops */
    return nullptr;
}

bool StartReportThread(ReportThread &t, aclrtContext context)
{
    t.context = context;
    if (pthread_create(&t.tid, nullptr, ReportLoop, &t) != 0) {
        fprintf(stderr, "vdec: pthread_create failed\n");
        return false;
    }
    t.started = true;
    return true;
}

void StopReportThread(ReportThread &t)
{
    if (!t.started)
        return;
    t.stop.store(true);
    (void)pthread_join(t.tid, nullptr);
    t.started = false;
}

const char *const kUsage = "vdec IN.h264|IN.h265 OUT.yuv --codec h264|h265 --size WxH "
                           "[--format nv12|nv21] [--sloppy] [--eos]";

struct Options {
    const char *input = nullptr;
    const char *output = nullptr;
    bool h265 = false;
    bool codecSet = false;
    uint32_t width = 0, height = 0;
    acldvppPixelFormat format = PIXEL_FORMAT_YUV_SEMIPLANAR_420;
    bool sloppy = false;
    bool eos = false;
};

bool ParseArgs(int argc, char **argv, Options &o)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool hasValue = i + 1 < argc;
        if (strcmp(arg, "--format") == 0 && hasValue) {
            if (!ParseFormat(argv[++i], o.format))
                return false;
        } else if (strcmp(arg, "--codec") == 0 && hasValue) {
            const char *c = argv[++i];
            if (strcmp(c, "h264") != 0 && strcmp(c, "h265") != 0) {
                fprintf(stderr, "vdec: --codec h264 or h265\n");
                return false;
            }
            o.h265 = strcmp(c, "h265") == 0;
            o.codecSet = true;
        } else if (strcmp(arg, "--size") == 0 && hasValue) {
            if (!ParseSize(argv[++i], o.width, o.height))
                return false;
        } else if (strcmp(arg, "--sloppy") == 0) {
            o.sloppy = true;
        } else if (strcmp(arg, "--eos") == 0) {
            o.eos = true;
        } else if (arg[0] == '-') {
            fprintf(stderr, "vdec: unknown option %s\n", arg);
            return false;
        } else if (positional == 0) {
            o.input = arg, positional++;
        } else if (positional == 1) {
            o.output = arg, positional++;
        } else {
            return false;
        }
    }
    return positional == 2 && o.codecSet && o.width != 0 && o.height != 0;
}

/* --- cutting an Annex-B stream into access units ----------------------------- */

struct Unit {
    size_t offset;
    size_t size;
};

/* True when a NAL unit of this type, after a frame's slices, starts the
 * next access unit (parameter sets, delimiters, SEI). */
bool StartsAccessUnit(bool h265, unsigned type)
{
    if (h265)
        return (type >= 32 && type <= 35) || type == 39 || (type >= 41 && type <= 44) ||
               (type >= 48 && type <= 55);
    return (type >= 6 && type <= 9) || (type >= 14 && type <= 18);
}

/* The access units of @s: a new one starts at the first non-VCL unit that
 * follows a slice, or at a slice that is the first of its picture
 * (first_mb_in_slice == 0 / first_slice_segment_in_pic_flag). */
std::vector<Unit> SplitAccessUnits(const std::vector<uint8_t> &s, bool h265)
{
    std::vector<Unit> units;
    size_t n = s.size(), start = 0;
    bool haveSlice = false;
    size_t headerBytes = h265 ? 2 : 1;
    for (size_t i = 0; i + 3 + headerBytes < n; i++) {
        if (s[i] != 0 || s[i + 1] != 0 || s[i + 2] != 1)
            continue;
        size_t nal = i + 3;
        size_t cut = i > 0 && s[i - 1] == 0 ? i - 1 : i; /* a 4-byte start code */
        unsigned type = h265 ? (s[nal] >> 1) & 0x3f : s[nal] & 0x1f;
        bool slice = h265 ? type < 32 : type >= 1 && type <= 5;
        bool firstSlice = slice && (s[nal + headerBytes] & 0x80) != 0;
        if (haveSlice && (firstSlice || (!slice && StartsAccessUnit(h265, type)))) {
            units.push_back(Unit{start, cut - start});
            start = cut;
            haveSlice = false;
        }
        if (slice)
            haveSlice = true;
        i = nal;
    }
    if (start < n && haveSlice)
        units.push_back(Unit{start, n - start});
    return units;
}

/* --- the callback ---------------------------------------------------------------- */

struct Decoded {
    const Resources *r = nullptr;
    FILE *out = nullptr;
    std::mutex mu; /* the callback thread writes, main reads at the end */
    uint32_t frames = 0;
    uint32_t failed = 0;
    uint32_t firstRetCode = 0;
    bool writeFailed = false;
    uint32_t width = 0, height = 0, widthStride = 0, heightStride = 0, size = 0;
    int format = -1;
};

bool AppendFrame(Decoded &d, const void *data, uint32_t size)
{
    std::vector<uint8_t> host;
    if (d.r->runMode == ACL_HOST) {
        host.resize(size);
        if (!Ok(aclrtMemcpy(host.data(), size, data, size, ACL_MEMCPY_DEVICE_TO_HOST),
                "aclrtMemcpy"))
            return false;
        data = host.data();
    }
    return fwrite(data, 1, size, d.out) == size;
}

/* Runs on the report thread, once per frame, in send order. It owns the
 * frame's input and output descriptors and buffers. */
void VdecCallback(acldvppStreamDesc *input, acldvppPicDesc *output, void *userData)
{
    Decoded *d = static_cast<Decoded *>(userData);
    if (input != nullptr && acldvppGetStreamDescEos(input) == 0) {
        void *in = acldvppGetStreamDescData(input);
        if (in != nullptr)
            (void)acldvppFree(in);
        (void)acldvppDestroyStreamDesc(input);
    }
    if (output == nullptr)
        return;
    void *data = acldvppGetPicDescData(output);
    uint32_t ret = acldvppGetPicDescRetCode(output);
    {
        std::lock_guard<std::mutex> lock(d->mu);
        if (ret != 0) {
            if (d->failed++ == 0)
                d->firstRetCode = ret;
        } else {
            d->frames++;
            d->width = acldvppGetPicDescWidth(output);
            d->height = acldvppGetPicDescHeight(output);
            d->widthStride = acldvppGetPicDescWidthStride(output);
            d->heightStride = acldvppGetPicDescHeightStride(output);
            d->size = acldvppGetPicDescSize(output);
            d->format = static_cast<int>(acldvppGetPicDescFormat(output));
            if (!AppendFrame(*d, data, d->size))
                d->writeFailed = true;
        }
    }
    if (data != nullptr)
        (void)acldvppFree(data);
    (void)acldvppDestroyPicDesc(output);
}

/* --- sending -------------------------------------------------------------------- */

/* Send access unit @u: its own input buffer and output picture, which the
 * callback frees (on failure the caller's are freed here). */
bool SendUnit(const Resources &r, const Options &o, aclvdecChannelDesc *channel,
              aclvdecFrameConfig *config, const std::vector<uint8_t> &stream, const Unit &u,
              Decoded &d)
{
    uint32_t ws = AlignUp(o.width, 16), hs = AlignUp(o.height, 2);
    uint32_t outSize = ws * hs * 3 / 2;
    void *in = ToDvpp(r, &stream[u.offset], u.size, u.size);
    void *out = nullptr;
    acldvppStreamDesc *inDesc = acldvppCreateStreamDesc();
    acldvppPicDesc *outDesc = acldvppCreatePicDesc();
    bool ok = in != nullptr && inDesc != nullptr && outDesc != nullptr &&
              Ok(acldvppMalloc(&out, outSize), "acldvppMalloc") &&
              Ok(acldvppSetStreamDescData(inDesc, in), "acldvppSetStreamDescData") &&
              Ok(acldvppSetStreamDescSize(inDesc, static_cast<uint32_t>(u.size)),
                 "acldvppSetStreamDescSize") &&
              Ok(acldvppSetPicDescData(outDesc, out), "acldvppSetPicDescData") &&
              Ok(acldvppSetPicDescSize(outDesc, outSize), "acldvppSetPicDescSize") &&
              Ok(acldvppSetPicDescFormat(outDesc, o.format), "acldvppSetPicDescFormat");
    if (ok && !o.sloppy)
        ok = Ok(acldvppSetPicDescWidth(outDesc, o.width), "acldvppSetPicDescWidth") &&
             Ok(acldvppSetPicDescHeight(outDesc, o.height), "acldvppSetPicDescHeight") &&
             Ok(acldvppSetPicDescWidthStride(outDesc, ws), "acldvppSetPicDescWidthStride") &&
             Ok(acldvppSetPicDescHeightStride(outDesc, hs), "acldvppSetPicDescHeightStride");
    if (ok)
        ok = Ok(aclvdecSendFrame(channel, inDesc, outDesc, config, &d), "aclvdecSendFrame");
    if (ok)
        return true;
    if (outDesc != nullptr)
        (void)acldvppDestroyPicDesc(outDesc);
    if (inDesc != nullptr)
        (void)acldvppDestroyStreamDesc(inDesc);
    if (out != nullptr)
        (void)acldvppFree(out);
    if (in != nullptr)
        (void)acldvppFree(in);
    return false;
}

/* End of stream: blocks until every frame's callback has run. */
bool SendEos(aclvdecChannelDesc *channel, aclvdecFrameConfig *config, Decoded &d)
{
    acldvppStreamDesc *eos = acldvppCreateStreamDesc();
    if (eos == nullptr) {
        fprintf(stderr, "vdec: acldvppCreateStreamDesc failed\n");
        return false;
    }
    bool ok = Ok(acldvppSetStreamDescEos(eos, 1), "acldvppSetStreamDescEos") &&
              Ok(aclvdecSendFrame(channel, eos, nullptr, config, &d), "aclvdecSendFrame");
    (void)acldvppDestroyStreamDesc(eos);
    return ok;
}

bool MakeChannel(const Options &o, const ReportThread &t, aclvdecChannelDesc *channel)
{
    acldvppStreamFormat type = o.h265 ? H265_MAIN_LEVEL : H264_MAIN_LEVEL;
    return Ok(aclvdecSetChannelDescChannelId(channel, 0), "aclvdecSetChannelDescChannelId") &&
           Ok(aclvdecSetChannelDescThreadId(channel, static_cast<uint64_t>(t.tid)),
              "aclvdecSetChannelDescThreadId") &&
           Ok(aclvdecSetChannelDescCallback(channel, VdecCallback),
              "aclvdecSetChannelDescCallback") &&
           Ok(aclvdecSetChannelDescEnType(channel, type), "aclvdecSetChannelDescEnType") &&
           Ok(aclvdecSetChannelDescOutPicFormat(channel, o.format),
              "aclvdecSetChannelDescOutPicFormat") &&
           Ok(aclvdecCreateChannel(channel), "aclvdecCreateChannel");
}

bool Run(Resources &r, const Options &o)
{
    std::vector<uint8_t> stream;
    if (!ReadFile(o.input, stream))
        return false;
    std::vector<Unit> units = SplitAccessUnits(stream, o.h265);
    Decoded d;
    d.r = &r;
    d.out = fopen(o.output, "wb");
    if (d.out == nullptr) {
        fprintf(stderr, "vdec: cannot write %s\n", o.output);
        return false;
    }
    ReportThread t;
    aclvdecChannelDesc *channel = aclvdecCreateChannelDesc();
    aclvdecFrameConfig *config = aclvdecCreateFrameConfig();
    bool created = false, ok = false;
    if (channel == nullptr || config == nullptr)
        fprintf(stderr, "vdec: cannot create the channel description or frame config\n");
    else if (StartReportThread(t, r.context))
        created = ok = MakeChannel(o, t, channel);
    for (size_t i = 0; ok && i < units.size(); i++)
        ok = SendUnit(r, o, channel, config, stream, units[i], d);
    if (ok && o.eos)
        ok = SendEos(channel, config, d);
    /* Sends EOS itself and returns once every callback has run: only then
     * may the report thread stop. */
    if (created && !Ok(aclvdecDestroyChannel(channel), "aclvdecDestroyChannel"))
        ok = false;
    StopReportThread(t);
    if (config != nullptr)
        (void)aclvdecDestroyFrameConfig(config);
    if (channel != nullptr)
        (void)aclvdecDestroyChannelDesc(channel);
    if (fclose(d.out) != 0)
        d.writeFailed = true;

    std::lock_guard<std::mutex> lock(d.mu);
    printf("{\"units\": %zu, \"frames\": %u, \"failed\": %u, \"width\": %u, "
           "\"height\": %u, \"width_stride\": %u, \"height_stride\": %u, "
           "\"size\": %u, \"format\": %d}\n",
           units.size(), d.frames, d.failed, d.width, d.height, d.widthStride,
           d.heightStride, d.size, d.format);
    if (d.failed != 0)
        fprintf(stderr, "vdec: %u frames failed, the first with retCode %u\n", d.failed,
                d.firstRetCode);
    if (d.writeFailed)
        fprintf(stderr, "vdec: cannot write %s\n", o.output);
    return ok && d.failed == 0 && !d.writeFailed;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    if (!ParseArgs(argc, argv, o)) {
        fprintf(stderr, "usage: %s\n", kUsage);
        return 2;
    }
    Resources r;
    bool ok = Setup(r) && Run(r, o);
    Teardown(r);
    return ok ? 0 : 1;
}
