internal import CFFmpeg

/// Opens the encoders a plan calls for, configured exactly as the plan says.
enum EncoderFactory {
    /// libx264 for one rung: capped CRF, fixed GOP with forced IDRs, no scene-cut keyframes,
    /// High profile at the plan's level, 8-bit 4:2:0, BT.709 tags.
    static func video(_ rung: TranscodePlan.PlannedRung, plan: TranscodePlan, threads: Int) throws -> Encoder {
        let gop = plan.gopFrames
        let level = Int32(TranscodePlan.levelIDC(plan.level))
        return try Encoder(codecName: "libx264", options: [
            "preset": rung.encoderPreset ?? plan.encoderPreset,
            "profile": "high",
            "crf": String(rung.crf),
            "forced-idr": "1",
            "x264-params": "keyint=\(gop):min-keyint=\(gop):scenecut=0:open-gop=0"
                + (rung.initialBufferFill.map { ":vbv-init=\($0)" } ?? "")
                + (rung.x264Params.map { ":" + $0 } ?? ""),
        ]) { ctx in
            ctx.pointee.width = Int32(rung.width)
            ctx.pointee.height = Int32(rung.height)
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.time_base = AVRational(num: 1, den: Int32(plan.frameRate))
            ctx.pointee.framerate = AVRational(num: Int32(plan.frameRate), den: 1)
            ctx.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
            ctx.pointee.gop_size = Int32(gop)
            ctx.pointee.keyint_min = Int32(gop)
            ctx.pointee.level = level
            ctx.pointee.rc_max_rate = Int64(rung.maxrateKbps) * 1000
            ctx.pointee.rc_buffer_size = Int32(rung.bufsizeKbps * 1000)
            ctx.pointee.color_primaries = AVCOL_PRI_BT709
            ctx.pointee.color_trc = AVCOL_TRC_BT709
            ctx.pointee.colorspace = AVCOL_SPC_BT709
            ctx.pointee.color_range = AVCOL_RANGE_MPEG
            ctx.pointee.flags |= cff_codec_flag_global_header()
            ctx.pointee.thread_count = Int32(threads)
        }
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

    /// RFC 6381 codec string of H.264 from its extradata (avcC or Annex B; an encoder's or a copied
    /// stream's), or High@4.1 when it cannot be read.
    static func codecString(avcC: [UInt8]) -> String {
        CodecString.avc(avcC) ?? "avc1.640029"
    }
}
