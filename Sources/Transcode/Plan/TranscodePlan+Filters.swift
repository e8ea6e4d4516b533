/// The libavfilter graph descriptions the plan implies. Labels: inputs `in0`…, outputs `out0`….
extension TranscodePlan {
    /// Sink order in ``videoFilterGraph``: one per rung, then the poster and storyboard branches.
    public var posterSinkIndex: Int { rungs.count }
    public var storyboardSinkIndex: Int { rungs.count + 1 }

    /// Normalise once (constant frame rate, upright, SDR BT.709), then fan out to every rung and
    /// thumbnail. Rung scalers only resize (and fix the range), so a rung at the normalised size is
    /// a pass-through.
    public var videoFilterGraph: String {
        var normalize = ["fps=fps=\(frameRate):start_time=0"]
        switch rotation {
        case 90: normalize.append("transpose=clock")
        case 180: normalize.append("hflip,vflip")
        case 270: normalize.append("transpose=cclock")
        default: break
        }
        switch toneMapFrom {
        case .sdr:
            // Only a source in another matrix pays for a conversion, and only once (not per rung).
            if sourceColorMatrix != "bt709" {
                normalize.append("scale=in_color_matrix=\(sourceColorMatrix):out_color_matrix=bt709")
            }
        case .hlg, .pq:
            let transfer = toneMapFrom == .hlg ? "arib-std-b67" : "smpte2084"
            normalize.append("zscale=tin=\(transfer):min=bt2020nc:pin=bt2020:t=linear:npl=100,format=gbrpf32le,"
                + "zscale=p=bt709,tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv")
        }
        let branches = rungs.count + 2
        let labels = (0..<branches).map { "[v\($0)]" }.joined()
        var graph = "[in0]" + normalize.joined(separator: ",") + ",split=\(branches)\(labels)"
        for (index, rung) in rungs.enumerated() {
            graph += ";[v\(index)]scale=w=\(rung.width):h=\(rung.height):flags=bicubic:out_range=tv,"
                + "format=yuv420p,setparams=range=tv:color_primaries=bt709:color_trc=bt709:colorspace=bt709[out\(index)]"
        }
        let poster = posters[posters.count - 1]
        graph += ";[v\(posterSinkIndex)]fps=fps=1:start_time=0:round=up,scale=w=\(poster.width):h=\(poster.height):out_range=tv,"
            + "format=yuv420p,signalstats[out\(posterSinkIndex)]"
        graph += ";[v\(storyboardSinkIndex)]fps=fps=1/\(storyboard.intervalSeconds):start_time=0:round=up,"
            + "scale=w=\(storyboard.cellWidth):h=\(storyboard.cellHeight):out_range=pc,format=yuv420p,setparams=range=pc,"
            + "tile=layout=\(storyboard.columns)x\(storyboard.rows)[out\(storyboardSinkIndex)]"
        return graph
    }

    /// Audio: resample to the output rate and layout, fill gaps, start at zero, normalise loudness
    /// (`loudnorm`, single pass, EBU R128); silence when the source has none. The graph never ends
    /// by itself (`apad`): the pipeline trims it to the video.
    public var audioFilterGraph: String {
        let format = "aformat=sample_fmts=fltp:sample_rates=\(audio.sampleRate):channel_layouts=stereo"
        if audio.fromSource {
            var chain = ["aresample=\(audio.sampleRate):async=1:first_pts=0", format]
            if let target = audio.loudnessLUFS {
                // loudnorm works at 192 kHz internally; bring it back to the output rate.
                chain += ["loudnorm=I=\(target):TP=\(audio.truePeakDBTP):LRA=11", "aresample=\(audio.sampleRate)", format]
            }
            return "[in0]" + (chain + ["apad"]).joined(separator: ",") + "[out0]"
        }
        return "anullsrc=r=\(audio.sampleRate):cl=stereo,\(format)[out0]"
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
