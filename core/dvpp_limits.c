#include "dvpp_limits.h"

dvpp_limits dvpp_limits_default(void)
{
    return (dvpp_limits){
        .max_encoded_bytes = DVPP_LIMIT_ENCODED_BYTES_DEFAULT,
        .max_pixels = DVPP_LIMIT_PIXELS_DEFAULT,
        .max_side = DVPP_LIMIT_SIDE_DEFAULT,
        .max_jpeg_scans = DVPP_LIMIT_JPEG_SCANS_DEFAULT,
        .max_png_chunk = DVPP_LIMIT_PNG_CHUNK_DEFAULT,
        .max_png_chunks = DVPP_LIMIT_PNG_CHUNKS_DEFAULT,
        .max_decode_memory = DVPP_LIMIT_DECODE_MEMORY_DEFAULT,
        .max_video_bytes = DVPP_LIMIT_VIDEO_BYTES_DEFAULT,
        .max_video_frames = DVPP_LIMIT_VIDEO_FRAMES_DEFAULT,
        .max_output_bytes = DVPP_LIMIT_OUTPUT_BYTES_DEFAULT,
    };
}

dvpp_status dvpp_limits_check_image(const dvpp_limits *lim, uint64_t width,
                                    uint64_t height, dvpp_err *err)
{
    if (width == 0 || height == 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "size",
                            "image header declares an empty %llux%llu image",
                            (unsigned long long)width,
                            (unsigned long long)height);
    if (width > lim->max_side || height > lim->max_side)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_side",
                            "image is %llux%llu, a side exceeds max_side %u",
                            (unsigned long long)width,
                            (unsigned long long)height, lim->max_side);
    /* Both factors are <= UINT32_MAX here, so the product fits 64 bits. */
    if (width * height > lim->max_pixels)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_pixels",
                            "image is %llux%llu = %llu pixels, over max_pixels %llu",
                            (unsigned long long)width,
                            (unsigned long long)height,
                            (unsigned long long)(width * height),
                            (unsigned long long)lim->max_pixels);
    return DVPP_OK;
}

dvpp_status dvpp_limits_check_encoded(const dvpp_limits *lim, uint64_t bytes,
                                      dvpp_err *err)
{
    if (bytes > lim->max_encoded_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_encoded_bytes",
                            "input is %llu bytes, over max_encoded_bytes %llu",
                            (unsigned long long)bytes,
                            (unsigned long long)lim->max_encoded_bytes);
    return DVPP_OK;
}

dvpp_status dvpp_limits_check_output(const dvpp_limits *lim, uint64_t bytes,
                                     dvpp_err *err)
{
    if (bytes > lim->max_output_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_output_bytes",
                            "the result would be %llu bytes, over max_output_bytes %llu",
                            (unsigned long long)bytes,
                            (unsigned long long)lim->max_output_bytes);
    return DVPP_OK;
}
