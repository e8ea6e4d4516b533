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

    /// Presentation time in the frame's time base.
    var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }
    /// The decoder's best guess of the presentation time; nil when it has none.
    var bestEffortTimestamp: Int64? {
        let value = pointer.pointee.best_effort_timestamp
        return value == cff_nopts() ? nil : value
    }
    /// Duration in the frame's time base (0 when unknown).
    var duration: Int64 { cff_frame_duration(pointer) }
    var timeBase: AVRational {
        get { pointer.pointee.time_base }
        set { pointer.pointee.time_base = newValue }
    }
    var width: Int { Int(pointer.pointee.width) }
    var height: Int { Int(pointer.pointee.height) }
    /// Audio: samples per channel.
    var sampleCount: Int {
        get { Int(pointer.pointee.nb_samples) }
        set { pointer.pointee.nb_samples = Int32(newValue) }
    }
    var sampleRate: Int { Int(pointer.pointee.sample_rate) }
    /// Asks the encoder for an IDR picture here (true) or leaves the choice to it (false).
    func forceKeyframe(_ force: Bool) {
        pointer.pointee.pict_type = force ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
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
    var isKeyframe: Bool {
        get { pointer.pointee.flags & cff_pkt_flag_key() != 0 }
        set { pointer.pointee.flags = newValue ? pointer.pointee.flags | cff_pkt_flag_key() : pointer.pointee.flags & ~cff_pkt_flag_key() }
    }
    var pts: Int64 { pointer.pointee.pts }
    var dts: Int64 {
        get { pointer.pointee.dts }
        set { pointer.pointee.dts = newValue }
    }
    var duration: Int64 {
        get { pointer.pointee.duration }
        set { pointer.pointee.duration = newValue }
    }
    /// The packet's bytes (valid while the packet holds them).
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: pointer.pointee.data, count: Int(pointer.pointee.size)) }
    /// Moves pts and dts (where set) `offset` ticks earlier.
    func shiftTimestamps(by offset: Int64) {
        if pointer.pointee.pts != cff_nopts() { pointer.pointee.pts &-= offset }
        if pointer.pointee.dts != cff_nopts() { pointer.pointee.dts &-= offset }
    }
}
