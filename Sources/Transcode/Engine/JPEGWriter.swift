import Foundation
internal import CFFmpeg

/// Encodes single frames to JPEG files.
enum JPEGWriter {
    /// Encodes `frame` (full-range yuvj420p) to `path`; returns the byte count.
    @discardableResult
    static func write(_ frame: Frame, to path: String) throws -> Int {
        let encoder = try EncoderFactory.jpeg(width: frame.width, height: frame.height)
        frame.pts = 0
        frame.forceKeyframe(false)
        try encoder.send(frame)
        try encoder.send(nil)
        let packet = Packet()
        guard try encoder.receive(into: packet) == .ready else {
            throw TranscodeError.internalFailure("JPEG encoder returned nothing for \(path)")
        }
        let bytes = Data(buffer: packet.bytes)
        do {
            try bytes.write(to: URL(fileURLWithPath: path))
        } catch {
            throw TranscodeError.writeFailed(path, error)
        }
        return bytes.count
    }
}
