import Foundation
internal import CFFmpeg

/// One clip's source end of the pipeline: demux → decode → the clip's normalise graphs.
///
/// ``next()`` hands out the clip's normalised video frames (on its own 1/frameRate grid from 0)
/// and sound (48 kHz stereo planar float, gaps filled, so sample position is time), interleaved
/// so that the sound runs ``soundLeadSeconds`` ahead of the video (read by a demuxer of its own,
/// ``ClipSoundReader``); with `forwardsVideoPackets`, also each compressed video packet
/// (timestamps from the clip's start, in the stream's time base) for a passed-through top rung.
/// Each packet is decoded once; the file is closed when the reader goes away.
final class ClipReader {
    enum Output {
        case video(Frame)
        case audio(Frame)
        case videoPacket(Packet)
    }

    /// How far the sound is read ahead of the video: past the mix's loudness lookahead
    /// (`loudnorm` holds 3 s), so the first segments' sound is ready when their video is.
    static let soundLeadSeconds = 3.5

    private let plan: TranscodePlan
    private let clip: PlannedClip
    private let input: InputContext
    private let videoStream: Int
    private let videoDecoder: Decoder
    private var videoGraph: FilterGraph?
    private let sound: ClipSoundReader?

    private let packet = Packet()
    private let decoded = Frame()
    private let output = Frame()
    private let videoOffset: Int64
    private var lastVideoEnd: Int64 = 0
    /// End of the last frame, counting a frame without a duration as one frame interval.
    private var lastFrameEnd: Int64 = 0
    private let frameTicks: Int64
    private let soundLead: Int64
    private var atEndOfFile = false
    private var videoDone = false
    private var audioDone: Bool
    private var framesDecoded = 0
    private var framesOut = 0
    private var samplesOut: Int64 = 0
    private var damaged = 0
    private let forwardsVideoPackets: Bool
    private var forwarded: Packet?

    var path: String { clip.source.path }

    /// The clip's length as decoded (from its trim start to the end of its last frame, at most its
    /// trim window): what it contributes to the joined duration before rounding to whole frames.
    var decodedSeconds: Double {
        let decoded = Double(lastFrameEnd) * av_q2d(videoDecoder.timeBase)
        guard let end = clip.endFrame else { return decoded }
        return min(decoded, Double(end - clip.startFrame) / Double(plan.frameRate))
    }

    init(clip: PlannedClip, file: SourceFile, plan: TranscodePlan, forwardsVideoPackets: Bool = false) throws {
        self.plan = plan
        self.clip = clip
        self.forwardsVideoPackets = forwardsVideoPackets
        let input = try InputContext(file: file)
        guard let video = input.bestStream(AVMEDIA_TYPE_VIDEO) else { throw TranscodeError.noVideoStream(path: input.path) }
        input.readOnly(video)
        videoStream = video
        videoDecoder = try Decoder(input: input, streamIndex: video)
        sound = clip.usesSound ? try ClipSoundReader(clip: clip, file: file, plan: plan) : nil
        audioDone = sound == nil
        soundLead = Int64(Self.soundLeadSeconds * Double(plan.audio.sampleRate))
        // Every stream is shifted by the same amount — the presentation start plus the trim start —
        // so both begin at zero at the cut and sync holds; the graphs drop what comes before it.
        let trim = Double(clip.startFrame) / Double(plan.frameRate)
        let start = input.startTime &+ Int64((trim * Double(cff_time_base())).rounded())
        videoOffset = av_rescale_q(start, cff_time_base_q(), videoDecoder.timeBase)
        let rate = av_guess_frame_rate(input.format, input.stream(video), nil)
        frameTicks = rate.num > 0 && rate.den > 0 ? max(1, av_rescale_q(1, av_inv_q(rate), videoDecoder.timeBase)) : 1
        // A clip trimmed at its start is read from the key frame before the cut, not decoded from
        // its beginning.
        if clip.startFrame > 0 { input.seek(toKeyFrameBefore: trim) }
        self.input = input
    }

    /// The next normalised frame, or nil when the clip is over: its video has ended and its
    /// sound covers the video (or has ended too).
    func next() throws -> Output? {
        while true {
            if let packet = forwarded {
                forwarded = nil
                return .videoPacket(packet)
            }
            // A trimmed clip ends early; its sound is read on only while it is behind the video.
            if videoDone, audioDone || samplesOut >= plan.samples(forFrames: framesOut) { return nil }
            if !audioDone, samplesOut < plan.samples(forFrames: framesOut) + soundLead {
                if let frame = try sound?.next() {
                    samplesOut += Int64(frame.sampleCount)
                    return .audio(frame)
                }
                audioDone = true
                continue
            }
            if !videoDone, let graph = videoGraph {
                switch try graph.pull(0, into: output) {
                case .ready:
                    framesOut += 1
                    return .video(output)
                case .endOfStream: videoDone = true
                case .needsInput: videoDone = atEndOfFile
                }
            }
            if videoDone { continue }
            if atEndOfFile {
                videoDone = true  // no frame ever reached a graph
                continue
            }
            try readPacket()
        }
    }

    private func readPacket() throws {
        guard try input.read(into: packet) else {
            atEndOfFile = true
            try videoDecoder.send(nil)
            try receiveVideo()
            if let videoGraph { try videoGraph.close(at: lastVideoEnd) }
            guard framesDecoded > 0 else {
                throw TranscodeError.corruptInput(path: path, detail: "no decodable video frames (\(damaged) damaged packets)")
            }
            return
        }
        guard packet.streamIndex == videoStream, !videoDone else { return }
        if forwardsVideoPackets { forwarded = shiftedCopy(of: packet) }
        if !(try videoDecoder.send(packet)) { damaged += 1 }
        try receiveVideo()
    }

    private func shiftedCopy(of packet: Packet) -> Packet {
        let copy = packet.reference()
        copy.shiftTimestamps(by: videoOffset)
        return copy
    }

    private func receiveVideo() throws {
        while try videoDecoder.receive(into: decoded, damaged: &damaged) == .ready {
            guard let timestamp = decoded.bestEffortTimestamp else { damaged += 1; continue }
            // Headers can lie: the decoded picture is what counts against the pixel limit.
            try plan.admission.checkDecodedPicture(width: decoded.width, height: decoded.height, path: path)
            decoded.pts = timestamp &- videoOffset
            decoded.forceKeyframe(false)
            // Wrapping: a hostile timestamp near the end of the range must not trap.
            lastVideoEnd = max(lastVideoEnd, decoded.pts &+ max(decoded.duration, 1))
            lastFrameEnd = max(lastFrameEnd, decoded.pts &+ (decoded.duration > 0 ? decoded.duration : frameTicks))
            if videoGraph == nil { videoGraph = try makeVideoGraph(like: decoded) }
            try videoGraph!.push(decoded)
            framesDecoded += 1
        }
    }

    private func makeVideoGraph(like frame: Frame) throws -> FilterGraph {
        try FilterGraph(description: plan.clipVideoFilter(clip),
                        sources: [.video(like: frame, timeBase: videoDecoder.timeBase)], sinks: ["buffersink"])
    }
}
