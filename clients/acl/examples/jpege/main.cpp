/*
 * jpege: encode a YUV420SP picture as a JPEG with acldvppJpegEncodeAsync.
 *
 *   jpege IN.yuv WxH OUT.jpg [--level 0..100] [--format nv12|nv21]
 *
 * IN is a tight NV12 (or NV21) file; it is laid out in a DVPP buffer with
 * JPEGE's strides (ALIGN(w,16) x ALIGN(h,16)). acldvppJpegPredictEncSize
 * sizes the output buffer; the encoded size is in/out: the buffer's
 * capacity going in, the JPEG's length once the stream is synchronized,
 * which is what the program writes to OUT. Without --level the config keeps
 * its default, 0: the best quality on the 310; the 310P takes 1..100 and
 * refuses it, so programs for both set a level. Prints the sizes as one
 * JSON line.
 *
 * Exit status 0 on success, 1 on a failed call (its code and
 * aclGetRecentErrMsg on stderr), 2 on a usage error.
 */
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
    fprintf(stderr, "jpege: %s failed: error %d: %s\n", call, static_cast<int>(ret),
            msg != nullptr ? msg : "(no message)");
    return false;
}

bool ReadFile(const char *path, std::vector<uint8_t> &data)
{
    FILE *f = fopen(path, "rb");
    if (f == nullptr) {
        fprintf(stderr, "jpege: cannot open %s\n", path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) {
        fprintf(stderr, "jpege: %s is empty\n", path);
        fclose(f);
        return false;
    }
    data.resize(static_cast<size_t>(len));
    bool ok = fread(data.data(), 1, data.size(), f) == data.size();
    fclose(f);
    if (!ok)
        fprintf(stderr, "jpege: cannot read %s\n", path);
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
        fprintf(stderr, "jpege: acldvppCreateChannelDesc failed\n");
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
        fprintf(stderr, "jpege: cannot write %s\n", path);
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
    fprintf(stderr, "jpege: unknown format %s\n", name);
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
        fprintf(stderr, "jpege: acldvppCreatePicDesc failed\n");
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
        fprintf(stderr, "jpege: %s: a YUV420SP file needs an even size, not %ux%u\n",
                path, width, height);
        return false;
    }
    if (!ReadFile(path, tight))
        return false;
    if (tight.size() != static_cast<size_t>(width) * height * 3 / 2) {
        fprintf(stderr, "jpege: %s holds %zu bytes, a %ux%u frame %zu\n", path,
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
        fprintf(stderr, "jpege: acldvppCreatePicDesc failed\n");
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
        fprintf(stderr, "jpege: %s is not a number\n", s);
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
        fprintf(stderr, "jpege: %s is not WxH\n", s);
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
        fprintf(stderr, "jpege: %s is not L,T,R,B\n", s);
        return nullptr;
    }
    acldvppRoiConfig *roi = acldvppCreateRoiConfig(l, rr, t, b);
    if (roi == nullptr)
        fprintf(stderr, "jpege: acldvppCreateRoiConfig(%u, %u, %u, %u) failed\n", l, rr, t,
                b);
    return roi;
}

namespace {

const char *const kUsage = "jpege IN.yuv WxH OUT.jpg [--level 0..100] [--format nv12|nv21]";

struct Options {
    const char *input = nullptr;
    const char *output = nullptr;
    uint32_t width = 0, height = 0;
    acldvppPixelFormat format = PIXEL_FORMAT_YUV_SEMIPLANAR_420;
    bool levelSet = false;
    uint32_t level = 0;
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
        } else if (strcmp(arg, "--level") == 0 && hasValue) {
            if (!ParseUint(argv[++i], o.level))
                return false;
            o.levelSet = true;
        } else if (arg[0] == '-') {
            fprintf(stderr, "jpege: unknown option %s\n", arg);
            return false;
        } else if (positional == 0) {
            o.input = arg, positional++;
        } else if (positional == 1) {
            if (!ParseSize(arg, o.width, o.height))
                return false;
            positional++;
        } else if (positional == 2) {
            o.output = arg, positional++;
        } else {
            return false;
        }
    }
    return positional == 3;
}

/* A tight YUV420SP frame laid out with JPEGE's strides, in a DVPP buffer. */
bool LoadForJpege(const Resources &r, const Options &o, Picture &p)
{
    std::vector<uint8_t> tight;
    if (!ReadFile(o.input, tight))
        return false;
    if (o.width % 2 || o.height % 2 ||
        tight.size() != static_cast<size_t>(o.width) * o.height * 3 / 2) {
        fprintf(stderr, "jpege: %s: %zu bytes is not an even-sized %ux%u frame\n", o.input,
                tight.size(), o.width, o.height);
        return false;
    }
    uint32_t ws = AlignUp(o.width, 16), hs = AlignUp(o.height, 16);
    std::vector<uint8_t> strided(static_cast<size_t>(ws) * hs * 3 / 2, 0);
    for (uint32_t y = 0; y < o.height; y++)
        memcpy(&strided[static_cast<size_t>(y) * ws], &tight[static_cast<size_t>(y) * o.width],
               o.width);
    const uint8_t *uv = &tight[static_cast<size_t>(o.width) * o.height];
    for (uint32_t y = 0; y < o.height / 2; y++)
        memcpy(&strided[static_cast<size_t>(ws) * hs + static_cast<size_t>(y) * ws],
               uv + static_cast<size_t>(y) * o.width, o.width);
    p.size = static_cast<uint32_t>(strided.size());
    p.data = ToDvpp(r, strided.data(), strided.size(), strided.size());
    if (p.data == nullptr)
        return false;
    p.desc = acldvppCreatePicDesc();
    if (p.desc == nullptr) {
        fprintf(stderr, "jpege: acldvppCreatePicDesc failed\n");
        return false;
    }
    return Ok(acldvppSetPicDescData(p.desc, p.data), "acldvppSetPicDescData") &&
           Ok(acldvppSetPicDescSize(p.desc, p.size), "acldvppSetPicDescSize") &&
           Ok(acldvppSetPicDescFormat(p.desc, o.format), "acldvppSetPicDescFormat") &&
           Ok(acldvppSetPicDescWidth(p.desc, o.width), "acldvppSetPicDescWidth") &&
           Ok(acldvppSetPicDescHeight(p.desc, o.height), "acldvppSetPicDescHeight") &&
           Ok(acldvppSetPicDescWidthStride(p.desc, ws), "acldvppSetPicDescWidthStride") &&
           Ok(acldvppSetPicDescHeightStride(p.desc, hs), "acldvppSetPicDescHeightStride");
}

bool Encode(Resources &r, const Options &o, acldvppJpegeConfig *config, Picture &in,
            void *&out)
{
    if (!LoadForJpege(r, o, in))
        return false;
    if (o.levelSet &&
        !Ok(acldvppSetJpegeConfigLevel(config, o.level), "acldvppSetJpegeConfigLevel"))
        return false;
    uint32_t predicted = 0;
    if (!Ok(acldvppJpegPredictEncSize(in.desc, config, &predicted),
            "acldvppJpegPredictEncSize"))
        return false;
    if (!Ok(acldvppMalloc(&out, predicted), "acldvppMalloc"))
        return false;
    /* In: the capacity; out (after the sync): the JPEG's length. It must
     * stay alive until then. */
    uint32_t size = predicted;
    if (!Ok(acldvppJpegEncodeAsync(r.channel, in.desc, out, &size, config, r.stream),
            "acldvppJpegEncodeAsync"))
        return false;
    if (!Ok(aclrtSynchronizeStream(r.stream), "aclrtSynchronizeStream"))
        return false;
    printf("{\"predicted_size\": %u, \"size\": %u, \"level\": %u}\n", predicted, size,
           acldvppGetJpegeConfigLevel(config));
    return SaveDvpp(r, o.output, out, size);
}

bool Run(Resources &r, const Options &o)
{
    acldvppJpegeConfig *config = acldvppCreateJpegeConfig();
    if (config == nullptr) {
        fprintf(stderr, "jpege: acldvppCreateJpegeConfig failed\n");
        return false;
    }
    Picture in;
    void *out = nullptr;
    bool ok = Encode(r, o, config, in, out);
    if (out != nullptr)
        (void)acldvppFree(out);
    FreePicture(in);
    (void)acldvppDestroyJpegeConfig(config);
    return ok;
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
