import Foundation
import Testing
@testable import Transcode

/// CODECS strings from real encoder output: clips made with the ffmpeg CLI, their avcC/hvcC/av1C read
/// out of the MP4 and their raw parameter sets out of elementary streams. The expected fields come
/// from FFmpeg's own header parser (the trace_headers bitstream filter) and from ffprobe.
@Suite final class CodecStringTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("codecstring-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: dir) }

    // MARK: H.264

    @Test func h264FromAvcCAndAnnexB() throws {
        let mp4 = try encode("main.mp4", ["-c:v", "libx264", "-profile:v", "main"])
        let t = try trace(mp4), probe = try ffprobe(mp4)
        let flags = (0...5).reduce(0) { $0 | t["constraint_set\($1)_flag"]! << (7 - $1) } | t["reserved_zero_2bits"]!
        let expected = "avc1." + hex2(t["profile_idc"]!) + hex2(flags) + hex2(t["level_idc"]!)
        #expect(probe["profile"] == "Main" && t["profile_idc"] == 77)
        #expect(Int(probe["level"]!) == t["level_idc"])

        let avcC = try #require(box("avcC", in: try bytes(mp4)))
        #expect(CodecString.avc(avcC) == expected)
        #expect(EncoderFactory.codecString(.h264, extradata: avcC) == expected)
        #expect(EncoderFactory.codecString(.h264, extradata: [0, 0, 1]) == "avc1.640029")
        checkPrefixes(avcC, full: expected, nilBelow: 4, CodecString.avc)

        // The parameter sets libx264 itself hands out (Annex B, as its extradata is with a global header).
        let stream = try bytes(encode("main.264", ["-c:v", "libx264", "-profile:v", "main", "-f", "h264"]))
        let headers = beforeFirstSlice(stream) { [1, 5].contains($0 & 0x1f) }
        #expect(CodecString.avc(headers) == expected)
        checkPrefixes(headers, full: expected, nilBelow: 8, CodecString.avc)
    }

    // MARK: HEVC

    @Test(arguments: [false, true]) func hevcFromHvcCAndAnnexB(tenBit: Bool) throws {
        let options = ["-c:v", "libx265", "-x265-params", "log-level=error"] + (tenBit ? ["-pix_fmt", "yuv420p10le"] : [])
        let mp4 = try encode("x.mp4", options + ["-tag:v", "hvc1"])
        let t = try trace(mp4), probe = try ffprobe(mp4)
        // profile_tier_level's general part as FFmpeg parsed it: the 48 constraint bits run from
        // general_progressive_source_flag up to general_level_idc.
        let ptl = t.elements.drop { $0.name != "general_profile_space" }.prefix { $0.name != "general_level_idc" }
        let constraintBits = ptl.drop { $0.name != "general_progressive_source_flag" }.map(\.bits).joined()
        try #require(constraintBits.count == 48)
        var constraints = stride(from: 0, to: 48, by: 8).map { UInt8(constraintBits.dropFirst($0).prefix(8), radix: 2)! }
        while constraints.last == 0 { constraints.removeLast() }
        let compatibility = (0..<32).reduce(0) { $0 | t["general_profile_compatibility_flag[\($1)]"]! << $1 }
        let expected = "hvc1." + ["", "A", "B", "C"][t["general_profile_space"]!] + "\(t["general_profile_idc"]!)."
            + String(compatibility, radix: 16, uppercase: true) + "." + (t["general_tier_flag"] == 1 ? "H" : "L")
            + "\(t["general_level_idc"]!)" + constraints.map { "." + String($0, radix: 16, uppercase: true) }.joined()
        #expect(probe["profile"] == (tenBit ? "Main 10" : "Main"))
        #expect(expected.hasPrefix(tenBit ? "hvc1.2.4.L" : "hvc1.1.6.L"))
        #expect(expected.contains(".L\(probe["level"]!)."))  // ffprobe's level is level_idc (level × 30)

        let hvcC = try #require(box("hvcC", in: try bytes(mp4)))
        #expect(CodecString.hevc(hvcC) == expected)
        checkPrefixes(hvcC, full: expected, nilBelow: 23, CodecString.hevc)

        // What libx265 gives with a global header: VPS, SPS, PPS, SEI in Annex B, the PTL escaped.
        let stream = try bytes(encode("x.265", options + ["-f", "hevc"]))
        let headers = beforeFirstSlice(stream) { ($0 >> 1) & 0x3f < 32 }
        #expect(headers.indices.dropLast(2).contains { headers[$0...$0 + 2] == [0, 0, 3] })
        #expect(CodecString.hevc(headers) == expected)
        checkPrefixes(headers, full: expected, nilBelow: 4 + 2 + 4 + 12, CodecString.hevc)
    }

    // MARK: AV1

    struct AV1Clip: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var options: [String]
        var size = "320x240"
    }

    static let bt709 = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
    static let av1Clips = [
        AV1Clip(testDescription: "SVT 8-bit, colour unspecified", options: ["-c:v", "libsvtav1"]),
        AV1Clip(testDescription: "SVT 8-bit BT.709", options: ["-c:v", "libsvtav1"] + bt709),
        AV1Clip(testDescription: "SVT 10-bit PQ full range", options: ["-c:v", "libsvtav1", "-pix_fmt", "yuv420p10le",
            "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-color_range", "pc"]),
        // Timing info, a decoder model and display delays all precede color_config in the header.
        AV1Clip(testDescription: "libaom 720p decoder model BT.709",
                options: ["-c:v", "libaom-av1", "-cpu-used", "8", "-aom-params", "timing-info=model"] + bt709, size: "1280x720"),
        AV1Clip(testDescription: "libaom 4:4:4", options: ["-c:v", "libaom-av1", "-cpu-used", "8", "-pix_fmt", "yuv444p"]),
    ]

    @Test(arguments: av1Clips) func av1FromAv1CAndOBU(clip: AV1Clip) throws {
        let mp4 = try encode("x.mp4", clip.options, size: clip.size)
        let t = try trace(mp4), probe = try ffprobe(mp4)
        let profile = t["seq_profile"]!, level = t["seq_level_idx[0]"]!
        let depth = t["high_bitdepth"] == 0 ? 8 : t["twelve_bit"] == 1 ? 12 : 10
        let subsampling = (t["subsampling_x"] ?? (profile == 1 ? 0 : 1), t["subsampling_y"] ?? (profile == 0 ? 1 : 0))
        let chroma = "\(subsampling.0)\(subsampling.1)\(t["chroma_sample_position"] ?? 0)"
        let mono = t["mono_chrome"] ?? 0, range = t["color_range"] ?? 1
        let colour = ["color_primaries", "transfer_characteristics", "matrix_coefficients"].map { t[$0] ?? 2 }
        var expected = "av01.\(profile).\(dec2(level))\(t["seq_tier[0]"] == 1 ? "H" : "M").\(dec2(depth))"
        if t["color_description_present_flag"] == 1 || mono == 1 || chroma != "110" || range == 1 {
            expected += ".\(mono).\(chroma)." + colour.map(dec2).joined(separator: ".") + ".\(range)"
        }
        // ffprobe's own reading of profile, level, bit depth and colour.
        #expect(["Main", "High", "Professional"].firstIndex(of: probe["profile"]!) == profile)
        #expect(Int(probe["level"]!) == level)
        #expect(probe["pix_fmt"]!.contains("10") == (depth == 10))
        let parts = expected.split(separator: ".")
        if parts.count == 10 {
            let names = [["unknown": 2, "bt709": 1, "bt2020": 9], ["unknown": 2, "bt709": 1, "smpte2084": 16],
                         ["unknown": 2, "bt709": 1, "bt2020nc": 9]]
            let keys = ["color_primaries", "color_transfer", "color_space"]
            #expect(zip(names, keys).map { $0[probe[$1]!] } == parts[6...8].map { Int($0) })
            #expect(parts[9] == (probe["color_range"] == "pc" ? "1" : "0"))
            #expect(parts[5] == (probe["pix_fmt"]!.hasPrefix("yuv444") ? "000" : "110"))
        }

        let av1C = try #require(box("av1C", in: try bytes(mp4)))
        #expect(CodecString.av1(av1C) == expected)
        // The record alone (no configOBUs): its own fields, the colour unspecified (the short form if 4:2:0).
        let recordOnly = parts.prefix(4).joined(separator: ".") + (mono == 0 && chroma == "110" ? "" : ".\(mono).\(chroma).02.02.02.0")
        #expect(CodecString.av1(Array(av1C.prefix(4))) == recordOnly)
        checkPrefixes(av1C, full: expected, nilBelow: av1C.count, CodecString.av1, except: [4: recordOnly])

        // The Sequence Header OBU alone, as libsvtav1 hands it out as extradata.
        let stream = try bytes(encode("x.obu", clip.options + ["-f", "obu"], size: clip.size))
        let header = try #require(firstSequenceHeader(stream))
        #expect(CodecString.av1(header) == expected)
        #expect(CodecString.av1(Array(stream.prefix(header.count + 2))) == expected)  // after a temporal delimiter
        checkPrefixes(header, full: expected, nilBelow: header.count, CodecString.av1)
    }

    // MARK: Hand-made records, spec examples

    @Test func specExamples() {
        #expect(CodecString.avc([1, 0x64, 0x00, 0x29, 0xff]) == "avc1.640029")
        #expect(CodecString.avc([0, 0, 0, 1, 0x67, 0x4d, 0x40, 0x1e, 0x95]) == "avc1.4d401e")
        // Apple's HLS authoring examples: Main and Main 10 hvcC records.
        let padding = [UInt8](repeating: 0, count: 10)
        #expect(CodecString.hevc([1, 0x01, 0x60, 0, 0, 0, 0xb0, 0, 0, 0, 0, 0, 120] + padding) == "hvc1.1.6.L120.B0")
        #expect(CodecString.hevc([1, 0x02, 0x20, 0, 0, 0, 0xb0, 0, 0, 0, 0, 0, 123] + padding) == "hvc1.2.4.L123.B0")
        #expect(CodecString.hevc([1, 0x61, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 150] + padding) == "hvc1.A1.6.H150")
        #expect(CodecString.av1([0x81, 0x08, 0x0c, 0x00]) == "av01.0.08M.08")
        #expect(CodecString.av1([0x81, 0x0d, 0xcc, 0x00]) == "av01.0.13H.10")
        // The AV1-ISOBMFF example, as a reduced still-picture sequence header: 10-bit BT.2020 PQ,
        // chroma sample position 2.
        let payload = pack([(0, 3), (1, 1), (1, 1), (4, 5), (15, 4), (15, 4), (1919, 16), (1079, 16), (0, 6),
                            (1, 1), (0, 1), (1, 1), (9, 8), (16, 8), (9, 8), (0, 1), (2, 2), (0, 2), (1, 1)])
        #expect(CodecString.av1([0x0a, UInt8(payload.count)] + payload) == "av01.0.04M.10.0.112.09.16.09.0")
    }

    @Test func garbageIsRefused() {
        let garbage: [[UInt8]] = [[], [0], [1], [0x81], [1, 0x64], [0, 0, 1], [0, 0, 0, 1, 0x40, 1, 0x0c],
                                  [0xff, 0, 0, 1, 0x67, 0x64, 0, 0x29], [2] + [UInt8](repeating: 0, count: 30),
                                  [0x0a, 5, 1, 2], [0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                                  [0x81, 0, 0x0c, 0, 0x0a, 0x80], [0x8a, 0]]
        for bytes in garbage {
            #expect(CodecString.avc(bytes) == nil && CodecString.hevc(bytes) == nil && CodecString.av1(bytes) == nil, "\(bytes)")
        }
        // Noise behind each format's leading bytes, to reach deep into the parsers: nothing may trap.
        var seed: UInt64 = 0x9e37_79b9_7f4a_7c15
        for leading in [[], [1], [0x81, 0, 0, 0], [0, 0, 0, 1, 0x40, 1], [0, 0, 1, 0x42, 1], [0, 0, 1, 0x67], [0x0a, 0x20]] as [[UInt8]] {
            for length in 0..<2000 {
                let noise = (0..<length % 48).map { _ in
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return UInt8(truncatingIfNeeded: seed >> 56)
                }
                _ = (CodecString.avc(leading + noise), CodecString.hevc(leading + noise), CodecString.av1(leading + noise))
            }
        }
    }

    // MARK: Helpers

    /// Every truncation of a real blob is refused below `nilBelow` bytes, and above it either refused
    /// or read as the whole blob is: never a different string.
    func checkPrefixes(_ blob: [UInt8], full: String, nilBelow: Int, _ parse: ([UInt8]) -> String?,
                       except: [Int: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) {
        for length in 0..<blob.count {
            let result = parse(Array(blob.prefix(length)))
            if let allowed = except[length] {
                #expect(result == allowed, "prefix \(length)", sourceLocation: sourceLocation)
            } else if length < nilBelow {
                #expect(result == nil, "prefix \(length)", sourceLocation: sourceLocation)
            } else {
                #expect(result == nil || result == full, "prefix \(length)", sourceLocation: sourceLocation)
            }
        }
    }

    @discardableResult
    func run(_ arguments: [String], stderr: Bool = false) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = stderr ? FileHandle.nullDevice : pipe
        process.standardError = stderr ? pipe : FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(arguments.joined(separator: " "))")
        return output
    }

    /// A short test clip encoded by the ffmpeg CLI.
    func encode(_ name: String, _ options: [String], size: String = "320x240") throws -> URL {
        let url = dir.appendingPathComponent(name)
        try run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size):d=0.3"] + options + [url.path])
        return url
    }

    func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// FFmpeg's parse of the stream's headers (trace_headers): each syntax element in order.
    struct Trace {
        var elements: [(name: String, bits: String, value: Int)]
        /// The element's first value: the extradata's, which trace_headers prints before any packet.
        subscript(name: String) -> Int? { elements.first { $0.name == name }?.value }
    }

    func trace(_ url: URL) throws -> Trace {
        let log = try run(["ffmpeg", "-hide_banner", "-i", url.path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"],
                          stderr: true)
        return Trace(elements: String(decoding: log, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard line.hasPrefix("[trace_headers"), let close = line.firstIndex(of: "]") else { return nil }
            let words = line[line.index(after: close)...].split(separator: " ")
            guard words.count >= 4, words[words.count - 2] == "=", let value = Int(words.last!) else { return nil }
            return (String(words[1]), words[2..<words.count - 2].joined(), value)
        })
    }

    func ffprobe(_ url: URL) throws -> [String: String] {
        let out = try run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-of", "default=nw=1", "-show_entries",
                           "stream=profile,level,pix_fmt,color_range,color_space,color_transfer,color_primaries", url.path])
        return Dictionary(String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        }) { first, _ in first }
    }

    /// The payload of the first `type` box in an MP4, looking inside moov/trak/mdia/minf/stbl/stsd and sample entries.
    func box(_ type: String, in data: [UInt8]) -> [UInt8]? {
        func walk(_ range: Range<Int>) -> [UInt8]? {
            var i = range.lowerBound
            while i + 8 <= range.upperBound {
                let size = data[i..<i + 4].reduce(0) { $0 << 8 | Int($1) }
                let name = String(decoding: data[i + 4..<i + 8], as: UTF8.self)
                guard size >= 8, i + size <= range.upperBound else { return nil }
                if name == type { return Array(data[i + 8..<i + size]) }
                let skip = ["moov": 0, "trak": 0, "mdia": 0, "minf": 0, "stbl": 0, "stsd": 8, "avc1": 78, "hvc1": 78, "av01": 78][name]
                if let skip, let found = walk(i + 8 + skip..<i + size) { return found }
                i += size
            }
            return nil
        }
        return walk(0..<data.count)
    }

    /// An Annex B stream's bytes up to its first slice NAL: the parameter sets.
    func beforeFirstSlice(_ stream: [UInt8], isSlice: (UInt8) -> Bool) -> [UInt8] {
        for i in 1..<stream.count - 3 where stream[i..<i + 3] == [0, 0, 1] && isSlice(stream[i + 3]) {
            return Array(stream[..<(stream[i - 1] == 0 ? i - 1 : i)])
        }
        return stream
    }

    /// The first Sequence Header OBU (with its header) in a low-overhead AV1 stream.
    func firstSequenceHeader(_ stream: [UInt8]) -> [UInt8]? {
        var i = 0
        while i < stream.count {
            let start = i, header = stream[i]
            i += header & 4 != 0 ? 2 : 1
            var size = 0, shift = 0
            repeat { size |= Int(stream[i] & 0x7f) << shift; shift += 7; i += 1 } while stream[i - 1] & 0x80 != 0
            if header >> 3 & 0xf == 1 { return Array(stream[start..<i + size]) }
            i += size
        }
        return nil
    }

    /// Bits packed MSB first from (value, width) pairs, zero-padded to a byte.
    func pack(_ fields: [(Int, Int)]) -> [UInt8] {
        let bits = fields.flatMap { value, width in (0..<width).reversed().map { value >> $0 & 1 } }
        return stride(from: 0, to: bits.count, by: 8).map { start in
            (0..<8).reduce(UInt8(0)) { $0 << 1 | UInt8(start + $1 < bits.count ? bits[start + $1] : 0) }
        }
    }

    func hex2(_ value: Int) -> String { String(String(value + 0x100, radix: 16).dropFirst()) }
    func dec2(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
