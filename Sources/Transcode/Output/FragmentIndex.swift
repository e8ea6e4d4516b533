/// Reads just enough ISO BMFF (MP4) to find where a fragmented segment's first video sample —
/// its IDR frame — lives, for I-frame playlists. Pure byte parsing, no FFmpeg.
public enum FragmentIndex {
    struct Box {
        var type: String
        var start: Int
        var payload: Range<Int>
        var end: Int { payload.upperBound }
    }

    /// The top-level (or child) boxes in `range` of `data`; stops at the first malformed header.
    static func boxes(_ data: [UInt8], in range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = Int(u32(data, at))
            var header = 8
            if size == 1, at + 16 <= range.upperBound {
                size = Int(clamping: u64(data, at + 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header else { break }
            // A box running past the bytes at hand (the rest of a long `mdat`) ends the list.
            guard at + size <= range.upperBound else { break }
            let type = String(decoding: data[at + 4..<at + 8], as: UTF8.self)
            found.append(Box(type: type, start: at, payload: at + header..<at + size))
            at += size
        }
        return found
    }

    static func child(_ data: [UInt8], _ box: Box, _ type: String) -> Box? {
        boxes(data, in: box.payload).first { $0.type == type }
    }

    /// The `track_ID` of the video track described by an init segment (`moov/trak` whose handler is `vide`).
    public static func videoTrackID(initSegment data: [UInt8]) -> UInt32? {
        guard let moov = boxes(data, in: data.indices).first(where: { $0.type == "moov" }) else { return nil }
        for trak in boxes(data, in: moov.payload) where trak.type == "trak" {
            guard let tkhd = child(data, trak, "tkhd"), let mdia = child(data, trak, "mdia"),
                  let hdlr = child(data, mdia, "hdlr"), hdlr.payload.count >= 12 else { continue }
            let handler = String(decoding: data[hdlr.payload.lowerBound + 8..<hdlr.payload.lowerBound + 12], as: UTF8.self)
            guard handler == "vide" else { continue }
            let idAt = tkhd.payload.lowerBound + (data[tkhd.payload.lowerBound] == 1 ? 20 : 12)
            guard idAt + 4 <= tkhd.end else { return nil }
            return u32(data, idAt)
        }
        return nil
    }

    /// Byte range of a media segment from its first `moof` to the end of track `trackID`'s first
    /// sample: enough for a player to decode that one frame. Nil when the segment has no such sample.
    /// `data` may be just the segment's beginning (through its `moof`) when `fileSize` gives the rest.
    public static func firstSampleRange(segment data: [UInt8], fileSize: Int? = nil, trackID: UInt32) -> Range<Int>? {
        guard let moof = boxes(data, in: data.indices).first(where: { $0.type == "moof" }) else { return nil }
        var previousDataEnd = moof.start  // base of a traf without an explicit one (ISO/IEC 14496-12 8.8.7.1)
        var first = true
        for traf in boxes(data, in: moof.payload) where traf.type == "traf" {
            guard let tfhd = child(data, traf, "tfhd"), tfhd.payload.count >= 8 else { return nil }
            let p = tfhd.payload.lowerBound
            let flags = u32(data, p) & 0xFF_FFFF
            let track = u32(data, p + 4)
            var at = p + 8, base = first || flags & 0x2_0000 != 0 ? moof.start : previousDataEnd
            if flags & 0x1 != 0 { base = Int(clamping: u64(data, at)); at += 8 }
            if flags & 0x2 != 0 { at += 4 }
            if flags & 0x8 != 0 { at += 4 }
            var defaultSize: UInt32?
            if flags & 0x10 != 0, at + 4 <= tfhd.end { defaultSize = u32(data, at) }
            first = false
            for trun in boxes(data, in: traf.payload) where trun.type == "trun" {
                guard let run = sampleRun(data, trun, defaultSize: defaultSize) else { return nil }
                let start = base + run.dataOffset
                if track == trackID, let size = run.sizes.first {
                    let end = start + Int(size)
                    return end <= (fileSize ?? data.count) && end > moof.start ? moof.start..<end : nil
                }
                previousDataEnd = start + run.sizes.reduce(0) { $0 + Int($1) }
            }
        }
        return nil
    }

    /// A `trun`'s data offset and sample sizes.
    private static func sampleRun(_ data: [UInt8], _ trun: Box, defaultSize: UInt32?) -> (dataOffset: Int, sizes: [UInt32])? {
        let p = trun.payload.lowerBound
        guard trun.payload.count >= 8 else { return nil }
        let flags = u32(data, p) & 0xFF_FFFF
        let count = Int(u32(data, p + 4))
        var at = p + 8
        var dataOffset = 0
        if flags & 0x1 != 0 { dataOffset = Int(Int32(bitPattern: u32(data, at))); at += 4 }
        if flags & 0x4 != 0 { at += 4 }
        let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }
        guard count >= 0, at + count * fields.count * 4 <= trun.end else { return nil }
        var sizes: [UInt32] = []
        for _ in 0..<count {
            for field in fields {
                if field == 0x200 { sizes.append(u32(data, at)) }
                at += 4
            }
            if flags & 0x200 == 0, let defaultSize { sizes.append(defaultSize) }
        }
        return (dataOffset, sizes)
    }

    private static func u32(_ data: [UInt8], _ at: Int) -> UInt32 {
        data[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func u64(_ data: [UInt8], _ at: Int) -> UInt64 {
        data[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
