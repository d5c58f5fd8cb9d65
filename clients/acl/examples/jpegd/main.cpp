/*
 * jpegd: decode a JPEG into NV12 (or another JPEGD output format) with
 * AscendCL's DVPP JPEGD, the way a CANN program does it.
 *
 *   jpegd IN.jpg OUT.yuv [--format nv12|nv21|yuv422sp|yvu422sp|yuv444sp|
 *                         yvu444sp|yuv400|unknown]
 *
 * The image size comes from acldvppJpegGetImageInfo, the buffer size from
 * acldvppJpegPredictDecSize, the stride alignment from the SoC name
 * (Ascend310P3 writes 64-byte strides, the others 128). After the stream is
 * synchronized the output descriptor holds what the decoder wrote (real
 * width and height, strides, size); the program prints them as one JSON
 * line and writes that many bytes of the output buffer to OUT.
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
    fprintf(stderr, "jpegd: %s failed: error %d: %s\n", call, static_cast<int>(ret),
            msg != nullptr ? msg : "(no message)");
    return false;
}

bool ReadFile(const char *path, std::vector<uint8_t> &data)
{
    FILE *f = fopen(path, "rb");
    if (f == nullptr) {
        fprintf(stderr, "jpegd: cannot open %s\n", path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) {
        fprintf(stderr, "jpegd: %s is empty\n", path);
        fclose(f);
        return false;
    }
    data.resize(static_cast<size_t>(len));
    bool ok = fread(data.data(), 1, data.size(), f) == data.size();
    fclose(f);
    if (!ok)
        fprintf(stderr, "jpegd: cannot read %s\n", path);
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
        fprintf(stderr, "jpegd: acldvppCreateChannelDesc failed\n");
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
        fprintf(stderr, "jpegd: cannot write %s\n", path);
    if (host != nullptr)
        (void)aclrtFreeHost(host);
    return ok;
}

namespace {

struct FormatName {
    const char *name;
    acldvppPixelFormat format;
};

const FormatName kFormats[] = {
    {"nv12", PIXEL_FORMAT_YUV_SEMIPLANAR_420},
    {"nv21", PIXEL_FORMAT_YVU_SEMIPLANAR_420},
    {"yuv422sp", PIXEL_FORMAT_YUV_SEMIPLANAR_422},
    {"yvu422sp", PIXEL_FORMAT_YVU_SEMIPLANAR_422},
    {"yuv444sp", PIXEL_FORMAT_YUV_SEMIPLANAR_444},
    {"yvu444sp", PIXEL_FORMAT_YVU_SEMIPLANAR_444},
    {"yuv400", PIXEL_FORMAT_YUV_400},
    {"unknown", PIXEL_FORMAT_UNKNOWN},
};

bool ParseFormat(const char *name, acldvppPixelFormat &format)
{
    for (const FormatName &f : kFormats) {
        if (strcmp(f.name, name) == 0) {
            format = f.format;
            return true;
        }
    }
    return false;
}

struct Options {
    const char *input = nullptr;
    const char *output = nullptr;
    acldvppPixelFormat format = PIXEL_FORMAT_YUV_SEMIPLANAR_420;
};

bool ParseArgs(int argc, char **argv, Options &o)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            if (!ParseFormat(argv[++i], o.format)) {
                fprintf(stderr, "jpegd: unknown format %s\n", argv[i]);
                return false;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "jpegd: unknown option %s\n", argv[i]);
            return false;
        } else if (positional == 0) {
            o.input = argv[i], positional++;
        } else if (positional == 1) {
            o.output = argv[i], positional++;
        } else {
            return false;
        }
    }
    return positional == 2;
}

struct Decode {
    void *input = nullptr;
    void *output = nullptr;
    acldvppPicDesc *outputDesc = nullptr;
};

void FreeDecode(Decode &d)
{
    if (d.outputDesc != nullptr)
        (void)acldvppDestroyPicDesc(d.outputDesc);
    if (d.output != nullptr)
        (void)acldvppFree(d.output);
    if (d.input != nullptr)
        (void)acldvppFree(d.input);
}

/* What acldvppJpegGetImageInfoV2 and acldvppJpegPredictDecSize said. */
struct ImageInfo {
    uint32_t width = 0;
    uint32_t height = 0;
    int32_t components = 0;
    acldvppJpegFormat css = ACL_JPEG_CSS_UNKNOWN;
    uint32_t decSize = 0;
};

/* Decode @jpeg into @d (its buffers stay with @d for the caller to free). */
bool DecodeJpeg(Resources &r, const Options &o, const std::vector<uint8_t> &jpeg,
                const ImageInfo &info, Decode &d)
{
    uint32_t size = static_cast<uint32_t>(jpeg.size());
    /* Programs hard-code JPEGD's alignment per chip. */
    const char *soc = aclrtGetSocName();
    uint32_t strideAlign = soc != nullptr && strcmp(soc, "Ascend310P3") == 0 ? 64 : 128;

    d.input = ToDvpp(r, jpeg.data(), size, size);
    if (d.input == nullptr)
        return false;
    if (!Ok(acldvppMalloc(&d.output, info.decSize), "acldvppMalloc"))
        return false;
    d.outputDesc = acldvppCreatePicDesc();
    if (d.outputDesc == nullptr) {
        fprintf(stderr, "jpegd: acldvppCreatePicDesc failed\n");
        return false;
    }
    if (!Ok(acldvppSetPicDescData(d.outputDesc, d.output), "acldvppSetPicDescData") ||
        !Ok(acldvppSetPicDescFormat(d.outputDesc, o.format), "acldvppSetPicDescFormat") ||
        !Ok(acldvppSetPicDescWidth(d.outputDesc, info.width), "acldvppSetPicDescWidth") ||
        !Ok(acldvppSetPicDescHeight(d.outputDesc, info.height),
            "acldvppSetPicDescHeight") ||
        !Ok(acldvppSetPicDescWidthStride(d.outputDesc, AlignUp(info.width, strideAlign)),
            "acldvppSetPicDescWidthStride") ||
        !Ok(acldvppSetPicDescHeightStride(d.outputDesc, AlignUp(info.height, 16)),
            "acldvppSetPicDescHeightStride") ||
        !Ok(acldvppSetPicDescSize(d.outputDesc, info.decSize), "acldvppSetPicDescSize"))
        return false;

    if (!Ok(acldvppJpegDecodeAsync(r.channel, d.input, size, d.outputDesc, r.stream),
            "acldvppJpegDecodeAsync"))
        return false;
    /* Nothing of the output may be read before the stream is synchronized. */
    if (!Ok(aclrtSynchronizeStream(r.stream), "aclrtSynchronizeStream"))
        return false;
    if (acldvppGetPicDescRetCode(d.outputDesc) != 0) {
        fprintf(stderr, "jpegd: the decoder's retCode is %u\n",
                acldvppGetPicDescRetCode(d.outputDesc));
        return false;
    }

    /* What the decoder wrote back. */
    printf("{\"soc\": \"%s\", \"image_width\": %u, \"image_height\": %u, "
           "\"components\": %d, \"css\": %d, \"predicted_size\": %u, "
           "\"width\": %u, \"height\": %u, \"width_stride\": %u, "
           "\"height_stride\": %u, \"size\": %u, \"format\": %d, \"ret_code\": %u}\n",
           soc != nullptr ? soc : "", info.width, info.height,
           static_cast<int>(info.components), static_cast<int>(info.css), info.decSize,
           acldvppGetPicDescWidth(d.outputDesc), acldvppGetPicDescHeight(d.outputDesc),
           acldvppGetPicDescWidthStride(d.outputDesc),
           acldvppGetPicDescHeightStride(d.outputDesc),
           acldvppGetPicDescSize(d.outputDesc),
           static_cast<int>(acldvppGetPicDescFormat(d.outputDesc)),
           acldvppGetPicDescRetCode(d.outputDesc));
    return SaveDvpp(r, o.output, d.output, acldvppGetPicDescSize(d.outputDesc));
}

bool Run(Resources &r, const Options &o)
{
    std::vector<uint8_t> jpeg;
    if (!ReadFile(o.input, jpeg))
        return false;
    uint32_t size = static_cast<uint32_t>(jpeg.size());

    ImageInfo info;
    if (!Ok(acldvppJpegGetImageInfoV2(jpeg.data(), size, &info.width, &info.height,
                                      &info.components, &info.css),
            "acldvppJpegGetImageInfoV2"))
        return false;
    if (!Ok(acldvppJpegPredictDecSize(jpeg.data(), size, o.format, &info.decSize),
            "acldvppJpegPredictDecSize"))
        return false;
    Decode d;
    bool ok = DecodeJpeg(r, o, jpeg, info, d);
    FreeDecode(d);
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    if (!ParseArgs(argc, argv, o)) {
        fprintf(stderr, "usage: jpegd IN.jpg OUT.yuv [--format nv12|nv21|yuv422sp|"
                        "yvu422sp|yuv444sp|yvu444sp|yuv400|unknown]\n");
        return 2;
    }
    Resources r;
    bool ok = Setup(r) && Run(r, o);
    Teardown(r);
    return ok ? 0 : 1;
}
