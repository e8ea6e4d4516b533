import Foundation
internal import CFFmpeg

/// Encodes frames as an animated WebP that loops forever (libavcodec's `libwebp_anim`, which
/// emits the whole file as one packet; avformat's `webp` muxer writes it with `loop=0`).
enum WebPWriter {
    struct Written {
        var width: Int
        var height: Int
        var bytes: Int
        /// Frames in the file: libwebp merges identical neighbours into one longer frame.
        var frames: Int
        /// Rate the loop was sampled at (halved each time frames were dropped to fit).
        var fps: Double
        var durationSeconds: Double
    }

    /// Qualities tried in turn until the file fits; then every other frame is dropped (at the
    /// lowest quality) until it does. `maxBytes` is a hard limit.
    static let qualities = [75, 55, 35, 15, 0]

    /// Writes `frames` (yuv420p, `fps` apart) to `path` in at most `maxBytes`.
    static func write(_ frames: [Frame], fps: Int, maxBytes: Int, to path: String) throws -> Written {
        var step = 1
        while true {
            let kept = stride(from: 0, to: frames.count, by: step).map { frames[$0] }
            for quality in step == 1 ? qualities : [qualities[qualities.count - 1]] {
                let (encoder, packet) = try encode(kept, timeBase: AVRational(num: Int32(step), den: Int32(fps)), quality: quality)
                guard packet.bytes.count <= maxBytes else { continue }
                var output = try OutputContext(format: "webp", path: path)
                try output.addStream(from: encoder)
                try output.writeHeader(options: ["loop": "0"])
                try output.write(packet, stream: 0, timeBase: encoder.timeBase)
                try output.finish()
                // The muxer may add a header to a still picture: the file itself must fit.
                let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? .max
                guard bytes <= maxBytes else { continue }
                let data = packet.bytes
                return Written(width: kept[0].width, height: kept[0].height,
                               bytes: bytes, frames: max(1, frameChunks(data)), fps: Double(fps) / Double(step),
                               durationSeconds: Double(kept.count * step) / Double(fps))
            }
            guard kept.count > 1 else {
                throw TranscodeError.outputFailed(path: path, reason: "one preview frame is larger than \(maxBytes) bytes")
            }
            step *= 2
        }
    }

    /// Number of `ANMF` (animation frame) chunks in a WebP file; 0 for a still picture.
    static func frameChunks(_ file: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 12, count = 0  // after "RIFF" size "WEBP"
        while offset + 8 <= file.count {
            let size = (0..<4).reduce(0) { $0 | Int(file[offset + 4 + $1]) << (8 * $1) }
            if file[offset] == 0x41, file[offset + 1] == 0x4E, file[offset + 2] == 0x4D, file[offset + 3] == 0x46 { count += 1 }
            offset += 8 + size + size % 2
        }
        return count
    }

    /// The whole animation as one packet, frames `timeBase` apart.
    private static func encode(_ frames: [Frame], timeBase: AVRational, quality: Int) throws -> (Encoder, Packet) {
        let encoder = try EncoderFactory.webp(like: frames[0], timeBase: timeBase, quality: quality)
        for (index, frame) in frames.enumerated() {
            let copy = frame.reference()
            copy.pts = Int64(index)
            copy.forceKeyframe(false)
            try encoder.send(copy)
        }
        try encoder.send(nil)
        let packet = Packet()
        guard try encoder.receive(into: packet) == .ready else {
            throw TranscodeError.internalFailure("libwebp_anim returned nothing")
        }
        return (encoder, packet)
    }
}
