import IngestdTesting
import Foundation
import Testing
import Transcode

/// The HLS ladder, checked with ffprobe on the real output of the shipped samples.
@Suite struct LadderTests {
    let portrait = Paths.sample("portrait_rotated.mp4")

    @Test func keyframesAlignAcrossRungsAtEverySegmentStart() async throws {
        let output = try await Fixtures.shared.output(portrait)
        var keyTimes: [[Double]] = []
        for rendition in output.manifest.renditions {
            let frames = try Checks.frames("\(output.directory)/\(rendition.playlist)")
            #expect(frames.count == Int((output.manifest.durationSeconds * 30).rounded()), "\(rendition.name) frame count")
            keyTimes.append(frames.filter(\.key).map { ($0.time * 1000).rounded() / 1000 })
        }
        #expect(keyTimes.count == 4)
        for times in keyTimes.dropFirst() { #expect(times == keyTimes[0]) }
        let first = try #require(keyTimes.first?.first)
        // Segments of 0.5 and 0.5 s first (a fast start), then a keyframe and a segment every second.
        let seconds = output.manifest.durationSeconds
        #expect(keyTimes[0].map { (($0 - first) * 1000).rounded() / 1000 } == [0, 0.5] + Array(stride(from: 1.0, to: seconds - 1e-6, by: 1)))
    }

    /// Each I-frame playlist entry, cut out by its byte range and put after the init segment,
    /// decodes (ffprobe) to exactly one key frame at the rung's size; the master lists them all.
    /// A rung's own x264 options reach libx264: the encoder writes the options it ran with into
    /// the stream (its SEI), where the preset's `b-adapt=0` on 1080p shows, and 720p keeps x264's.
    @Test func presetX264OptionsReachTheRungsEncoder() async throws {
        let output = try await Fixtures.shared.output(portrait)
        func options(_ rung: String) throws -> String {
            let playlist = try Checks.playlist("\(output.directory)/\(rung)")
            let first = try Data(contentsOf: URL(fileURLWithPath: "\(output.directory)/\(rung)/\(playlist.segments[0].uri)"))
            let text = String(decoding: first, as: UTF8.self)
            let range = try #require(text.range(of: "x264 - core"), "\(rung): no x264 SEI")
            return String(text[range.lowerBound...].prefix(2000))
        }
        #expect(Preset.builtIn.rungs.last?.x264Params == "b-adapt=0")
        #expect(try options("1080p").contains(" b_adapt=0 "))
        #expect(try options("720p").contains(" b_adapt=1 "))
    }

    @Test func iFramePlaylistsPointAtEachSegmentsIDRFrame() async throws {
        let output = try await Fixtures.shared.output(portrait)
        let master = try String(contentsOfFile: "\(output.directory)/master.m3u8", encoding: .utf8)
        for rendition in output.manifest.renditions {
            #expect(master.contains("RESOLUTION=\(rendition.width)x\(rendition.height),URI=\"\(rendition.iFramePlaylist)\""))
            let directory = "\(output.directory)/\(rendition.name)"
            let text = try String(contentsOfFile: "\(output.directory)/\(rendition.iFramePlaylist)", encoding: .utf8)
            #expect(text.contains("#EXT-X-I-FRAMES-ONLY"))
            let lines = text.split(separator: "\n").map(String.init)
            let ranges = lines.indices.filter { lines[$0].hasPrefix("#EXT-X-BYTERANGE:") }
            #expect(ranges.count == rendition.segments)
            let initSegment = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/init.mp4"))
            for index in ranges {
                let parts = lines[index].dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@").compactMap { Int($0) }
                let segment = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(lines[index + 1])"))
                #expect(parts.count == 2 && parts[1] + parts[0] <= segment.count)
                let cut = Paths.scratch("iframe-\(UUID().uuidString).mp4")
                try (initSegment + segment[parts[1]..<parts[1] + parts[0]]).write(to: URL(fileURLWithPath: cut))
                defer { try? FileManager.default.removeItem(atPath: cut) }
                let frames = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "frame=key_frame,pict_type,width", cut]).list("frames")
                #expect(frames.count == 1 && frames.first?.int("key_frame") == 1 && frames.first?.int("width") == rendition.width,
                        "\(rendition.name) \(lines[index + 1]): \(frames)")
            }
        }
    }

    @Test func everySegmentStartsWithAnIDRFrame() async throws {
        let output = try await Fixtures.shared.output(portrait)
        for rendition in output.manifest.renditions {
            let directory = "\(output.directory)/\(rendition.name)"
            let playlist = try Checks.playlist(directory)
            #expect(playlist.map == "init.mp4")
            #expect(!playlist.segments.isEmpty)
            for segment in playlist.segments {
                let first = try Checks.firstFrameOfSegment(directory: directory, segment: segment.uri)
                #expect(first.key && first.type == "I", "\(rendition.name)/\(segment.uri) starts with \(first.type)")
            }
        }
    }

    @Test func playlistsAreVODWithShortFirstSegments() async throws {
        // 15 s of 1080x1920 at 30 fps: 0.5 + 0.5 + 14 × 1 s.
        let clip = try await Fixtures.shared.generated("long_portrait.mp4", [
            "-f", "lavfi", "-i", "testsrc2=s=540x960:r=30:d=15", "-f", "lavfi", "-i", "sine=d=15",
            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"])
        let output = try await Fixtures.shared.output(clip)
        for rendition in output.manifest.renditions {
            let directory = "\(output.directory)/\(rendition.name)"
            let text = try String(contentsOfFile: "\(directory)/index.m3u8", encoding: .utf8)
            #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD"))
            #expect(text.contains("#EXT-X-ENDLIST"))
            #expect(text.contains("#EXT-X-INDEPENDENT-SEGMENTS"))
            let playlist = try Checks.playlist(directory)
            #expect(playlist.targetDuration == 1)
            #expect(playlist.segments.map { ($0.duration * 10).rounded() / 10 } == [0.5, 0.5] + Array(repeating: 1, count: 14))
            // EXTINF sum matches the decoded media within one frame.
            let frames = try Checks.frames("\(directory)/index.m3u8")
            #expect(abs(playlist.duration - Double(frames.count) / 30) <= 1.0 / 30 + 1e-6)
            for segment in playlist.segments { #expect(segment.duration <= Double(playlist.targetDuration) + 0.5) }
        }
    }

    @Test func masterDeclaresMeasuredBandwidthAndAttributes() async throws {
        let output = try await Fixtures.shared.output(portrait)
        let master = try String(contentsOfFile: "\(output.directory)/master.m3u8", encoding: .utf8)
        #expect(master.hasPrefix("#EXTM3U\n"))
        #expect(master.contains("#EXT-X-INDEPENDENT-SEGMENTS"))
        let lines = master.split(separator: "\n").map(String.init)
        let infos = lines.enumerated().filter { $0.element.hasPrefix("#EXT-X-STREAM-INF:") }
        #expect(infos.count == 4)
        #expect(infos.first.map { Self.attributes($0.element)["RESOLUTION"] } == "234x416", "the cellular-safe rung is listed first")
        for (index, info) in infos {
            let uri = lines[index + 1]
            let attributes = Self.attributes(info)
            for key in ["BANDWIDTH", "AVERAGE-BANDWIDTH", "CODECS", "RESOLUTION", "FRAME-RATE"] {
                #expect(attributes[key] != nil, "\(uri) lacks \(key)")
            }
            #expect(attributes["CODECS"]?.contains("mp4a.40.2") == true)
            #expect(attributes["FRAME-RATE"] == "30.000")
            // Measure independently: segment file sizes over EXTINF durations.
            let directory = "\(output.directory)/\((uri as NSString).deletingLastPathComponent)"
            // CODECS from the coded stream's own profile and level, as ffprobe reads them (High: 0x64,
            // no constraint flags; level_idc in hex), not from what the engine asked for.
            let coded = try #require(try Checks.streams("\(directory)/index.m3u8").first { $0.string("codec_type") == "video" })
            #expect(coded.string("profile") == "High")
            let level = try #require(coded.int("level"))
            #expect(attributes["CODECS"] == "\"avc1.6400\(String(format: "%02x", level)),mp4a.40.2\"", "\(uri): \(coded)")
            let playlist = try Checks.playlist(directory)
            let rates = playlist.segments.map { Double(Checks.size("\(directory)/\($0.uri)") * 8) / $0.duration }
            let bits = playlist.segments.reduce(0.0) { $0 + Double(Checks.size("\(directory)/\($1.uri)") * 8) }
            let peak = try #require(rates.max()), average = bits / playlist.duration
            let declaredPeak = try #require(attributes["BANDWIDTH"].flatMap(Double.init))
            let declaredAverage = try #require(attributes["AVERAGE-BANDWIDTH"].flatMap(Double.init))
            #expect(abs(declaredPeak - peak) / peak <= 0.10)
            #expect(abs(declaredAverage - average) / average <= 0.10)
            #expect(declaredPeak <= 2 * declaredAverage, "\(uri): peak more than twice the average")
            // RESOLUTION matches the coded stream.
            let stream = try #require(try Checks.streams("\(directory)/index.m3u8").first { $0.string("codec_type") == "video" })
            #expect(attributes["RESOLUTION"] == "\(stream.int("width") ?? 0)x\(stream.int("height") ?? 0)")
        }
    }

    @Test func renditionsAreHighProfile8BitBT709At30fps() async throws {
        let output = try await Fixtures.shared.output(portrait)
        let expected = ["234p": (234, 416), "360p": (360, 640), "720p": (720, 1280), "1080p": (1080, 1920)]
        for rendition in output.manifest.renditions {
            let streams = try Checks.streams("\(output.directory)/\(rendition.playlist)")
            let video = try #require(streams.first { $0.string("codec_type") == "video" })
            #expect(video.string("profile") == "High")
            #expect((video.int("level") ?? 99) <= 41)
            #expect(video.string("pix_fmt") == "yuv420p")
            #expect(video.string("color_transfer") == "bt709")
            #expect(video.string("color_primaries") == "bt709")
            #expect(video.string("r_frame_rate") == "30/1")
            let size = try #require(expected[rendition.name])
            #expect(video.int("width") == size.0 && video.int("height") == size.1)
            let audio = try #require(streams.first { $0.string("codec_type") == "audio" })
            #expect(audio.string("codec_name") == "aac" && audio.string("profile") == "LC")
            #expect(audio.int("sample_rate") == 48000 && audio.int("channels") == 2)
        }
    }

    static func attributes(_ line: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(line.drop { $0 != ":" }.dropFirst())
        while !rest.isEmpty {
            let key = rest.prefix { $0 != "=" }
            rest = rest.dropFirst(key.count + 1)
            var value: Substring
            if rest.first == "\"" {
                let end = rest.dropFirst().firstIndex(of: "\"") ?? rest.endIndex
                value = rest[rest.startIndex...end]
            } else {
                value = rest.prefix { $0 != "," }
            }
            rest = rest.dropFirst(value.count)
            if rest.first == "," { rest = rest.dropFirst() }
            result[String(key)] = String(value)
        }
        return result
    }
}
