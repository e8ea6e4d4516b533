internal import CFFmpeg

/// Owns one `AVFrame`; freed exactly once when the last reference goes away.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() {
        guard let frame = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    /// Drops the frame's buffers so it can be reused.
    func unref() { av_frame_unref(pointer) }

    /// A new frame referencing the same buffers (no pixel copy).
    func reference() -> Frame {
        let copy = Frame()
        av_frame_ref(copy.pointer, pointer)
        return copy
    }

    /// Metadata attached by filters (for example `signalstats`).
    func metadata(_ key: String) -> String? {
        guard let entry = av_dict_get(pointer.pointee.metadata, key, nil, 0),
              let value = entry.pointee.value else { return nil }
        return String(cString: value)
    }
}

/// Owns one `AVPacket`.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() {
        guard let packet = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }

    func unref() { av_packet_unref(pointer) }

    /// A new packet referencing the same data (no copy).
    func reference() -> Packet {
        let copy = Packet()
        av_packet_ref(copy.pointer, pointer)
        return copy
    }

    var streamIndex: Int { Int(pointer.pointee.stream_index) }
    var isKeyframe: Bool { pointer.pointee.flags & cff_pkt_flag_key() != 0 }
}
