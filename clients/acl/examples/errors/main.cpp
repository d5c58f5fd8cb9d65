/*
 * errors: the bad inputs of a DVPP program, one call each, and what the
 * layer answers: the code, and aclGetRecentErrMsg's message.
 *
 *   errors --jpeg A.jpg --small-jpeg S.jpg --truncated-jpeg T.jpg
 *          --progressive-jpeg P.jpg --png A.png --palette-png Q.png
 *
 * A.jpg is a baseline JPEG of at least 32x32, S.jpg one under 32x32, T.jpg
 * a JPEG cut short, P.jpg a progressive one; A.png an RGB PNG, Q.png a
 * palette PNG. Every case prints one JSON line:
 *   {"case": NAME, "code": CODE, "msg": MESSAGE}   for an aclError,
 *   {"case": NAME, "code": CODE, "sync": CODE2, "msg": ...} for an async
 *       call that was accepted (CODE 0) and then synchronized,
 *   {"case": NAME, "null": true|false}             for a create function.
 * The cases cover NULL pointers, destroyed descriptors, sizes that do not
 * cover widthStride x heightStride, unaligned strides, unsupported formats
 * and out-of-range values. Exit status 0 when every case ran (whatever it
 * answered), 1 when the setup failed, 2 on a usage error.
 */
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    fprintf(stderr, "errors: %s failed: error %d: %s\n", call, static_cast<int>(ret),
            msg != nullptr ? msg : "(no message)");
    return false;
}

bool ReadFile(const char *path, std::vector<uint8_t> &data)
{
    FILE *f = fopen(path, "rb");
    if (f == nullptr) {
        fprintf(stderr, "errors: cannot open %s\n", path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) {
        fprintf(stderr, "errors: %s is empty\n", path);
        fclose(f);
        return false;
    }
    data.resize(static_cast<size_t>(len));
    bool ok = fread(data.data(), 1, data.size(), f) == data.size();
    fclose(f);
    if (!ok)
        fprintf(stderr, "errors: cannot read %s\n", path);
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
    r.channel = acldvppCreateChannelDesc();
    if (r.channel == nullptr) {
        fprintf(stderr, "errors: acldvppCreateChannelDesc failed\n");
        return false;
    }
    if (!Ok(acldvppCreateChannel(r.channel), "acldvppCreateChannel"))
        return false;
    r.channelCreated = true;
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
        fprintf(stderr, "errors: cannot write %s\n", path);
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
    fprintf(stderr, "errors: unknown format %s\n", name);
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
        fprintf(stderr, "errors: acldvppCreatePicDesc failed\n");
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
        fprintf(stderr, "errors: %s: a YUV420SP file needs an even size, not %ux%u\n",
                path, width, height);
        return false;
    }
    if (!ReadFile(path, tight))
        return false;
    if (tight.size() != static_cast<size_t>(width) * height * 3 / 2) {
        fprintf(stderr, "errors: %s holds %zu bytes, a %ux%u frame %zu\n", path,
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
        fprintf(stderr, "errors: acldvppCreatePicDesc failed\n");
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
        fprintf(stderr, "errors: %s is not a number\n", s);
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
        fprintf(stderr, "errors: %s is not WxH\n", s);
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
        fprintf(stderr, "errors: %s is not L,T,R,B\n", s);
        return nullptr;
    }
    acldvppRoiConfig *roi = acldvppCreateRoiConfig(l, rr, t, b);
    if (roi == nullptr)
        fprintf(stderr, "errors: acldvppCreateRoiConfig(%u, %u, %u, %u) failed\n", l, rr, t,
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
        fprintf(stderr, "errors: pthread_create failed\n");
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
    "errors --jpeg A.jpg --small-jpeg S.jpg --truncated-jpeg T.jpg --progressive-jpeg P.jpg "
    "--png A.png --palette-png Q.png";

struct Options {
    const char *jpeg = nullptr;
    const char *smallJpeg = nullptr;
    const char *truncatedJpeg = nullptr;
    const char *progressiveJpeg = nullptr;
    const char *png = nullptr;
    const char *palettePng = nullptr;
};

bool ParseArgs(int argc, char **argv, Options &o)
{
    struct {
        const char *flag;
        const char **value;
    } const flags[] = {
        {"--jpeg", &o.jpeg},
        {"--small-jpeg", &o.smallJpeg},
        {"--truncated-jpeg", &o.truncatedJpeg},
        {"--progressive-jpeg", &o.progressiveJpeg},
        {"--png", &o.png},
        {"--palette-png", &o.palettePng},
    };
    for (int i = 1; i < argc; i++) {
        bool known = false;
        for (const auto &f : flags) {
            if (strcmp(argv[i], f.flag) == 0 && i + 1 < argc) {
                *f.value = argv[++i];
                known = true;
            }
        }
        if (!known)
            return false;
    }
    for (const auto &f : flags)
        if (*f.value == nullptr)
            return false;
    return true;
}

/* --- printing ----------------------------------------------------------------- */

std::string JsonString(const char *s)
{
    std::string out = "\"";
    for (const char *p = s; p != nullptr && *p != '\0'; p++) {
        unsigned char c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

/* The message of the call that just failed ("" after a success). */
std::string Message(aclError code)
{
    const char *msg = code != ACL_SUCCESS ? aclGetRecentErrMsg() : nullptr;
    return JsonString(msg != nullptr ? msg : "");
}

void Report(const char *name, aclError code)
{
    printf("{\"case\": \"%s\", \"code\": %d, \"msg\": %s}\n", name, static_cast<int>(code),
           Message(code).c_str());
    fflush(stdout);
}

/* An async call: its code, then (when it was accepted) the stream's. */
void ReportAsync(const char *name, aclError code, aclrtStream stream)
{
    if (code != ACL_SUCCESS) {
        Report(name, code);
        return;
    }
    aclError sync = aclrtSynchronizeStream(stream);
    printf("{\"case\": \"%s\", \"code\": 0, \"sync\": %d, \"msg\": %s}\n", name,
           static_cast<int>(sync), Message(sync).c_str());
    fflush(stdout);
}

void ReportNull(const char *name, const void *p)
{
    printf("{\"case\": \"%s\", \"null\": %s}\n", name, p == nullptr ? "true" : "false");
    fflush(stdout);
}

/* --- runtime -------------------------------------------------------------------- */

void NoOp(void *userData)
{
    (void)userData;
}

void RuntimeCases(const Resources &r)
{
    Report("init_twice", aclInit(nullptr));
    Report("version_null", aclrtGetVersion(nullptr, nullptr, nullptr));
    Report("dvpp_malloc_null", acldvppMalloc(nullptr, 64));
    Report("dvpp_free_null", acldvppFree(nullptr));
    Report("rt_free_null", aclrtFree(nullptr));
    Report("rt_free_host_null", aclrtFreeHost(nullptr));
    void *p = nullptr;
    aclError ret = aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST);
    Report("rt_malloc_zero", ret);
    if (ret == ACL_SUCCESS)
        (void)aclrtFree(p);

    uint8_t src[32] = {0}, dst[16];
    Report("memcpy_count_over_dest_max",
           aclrtMemcpy(dst, sizeof(dst), src, sizeof(src), ACL_MEMCPY_HOST_TO_HOST));
    Report("memcpy_bad_kind", aclrtMemcpy(dst, sizeof(dst), src, sizeof(dst),
                                          static_cast<aclrtMemcpyKind>(99)));
    Report("memcpy_null", aclrtMemcpy(nullptr, sizeof(dst), src, sizeof(dst),
                                      ACL_MEMCPY_HOST_TO_HOST));
    Report("process_report_zero_timeout", aclrtProcessReport(0));
    Report("process_report_unsubscribed", aclrtProcessReport(10));
    Report("launch_callback_bad_block",
           aclrtLaunchCallback(NoOp, nullptr, static_cast<aclrtCallbackBlockType>(5), r.stream));
}

/* --- descriptors and configs ------------------------------------------------------- */

void DescriptorCases()
{
    void *buf = nullptr;
    (void)acldvppMalloc(&buf, 64);
    acldvppPicDesc *desc = acldvppCreatePicDesc();
    Report("pic_desc_set_data_null_desc", acldvppSetPicDescData(nullptr, buf));
    Report("pic_desc_set_data_null", acldvppSetPicDescData(desc, nullptr));
    Report("pic_desc_set_size_null_desc", acldvppSetPicDescSize(nullptr, 64));
    (void)acldvppDestroyPicDesc(desc);
    (void)acldvppFree(buf);
    Report("stream_desc_set_data_null_desc", acldvppSetStreamDescData(nullptr, nullptr));
    Report("channel_desc_destroy_null", acldvppDestroyChannelDesc(nullptr));
    Report("vdec_channel_desc_destroy_null", aclvdecDestroyChannelDesc(nullptr));

    acldvppRoiConfig *roi = acldvppCreateRoiConfig(0, 70000, 0, 9);
    ReportNull("roi_over_65535", roi);
    if (roi != nullptr)
        (void)acldvppDestroyRoiConfig(roi);
    acldvppBatchPicDesc *batch = acldvppCreateBatchPicDesc(0);
    ReportNull("batch_desc_0", batch);
    if (batch != nullptr)
        (void)acldvppDestroyBatchPicDesc(batch);
    batch = acldvppCreateBatchPicDesc(257);
    ReportNull("batch_desc_257", batch);
    if (batch != nullptr)
        (void)acldvppDestroyBatchPicDesc(batch);
    batch = acldvppCreateBatchPicDesc(2);
    ReportNull("batch_get_past_the_end", acldvppGetPicDesc(batch, 2));
    (void)acldvppDestroyBatchPicDesc(batch);

    acldvppBorderConfig *border = acldvppCreateBorderConfig();
    ReportNull("border_config", border);
    if (border != nullptr)
        (void)acldvppDestroyBorderConfig(border);

    acldvppChannelDesc *channel = acldvppCreateChannelDesc();
    Report("channel_mode_vpc", acldvppSetChannelDescMode(channel, DVPP_CHNMODE_VPC));
    Report("channel_mode_zero", acldvppSetChannelDescMode(channel, 0));
    (void)acldvppDestroyChannelDesc(channel);

    acldvppResizeConfig *resize = acldvppCreateResizeConfig();
    Report("resize_interpolation_3", acldvppSetResizeConfigInterpolation(resize, 3));
    Report("resize_interpolation_5", acldvppSetResizeConfigInterpolation(resize, 5));
    (void)acldvppDestroyResizeConfig(resize);

    aclvdecChannelDesc *vdec = aclvdecCreateChannelDesc();
    Report("vdec_ref_frame_num", aclvdecSetChannelDescRefFrameNum(vdec, 2));
    Report("vdec_out_mode_2", aclvdecSetChannelDescOutMode(vdec, 2));
    (void)aclvdecDestroyChannelDesc(vdec);

    aclvencChannelDesc *venc = aclvencCreateChannelDesc();
    static uint8_t area[4096];
    Report("venc_buf_addr", aclvencSetChannelDescBufAddr(venc, area));
    (void)aclvencDestroyChannelDesc(venc);
}

/* --- JPEG decode ------------------------------------------------------------------ */

/* A JPEGD output of the image in @jpeg: buffer and descriptor, NV12. */
bool JpegOutput(const std::vector<uint8_t> &jpeg, uint32_t bufferSize, uint32_t declared,
                Picture &out)
{
    uint32_t w = 0, h = 0;
    int32_t c = 0;
    if (acldvppJpegGetImageInfo(jpeg.data(), static_cast<uint32_t>(jpeg.size()), &w, &h, &c) !=
            ACL_SUCCESS ||
        !Ok(acldvppMalloc(&out.data, bufferSize), "acldvppMalloc"))
        return false;
    out.size = declared;
    out.desc = acldvppCreatePicDesc();
    const char *soc = aclrtGetSocName();
    uint32_t align = soc != nullptr && strcmp(soc, "Ascend310P3") == 0 ? 64 : 128;
    return out.desc != nullptr && acldvppSetPicDescData(out.desc, out.data) == ACL_SUCCESS &&
           acldvppSetPicDescSize(out.desc, declared) == ACL_SUCCESS &&
           acldvppSetPicDescFormat(out.desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420) == ACL_SUCCESS &&
           acldvppSetPicDescWidth(out.desc, w) == ACL_SUCCESS &&
           acldvppSetPicDescHeight(out.desc, h) == ACL_SUCCESS &&
           acldvppSetPicDescWidthStride(out.desc, AlignUp(w, align)) == ACL_SUCCESS &&
           acldvppSetPicDescHeightStride(out.desc, AlignUp(h, 16)) == ACL_SUCCESS;
}

uint32_t PredictNv12(const std::vector<uint8_t> &jpeg)
{
    uint32_t size = 0;
    (void)acldvppJpegPredictDecSize(jpeg.data(), static_cast<uint32_t>(jpeg.size()),
                                    PIXEL_FORMAT_YUV_SEMIPLANAR_420, &size);
    return size;
}

/* Decode @jpeg (copied into DVPP memory) into a correctly sized output. */
void ReportDecode(const Resources &r, const char *name, const std::vector<uint8_t> &jpeg)
{
    uint32_t size = static_cast<uint32_t>(jpeg.size());
    uint32_t dec = PredictNv12(jpeg);
    void *in = ToDvpp(r, jpeg.data(), size, size);
    Picture out;
    if (in != nullptr && JpegOutput(jpeg, dec ? dec : 1 << 20, dec ? dec : 1 << 20, out))
        ReportAsync(name, acldvppJpegDecodeAsync(r.channel, in, size, out.desc, r.stream),
                    r.stream);
    else
        Report(name, acldvppJpegDecodeAsync(r.channel, in, size, out.desc, r.stream));
    FreePicture(out);
    if (in != nullptr)
        (void)acldvppFree(in);
}

void JpegCases(const Resources &r, const Options &o)
{
    std::vector<uint8_t> jpeg, small, truncated, progressive;
    if (!ReadFile(o.jpeg, jpeg) || !ReadFile(o.smallJpeg, small) ||
        !ReadFile(o.truncatedJpeg, truncated) || !ReadFile(o.progressiveJpeg, progressive))
        return;
    uint32_t size = static_cast<uint32_t>(jpeg.size());
    uint32_t w = 0, h = 0, dec = 0;
    int32_t c = 0;
    std::vector<uint8_t> garbage(256, 0x55);
    Report("jpeg_info_garbage", acldvppJpegGetImageInfo(garbage.data(), 256, &w, &h, &c));
    Report("jpeg_info_no_outputs",
           acldvppJpegGetImageInfo(jpeg.data(), size, nullptr, nullptr, nullptr));
    Report("jpeg_info_null_data", acldvppJpegGetImageInfo(nullptr, size, &w, &h, &c));
    Report("jpeg_predict_rgb",
           acldvppJpegPredictDecSize(jpeg.data(), size, PIXEL_FORMAT_RGB_888, &dec));
    Report("jpeg_predict_yuv400",
           acldvppJpegPredictDecSize(jpeg.data(), size, PIXEL_FORMAT_YUV_400, &dec));
    Report("jpeg_predict_small",
           acldvppJpegPredictDecSize(small.data(), static_cast<uint32_t>(small.size()),
                                     PIXEL_FORMAT_YUV_SEMIPLANAR_420, &dec));
    Report("jpeg_predict_null_size", acldvppJpegPredictDecSize(
                                         jpeg.data(), size, PIXEL_FORMAT_YUV_SEMIPLANAR_420,
                                         nullptr));

    dec = PredictNv12(jpeg);
    void *in = ToDvpp(r, jpeg.data(), size, size);
    Picture out;
    if (in == nullptr || dec == 0 || !JpegOutput(jpeg, dec, dec, out)) {
        fprintf(stderr, "errors: cannot set up a JPEG decode of %s\n", o.jpeg);
        FreePicture(out);
        if (in != nullptr)
            (void)acldvppFree(in);
        return;
    }
    Report("jpegd_null_channel", acldvppJpegDecodeAsync(nullptr, in, size, out.desc, r.stream));
    Report("jpegd_null_data",
           acldvppJpegDecodeAsync(r.channel, nullptr, size, out.desc, r.stream));
    Report("jpegd_null_output", acldvppJpegDecodeAsync(r.channel, in, size, nullptr, r.stream));
    Report("jpegd_zero_size", acldvppJpegDecodeAsync(r.channel, in, 0, out.desc, r.stream));

    /* The declared size does not cover widthStride x heightStride x 3/2. */
    (void)acldvppSetPicDescSize(out.desc, dec / 2);
    ReportAsync("jpegd_output_size_short",
                acldvppJpegDecodeAsync(r.channel, in, size, out.desc, r.stream), r.stream);
    /* The same descriptor, corrected, after the failure: it must work. */
    (void)acldvppSetPicDescSize(out.desc, dec);
    ReportAsync("jpegd_reused_after_failure",
                acldvppJpegDecodeAsync(r.channel, in, size, out.desc, r.stream), r.stream);

    /* A destroyed output descriptor. */
    acldvppPicDesc *gone = acldvppCreatePicDesc();
    (void)acldvppDestroyPicDesc(gone);
    Report("jpegd_destroyed_output",
           acldvppJpegDecodeAsync(r.channel, in, size, gone, r.stream));

    /* A destroyed channel. */
    acldvppChannelDesc *channel = acldvppCreateChannelDesc();
    if (channel != nullptr && acldvppCreateChannel(channel) == ACL_SUCCESS) {
        (void)acldvppDestroyChannel(channel);
        (void)acldvppDestroyChannelDesc(channel);
        Report("jpegd_destroyed_channel",
               acldvppJpegDecodeAsync(channel, in, size, out.desc, r.stream));
    }
    FreePicture(out);

    /* The buffer holds less than the descriptor declares. */
    Picture shortBuffer;
    if (JpegOutput(jpeg, dec / 4, dec, shortBuffer))
        ReportAsync("jpegd_buffer_short",
                    acldvppJpegDecodeAsync(r.channel, in, size, shortBuffer.desc, r.stream),
                    r.stream);
    FreePicture(shortBuffer);
    (void)acldvppFree(in);

    ReportDecode(r, "jpegd_truncated", truncated);
    ReportDecode(r, "jpegd_progressive", progressive);
}

/* --- PNG decode -------------------------------------------------------------------- */

void PngCases(const Resources &r, const Options &o)
{
    std::vector<uint8_t> png, palette;
    if (!ReadFile(o.png, png) || !ReadFile(o.palettePng, palette))
        return;
    uint32_t size = static_cast<uint32_t>(png.size());
    uint32_t w = 0, h = 0, dec = 0;
    int32_t c = 0;
    Report("png_info_short", acldvppPngGetImageInfo(png.data(), 20, &w, &h, &c));
    Report("png_info_palette", acldvppPngGetImageInfo(palette.data(),
                                                      static_cast<uint32_t>(palette.size()),
                                                      &w, &h, &c));
    Report("png_predict_nv12",
           acldvppPngPredictDecSize(png.data(), size, PIXEL_FORMAT_YUV_SEMIPLANAR_420, &dec));
    void *in = ToDvpp(r, png.data(), size, size);
    Report("pngd_null_output", acldvppPngDecodeAsync(r.channel, in, size, nullptr, r.stream));
    if (in != nullptr)
        (void)acldvppFree(in);
}

/* --- VPC -------------------------------------------------------------------------- */

/* An NV12 picture of @width x @height: a mid-grey buffer of @bufferSize
 * bytes, described with @widthStride and a declared @declared size. */
bool GreyPicture(const Resources &r, uint32_t width, uint32_t height, uint32_t widthStride,
                 uint32_t bufferSize, uint32_t declared, Picture &p)
{
    std::vector<uint8_t> grey(bufferSize, 128);
    p.data = ToDvpp(r, grey.data(), grey.size(), grey.size());
    p.size = declared;
    p.desc = acldvppCreatePicDesc();
    return p.data != nullptr && p.desc != nullptr &&
           acldvppSetPicDescData(p.desc, p.data) == ACL_SUCCESS &&
           acldvppSetPicDescSize(p.desc, declared) == ACL_SUCCESS &&
           acldvppSetPicDescFormat(p.desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420) == ACL_SUCCESS &&
           acldvppSetPicDescWidth(p.desc, width) == ACL_SUCCESS &&
           acldvppSetPicDescHeight(p.desc, height) == ACL_SUCCESS &&
           acldvppSetPicDescWidthStride(p.desc, widthStride) == ACL_SUCCESS &&
           acldvppSetPicDescHeightStride(p.desc, AlignUp(height, 2)) == ACL_SUCCESS;
}

aclError Resize(const Resources &r, const Picture &in, const Picture &out,
                acldvppResizeConfig *config)
{
    return acldvppVpcResizeAsync(r.channel, in.desc, out.desc, config, r.stream);
}

void VpcFormatCases(const Resources &r, const Picture &in, acldvppResizeConfig *config)
{
    Picture rgb;
    uint32_t ws = AlignUp(32 * 3, 16), hs = 32;
    if (Ok(acldvppMalloc(&rgb.data, ws * hs), "acldvppMalloc")) {
        rgb.desc = acldvppCreatePicDesc();
        if (rgb.desc != nullptr && DescribePicture(rgb.desc, rgb.data, ws * hs,
                                                   PIXEL_FORMAT_RGB_888, 32, 32))
            ReportAsync("vpc_output_rgb", Resize(r, in, rgb, config), r.stream);
    }
    FreePicture(rgb);

    Picture bad;
    const uint32_t n = 64 * 64 * 3 / 2;
    if (GreyPicture(r, 64, 64, 64, n, n, bad)) {
        (void)acldvppSetPicDescFormat(bad.desc, PIXEL_FORMAT_RGB_444);
        Picture out;
        if (MakeOutput(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 32, 32, out))
            Report("vpc_input_format_rgb444", Resize(r, bad, out, config));
        FreePicture(out);
    }
    FreePicture(bad);
}

void VpcRoiCases(const Resources &r, const Picture &in)
{
    Picture out;
    if (!MakeOutput(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 32, 32, out)) {
        FreePicture(out);
        return;
    }
    /* Under the 310 a YUV420SP crop starts even and ends odd. */
    acldvppRoiConfig *odd = acldvppCreateRoiConfig(1, 32, 0, 31);
    ReportAsync("vpc_crop_odd_left",
                acldvppVpcCropAsync(r.channel, in.desc, out.desc, odd, r.stream), r.stream);
    (void)acldvppDestroyRoiConfig(odd);

    /* A paste's left edge is 16-aligned. */
    Picture canvas;
    if (MakeOutput(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 64, canvas)) {
        acldvppRoiConfig *crop = acldvppCreateRoiConfig(0, 31, 0, 31);
        acldvppRoiConfig *paste = acldvppCreateRoiConfig(8, 39, 0, 31);
        ReportAsync("vpc_paste_left_unaligned",
                    acldvppVpcCropAndPasteAsync(r.channel, in.desc, canvas.desc, crop, paste,
                                                r.stream),
                    r.stream);
        (void)acldvppDestroyRoiConfig(paste);
        (void)acldvppDestroyRoiConfig(crop);
    }
    FreePicture(canvas);

    /* A crop area outside the picture. */
    acldvppRoiConfig *outside = acldvppCreateRoiConfig(0, 99, 0, 31);
    Report("vpc_crop_outside", acldvppVpcCropAsync(r.channel, in.desc, out.desc, outside,
                                                   r.stream));
    (void)acldvppDestroyRoiConfig(outside);
    FreePicture(out);
}

void VpcBatchCases(const Resources &r, const Picture &in)
{
    acldvppBatchPicDesc *src = acldvppCreateBatchPicDesc(1);
    acldvppBatchPicDesc *dst = acldvppCreateBatchPicDesc(1);
    acldvppResizeConfig *config = acldvppCreateResizeConfig();
    acldvppRoiConfig *crop = acldvppCreateRoiConfig(0, 31, 0, 31);
    void *dstData = nullptr;
    uint32_t dstSize = 32 * 32 * 3 / 2;
    if (src != nullptr && dst != nullptr &&
        acldvppMalloc(&dstData, dstSize) == ACL_SUCCESS &&
        DescribePicture(acldvppGetPicDesc(src, 0), acldvppGetPicDescData(in.desc),
                        acldvppGetPicDescSize(in.desc), PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64,
                        64) &&
        DescribePicture(acldvppGetPicDesc(dst, 0), dstData, dstSize,
                        PIXEL_FORMAT_YUV_SEMIPLANAR_420, 32, 32)) {
        uint32_t roiNums[1] = {0};
        acldvppRoiConfig *crops[1] = {crop};
        Report("vpc_batch_roi_nums_zero",
               acldvppVpcBatchCropResizeAsync(r.channel, src, roiNums, 1, dst, crops, config,
                                              r.stream));
        roiNums[0] = 1;
        Report("vpc_batch_null_crops",
               acldvppVpcBatchCropResizeAsync(r.channel, src, roiNums, 1, dst, nullptr,
                                              config, r.stream));
        ReportAsync("vpc_batch_ok", acldvppVpcBatchCropResizeAsync(r.channel, src, roiNums, 1,
                                                                   dst, crops, config,
                                                                   r.stream),
                    r.stream);
    }
    if (dstData != nullptr)
        (void)acldvppFree(dstData);
    (void)acldvppDestroyRoiConfig(crop);
    (void)acldvppDestroyResizeConfig(config);
    if (dst != nullptr)
        (void)acldvppDestroyBatchPicDesc(dst);
    if (src != nullptr)
        (void)acldvppDestroyBatchPicDesc(src);
}

void VpcCases(const Resources &r)
{
    const uint32_t nv12 = 64 * 64 * 3 / 2;
    acldvppResizeConfig *config = acldvppCreateResizeConfig();
    Picture in, out;
    if (config == nullptr || !GreyPicture(r, 64, 64, 64, nv12, nv12, in) ||
        !MakeOutput(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 32, 32, out)) {
        fprintf(stderr, "errors: cannot set up the VPC cases\n");
    } else {
        Report("vpc_null_channel",
               acldvppVpcResizeAsync(nullptr, in.desc, out.desc, config, r.stream));
        Report("vpc_null_input",
               acldvppVpcResizeAsync(r.channel, nullptr, out.desc, config, r.stream));
        Report("vpc_null_output",
               acldvppVpcResizeAsync(r.channel, in.desc, nullptr, config, r.stream));
        Report("vpc_null_config",
               acldvppVpcResizeAsync(r.channel, in.desc, out.desc, nullptr, r.stream));
        Report("vpc_crop_null_area",
               acldvppVpcCropAsync(r.channel, in.desc, out.desc, nullptr, r.stream));

        /* 64 x 64 NV12 needs 6144 bytes; the descriptor says 4096. */
        (void)acldvppSetPicDescSize(in.desc, 64 * 64);
        Report("vpc_input_size_short", Resize(r, in, out, config));
        (void)acldvppSetPicDescSize(in.desc, nv12);
        ReportAsync("vpc_reused_after_failure", Resize(r, in, out, config), r.stream);

        acldvppPicDesc *gone = acldvppCreatePicDesc();
        (void)acldvppDestroyPicDesc(gone);
        Report("vpc_destroyed_input",
               acldvppVpcResizeAsync(r.channel, gone, out.desc, config, r.stream));
        acldvppResizeConfig *goneConfig = acldvppCreateResizeConfig();
        (void)acldvppDestroyResizeConfig(goneConfig);
        Report("vpc_destroyed_config",
               acldvppVpcResizeAsync(r.channel, in.desc, out.desc, goneConfig, r.stream));

        VpcFormatCases(r, in, config);
        VpcRoiCases(r, in);
        VpcBatchCases(r, in);
    }
    FreePicture(out);
    FreePicture(in);

    /* The descriptor declares 6144 bytes; the buffer holds 1056. */
    Picture shortBuffer, dst;
    if (GreyPicture(r, 64, 64, 64, 1024, nv12, shortBuffer) &&
        MakeOutput(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 32, 32, dst))
        Report("vpc_input_buffer_short", Resize(r, shortBuffer, dst, config));
    FreePicture(shortBuffer);

    /* A 100-pixel row in a 100-byte stride: VPC wants 16-aligned strides. */
    Picture unaligned;
    const uint32_t n100 = 100 * 64 * 3 / 2;
    if (GreyPicture(r, 100, 64, 100, n100, n100, unaligned))
        Report("vpc_width_stride_unaligned", Resize(r, unaligned, dst, config));
    FreePicture(unaligned);
    /* A stride below the width. */
    Picture narrow;
    if (GreyPicture(r, 100, 64, 64, n100, n100, narrow))
        Report("vpc_width_stride_below_width", Resize(r, narrow, dst, config));
    FreePicture(narrow);
    FreePicture(dst);
    if (config != nullptr)
        (void)acldvppDestroyResizeConfig(config);
}

/* --- JPEG encode ----------------------------------------------------------------------- */

void JpegeCases(const Resources &r)
{
    acldvppJpegeConfig *config = acldvppCreateJpegeConfig();
    Picture in;
    const uint32_t nv12 = 64 * 64 * 3 / 2;
    uint32_t size = 0;
    if (config != nullptr && GreyPicture(r, 64, 64, 64, nv12, nv12, in)) {
        Report("jpege_predict_null_size", acldvppJpegPredictEncSize(in.desc, config, nullptr));
        Report("jpege_predict_null_config", acldvppJpegPredictEncSize(in.desc, nullptr, &size));
        (void)acldvppSetPicDescFormat(in.desc, PIXEL_FORMAT_RGB_888);
        Report("jpege_predict_rgb", acldvppJpegPredictEncSize(in.desc, config, &size));
        (void)acldvppSetPicDescFormat(in.desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
        Report("jpege_level_101", acldvppSetJpegeConfigLevel(config, 101));
        (void)acldvppSetJpegeConfigLevel(config, 90);

        void *out = nullptr;
        uint32_t capacity = 0;
        if (acldvppJpegPredictEncSize(in.desc, config, &capacity) == ACL_SUCCESS &&
            acldvppMalloc(&out, capacity) == ACL_SUCCESS) {
            size = 0;
            Report("jpege_size_zero",
                   acldvppJpegEncodeAsync(r.channel, in.desc, out, &size, config, r.stream));
            Report("jpege_size_null",
                   acldvppJpegEncodeAsync(r.channel, in.desc, out, nullptr, config, r.stream));
            size = capacity;
            Report("jpege_null_output",
                   acldvppJpegEncodeAsync(r.channel, in.desc, nullptr, &size, config, r.stream));
            size = capacity;
            ReportAsync("jpege_ok",
                        acldvppJpegEncodeAsync(r.channel, in.desc, out, &size, config, r.stream),
                        r.stream);
            (void)acldvppFree(out);
        }
    }
    FreePicture(in);
    /* Under JPEGE's 32 x 32 minimum. */
    Picture tiny;
    const uint32_t n16 = 16 * 16 * 3 / 2;
    if (config != nullptr && GreyPicture(r, 16, 16, 16, n16, n16, tiny))
        Report("jpege_predict_small", acldvppJpegPredictEncSize(tiny.desc, config, &size));
    FreePicture(tiny);
    if (config != nullptr)
        (void)acldvppDestroyJpegeConfig(config);
}

/* --- VDEC and VENC ------------------------------------------------------------------------ */

void VdecNoCallback(acldvppStreamDesc *input, acldvppPicDesc *output, void *userData)
{
    (void)input, (void)output, (void)userData;
}

void VencNoCallback(acldvppPicDesc *input, acldvppStreamDesc *output, void *userData)
{
    (void)input, (void)output, (void)userData;
}

void VdecCases(const Resources &r, const ReportThread &t)
{
    aclvdecChannelDesc *channel = aclvdecCreateChannelDesc();
    aclvdecFrameConfig *config = aclvdecCreateFrameConfig();
    if (channel == nullptr || config == nullptr ||
        aclvdecSetChannelDescThreadId(channel, static_cast<uint64_t>(t.tid)) != ACL_SUCCESS ||
        aclvdecSetChannelDescCallback(channel, VdecNoCallback) != ACL_SUCCESS ||
        aclvdecSetChannelDescEnType(channel, H264_MAIN_LEVEL) != ACL_SUCCESS ||
        aclvdecSetChannelDescOutPicFormat(channel, PIXEL_FORMAT_YUV_SEMIPLANAR_420) !=
            ACL_SUCCESS ||
        !Ok(aclvdecCreateChannel(channel), "aclvdecCreateChannel")) {
        fprintf(stderr, "errors: cannot set up the VDEC cases\n");
    } else {
        acldvppStreamDesc *in = acldvppCreateStreamDesc();
        Picture out;
        const uint32_t nv12 = 128 * 128 * 3 / 2;
        uint8_t bytes[16] = {0, 0, 0, 1, 0x65};
        void *data = ToDvpp(r, bytes, sizeof(bytes), sizeof(bytes));
        (void)acldvppSetStreamDescData(in, data);
        (void)acldvppSetStreamDescSize(in, sizeof(bytes));
        if (GreyPicture(r, 128, 128, 128, nv12, nv12, out)) {
            Report("vdec_send_null_channel",
                   aclvdecSendFrame(nullptr, in, out.desc, config, nullptr));
            Report("vdec_send_null_input",
                   aclvdecSendFrame(channel, nullptr, out.desc, config, nullptr));
            Report("vdec_send_null_output",
                   aclvdecSendFrame(channel, in, nullptr, config, nullptr));
        }
        FreePicture(out);
        (void)acldvppDestroyStreamDesc(in);
        if (data != nullptr)
            (void)acldvppFree(data);
        Report("vdec_destroy_channel", aclvdecDestroyChannel(channel));
    }
    if (config != nullptr)
        (void)aclvdecDestroyFrameConfig(config);
    if (channel != nullptr)
        (void)aclvdecDestroyChannelDesc(channel);
}

void VencCases(const Resources &r, const ReportThread &t)
{
    aclvencChannelDesc *channel = aclvencCreateChannelDesc();
    aclvencFrameConfig *config = aclvencCreateFrameConfig();
    if (channel == nullptr || config == nullptr ||
        aclvencSetChannelDescThreadId(channel, static_cast<uint64_t>(t.tid)) != ACL_SUCCESS ||
        aclvencSetChannelDescCallback(channel, VencNoCallback) != ACL_SUCCESS ||
        aclvencSetChannelDescEnType(channel, H264_MAIN_LEVEL) != ACL_SUCCESS ||
        aclvencSetChannelDescPicFormat(channel, PIXEL_FORMAT_YUV_SEMIPLANAR_420) !=
            ACL_SUCCESS ||
        aclvencSetChannelDescPicWidth(channel, 128) != ACL_SUCCESS ||
        aclvencSetChannelDescPicHeight(channel, 128) != ACL_SUCCESS ||
        !Ok(aclvencCreateChannel(channel), "aclvencCreateChannel")) {
        fprintf(stderr, "errors: cannot set up the VENC cases\n");
    } else {
        Picture in;
        const uint32_t nv12 = 128 * 128 * 3 / 2;
        uint8_t reserve[16];
        if (GreyPicture(r, 128, 128, 128, nv12, nv12, in)) {
            Report("venc_send_null_config",
                   aclvencSendFrame(channel, in.desc, nullptr, nullptr, nullptr));
            Report("venc_send_reserve",
                   aclvencSendFrame(channel, in.desc, reserve, config, nullptr));
            Report("venc_send_null_input",
                   aclvencSendFrame(channel, nullptr, nullptr, config, nullptr));
            /* Under PicWidth x PicHeight x 3/2. */
            (void)acldvppSetPicDescSize(in.desc, 128 * 128);
            Report("venc_send_size_short",
                   aclvencSendFrame(channel, in.desc, nullptr, config, nullptr));
        }
        FreePicture(in);
        Report("venc_destroy_channel", aclvencDestroyChannel(channel));
    }
    if (config != nullptr)
        (void)aclvencDestroyFrameConfig(config);
    if (channel != nullptr)
        (void)aclvencDestroyChannelDesc(channel);
}

bool Run(Resources &r, const Options &o)
{
    RuntimeCases(r);
    DescriptorCases();
    JpegCases(r, o);
    PngCases(r, o);
    VpcCases(r);
    JpegeCases(r);
    ReportThread t;
    if (StartReportThread(t, r.context)) {
        VdecCases(r, t);
        VencCases(r, t);
    }
    StopReportThread(t);
    return true;
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
    if (ok)
        Report("finalize_twice", aclFinalize());
    return ok ? 0 : 1;
}
