/*
 * venc: encode NV12 frames into an H.264 or H.265 Annex-B stream with
 * aclvencSendFrame, the packets arriving on a callback thread.
 *
 *   venc IN.yuv WxH OUT.h264|OUT.h265 --codec h264|h265 [--format nv12|nv21]
 *        [--profile baseline|main|high] [--gop N] [--rc vbr|cbr]
 *        [--bitrate KBIT/S] [--fps N] [--idr 0,30,...] [--sloppy]
 *
 * IN holds tight frames of WxH, one after the other. Each is copied into
 * one DVPP buffer with VPC's strides (ALIGN(w,16) x ALIGN(h,2)) and sent;
 * aclvencSendFrame returns once the input is consumed, so the same buffer
 * and descriptor take the next frame. With --sloppy the descriptor declares
 * heightStride ALIGN(h,16), as many programs do, while the buffer holds
 * only ALIGN(h,2) rows with the chroma right after them. The options map
 * to the channel description (KeyFrameInterval, RcMode, MaxBitRate,
 * SrcRate; unset ones keep the library's defaults) and --idr to the frame
 * config's ForceIFrame. The callback appends each packet to OUT while it runs (the
 * output descriptor is freed after it returns). End of stream is a frame
 * config with eos set and no picture; aclvencDestroyChannel waits for the
 * last callback, then the report thread stops. Prints the counts as one
 * JSON line.
 *
 * Exit status 0 on success, 1 on a failed call or packet (its code and
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
    fprintf(stderr, "venc: %s failed: error %d: %s\n", call, static_cast<int>(ret),
            msg != nullptr ? msg : "(no message)");
    return false;
}

bool ReadFile(const char *path, std::vector<uint8_t> &data)
{
    FILE *f = fopen(path, "rb");
    if (f == nullptr) {
        fprintf(stderr, "venc: cannot open %s\n", path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) {
        fprintf(stderr, "venc: %s is empty\n", path);
        fclose(f);
        return false;
    }
    data.resize(static_cast<size_t>(len));
    bool ok = fread(data.data(), 1, data.size(), f) == data.size();
    fclose(f);
    if (!ok)
        fprintf(stderr, "venc: cannot read %s\n", path);
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
        fprintf(stderr, "venc: cannot write %s\n", path);
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
    fprintf(stderr, "venc: unknown format %s\n", name);
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
        fprintf(stderr, "venc: acldvppCreatePicDesc failed\n");
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
        fprintf(stderr, "venc: %s: a YUV420SP file needs an even size, not %ux%u\n",
                path, width, height);
        return false;
    }
    if (!ReadFile(path, tight))
        return false;
    if (tight.size() != static_cast<size_t>(width) * height * 3 / 2) {
        fprintf(stderr, "venc: %s holds %zu bytes, a %ux%u frame %zu\n", path,
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
        fprintf(stderr, "venc: acldvppCreatePicDesc failed\n");
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
        fprintf(stderr, "venc: %s is not a number\n", s);
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
        fprintf(stderr, "venc: %s is not WxH\n", s);
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
        fprintf(stderr, "venc: %s is not L,T,R,B\n", s);
        return nullptr;
    }
    acldvppRoiConfig *roi = acldvppCreateRoiConfig(l, rr, t, b);
    if (roi == nullptr)
        fprintf(stderr, "venc: acldvppCreateRoiConfig(%u, %u, %u, %u) failed\n", l, rr, t,
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
        fprintf(stderr, "venc: pthread_create failed\n");
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

const char *const kUsage =
    "venc IN.yuv WxH OUT.h264|OUT.h265 --codec h264|h265 [--format nv12|nv21] "
    "[--profile baseline|main|high] [--gop N] [--rc vbr|cbr] [--bitrate KBIT/S] [--fps N] "
    "[--idr 0,30,...] [--sloppy]";

struct Options {
    const char *input = nullptr;
    const char *output = nullptr;
    uint32_t width = 0, height = 0;
    acldvppPixelFormat format = PIXEL_FORMAT_YUV_SEMIPLANAR_420;
    const char *codec = nullptr;
    const char *profile = "main";
    uint32_t gop = 0, rcMode = 0, bitrate = 0, fps = 0; /* 0: leave the default */
    std::vector<uint32_t> idr;
    bool sloppy = false;
};

bool ParseIdr(const char *list, std::vector<uint32_t> &idr)
{
    std::string s(list);
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos
                                                                      : comma - pos);
        uint32_t v = 0;
        if (!ParseUint(item.c_str(), v))
            return false;
        idr.push_back(v);
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return true;
}

bool ParseArgs(int argc, char **argv, Options &o)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool hasValue = i + 1 < argc;
        bool ok = true;
        if (strcmp(arg, "--format") == 0 && hasValue) {
            ok = ParseFormat(argv[++i], o.format);
        } else if (strcmp(arg, "--codec") == 0 && hasValue) {
            o.codec = argv[++i];
        } else if (strcmp(arg, "--profile") == 0 && hasValue) {
            o.profile = argv[++i];
        } else if (strcmp(arg, "--gop") == 0 && hasValue) {
            ok = ParseUint(argv[++i], o.gop);
        } else if (strcmp(arg, "--rc") == 0 && hasValue) {
            const char *rc = argv[++i];
            o.rcMode = strcmp(rc, "vbr") == 0 ? 1 : strcmp(rc, "cbr") == 0 ? 2 : 0;
            ok = o.rcMode != 0;
        } else if (strcmp(arg, "--bitrate") == 0 && hasValue) {
            ok = ParseUint(argv[++i], o.bitrate);
        } else if (strcmp(arg, "--fps") == 0 && hasValue) {
            ok = ParseUint(argv[++i], o.fps);
        } else if (strcmp(arg, "--idr") == 0 && hasValue) {
            ok = ParseIdr(argv[++i], o.idr);
        } else if (strcmp(arg, "--sloppy") == 0) {
            o.sloppy = true;
        } else if (arg[0] == '-') {
            fprintf(stderr, "venc: unknown option %s\n", arg);
            ok = false;
        } else if (positional == 0) {
            o.input = arg, positional++;
        } else if (positional == 1) {
            ok = ParseSize(arg, o.width, o.height);
            positional++;
        } else if (positional == 2) {
            o.output = arg, positional++;
        } else {
            ok = false;
        }
        if (!ok)
            return false;
    }
    return positional == 3 && o.codec != nullptr;
}

/* The channel's EnType for --codec and --profile. */
bool StreamFormat(const Options &o, acldvppStreamFormat &type)
{
    if (strcmp(o.codec, "h265") == 0) {
        type = H265_MAIN_LEVEL;
        return true;
    }
    if (strcmp(o.codec, "h264") != 0) {
        fprintf(stderr, "venc: --codec h264 or h265, not %s\n", o.codec);
        return false;
    }
    if (strcmp(o.profile, "baseline") == 0)
        type = H264_BASELINE_LEVEL;
    else if (strcmp(o.profile, "main") == 0)
        type = H264_MAIN_LEVEL;
    else if (strcmp(o.profile, "high") == 0)
        type = H264_HIGH_LEVEL;
    else {
        fprintf(stderr, "venc: --profile baseline, main or high, not %s\n", o.profile);
        return false;
    }
    return true;
}

/* --- the callback ---------------------------------------------------------------- */

struct Encoded {
    const Resources *r = nullptr;
    FILE *out = nullptr;
    std::mutex mu; /* the callback thread writes, main reads at the end */
    uint32_t packets = 0;
    uint32_t failed = 0;
    uint32_t firstRetCode = 0;
    uint64_t bytes = 0;
    bool writeFailed = false;
};

/* Runs on the report thread once per packet; @output and its data are the
 * library's and valid only until it returns. */
void VencCallback(acldvppPicDesc *input, acldvppStreamDesc *output, void *userData)
{
    (void)input; /* the program's own picture, reused for the next frame */
    Encoded *e = static_cast<Encoded *>(userData);
    std::lock_guard<std::mutex> lock(e->mu);
    uint32_t ret = acldvppGetStreamDescRetCode(output);
    if (ret != 0) {
        if (e->failed++ == 0)
            e->firstRetCode = ret;
        return;
    }
    const void *data = acldvppGetStreamDescData(output);
    uint32_t size = acldvppGetStreamDescSize(output);
    std::vector<uint8_t> host;
    if (e->r->runMode == ACL_HOST && size != 0) {
        host.resize(size);
        if (!Ok(aclrtMemcpy(host.data(), size, data, size, ACL_MEMCPY_DEVICE_TO_HOST),
                "aclrtMemcpy")) {
            e->writeFailed = true;
            return;
        }
        data = host.data();
    }
    if (size != 0 && fwrite(data, 1, size, e->out) != size)
        e->writeFailed = true;
    e->packets++;
    e->bytes += size;
}

/* --- sending -------------------------------------------------------------------- */

bool MakeChannel(const Options &o, const ReportThread &t, aclvencChannelDesc *channel)
{
    acldvppStreamFormat type = H265_MAIN_LEVEL;
    if (!StreamFormat(o, type))
        return false;
    bool ok =
        Ok(aclvencSetChannelDescThreadId(channel, static_cast<uint64_t>(t.tid)),
           "aclvencSetChannelDescThreadId") &&
        Ok(aclvencSetChannelDescCallback(channel, VencCallback),
           "aclvencSetChannelDescCallback") &&
        Ok(aclvencSetChannelDescEnType(channel, type), "aclvencSetChannelDescEnType") &&
        Ok(aclvencSetChannelDescPicFormat(channel, o.format),
           "aclvencSetChannelDescPicFormat") &&
        Ok(aclvencSetChannelDescPicWidth(channel, o.width), "aclvencSetChannelDescPicWidth") &&
        Ok(aclvencSetChannelDescPicHeight(channel, o.height),
           "aclvencSetChannelDescPicHeight");
    if (ok && o.gop != 0)
        ok = Ok(aclvencSetChannelDescKeyFrameInterval(channel, o.gop),
                "aclvencSetChannelDescKeyFrameInterval");
    if (ok && o.rcMode != 0)
        ok = Ok(aclvencSetChannelDescRcMode(channel, o.rcMode), "aclvencSetChannelDescRcMode");
    if (ok && o.bitrate != 0)
        ok = Ok(aclvencSetChannelDescMaxBitRate(channel, o.bitrate),
                "aclvencSetChannelDescMaxBitRate");
    if (ok && o.fps != 0)
        ok = Ok(aclvencSetChannelDescSrcRate(channel, o.fps), "aclvencSetChannelDescSrcRate");
    return ok && Ok(aclvencCreateChannel(channel), "aclvencCreateChannel");
}

bool IsIdr(const Options &o, uint32_t frame)
{
    for (uint32_t f : o.idr)
        if (f == frame)
            return true;
    return false;
}

/* The input picture every frame goes through: one DVPP buffer, one
 * descriptor (both owned). */
struct Input {
    void *data = nullptr;
    uint32_t size = 0;
    acldvppPicDesc *desc = nullptr;
};

bool MakeInput(const Options &o, Input &in)
{
    uint32_t ws = AlignUp(o.width, 16), hs = AlignUp(o.height, 2);
    in.size = ws * hs * 3 / 2;
    if (o.sloppy) /* declared, not allocated: the buffer keeps ALIGN(h,2) rows */
        hs = AlignUp(o.height, 16);
    if (!Ok(acldvppMalloc(&in.data, in.size), "acldvppMalloc"))
        return false;
    in.desc = acldvppCreatePicDesc();
    if (in.desc == nullptr) {
        fprintf(stderr, "venc: acldvppCreatePicDesc failed\n");
        return false;
    }
    return Ok(acldvppSetPicDescData(in.desc, in.data), "acldvppSetPicDescData") &&
           Ok(acldvppSetPicDescSize(in.desc, in.size), "acldvppSetPicDescSize") &&
           Ok(acldvppSetPicDescFormat(in.desc, o.format), "acldvppSetPicDescFormat") &&
           Ok(acldvppSetPicDescWidth(in.desc, o.width), "acldvppSetPicDescWidth") &&
           Ok(acldvppSetPicDescHeight(in.desc, o.height), "acldvppSetPicDescHeight") &&
           Ok(acldvppSetPicDescWidthStride(in.desc, ws), "acldvppSetPicDescWidthStride") &&
           Ok(acldvppSetPicDescHeightStride(in.desc, hs), "acldvppSetPicDescHeightStride");
}

bool SendFrames(const Resources &r, const Options &o, const std::vector<uint8_t> &frames,
                aclvencChannelDesc *channel, aclvencFrameConfig *config, Input &in,
                Encoded &e, uint32_t &sent)
{
    size_t frameBytes = static_cast<size_t>(o.width) * o.height * 3 / 2;
    aclrtMemcpyKind kind = r.runMode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE
                                                 : ACL_MEMCPY_DEVICE_TO_DEVICE;
    std::vector<uint8_t> strided;
    for (size_t off = 0; off + frameBytes <= frames.size(); off += frameBytes, sent++) {
        StrideYuv420sp(&frames[off], o.width, o.height, strided);
        if (!Ok(aclrtMemcpy(in.data, in.size, strided.data(), strided.size(), kind),
                "aclrtMemcpy") ||
            !Ok(aclvencSetFrameConfigForceIFrame(config, IsIdr(o, sent) ? 1 : 0),
                "aclvencSetFrameConfigForceIFrame") ||
            !Ok(aclvencSendFrame(channel, in.desc, nullptr, config, &e), "aclvencSendFrame"))
            return false;
    }
    /* End of stream: no picture, eos set; returns after the last packet. */
    return Ok(aclvencSetFrameConfigForceIFrame(config, 0), "aclvencSetFrameConfigForceIFrame") &&
           Ok(aclvencSetFrameConfigEos(config, 1), "aclvencSetFrameConfigEos") &&
           Ok(aclvencSendFrame(channel, nullptr, nullptr, config, nullptr), "aclvencSendFrame");
}

bool Run(Resources &r, const Options &o)
{
    std::vector<uint8_t> frames;
    size_t frameBytes = static_cast<size_t>(o.width) * o.height * 3 / 2;
    if (!ReadFile(o.input, frames))
        return false;
    if (o.width % 2 || o.height % 2 || frames.size() % frameBytes != 0) {
        fprintf(stderr, "venc: %s: %zu bytes are not whole even-sized %ux%u frames\n",
                o.input, frames.size(), o.width, o.height);
        return false;
    }
    Encoded e;
    e.r = &r;
    e.out = fopen(o.output, "wb");
    if (e.out == nullptr) {
        fprintf(stderr, "venc: cannot write %s\n", o.output);
        return false;
    }
    ReportThread t;
    Input in;
    uint32_t sent = 0;
    aclvencChannelDesc *channel = aclvencCreateChannelDesc();
    aclvencFrameConfig *config = aclvencCreateFrameConfig();
    bool created = false, ok = false;
    if (channel == nullptr || config == nullptr)
        fprintf(stderr, "venc: cannot create the channel description or frame config\n");
    else if (MakeInput(o, in) && StartReportThread(t, r.context))
        created = ok = MakeChannel(o, t, channel);
    if (ok)
        ok = Ok(aclvencSetFrameConfigEos(config, 0), "aclvencSetFrameConfigEos") &&
             SendFrames(r, o, frames, channel, config, in, e, sent);
    if (created && !Ok(aclvencDestroyChannel(channel), "aclvencDestroyChannel"))
        ok = false;
    StopReportThread(t);
    if (config != nullptr)
        (void)aclvencDestroyFrameConfig(config);
    if (channel != nullptr)
        (void)aclvencDestroyChannelDesc(channel);
    if (in.desc != nullptr)
        (void)acldvppDestroyPicDesc(in.desc);
    if (in.data != nullptr)
        (void)acldvppFree(in.data);
    if (fclose(e.out) != 0)
        e.writeFailed = true;

    std::lock_guard<std::mutex> lock(e.mu);
    printf("{\"frames\": %u, \"packets\": %u, \"failed\": %u, \"bytes\": %llu}\n", sent,
           e.packets, e.failed, static_cast<unsigned long long>(e.bytes));
    if (e.failed != 0)
        fprintf(stderr, "venc: %u packets failed, the first with retCode %u\n", e.failed,
                e.firstRetCode);
    if (e.writeFailed)
        fprintf(stderr, "venc: cannot write %s\n", o.output);
    return ok && e.failed == 0 && !e.writeFailed;
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
