import Foundation

/// The ladder a plan encodes: H.264 rungs fitted to the source, the other codecs' beside them.
extension TranscodePlan {
    /// The other codecs' rungs, ladder by ladder in the preset's order: each at the size, sound and
    /// name of the planned H.264 rung made from the preset rung it names (none where that rung is
    /// not planned: the source is smaller).
    static func codecRungs(_ ladders: [CodecLadder], h264: [PlannedRung], presetRungs: [Preset.Rung]) -> [PlannedRung] {
        ladders.flatMap { ladder in
            ladder.rungs.compactMap { rung -> PlannedRung? in
                guard let index = presetRungs.firstIndex(where: { $0.name == rung.name }), index < h264.count else { return nil }
                var planned = h264[index]
                planned.codec = ladder.codec
                planned.crf = rung.crf
                planned.maxrateKbps = rung.maxrateKbps ?? 0
                planned.bufsizeKbps = rung.bufsizeKbps ?? 0
                planned.initialBufferFill = nil
                planned.encoderPreset = rung.encoderPreset ?? ladder.encoderPreset
                planned.x264Params = nil
                planned.tune = ladder.tune
                return planned
            }
        }
    }

    /// The rungs for an upright `width`×`height` source: preset rungs up to the source's short
    /// side, plus one rung at the source's own size when it falls between two preset rungs and
    /// is at least 1.25× the rung below (a 362p source gets 360p only, a 540p one 360p + 540p). Never
    /// upscales; the lowest rung is always produced (at the source size when that is smaller).
    static func ladder(width: Int, height: Int, rungs: [Preset.Rung], audioKbps: Int) -> [PlannedRung] {
        let sourceShort = even(min(width, height))
        var planned: [PlannedRung] = []
        for rung in rungs {
            let short = min(rung.shortSide, sourceShort)
            // A rung at the source's own size only when it is clearly above the previous one.
            if let last = planned.last, Double(short) < Double(min(last.width, last.height)) * 1.25 { break }
            let size = fit(width: width, height: height, shortSide: short)
            let name = short == rung.shortSide ? rung.name : "\(short)p"
            planned.append(PlannedRung(name: name, width: size.width, height: size.height, crf: rung.crf,
                                       maxrateKbps: rung.maxrateKbps, bufsizeKbps: rung.bufsizeKbps,
                                       audioBitrateKbps: rung.audioBitrateKbps ?? audioKbps, initialBufferFill: nil,
                                       encoderPreset: rung.encoderPreset, x264Params: rung.x264Params))
            if short < rung.shortSide { break }
        }
        return planned
    }

    /// Scales `width`×`height` so its short side is `shortSide`, both sides even.
    static func fit(width: Int, height: Int, shortSide: Int) -> PlannedSize {
        let scale = Double(shortSide) / Double(min(width, height))
        let w = width <= height ? shortSide : even(Int((Double(width) * scale).rounded()))
        let h = width <= height ? even(Int((Double(height) * scale).rounded())) : shortSide
        return PlannedSize(width: max(2, w), height: max(2, h))
    }

    static func even(_ value: Int) -> Int { max(2, value - value % 2) }
}
