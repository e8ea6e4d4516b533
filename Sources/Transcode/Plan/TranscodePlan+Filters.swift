/// The libavfilter graph descriptions the plan implies. Labels: inputs `in0`…, outputs `out0`….
///
/// Video flows through two graphs: one per clip (``clipVideoFilter(_:)``: constant frame rate,
/// trim, upright, SDR BT.709, fitted to the output frame), then one shared fan-out
/// (``videoFilterGraph``) to every rung and thumbnail. Audio likewise: one per clip
/// (``clipAudioFilter(_:)``), the music (``musicFilter``), then the mix (``audioFilterGraph``).
extension TranscodePlan {
    /// Sink order in ``videoFilterGraph``: one per rung size (``fanOutSizes``), then the poster
    /// candidates, the storyboard, (when planned) the preview, and last the poster candidates' statistics.
    public var posterSinkIndex: Int { fanOutSizes.count }
    public var storyboardSinkIndex: Int { fanOutSizes.count + 1 }
    public var previewSinkIndex: Int? { preview == nil ? nil : fanOutSizes.count + 2 }
    public var posterStatisticsSinkIndex: Int { fanOutSizes.count + (preview == nil ? 2 : 3) }
    public var videoSinkCount: Int { posterStatisticsSinkIndex + 1 }

    /// Poster candidates are every `posterStep`-th timeline frame, from the middle of the first
    /// step: at least eight over any clip however short, at least one a second over a long one
    /// (one a second when the length is unknown).
    public var posterStep: Int {
        let frames = Int((estimatedSeconds * Double(frameRate)).rounded(.down))
        let candidates = max(8, Int(estimatedSeconds.rounded(.up)))
        return frames > 0 ? max(1, min(frameRate, frames / candidates)) : frameRate
    }

    private var sampleFormat: String {
        "aformat=sample_fmts=fltp:sample_rates=\(audio.sampleRate):channel_layouts=stereo"
    }

    /// Normalises one clip: CFR on its own timeline from its trim start (the reader shifts
    /// timestamps there), cut at its trim end on that frame grid, upright, SDR BT.709 and, when
    /// clips are joined, fitted to the output frame as 8-bit 4:2:0.
    public func clipVideoFilter(_ clip: PlannedClip) -> String {
        // The reader shifts timestamps so the trim start is 0: `fps` drops what comes before it.
        var chain = ["fps=fps=\(frameRate):start_time=0"]
        if let end = clip.endFrame {
            // After `fps` the time base is 1/frameRate, so pts are frame numbers: an exact cut.
            chain.append("trim=end_pts=\(end - clip.startFrame)")
        }
        switch clip.rotation {
        case 90: chain.append("transpose=clock")
        case 180: chain.append("hflip,vflip")
        case 270: chain.append("transpose=cclock")
        default: break
        }
        switch clip.toneMapFrom {
        case .sdr:
            // Only a source in another matrix pays for a conversion, and only once (not per rung).
            if clip.sourceColorMatrix != "bt709" { chain.append(Self.matrixConversion(clip.sourceColorMatrix, of: clip.source.video)) }
        case .hlg, .pq:
            let transfer = clip.toneMapFrom == .hlg ? "arib-std-b67" : "smpte2084"
            chain.append("zscale=tin=\(transfer):min=bt2020nc:pin=bt2020:t=linear:npl=100,format=gbrpf32le,"
                + "zscale=p=bt709,tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv")
        }
        if clip.conform {
            let w = displayWidth, h = displayHeight
            switch clipFit {
            case .fit:
                chain.append("scale=w=\(w):h=\(h):force_original_aspect_ratio=decrease:force_divisible_by=2:out_range=tv,"
                    + "pad=w=\(w):h=\(h):x=(ow-iw)/2:y=(oh-ih)/2:color=black")
            case .fill:
                chain.append("scale=w=\(w):h=\(h):force_original_aspect_ratio=increase:out_range=tv,crop=w=\(w):h=\(h)")
            }
            chain.append("setsar=1,format=yuv420p")
        }
        return "[in0]" + chain.joined(separator: ",") + "[out0]"
    }

    /// Fans the normalised timeline out to every rung and thumbnail, as a cascade: the largest
    /// encoded rung is scaled from the timeline, each smaller one from the next larger rung's
    /// frames (and the preview from the smallest rung that covers it), which halves the scaling
    /// work of the small rungs against scaling each from the source. Rung scalers only resize (and
    /// bring a single clip's full-range video to TV range, once, at the largest rung): a rung at
    /// the frame's own size is a pass-through whenever the frame already is 4:2:0 TV range.
    public var videoFilterGraph: String {
        let rungs = fanOutSizes
        let range = clips.contains(where: \.reachesFanOutFullRange) ? ":out_range=tv" : ""
        let previewFeed = preview.flatMap { p in rungs.firstIndex { $0.width >= p.width && $0.height >= p.height } }
        var sourceTaps = 0
        func tap() -> String { sourceTaps += 1; return "[s\(sourceTaps - 1)]" }
        var chains: [String] = []
        for index in rungs.indices.reversed() {
            let rung = rungs[index]
            let input = index == rungs.count - 1 ? tap() : "[c\(index)]"
            var consumers = ["[out\(index)]"]
            if index > 0 { consumers.append("[c\(index - 1)]") }
            if previewFeed == index { consumers.append("[p]") }
            chains.append(input + "scale=w=\(rung.width):h=\(rung.height):flags=bicubic\(index == rungs.count - 1 ? range : ""),"
                + "format=yuv420p,setparams=range=tv:color_primaries=bt709:color_trc=bt709:colorspace=bt709"
                + (consumers.count == 1 ? consumers[0] : ",split=\(consumers.count)" + consumers.joined()))
        }
        // Poster candidates are kept at the largest poster's size (8-bit 4:2:0, whatever the
        // timeline is); `signalstats` scores a copy a quarter as wide, which ranks them alike at
        // a sixteenth of the cost (it computes hue for every pixel).
        let poster = posters[posters.count - 1]
        let scored = (width: max(2, poster.width / 4 / 2 * 2), height: max(2, poster.height / 4 / 2 * 2))
        chains.append(tap() + "select='eq(mod(n,\(posterStep)),\(posterStep / 2))',scale=w=\(poster.width):h=\(poster.height):out_range=tv,"
            + "format=yuv420p,split=2[out\(posterSinkIndex)][ps]")
        chains.append("[ps]scale=w=\(scored.width):h=\(scored.height):out_range=tv,format=yuv420p,signalstats[out\(posterStatisticsSinkIndex)]")
        chains.append(tap() + "fps=fps=1/\(storyboard.intervalSeconds):start_time=0:round=up,"
            + "scale=w=\(storyboard.cellWidth):h=\(storyboard.cellHeight):out_range=pc,format=yuv420p,setparams=range=pc,"
            + "tile=layout=\(storyboard.columns)x\(storyboard.rows)[out\(storyboardSinkIndex)]")
        if let preview, let index = previewSinkIndex {
            // `scdet`'s mafd (mean absolute difference from the previous preview frame) is the
            // activity measure: SIMD sums, where `signalstats` cost 45× as much (it also computes hue).
            let input = previewFeed == nil ? tap() : "[p]"
            chains.append(input + "fps=fps=\(preview.fps):start_time=0:round=up,"
                + "scale=w=\(preview.width):h=\(preview.height):flags=bicubic\(previewFeed == nil ? range : ""),format=yuv420p,scdet[out\(index)]")
        }
        let taps = (0..<sourceTaps).map { "[s\($0)]" }.joined()
        return (["[in0]split=\(sourceTaps)\(taps)"] + chains).joined(separator: ";")
    }

    /// Converts SDR video in another YUV matrix to BT.709. In YUV (`colorspace`, `fast=1`: the
    /// matrix alone, as before, without swscale's trip through RGB: 0.3 CPU-s instead of 2.0 on
    /// 20 s of 1080p) for the limited-range 4:2:0/4:2:2/4:4:4 formats `colorspace` takes;
    /// through swscale for anything else (full range, other formats).
    static func matrixConversion(_ matrix: String, of video: VideoStreamInfo?) -> String {
        let yuv: Set<String> = ["yuv420p", "yuv422p", "yuv444p", "yuv420p10le", "yuv422p10le", "yuv444p10le",
                                "yuv420p12le", "yuv422p12le", "yuv444p12le"]
        let spaces = ["bt601": "bt470bg", "smpte240m": "smpte240m", "fcc": "fcc", "bt2020nc": "bt2020nc"]
        if let video, !video.isFullRange, yuv.contains(video.pixelFormat), let space = spaces[matrix] {
            return "colorspace=ispace=\(space):iprimaries=bt709:itrc=bt709:irange=tv:"
                + "space=bt709:primaries=bt709:trc=bt709:range=tv:fast=1"
        }
        return "scale=in_color_matrix=\(matrix == "bt2020nc" ? "bt2020" : matrix):out_color_matrix=bt709"
    }

    /// One clip's sound: resampled to the output rate and layout with gaps filled so sample
    /// position is time from the trim start, cut at the same instant as the clip's video.
    public func clipAudioFilter(_ clip: PlannedClip) -> String {
        // Shifted like the video: `first_pts=0` drops what comes before the trim start.
        var chain = ["aresample=\(audio.sampleRate):async=1:first_pts=0", sampleFormat]
        if let end = clip.endFrame {
            chain.append("atrim=end_pts=\(samples(forFrames: end - clip.startFrame))")
        }
        return "[in0]" + chain.joined(separator: ",") + "[out0]"
    }

    /// The sound track from its offset, at the output rate and layout.
    public var musicFilter: String? {
        guard let music else { return nil }
        var chain = ["aresample=\(audio.sampleRate):async=1:first_pts=0", sampleFormat]
        let skip = Int64((music.offsetSeconds * Double(audio.sampleRate)).rounded())
        if skip > 0 { chain.append("atrim=start_pts=\(skip),asetpts=PTS-STARTPTS") }
        return "[in0]" + chain.joined(separator: ",") + "[out0]"
    }

    /// Inputs of ``audioFilterGraph``, in label order: the clips' sound, then the music.
    public var mixInputs: (clipSound: Int?, music: Int?) {
        let clip = audio.clipSound ? 0 : nil
        let music = music == nil ? nil : (audio.clipSound ? 1 : 0)
        return (clip, music)
    }

    /// The final mix: clip sound and music at their gains, summed (`amerge` + `pan`: both inputs
    /// always cover the same span, and unlike `amix` nothing queued is dropped at the end), then
    /// loudness normalisation (`loudnorm`, single pass, EBU R128). Silence when there is no
    /// sound at all. The graph never ends by itself (`apad`): the pipeline trims it to the video.
    public var audioFilterGraph: String {
        var tail = [String]()
        if let target = audio.loudnessLUFS {
            // loudnorm works at 192 kHz internally; bring it back to the output rate. Its ceiling sits
            // 0.5 dB under the preset's, the headroom AAC's own overshoot takes (measured: ~0.4 dB).
            tail += ["loudnorm=I=\(target):TP=\(audio.truePeakDBTP - 0.5):LRA=11", "aresample=\(audio.sampleRate)", sampleFormat]
        }
        tail.append("apad")
        let inputs = mixInputs
        func gain(_ db: Double) -> String { "volume=volume=\(db)dB" }
        switch (inputs.clipSound, inputs.music, music) {
        case (let clip?, let track?, let music?):
            return "[in\(clip)]\(gain(music.clipGainDB))[c];[in\(track)]\(gain(music.musicGainDB))[m];"
                + "[c][m]amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3,\(sampleFormat),"
                + tail.joined(separator: ",") + "[out0]"
        case (nil, let track?, let music?):
            return "[in\(track)]" + ([gain(music.musicGainDB)] + tail).joined(separator: ",") + "[out0]"
        case (let clip?, _, _):
            return "[in\(clip)]" + tail.joined(separator: ",") + "[out0]"
        default:
            return "anullsrc=r=\(audio.sampleRate):cl=stereo,\(sampleFormat)[out0]"
        }
    }

    /// Fades the last `samples` samples of the music out to silence.
    func musicFadeFilter(samples: Int64) -> String {
        "[in0]afade=type=out:start_sample=0:nb_samples=\(max(1, samples)),\(sampleFormat)[out0]"
    }

    /// Scales the chosen poster frame to every poster size as full-range JPEG input.
    public var posterFilterGraph: String {
        let labels = posters.indices.map { "[p\($0)]" }.joined()
        var graph = "[in0]split=\(posters.count)\(labels)"
        for (index, size) in posters.enumerated() {
            graph += ";[p\(index)]scale=w=\(size.width):h=\(size.height):out_range=pc,format=yuv420p,setparams=range=pc[out\(index)]"
        }
        return graph
    }
}
