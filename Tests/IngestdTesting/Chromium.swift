import Foundation

/// Headless Chromium's native HLS player, driven as `make bench-3g` drives it
/// (`chromium_play.py`, on Benchmarks/lib/hls_play.py): what a phone's browser engine does with
/// a ladder. `make test-deps` installs Debian's `chromium`.
public enum Chromium {
    public static let script = "\(Paths.root)/Tests/IngestdTesting/chromium_play.py"

    /// The browser's path, or nil when it is not installed.
    public static var binary: String? {
        if FileManager.default.isExecutableFile(atPath: "/usr/lib/chromium/chromium") { return "/usr/lib/chromium/chromium" }
        let found = (try? Tool.run("sh", ["-c", "command -v chromium"]))?.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return found?.isEmpty == false ? found : nil
    }

    /// The player page (`player.html?src=MASTER`): a muted, autoplaying video element that
    /// records its events in `window.__r`.
    public static func playerPage() throws -> String {
        let result = try Tool.run("python3", [script, "page"])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "chromium_play.py page: \(result.stderr)") }
        return result.stdout
    }

    /// Loads `page` and plays until the video ends, fails, or `timeout` seconds pass. The answer:
    /// `ended`, `error`, `timed_out`, `currentTime`, `duration`, `videoWidth`, `videoHeight`,
    /// `heights`, `failed_requests`.
    /// `until`: a growing video, which Chromium plays as live and never ends: the run also ends
    /// once `currentTime` reaches it; `frames` counts the frames presented.
    public static func play(_ page: String, timeout: Int, until: Double? = nil) throws -> [String: Any] {
        let result = try Tool.run("python3", [script, page, "\(timeout)"] + (until.map { ["\($0)"] } ?? []),
                                  environment: binary.map { ["CHROMIUM": $0] } ?? [:])
        guard result.status == 0, let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw Tool.ProbeFailure(message: "chromium_play.py: \(result.status) \(result.stdout) \(result.stderr)")
        }
        return answer
    }
}
