import Foundation

/// GStreamer's HLS player (`playbin3`, hlsdemux2) run to the end of a URL, and the frames its video
/// sink took, each by its presentation time.
///
/// The frames come from the sink's own `last-message`, printed for every buffer. `-v`'s other lines
/// (each pad's caps, which decoder was built) are not read: gst-launch prints a pad's caps only when
/// the pad's element already sits in the pipeline, so which of them appear varies from run to run.
public struct GStreamerPlayback: Sendable {
    /// The player's exit status, standard output and error.
    public var result: Tool.Result
    /// The presentation time, in seconds, of each frame the video sink took, in the order it took them.
    public var frameTimes: [Double]

    /// Plays `uri` with both sinks unsynchronised, so it runs as fast as it decodes; `timeout` seconds
    /// at most. With `size`, the video reaches the sink as decoded (playbin3's `native-video`: no
    /// scaler), and only at that width and height: a frame of any other size fails the playback.
    public static func play(_ uri: String, size: (width: Int, height: Int)? = nil, timeout: Int = 120) throws -> GStreamerPlayback {
        let sink = "fakesink name=vsink sync=false silent=false"
        let video = size.map { ["flags=video+audio+native-video", "video-sink=capsfilter caps=video/x-raw,width=\($0.width),height=\($0.height) ! \(sink)"] }
            ?? ["video-sink=\(sink)"]
        let result = try Tool.run("timeout", ["\(timeout)", "gst-launch-1.0", "-v", "playbin3", "uri=\(uri)"] + video
                                  + ["audio-sink=fakesink sync=false"])
        return GStreamerPlayback(result: result)
    }

    init(result: Tool.Result) {
        self.result = result
        frameTimes = result.stdout.split(separator: "\n").filter { $0.contains("vsink") && $0.contains("chain") }
            .compactMap { line in
                guard let range = line.range(of: "pts: ") else { return nil }
                let parts = line[range.upperBound...].prefix { $0 != "," && $0 != " " }.split(separator: ":")
                guard parts.count == 3, let h = Double(parts[0]), let m = Double(parts[1]), let s = Double(parts[2]) else { return nil }
                return h * 3600 + m * 60 + s
            }
    }

    /// Played to the end: exit 0, `Got EOS`, no `ERROR` from either stream, and video frames taken.
    public var ended: Bool {
        result.status == 0 && result.stdout.contains("Got EOS") && !result.stdout.contains("ERROR")
            && !result.stderr.contains("ERROR") && !frameTimes.isEmpty
    }

    /// What a failed expectation shows: the status, the frames and both outputs' ends.
    public var summary: String {
        let others = result.stdout.split(separator: "\n").filter { !($0.contains("vsink") && $0.contains("chain")) }
        return "status \(result.status), \(frameTimes.count) frames (\(frameTimes.min() ?? 0)–\(frameTimes.max() ?? 0) s); "
            + "stdout …\(others.suffix(6).joined(separator: "\n").suffix(600)) stderr …\(result.stderr.suffix(400))"
    }
}
