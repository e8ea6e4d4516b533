import Foundation
import Transcode

/// Independent measurements of outputs, made with ffprobe/ffmpeg rather than with ingestd's code.
public enum Checks {
    /// Decoded video frames of a file or playlist: (pts seconds, is keyframe, picture type).
    public static func frames(_ path: String) throws -> [(time: Double, key: Bool, type: String)] {
        let json = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "frame=pts_time,key_frame,pict_type", path])
        return json.list("frames").map { ($0.double("pts_time") ?? -1, $0.int("key_frame") == 1, $0.string("pict_type") ?? "?") }
    }

    public static func streams(_ path: String) throws -> [[String: Any]] {
        try Tool.ffprobe(["-show_streams", path]).list("streams")
    }

    /// Parsed media playlist of a rung directory.
    public static func playlist(_ directory: String) throws -> MediaPlaylist {
        try MediaPlaylist(parsing: String(contentsOfFile: "\(directory)/index.m3u8", encoding: .utf8))
    }

    public static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Mean RGB of a region of the first frame (crop expression in ffmpeg syntax).
    public static func meanColor(_ path: String, crop: String, at seconds: Double = 0.5) throws -> [Int] {
        let raw = Paths.scratch("color-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let result = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-ss", String(seconds), "-frames:v", "1",
                                             "-vf", "crop=\(crop),scale=1:1:flags=area", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", raw])
        guard result.status == 0, let data = FileManager.default.contents(atPath: raw), data.count == 3 else {
            throw Tool.ProbeFailure(message: "meanColor: \(result.stderr)")
        }
        return data.map(Int.init)
    }

    /// signalstats of the first frame of an image or video: YAVG, YLOW, YHIGH.
    public static func lumaStats(_ path: String) throws -> (average: Double, low: Double, high: Double) {
        let json = try Tool.ffprobe(["-f", "lavfi", "-show_entries", "frame_tags", "movie=\(path),signalstats"])
        let tags = (json.list("frames").first?["tags"] as? [String: Any]) ?? [:]
        return (tags.double("lavfi.signalstats.YAVG") ?? -1, tags.double("lavfi.signalstats.YLOW") ?? -1,
                tags.double("lavfi.signalstats.YHIGH") ?? -1)
    }

    /// Mean luma (signalstats YAVG) of every frame of a video, in order.
    public static func frameLuma(_ path: String) throws -> [Double] {
        let json = try Tool.ffprobe(["-f", "lavfi", "-show_entries", "frame_tags=lavfi.signalstats.YAVG", "movie=\(path),signalstats"])
        return json.list("frames").compactMap { ($0["tags"] as? [String: Any])?.double("lavfi.signalstats.YAVG") }
    }

    /// An animated WebP as libwebp's own `webpmux -info` reads it: canvas, loop count (0 is
    /// forever) and each frame's duration in milliseconds.
    public static func webpAnimation(_ path: String) throws -> (width: Int, height: Int, loop: Int, durations: [Int]) {
        let result = try Tool.run("webpmux", ["-info", path])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "webpmux -info \(path): \(result.stderr)") }
        let lines = result.stdout.split(separator: "\n").map(String.init)
        func numbers(_ line: String?) -> [Int] { (line ?? "").split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } }
        let canvas = numbers(lines.first { $0.hasPrefix("Canvas size:") })
        let loop = lines.first { $0.contains("Loop Count") }.flatMap { numbers(String($0.split(separator: ":").last ?? "")).first }
        // Frame rows: "  1:   240   426    no        0        0       83 …" (number, w, h, alpha, x, y, duration).
        let durations = lines.filter { $0.range(of: #"^\s*\d+:"#, options: .regularExpression) != nil }.map { numbers($0)[5] }
        guard canvas.count == 2, let loop else { throw Tool.ProbeFailure(message: "not an animated WebP: \(result.stdout)") }
        return (canvas[0], canvas[1], loop, durations)
    }

    /// The first frame of an animated WebP decoded by libwebp's `dwebp`, measured like ``lumaStats(_:)``.
    public static func webpFirstFrameLuma(_ path: String) throws -> (average: Double, low: Double, high: Double) {
        let frame = Paths.scratch("frame-\(UUID().uuidString).webp"), picture = Paths.scratch("frame-\(UUID().uuidString).pam")
        defer { for file in [frame, picture] { try? FileManager.default.removeItem(atPath: file) } }
        for (tool, arguments) in [("webpmux", ["-get", "frame", "1", path, "-o", frame]), ("dwebp", [frame, "-pam", "-o", picture])] {
            let result = try Tool.run(tool, arguments)
            guard result.status == 0 else { throw Tool.ProbeFailure(message: "\(tool): \(result.stderr)") }
        }
        return try lumaStats(picture)
    }

    /// First frame of one fMP4 segment (init + media segment concatenated), decoded by ffprobe.
    public static func firstFrameOfSegment(directory: String, segment: String) throws -> (key: Bool, type: String) {
        var data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/init.mp4"))
        data.append(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(segment)")))
        let joined = Paths.scratch("segment-\(UUID().uuidString).mp4")
        try data.write(to: URL(fileURLWithPath: joined))
        defer { try? FileManager.default.removeItem(atPath: joined) }
        let json = try Tool.ffprobe(["-select_streams", "v:0", "-read_intervals", "%+#1",
                                     "-show_entries", "frame=key_frame,pict_type", joined])
        let first = try requireFirst(json.list("frames"))
        return (first.int("key_frame") == 1, first.string("pict_type") ?? "?")
    }

    private static func requireFirst(_ frames: [[String: Any]]) throws -> [String: Any] {
        guard let first = frames.first else { throw Tool.ProbeFailure(message: "no frames") }
        return first
    }
}

extension Checks {
    /// Where `relative` (`video.mp4`, `360p/index.m3u8`) of the video `CDN/<id>` is: in place for
    /// a video published whole, or in the version its `master.m3u8` points into (`t<token>/…`)
    /// for one played while it was made.
    public static func published(_ video: String, _ relative: String) -> String {
        let flat = "\(video)/\(relative)"
        guard !FileManager.default.fileExists(atPath: flat),
              let master = try? String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8),
              let uri = master.split(separator: "\n").first(where: { !$0.hasPrefix("#") && !$0.isEmpty }),
              let version = uri.split(separator: "/").first, uri.contains("/") else { return flat }
        return "\(video)/\(version)/\(relative)"
    }
}
