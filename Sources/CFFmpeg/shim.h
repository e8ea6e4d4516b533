// Thin shim over FFmpeg's headers. Everything here exists because Swift cannot import
// function-like or struct-valued macros, or because a field moved between FFmpeg majors.
// Values are computed against the real headers at compile time; no macro text is copied.
#ifndef INGESTD_CFFMPEG_SHIM_H
#define INGESTD_CFFMPEG_SHIM_H

#include <errno.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
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


// MARK: write errors the hls muxer drops
/// Closes a file a muxer opened itself, keeping its first write error in the `int` that
/// `s->opaque` points to. FFmpeg 5.1's hls muxer ignores what closing a segment or playlist
/// returns, so a full disk would otherwise leave a short segment and no error at all.
static int cff_io_close_keeping_error(AVFormatContext *s, AVIOContext *pb) {
    avio_flush(pb);
    int error = pb->error;
    int closed = avio_close(pb);
    int result = error < 0 ? error : closed;
    int *slot = (int *)s->opaque;
    if (result < 0 && slot && *slot == 0) *slot = result;
    return result;
}
/// Routes the muxer's own file closes (and its nested muxers', which copy these) through
/// `cff_io_close_keeping_error`, errors into `slot`.
static inline void cff_keep_io_errors(AVFormatContext *s, int *slot) {
    s->opaque = slot;
    s->io_close2 = cff_io_close_keeping_error;
}

// MARK: files a muxer writes, made whole before they appear
/// Files the muxer opens for writing (an HLS init section, each segment) are gathered in memory
/// and handed whole to `finished` when the muxer closes them; it writes them durably under
/// their final name (or drops them: see `DurableFiles`).
/// `error` is first: the struct is also the error slot of `cff_io_close_keeping_error`.
#define CFF_DURABLE_SLOTS 8
typedef int (*cff_file_finished)(void *owner, const char *url, const uint8_t *data, int size);
typedef struct cff_durable_io {
    int error;
    cff_file_finished finished;
    void *owner;
    AVIOContext *open[CFF_DURABLE_SLOTS];
    char *urls[CFF_DURABLE_SLOTS];
} cff_durable_io;

static int cff_durable_open(AVFormatContext *s, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    cff_durable_io *io = (cff_durable_io *)s->opaque;
    if (!(flags & AVIO_FLAG_WRITE)) return avio_open2(pb, url, flags, &s->interrupt_callback, options);
    for (int i = 0; i < CFF_DURABLE_SLOTS; i++) {
        if (io->open[i]) continue;
        int opened = avio_open_dyn_buf(pb);
        if (opened < 0) return opened;
        io->open[i] = *pb;
        io->urls[i] = av_strdup(url);
        return io->urls[i] ? 0 : AVERROR(ENOMEM);
    }
    return AVERROR(EMFILE);
}

static int cff_durable_close(AVFormatContext *s, AVIOContext *pb) {
    cff_durable_io *io = (cff_durable_io *)s->opaque;
    for (int i = 0; i < CFF_DURABLE_SLOTS; i++) {
        if (io->open[i] != pb) continue;
        uint8_t *data = NULL;
        int size = avio_close_dyn_buf(pb, &data);
        int result = io->finished(io->owner, io->urls[i], data, size);
        av_free(data);
        av_freep(&io->urls[i]);
        io->open[i] = NULL;
        if (result < 0 && io->error == 0) io->error = result;
        return result;
    }
    return cff_io_close_keeping_error(s, pb);
}

/// Routes the muxer's file opens and closes (and its nested muxers', which copy these) through
/// `cff_durable_open`/`cff_durable_close`.
static inline void cff_durable_files(AVFormatContext *s, cff_durable_io *io) {
    s->opaque = io;
    s->io_open = cff_durable_open;
    s->io_close2 = cff_durable_close;
}

/// Frees what an aborted muxer left gathered.
static inline void cff_durable_release(cff_durable_io *io) {
    for (int i = 0; i < CFF_DURABLE_SLOTS; i++) {
        if (!io->open[i]) continue;
        uint8_t *data = NULL;
        avio_close_dyn_buf(io->open[i], &data);
        av_free(data);
        av_freep(&io->urls[i]);
        io->open[i] = NULL;
    }
}

// MARK: time
static inline int64_t cff_nopts(void) { return AV_NOPTS_VALUE; }
static inline AVRational cff_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline int64_t cff_time_base(void) { return AV_TIME_BASE; }

// MARK: flags that are expressions rather than literals
static inline int cff_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int cff_fmt_nofile(void) { return AVFMT_NOFILE; }
static inline int cff_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int cff_pkt_flag_discard(void) { return AV_PKT_FLAG_DISCARD; }
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

// MARK: reading one open file descriptor (a custom AVIOContext)
/// What the read and seek callbacks need: the descriptor, the position and the size fixed when
/// the file was validated (nothing past it is read, even if the file grows).
typedef struct {
    int fd;
    int64_t pos;
    int64_t size;
} cff_fd_source;

static inline int cff_fd_read(void *opaque, uint8_t *buf, int size) {
    cff_fd_source *s = (cff_fd_source *)opaque;
    if (s->pos >= s->size) return AVERROR_EOF;
    if ((int64_t)size > s->size - s->pos) size = (int)(s->size - s->pos);
    ssize_t n;
    do { n = pread(s->fd, buf, (size_t)size, s->pos); } while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    s->pos += n;
    return (int)n;
}

static inline int64_t cff_fd_seek(void *opaque, int64_t offset, int whence) {
    cff_fd_source *s = (cff_fd_source *)opaque;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return s->size;
    case SEEK_SET: break;
    case SEEK_CUR: offset += s->pos; break;
    case SEEK_END: offset += s->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset < 0) return AVERROR(EINVAL);
    s->pos = offset;
    return offset;
}

/// A read-only AVIOContext over `s` with its own buffer; free it with cff_fd_avio_free.
static inline AVIOContext *cff_fd_avio_alloc(cff_fd_source *s) {
    const int size = 64 * 1024;
    unsigned char *buffer = av_malloc(size);
    if (!buffer) return NULL;
    AVIOContext *pb = avio_alloc_context(buffer, size, 0, s, cff_fd_read, NULL, cff_fd_seek);
    if (!pb) av_free(buffer);
    return pb;
}

/// Frees an AVIOContext from cff_fd_avio_alloc and its (possibly reallocated) buffer.
static inline void cff_fd_avio_free(AVIOContext **pb) {
    if (*pb) av_freep(&(*pb)->buffer);
    avio_context_free(pb);
}

static inline int cff_refuse_io_open(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                                     AVDictionary **options) {
    (void)s; (void)pb; (void)url; (void)flags; (void)options;
    return AVERROR(EPERM);
}

/// Makes every attempt of a demuxer to open another input (a playlist entry, a reference) fail.
static inline void cff_forbid_nested_inputs(AVFormatContext *s) {
    s->io_open = cff_refuse_io_open;
    s->flags |= AVFMT_FLAG_CUSTOM_IO;
}

#endif
