/* dvpp_avlib: FFmpeg's libraries, loaded with dlopen on first use.
 *
 * dvppd links no FFmpeg library: libavcodec and libavformat bring some 140
 * shared libraries with them (x265, rav1e, librsvg, ICU, OpenSSL, ...),
 * whose start-up relocations and constructors cost a fresh daemon ~12 MiB
 * of RSS before it decodes any video. The video code (dvpp_video.c,
 * dvpp_video_frame.c, dvpp_vstream.c) includes this header after FFmpeg's
 * own: each FFmpeg function it calls becomes a call through the table
 * below, filled by dvpp__avlib_load from libavutil, libswscale, libavcodec
 * and libavformat of the major versions the headers name (FFmpeg 5.1:
 * .so.57, .so.6, .so.59, .so.59). Every public entry point of the video
 * code calls dvpp__avlib_load first, so a machine without the libraries
 * answers DVPP_EUNSUPPORTED ("video") instead of failing to start.
 *
 * Thread-safety: the load runs once (pthread_once); the table is read-only
 * afterwards. The libraries stay loaded for the life of the process.
 * Private to codecs/ (dvpp__ prefix).
 */
#ifndef DVPP_AVLIB_H
#define DVPP_AVLIB_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "dvpp_status.h"

/* Every FFmpeg function the video code calls: X(library, function). */
#define DVPP_AV_FUNCS(X) \
    X(avutil, av_buffer_allocz) \
    X(avutil, av_buffer_pool_get) \
    X(avutil, av_buffer_pool_init) \
    X(avutil, av_buffer_pool_uninit) \
    X(avutil, av_calloc) \
    X(avutil, av_dict_free) \
    X(avutil, av_dict_set) \
    X(avformat, av_find_best_stream) \
    X(avutil, av_frame_alloc) \
    X(avutil, av_frame_free) \
    X(avutil, av_frame_get_buffer) \
    X(avutil, av_frame_make_writable) \
    X(avutil, av_frame_ref) \
    X(avutil, av_frame_unref) \
    X(avutil, av_free) \
    X(avutil, av_freep) \
    X(avutil, av_get_pix_fmt_name) \
    X(avformat, av_interleaved_write_frame) \
    X(avutil, av_log_set_level) \
    X(avutil, av_malloc) \
    X(avutil, av_mallocz) \
    X(avcodec, av_new_packet) \
    X(avutil, av_opt_set) \
    X(avcodec, av_packet_alloc) \
    X(avcodec, av_packet_free) \
    X(avcodec, av_packet_get_side_data) \
    X(avcodec, av_packet_rescale_ts) \
    X(avcodec, av_packet_unref) \
    X(avutil, av_pix_fmt_desc_get) \
    X(avformat, av_read_frame) \
    X(avutil, av_strdup) \
    X(avutil, av_strerror) \
    X(avformat, av_write_trailer) \
    X(avcodec, avcodec_align_dimensions2) \
    X(avcodec, avcodec_alloc_context3) \
    X(avcodec, avcodec_default_get_buffer2) \
    X(avcodec, avcodec_find_decoder) \
    X(avcodec, avcodec_find_encoder_by_name) \
    X(avcodec, avcodec_flush_buffers) \
    X(avcodec, avcodec_free_context) \
    X(avcodec, avcodec_get_name) \
    X(avcodec, avcodec_open2) \
    X(avcodec, avcodec_parameters_from_context) \
    X(avcodec, avcodec_parameters_to_context) \
    X(avcodec, avcodec_profile_name) \
    X(avcodec, avcodec_receive_frame) \
    X(avcodec, avcodec_receive_packet) \
    X(avcodec, avcodec_send_frame) \
    X(avcodec, avcodec_send_packet) \
    X(avformat, avformat_alloc_context) \
    X(avformat, avformat_alloc_output_context2) \
    X(avformat, avformat_close_input) \
    X(avformat, avformat_find_stream_info) \
    X(avformat, avformat_free_context) \
    X(avformat, avformat_new_stream) \
    X(avformat, avformat_open_input) \
    X(avformat, avformat_write_header) \
    X(avformat, avio_alloc_context) \
    X(avformat, avio_context_free) \
    X(avformat, avio_flush) \
    X(swscale, sws_freeContext) \
    X(swscale, sws_getCoefficients) \
    X(swscale, sws_getColorspaceDetails) \
    X(swscale, sws_getContext) \
    X(swscale, sws_scale) \
    X(swscale, sws_setColorspaceDetails) \

#define DVPP__AV_MEMBER(lib, fn) __typeof__(fn) *fn;
typedef struct dvpp__avlib {
    DVPP_AV_FUNCS(DVPP__AV_MEMBER)
} dvpp__avlib;
#undef DVPP__AV_MEMBER

/* Load the libraries (once): DVPP_OK, or DVPP_EUNSUPPORTED ("video")
 * naming the library or function that is missing (every later call gives
 * the same answer). */
dvpp_status dvpp__avlib_load(dvpp_err *err);

/* The table; only after dvpp__avlib_load returned DVPP_OK. */
const dvpp__avlib *dvpp__av(void);

/* From here on each FFmpeg function named is a call through the table
 * (not in dvpp_avlib.c, which fills it). */
#ifndef DVPP_AVLIB_FILL
#define av_buffer_allocz (dvpp__av()->av_buffer_allocz)
#define av_buffer_pool_get (dvpp__av()->av_buffer_pool_get)
#define av_buffer_pool_init (dvpp__av()->av_buffer_pool_init)
#define av_buffer_pool_uninit (dvpp__av()->av_buffer_pool_uninit)
#define av_calloc (dvpp__av()->av_calloc)
#define av_dict_free (dvpp__av()->av_dict_free)
#define av_dict_set (dvpp__av()->av_dict_set)
#define av_find_best_stream (dvpp__av()->av_find_best_stream)
#define av_frame_alloc (dvpp__av()->av_frame_alloc)
#define av_frame_free (dvpp__av()->av_frame_free)
#define av_frame_get_buffer (dvpp__av()->av_frame_get_buffer)
#define av_frame_make_writable (dvpp__av()->av_frame_make_writable)
#define av_frame_ref (dvpp__av()->av_frame_ref)
#define av_frame_unref (dvpp__av()->av_frame_unref)
#define av_free (dvpp__av()->av_free)
#define av_freep (dvpp__av()->av_freep)
#define av_get_pix_fmt_name (dvpp__av()->av_get_pix_fmt_name)
#define av_interleaved_write_frame (dvpp__av()->av_interleaved_write_frame)
#define av_log_set_level (dvpp__av()->av_log_set_level)
#define av_malloc (dvpp__av()->av_malloc)
#define av_mallocz (dvpp__av()->av_mallocz)
#define av_new_packet (dvpp__av()->av_new_packet)
#define av_opt_set (dvpp__av()->av_opt_set)
#define av_packet_alloc (dvpp__av()->av_packet_alloc)
#define av_packet_free (dvpp__av()->av_packet_free)
#define av_packet_get_side_data (dvpp__av()->av_packet_get_side_data)
#define av_packet_rescale_ts (dvpp__av()->av_packet_rescale_ts)
#define av_packet_unref (dvpp__av()->av_packet_unref)
#define av_pix_fmt_desc_get (dvpp__av()->av_pix_fmt_desc_get)
#define av_read_frame (dvpp__av()->av_read_frame)
#define av_strdup (dvpp__av()->av_strdup)
#define av_strerror (dvpp__av()->av_strerror)
#define av_write_trailer (dvpp__av()->av_write_trailer)
#define avcodec_align_dimensions2 (dvpp__av()->avcodec_align_dimensions2)
#define avcodec_alloc_context3 (dvpp__av()->avcodec_alloc_context3)
#define avcodec_default_get_buffer2 (dvpp__av()->avcodec_default_get_buffer2)
#define avcodec_find_decoder (dvpp__av()->avcodec_find_decoder)
#define avcodec_find_encoder_by_name (dvpp__av()->avcodec_find_encoder_by_name)
#define avcodec_flush_buffers (dvpp__av()->avcodec_flush_buffers)
#define avcodec_free_context (dvpp__av()->avcodec_free_context)
#define avcodec_get_name (dvpp__av()->avcodec_get_name)
#define avcodec_open2 (dvpp__av()->avcodec_open2)
#define avcodec_parameters_from_context (dvpp__av()->avcodec_parameters_from_context)
#define avcodec_parameters_to_context (dvpp__av()->avcodec_parameters_to_context)
#define avcodec_profile_name (dvpp__av()->avcodec_profile_name)
#define avcodec_receive_frame (dvpp__av()->avcodec_receive_frame)
#define avcodec_receive_packet (dvpp__av()->avcodec_receive_packet)
#define avcodec_send_frame (dvpp__av()->avcodec_send_frame)
#define avcodec_send_packet (dvpp__av()->avcodec_send_packet)
#define avformat_alloc_context (dvpp__av()->avformat_alloc_context)
#define avformat_alloc_output_context2 (dvpp__av()->avformat_alloc_output_context2)
#define avformat_close_input (dvpp__av()->avformat_close_input)
#define avformat_find_stream_info (dvpp__av()->avformat_find_stream_info)
#define avformat_free_context (dvpp__av()->avformat_free_context)
#define avformat_new_stream (dvpp__av()->avformat_new_stream)
#define avformat_open_input (dvpp__av()->avformat_open_input)
#define avformat_write_header (dvpp__av()->avformat_write_header)
#define avio_alloc_context (dvpp__av()->avio_alloc_context)
#define avio_context_free (dvpp__av()->avio_context_free)
#define avio_flush (dvpp__av()->avio_flush)
#define sws_freeContext (dvpp__av()->sws_freeContext)
#define sws_getCoefficients (dvpp__av()->sws_getCoefficients)
#define sws_getColorspaceDetails (dvpp__av()->sws_getColorspaceDetails)
#define sws_getContext (dvpp__av()->sws_getContext)
#define sws_scale (dvpp__av()->sws_scale)
#define sws_setColorspaceDetails (dvpp__av()->sws_setColorspaceDetails)

#endif /* DVPP_AVLIB_FILL */

#endif
