/// RFC 6381 `CODECS` strings for HLS, read from a video stream's own extradata: the MP4
/// configuration record (avcC, hvcC, av1C) or the parameter sets an encoder hands out
/// (Annex B SPS/VPS, a raw AV1 Sequence Header OBU). Nil when the bytes cannot be read.
enum CodecString {
    /// `avc1.PPCCLL`: profile_idc, constraint flags, level_idc.
    static func avc(_ extradata: [UInt8]) -> String? {
        let fields: ArraySlice<UInt8>
        if extradata.first == 1 {
            fields = extradata.dropFirst()
        } else {
            guard let sps = nalUnits(extradata).first(where: { $0.first.map { $0 & 0x1f } == 7 }) else { return nil }
            fields = rbsp(sps.dropFirst())[...]
        }
        guard fields.count >= 3 else { return nil }
        return "avc1." + fields.prefix(3).map { hex($0, width: 2) }.joined()
    }

    /// `hvc1.<space><profile>.<compatibility>.<L|H><level>[.<constraint bytes>]` (ISO/IEC 14496-15 E.3).
    static func hevc(_ extradata: [UInt8]) -> String? {
        let ptl: ArraySlice<UInt8>  // the 12 bytes of profile_tier_level's general part
        if extradata.first == 1 {
            guard extradata.count >= 23 else { return nil }  // the record's fixed fields
            ptl = extradata[1..<13]
        } else {
            let nals = nalUnits(extradata)
            // The SPS's PTL follows its 2-byte header and 1 byte of ids; the VPS's, 2 + 4 bytes.
            let candidates = [(33, 3), (32, 6)].compactMap { type, offset -> ArraySlice<UInt8>? in
                guard let nal = nals.first(where: { $0.first.map { ($0 >> 1) & 0x3f } == UInt8(type) }) else { return nil }
                let payload = rbsp(nal)
                return payload.count >= offset + 12 ? payload[offset..<offset + 12] : nil
            }
            guard let first = candidates.first else { return nil }
            ptl = first
        }
        let b = Array(ptl)
        let compatibility = b[1...4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var reversed: UInt32 = 0
        for bit in 0..<32 where compatibility & (1 << bit) != 0 { reversed |= 1 << (31 - bit) }
        var constraints = Array(b[5...10])
        while constraints.last == 0 { constraints.removeLast() }
        return "hvc1." + ["", "A", "B", "C"][Int(b[0] >> 6)] + "\(b[0] & 0x1f)."
            + String(reversed, radix: 16, uppercase: true)
            + ".\(b[0] & 0x20 != 0 ? "H" : "L")\(b[11])"
            + constraints.map { "." + String($0, radix: 16, uppercase: true) }.joined()
    }

    /// `av01.P.LLT.DD[.M.CCC.cp.tc.mc.F]` (AV1-ISOBMFF §5): the long form when the sequence header
    /// describes the colour or departs from the short form's defaults (4:2:0, BT.709, limited range).
    static func av1(_ extradata: [UInt8]) -> String? {
        if extradata.first == 0x81 {  // av1C: marker and version 1
            guard extradata.count >= 4, let obus = obus(extradata.dropFirst(4)) else { return nil }
            if let header = obus.first(where: { $0.type == 1 }) {
                return (try? AV1Sequence(header.payload))?.codecString
            }
            let b1 = extradata[1], b2 = extradata[2]
            let ss = (b2 >> 3 & 1, b2 >> 2 & 1)
            return AV1Sequence(profile: Int(b1 >> 5), level: Int(b1 & 0x1f), tier: Int(b2 >> 7),
                               bitDepth: b2 & 0x40 == 0 ? 8 : b2 & 0x20 == 0 ? 10 : 12, mono: Int(b2 >> 4 & 1),
                               chroma: "\(ss.0)\(ss.1)\(ss == (1, 1) ? b2 & 3 : 0)").codecString
        }
        guard let header = obus(extradata[...])?.first(where: { $0.type == 1 }) else { return nil }
        return (try? AV1Sequence(header.payload))?.codecString
    }

    // MARK: - Parsing

    private static func hex(_ byte: UInt8, width: Int) -> String {
        let digits = String(byte, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The NAL units of an Annex B byte stream (which must begin with a start code).
    static func nalUnits(_ data: [UInt8]) -> [ArraySlice<UInt8>] {
        guard data.starts(with: [0, 0, 1]) || data.starts(with: [0, 0, 0, 1]) else { return [] }
        var starts: [Int] = []
        var i = 0
        while i + 2 < data.count {
            if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts.indices.map { k in
            var end = k + 1 < starts.count ? starts[k + 1] - 3 : data.count
            while end > starts[k], data[end - 1] == 0 { end -= 1 }  // a 4-byte start code's leading zero
            return data[starts[k]..<end]
        }
    }

    /// A NAL unit's payload without its emulation-prevention bytes (00 00 03).
    static func rbsp(_ nal: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var zeros = 0
        for byte in nal {
            if zeros >= 2, byte == 3 { zeros = 0; continue }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// The OBUs of a low-overhead bitstream, or nil if one runs past the end.
    static func obus(_ data: ArraySlice<UInt8>) -> [(type: Int, payload: ArraySlice<UInt8>)]? {
        var result: [(type: Int, payload: ArraySlice<UInt8>)] = []
        var i = data.startIndex
        while i < data.endIndex {
            let header = data[i]
            guard header & 0x80 == 0 else { return nil }  // obu_forbidden_bit
            i += header & 4 != 0 ? 2 : 1  // obu_extension_flag
            var size = data.endIndex - i
            if header & 2 != 0 {  // obu_has_size_field: leb128
                size = 0
                for k in 0..<8 {
                    guard i < data.endIndex else { return nil }
                    let byte = data[i]
                    i += 1
                    size |= Int(byte & 0x7f) << (7 * k)
                    if byte & 0x80 == 0 { break }
                    if k == 7 { return nil }
                }
            }
            guard i <= data.endIndex, size <= data.endIndex - i else { return nil }
            result.append((Int(header >> 3 & 0xf), data[i..<i + size]))
            i += size
        }
        return result
    }
}

/// The fields of an AV1 sequence header that the codecs string carries.
struct AV1Sequence {
    var profile, level, tier, bitDepth, mono: Int
    var chroma: String  // subsampling_x, subsampling_y, chroma_sample_position
    var primaries = 2, transfer = 2, matrix = 2, fullRange = 0  // 2: unspecified
    var described = false

    var codecString: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let short = "av01.\(profile).\(two(level))\(tier == 1 ? "H" : "M").\(two(bitDepth))"
        guard described || mono != 0 || chroma != "110" || fullRange != 0 else { return short }
        return short + ".\(mono).\(chroma).\(two(primaries)).\(two(transfer)).\(two(matrix)).\(fullRange)"
    }

    init(profile: Int, level: Int, tier: Int, bitDepth: Int, mono: Int, chroma: String) {
        (self.profile, self.level, self.tier, self.bitDepth, self.mono, self.chroma) = (profile, level, tier, bitDepth, mono, chroma)
    }

    /// Parses sequence_header_obu() (AV1 spec 5.5) up to the end of color_config().
    init(_ payload: ArraySlice<UInt8>) throws {
        var r = BitReader(payload)
        profile = try r.u(3)
        _ = try r.u(1)  // still_picture
        let reduced = try r.u(1) == 1
        tier = 0
        if reduced {
            level = try r.u(5)
        } else {
            var decoderModel = false, bufferDelayLength = 0
            if try r.u(1) == 1 {  // timing_info_present_flag
                _ = try r.u(32); _ = try r.u(32)  // num_units_in_display_tick, time_scale
                if try r.u(1) == 1 { try r.uvlc() }  // equal_picture_interval, num_ticks_per_picture_minus_1
                decoderModel = try r.u(1) == 1
                if decoderModel {
                    bufferDelayLength = try r.u(5) + 1
                    _ = try r.u(32); _ = try r.u(10)  // num_units_in_decoding_tick, two lengths
                }
            }
            let displayDelay = try r.u(1) == 1
            level = 0
            let operatingPoints = try r.u(5) + 1
            for op in 0..<operatingPoints {
                _ = try r.u(12)  // operating_point_idc
                let opLevel = try r.u(5)
                let opTier = try opLevel > 7 ? r.u(1) : 0
                if op == 0 { (level, tier) = (opLevel, opTier) }
                if decoderModel, try r.u(1) == 1 {  // decoder and encoder buffer delays, low_delay_mode_flag
                    _ = try r.u(bufferDelayLength); _ = try r.u(bufferDelayLength + 1)
                }
                if displayDelay, try r.u(1) == 1 { _ = try r.u(4) }
            }
        }
        let widthBits = try r.u(4) + 1, heightBits = try r.u(4) + 1
        _ = try r.u(widthBits); _ = try r.u(heightBits)
        if !reduced, try r.u(1) == 1 { _ = try r.u(7) }  // frame id lengths
        _ = try r.u(3)  // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter
        if !reduced {
            _ = try r.u(4)  // interintra, masked compound, warped motion, dual filter
            let orderHint = try r.u(1) == 1
            if orderHint { _ = try r.u(2) }  // enable_jnt_comp, enable_ref_frame_mvs
            let forceScreenContent = try r.u(1) == 1 ? 2 : r.u(1)
            if forceScreenContent > 0, try r.u(1) == 0 { _ = try r.u(1) }  // integer mv
            if orderHint { _ = try r.u(3) }
        }
        _ = try r.u(3)  // enable_superres, enable_cdef, enable_restoration
        // color_config()
        let high = try r.u(1)
        bitDepth = try profile == 2 && high == 1 ? (r.u(1) == 1 ? 12 : 10) : high == 1 ? 10 : 8
        mono = try profile == 1 ? 0 : r.u(1)
        described = try r.u(1) == 1
        if described { (primaries, transfer, matrix) = try (r.u(8), r.u(8), r.u(8)) }
        if mono == 1 {
            fullRange = try r.u(1)
            chroma = "110"
        } else if primaries == 1, transfer == 13, matrix == 0 {  // sRGB: 4:4:4, full range
            (fullRange, chroma) = (1, "000")
        } else {
            fullRange = try r.u(1)
            var ss = profile == 0 ? (1, 1) : profile == 1 ? (0, 0) : (1, 0)
            if profile == 2, bitDepth == 12 {
                ss.0 = try r.u(1)
                ss.1 = try ss.0 == 1 ? r.u(1) : 0
            }
            let position = try ss == (1, 1) ? r.u(2) : 0
            chroma = "\(ss.0)\(ss.1)\(position)"
        }
    }
}

/// Big-endian bit reader that throws past the end.
private struct BitReader {
    struct End: Error {}
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = Array(bytes) }

    mutating func u(_ count: Int) throws -> Int {
        guard count <= 63, position + count <= bytes.count * 8 else { throw End() }
        var value = 0
        for _ in 0..<count {
            value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return value
    }

    mutating func uvlc() throws {
        var zeros = 0
        while try u(1) == 0 { zeros += 1 }
        if zeros < 32 { _ = try u(zeros) }
    }
}
