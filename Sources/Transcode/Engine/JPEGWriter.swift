import Foundation
internal import CFFmpeg

/// Encodes single frames to JPEG files.
enum JPEGWriter {
    /// Encodes `frame` (full-range yuvj420p) to `path`; returns the byte count.
    @discardableResult
    static func write(_ frame: Frame, to path: String) throws -> Int {
        let encoder = try EncoderFactory.jpeg(width: Int(frame.pointer.pointee.width), height: Int(frame.pointer.pointee.height))
        frame.pointer.pointee.pts = 0
        frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        try encoder.send(frame)
        try encoder.send(nil)
        let packet = Packet()
        guard try encoder.receive(into: packet) == .ready else {
            throw TranscodeError.internalFailure("JPEG encoder returned nothing for \(path)")
        }
        let bytes = Data(bytes: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
        guard FileManager.default.createFile(atPath: path, contents: bytes) else {
            throw TranscodeError.outputFailed(path: path, reason: "cannot create file")
        }
        return bytes.count
    }
}
