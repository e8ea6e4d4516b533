internal import CFFmpeg

/// Reads a file's stream layout without decoding it.
public enum MediaProbe {
    /// The stream layout from the headers; for H.264 video, also a scan of its packets
    /// (``VideoPacketScan``), which reads the file once more without decoding it.
    public static func probe(_ file: SourceFile) throws -> SourceProbe {
        let input = try InputContext(file: file)
        var probe = input.probe()
        if probe.video?.codec == "h264", let index = input.bestStream(AVMEDIA_TYPE_VIDEO) {
            probe.video?.packets = input.scanH264(stream: index)
        }
        return probe
    }
}

extension InputContext {
    /// Copies the stream layout out as values.
    func probe() -> SourceProbe {
        let fmt = format.pointee
        let duration = fmt.duration == cff_nopts() ? 0 : Double(fmt.duration) / Double(cff_time_base())
        let videoIndex = bestStream(AVMEDIA_TYPE_VIDEO), audioIndex = bestStream(AVMEDIA_TYPE_AUDIO)
        return SourceProbe(
            path: path,
            container: fmt.iformat.map { String(cString: $0.pointee.name) } ?? "unknown",
            durationSeconds: max(0, duration),
            sizeBytes: fileSize,
            streamCount: streamCount,
            video: videoIndex.map { videoInfo(at: $0) },
            audio: audioIndex.map { audioInfo(at: $0) }
        )
    }

    private func videoInfo(at index: Int) -> VideoStreamInfo {
        let st = stream(index)
        let par = st.pointee.codecpar.pointee
        let rate = av_guess_frame_rate(format, st, nil)
        let pixelFormat = AVPixelFormat(rawValue: par.format)
        let descriptor = av_pix_fmt_desc_get(pixelFormat)
        return VideoStreamInfo(
            codec: String(cString: avcodec_get_name(par.codec_id)),
            width: Int(par.width),
            height: Int(par.height),
            rotation: VideoStreamInfo.clockwiseRotation(fromDisplayMatrixDegrees: cff_stream_rotation(st)),
            frameRate: rate.den > 0 ? av_q2d(rate) : 0,
            pixelFormat: av_get_pix_fmt_name(pixelFormat).map { String(cString: $0) } ?? "unknown",
            bitDepth: descriptor.map { Int($0.pointee.comp.0.depth) } ?? 8,
            colorTransfer: String(cString: av_color_transfer_name(par.color_trc)),
            colorPrimaries: String(cString: av_color_primaries_name(par.color_primaries)),
            colorSpace: String(cString: av_color_space_name(par.color_space)),
            dolbyVision: cff_stream_has_dovi(st) != 0,
            colorRange: String(cString: av_color_range_name(par.color_range)),
            pixelAspect: par.sample_aspect_ratio.num > 0 && par.sample_aspect_ratio.den > 0 ? av_q2d(par.sample_aspect_ratio) : nil,
            interlaced: par.field_order == AV_FIELD_UNKNOWN ? nil : par.field_order != AV_FIELD_PROGRESSIVE,
            profile: avcodec_profile_name(par.codec_id, par.profile).map { String(cString: $0) },
            level: par.level > 0 ? Int(par.level) : nil
        )
    }

    private func audioInfo(at index: Int) -> AudioStreamInfo {
        let par = stream(index).pointee.codecpar!
        return AudioStreamInfo(
            codec: String(cString: avcodec_get_name(par.pointee.codec_id)),
            sampleRate: Int(par.pointee.sample_rate),
            channels: Int(cff_codecpar_channels(par))
        )
    }
}
