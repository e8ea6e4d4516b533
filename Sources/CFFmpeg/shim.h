// Thin shim over FFmpeg's headers. Everything here exists because Swift cannot import
// function-like or struct-valued macros, or because a field moved between FFmpeg majors.
// Values are computed against the real headers at compile time; no macro text is copied.
#ifndef INGESTD_CFFMPEG_SHIM_H
#define INGESTD_CFFMPEG_SHIM_H

#include <errno.h>
#include <math.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

// MARK: error codes
static inline int cff_error_eagain(void) { return AVERROR(EAGAIN); }
static inline int cff_error_eof(void) { return AVERROR_EOF; }
static inline int cff_error_invaliddata(void) { return AVERROR_INVALIDDATA; }


// MARK: time
static inline int64_t cff_nopts(void) { return AV_NOPTS_VALUE; }
static inline AVRational cff_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline int64_t cff_time_base(void) { return AV_TIME_BASE; }

// MARK: flags that are expressions rather than literals
static inline int cff_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int cff_fmt_nofile(void) { return AVFMT_NOFILE; }
static inline int cff_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int cff_disposition_attached_pic(void) { return AV_DISPOSITION_ATTACHED_PIC; }

// MARK: version-dependent field access (FFmpeg 5.1 names; 6.0 renamed pkt_duration)
static inline int64_t cff_frame_duration(const AVFrame *f) {
#if LIBAVUTIL_VERSION_MAJOR >= 58
    return f->duration;
#else
    return f->pkt_duration;
#endif
}
static inline int cff_codecpar_channels(const AVCodecParameters *p) { return p->ch_layout.nb_channels; }

/// Describes a frame's channel layout ("stereo", "5.1", ...) into buf.
static inline int cff_frame_layout_describe(const AVFrame *f, char *buf, size_t size) {
    if (f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC) {
        AVChannelLayout def;
        av_channel_layout_default(&def, f->ch_layout.nb_channels);
        int r = av_channel_layout_describe(&def, buf, size);
        av_channel_layout_uninit(&def);
        return r;
    }
    return av_channel_layout_describe(&f->ch_layout, buf, size);
}

/// Sets the encoder's layout to the default layout for `channels`.
static inline void cff_codec_context_set_default_layout(AVCodecContext *c, int channels) {
    av_channel_layout_uninit(&c->ch_layout);
    av_channel_layout_default(&c->ch_layout, channels);
}

/// Display rotation in degrees as stored (counter-clockwise, av_display_rotation_get), or NAN.
static inline double cff_stream_rotation(const AVStream *st) {
    const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (!m) return NAN;
    return av_display_rotation_get((const int32_t *)m);
}

/// Whether the stream carries Dolby Vision configuration side data.
static inline int cff_stream_has_dovi(const AVStream *st) {
    return av_stream_get_side_data(st, AV_PKT_DATA_DOVI_CONF, NULL) != NULL;
}

// MARK: audio buffers (void** casts Swift cannot express cleanly)
/// Allocates a planar-float frame of `nb_samples` with the default layout for `channels`.
static inline int cff_frame_alloc_audio(AVFrame *f, int sample_rate, int channels, int nb_samples) {
    f->format = AV_SAMPLE_FMT_FLTP;
    f->sample_rate = sample_rate;
    f->nb_samples = nb_samples;
    av_channel_layout_uninit(&f->ch_layout);
    av_channel_layout_default(&f->ch_layout, channels);
    return av_frame_get_buffer(f, 0);
}
/// Writes all of a frame's samples into the FIFO.
static inline int cff_fifo_write(AVAudioFifo *fifo, const AVFrame *f) {
    return av_audio_fifo_write(fifo, (void **)f->extended_data, f->nb_samples);
}
/// Reads (consuming) `f->nb_samples` samples into an allocated frame.
static inline int cff_fifo_read(AVAudioFifo *fifo, AVFrame *f) {
    return av_audio_fifo_read(fifo, (void **)f->extended_data, f->nb_samples);
}
/// Copies `f->nb_samples` samples starting `offset` samples in, without consuming them.
static inline int cff_fifo_peek_at(AVAudioFifo *fifo, AVFrame *f, int offset) {
    return av_audio_fifo_peek_at(fifo, (void **)f->extended_data, f->nb_samples, offset);
}
/// Fills a frame's samples with silence.
static inline int cff_frame_silence(AVFrame *f) {
    return av_samples_set_silence(f->extended_data, 0, f->nb_samples, f->ch_layout.nb_channels, f->format);
}

#endif
