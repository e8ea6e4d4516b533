internal import CFFmpeg

/// Opens the encoders a plan calls for, configured exactly as the plan says.
enum EncoderFactory {
    /// The encoder of one rung, in its codec (see ``h264(_:plan:threads:)``, ``hevc(_:plan:threads:)``,
    /// ``av1(_:plan:threads:)``): capped (AV1: uncapped) CRF at the rung's size, the plan's frame
    /// rate and keyframe grid without scene-cut keyframes, 8-bit 4:2:0, BT.709 tags.
    static func video(_ rung: TranscodePlan.PlannedRung, plan: TranscodePlan, threads: Int) throws -> Encoder {
        switch rung.codec {
        case .h264: try h264(rung, plan: plan, threads: threads)
        case .hevc: try hevc(rung, plan: plan, threads: threads)
        case .av1: try av1(rung, plan: plan, threads: threads)
        }
    }

    /// libx264: capped CRF, fixed GOP with forced IDRs, High profile at the plan's level.
    private static func h264(_ rung: TranscodePlan.PlannedRung, plan: TranscodePlan, threads: Int) throws -> Encoder {
        let gop = plan.gopFrames
        return try Encoder(codecName: "libx264", options: [
            "preset": rung.encoderPreset ?? plan.encoderPreset,
            "profile": "high",
            "crf": String(rung.crf),
            "forced-idr": "1",
            "x264-params": "keyint=\(gop):min-keyint=\(gop):scenecut=0:open-gop=0"
                + (rung.initialBufferFill.map { ":vbv-init=\($0)" } ?? "")
                + (rung.x264Params.map { ":" + $0 } ?? ""),
        ]) { ctx in
            configure(ctx, rung: rung, plan: plan, threads: threads)
            ctx.pointee.level = Int32(TranscodePlan.levelIDC(plan.level))
            ctx.pointee.rc_max_rate = Int64(rung.maxrateKbps) * 1000
            ctx.pointee.rc_buffer_size = Int32(rung.bufsizeKbps * 1000)
        }
    }

    /// libx265: capped CRF (VBV), closed GOPs of the plan's length; the plan's forced keyframes
    /// are IDRs (`forced-idr`: without it x265 makes them open I-frames, and a segment could not
    /// start there). Main profile; x265 picks the level from size, rate and cap. Its thread pool
    /// gets the rung's share of the cores.
    private static func hevc(_ rung: TranscodePlan.PlannedRung, plan: TranscodePlan, threads: Int) throws -> Encoder {
        let gop = plan.gopFrames
        var params = "keyint=\(gop):min-keyint=\(gop):scenecut=0:open-gop=0:pools=\(threads):log-level=error"
        if rung.isCapped { params += ":vbv-maxrate=\(rung.maxrateKbps):vbv-bufsize=\(rung.bufsizeKbps)" }
        var options = ["preset": try ladderPreset(rung), "crf": String(rung.crf), "forced-idr": "1",
                       "profile": "main", "x265-params": params]
        if let tune = rung.tune { options["tune"] = tune }
        return try Encoder(codecName: "libx265", options: options) { ctx in
            configure(ctx, rung: rung, plan: plan, threads: threads)
        }
    }

    /// libsvtav1: CRF (SVT-AV1 1.4 cannot cap it), closed GOPs of the plan's length, no scene
    /// detection, the level written out (on auto SVT-AV1 writes level 2.0, which would make
    /// `CODECS` lie). SVT-AV1 1.4 ignores forced keyframes: ``RungEncoder`` starts a fresh encoder
    /// at each keyframe off this one's grid.
    private static func av1(_ rung: TranscodePlan.PlannedRung, plan: TranscodePlan, threads: Int) throws -> Encoder {
        var params = "scd=0:lp=\(threads):level=\(av1Level(width: rung.width, height: rung.height, frameRate: plan.frameRate))"
        if let tune = rung.tune { params += ":tune=\(tune)" }
        return try Encoder(codecName: "libsvtav1", options: [
            "preset": try ladderPreset(rung), "crf": String(rung.crf), "svtav1-params": params,
        ]) { ctx in
            configure(ctx, rung: rung, plan: plan, threads: threads)
        }
    }

    /// An AV1 or HEVC rung's speed preset: its ladder's, which the plan sets on every such rung.
    private static func ladderPreset(_ rung: TranscodePlan.PlannedRung) throws -> String {
        guard let preset = rung.encoderPreset else { throw TranscodeError.internalFailure("\(rung.directoryName): no encoder preset") }
        return preset
    }

    /// The AV1 level (as SVT-AV1 takes it: `40` for 4.0) of a picture size and rate: the smallest
    /// of 3.0, 4.0, 5.0 whose MaxPicSize and MaxDisplayRate hold it (AV1 spec, annex A).
    static func av1Level(width: Int, height: Int, frameRate: Int) -> Int {
        let pixels = width * height, rate = pixels * frameRate
        if pixels <= 665_856, rate <= 19_975_680 { return 30 }
        if pixels <= 2_359_296, rate <= 70_778_880 { return 40 }
        return 50
    }

    /// What every video encoder shares: size, frame rate, square pixels, the keyframe interval,
    /// BT.709 TV-range tags, global headers (the fMP4 init segment carries them).
    private static func configure(_ ctx: UnsafeMutablePointer<AVCodecContext>, rung: TranscodePlan.PlannedRung,
                                  plan: TranscodePlan, threads: Int) {
        ctx.pointee.width = Int32(rung.width)
        ctx.pointee.height = Int32(rung.height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(plan.frameRate))
        ctx.pointee.framerate = AVRational(num: Int32(plan.frameRate), den: 1)
        ctx.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        ctx.pointee.gop_size = Int32(plan.gopFrames)
        ctx.pointee.keyint_min = Int32(plan.gopFrames)
        ctx.pointee.color_primaries = AVCOL_PRI_BT709
        ctx.pointee.color_trc = AVCOL_TRC_BT709
        ctx.pointee.colorspace = AVCOL_SPC_BT709
        ctx.pointee.color_range = AVCOL_RANGE_MPEG
        ctx.pointee.flags |= cff_codec_flag_global_header()
        ctx.pointee.thread_count = Int32(threads)
    }

    /// An AAC-LC encoder of the mix at `kbps`, shared by every rung with that sound bitrate.
    static func audio(_ audio: TranscodePlan.PlannedAudio, kbps: Int) throws -> Encoder {
        try Encoder(codecName: "aac", options: [:]) { ctx in
            ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            ctx.pointee.sample_rate = Int32(audio.sampleRate)
            cff_codec_context_set_default_layout(ctx, Int32(audio.channels))
            ctx.pointee.bit_rate = Int64(kbps) * 1000
            ctx.pointee.time_base = AVRational(num: 1, den: Int32(audio.sampleRate))
            ctx.pointee.profile = FF_PROFILE_AAC_LOW
            ctx.pointee.flags |= cff_codec_flag_global_header()
        }
    }

    /// A one-shot baseline JPEG encoder. MJPEG takes yuv420p only when tagged full range (JPEG).
    static func jpeg(width: Int, height: Int, quality: Int32 = 3) throws -> Encoder {
        try Encoder(codecName: "mjpeg", options: [:]) { ctx in
            ctx.pointee.width = Int32(width)
            ctx.pointee.height = Int32(height)
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.color_range = AVCOL_RANGE_JPEG
            ctx.pointee.time_base = AVRational(num: 1, den: 1)
            ctx.pointee.flags |= AV_CODEC_FLAG_QSCALE
            ctx.pointee.global_quality = quality * FF_QP2LAMBDA
        }
    }

    /// An animated WebP encoder for frames like `frame`, `timeBase` apart, at `quality` (0–100).
    static func webp(like frame: Frame, timeBase: AVRational, quality: Int) throws -> Encoder {
        let first = frame.pointer.pointee
        return try Encoder(codecName: "libwebp_anim", options: ["quality": "\(quality)"]) { ctx in
            ctx.pointee.width = first.width
            ctx.pointee.height = first.height
            ctx.pointee.pix_fmt = AVPixelFormat(rawValue: first.format)
            ctx.pointee.time_base = timeBase
        }
    }

    /// RFC 6381 codec string of a rung's video from its extradata (an encoder's or a copied
    /// stream's): H.264 from avcC or Annex B, or High@4.1 when it cannot be read; HEVC from hvcC or
    /// its VPS/SPS; AV1 from av1C or its sequence header. Nil when HEVC's or AV1's cannot be read.
    static func codecString(_ codec: VideoCodec, extradata: [UInt8]) -> String? {
        switch codec {
        case .h264: CodecString.avc(extradata) ?? "avc1.640029"
        case .hevc: CodecString.hevc(extradata)
        case .av1: CodecString.av1(extradata)
        }
    }
}
