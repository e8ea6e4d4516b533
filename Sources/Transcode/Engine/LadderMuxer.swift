internal import CFFmpeg

/// Writes encoded packets to every output: one fMP4 HLS muxer per rung and the progressive MP4
/// (fed by the top rung's packets). Audio packets are encoded once and written to all of them.
final class LadderMuxer {
    private let plan: TranscodePlan
    private let hls: [OutputContext]
    private let mp4: OutputContext
    private let videoTimeBases: [AVRational]
    private let audioTimeBase: AVRational

    init(plan: TranscodePlan, layout: OutputLayout, videoEncoders: [Encoder], audioEncoder: Encoder) throws {
        self.plan = plan
        hls = try plan.rungs.enumerated().map { index, rung in
            let muxer = try OutputContext(format: "hls", path: layout.playlist(rung))
            try muxer.addStream(from: videoEncoders[index])
            try muxer.addStream(from: audioEncoder)
            return muxer
        }
        mp4 = try OutputContext(format: "mp4", path: layout.mp4)
        try mp4.addStream(from: videoEncoders[videoEncoders.count - 1])
        try mp4.addStream(from: audioEncoder)
        videoTimeBases = videoEncoders.map(\.timeBase)
        audioTimeBase = audioEncoder.timeBase

        for (muxer, rung) in zip(hls, plan.rungs) {
            // Segment cuts are decided by the plan, not by the muxer's clock: only packets that
            // start a planned segment keep their keyframe flag on the way in (see `writeVideo`),
            // and hls_time is shorter than any planned segment, so the muxer cuts at each of them.
            try muxer.writeHeader(options: [
                "hls_time": "0.5",
                "hls_list_size": "0",
                "hls_playlist_type": "vod",
                "hls_segment_type": "fmp4",
                "hls_flags": "independent_segments",
                "hls_segment_filename": layout.segmentPattern(rung),
                "hls_fmp4_init_filename": OutputLayout.initSegmentName,
            ])
        }
        try mp4.writeHeader(options: ["movflags": "+faststart"])
    }

    /// Writes a video packet of rung `index`. Its pts (in 1/frameRate) is the output frame number.
    func writeVideo(_ packet: Packet, rung index: Int) throws {
        let frame = Int(packet.pointer.pointee.pts)
        let clear = packet.isKeyframe && !plan.startsSegment(frame: frame)
        try hls[index].write(packet, stream: 0, timeBase: videoTimeBases[index], clearKeyframe: clear)
        if index == hls.count - 1 {
            try mp4.write(packet, stream: 0, timeBase: videoTimeBases[index])
        }
    }

    func writeAudio(_ packet: Packet) throws {
        for muxer in hls { try muxer.write(packet, stream: 1, timeBase: audioTimeBase) }
        try mp4.write(packet, stream: 1, timeBase: audioTimeBase)
    }

    /// Writes every trailer (playlists, moov with faststart).
    func finish() throws {
        for muxer in hls { try muxer.finish() }
        try mp4.finish()
    }
}
