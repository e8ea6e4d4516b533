import Foundation

/// A real HTTP receiver on loopback (`webhook_receiver.py`): verifies Standard Webhooks
/// signatures with Python's own hmac, independently of ingestd, and logs every request.
public final class WebhookReceiver {
    public enum Mode: String { case accept, refuseFirst = "--refuse-first", hang = "--hang", stallBody = "--stall-body", slow = "--slow" }

    public struct Delivery {
        public var id: String
        public var verified: Bool
        public var status: Int
        public var contentType: String?
        public var received: Double
        public var body: [String: Any]
        public var type: String? { body["type"] as? String }
        public var data: [String: Any] { body["data"] as? [String: Any] ?? [:] }
    }

    public let url: String
    private let log: String
    private let process = Process()

    /// A `whsec_` secret of 32 random bytes.
    public static func makeSecret() -> String {
        "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// Writes `secret` to `path` with mode 600, as an operator would.
    public static func writeSecret(_ secret: String, to path: String) throws {
        try Data("\(secret)\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
    }

    public init(secret: String, mode: Mode = .accept, directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let portFile = "\(directory)/port"
        log = "\(directory)/deliveries.ndjson"
        try? FileManager.default.removeItem(atPath: portFile)
        try? FileManager.default.removeItem(atPath: log)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["\(Paths.root)/Tests/IngestdTesting/webhook_receiver.py", "--secret", secret,
                             "--port-file", portFile, "--log", log] + (mode == .accept ? [] : [mode.rawValue])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try Daemon.wait(timeout: 20, "the webhook receiver to listen") { FileManager.default.fileExists(atPath: portFile) }
        url = "http://127.0.0.1:\(try String(contentsOfFile: portFile, encoding: .utf8))/hooks/video"
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Every request received so far, in order.
    public var deliveries: [Delivery] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let id = object["id"] as? String else { return nil }
            return Delivery(id: id, verified: object["verified"] as? Bool ?? false, status: object["status"] as? Int ?? 0,
                            contentType: object["contentType"] as? String, received: object["received"] as? Double ?? 0,
                            body: object["body"] as? [String: Any] ?? [:])
        }
    }
}

extension WebhookReceiver.Delivery {
    /// Every CDN-relative path the event names where the video plays: `upload.playable`'s
    /// master; `upload.published`'s master, MP4, renditions' playlists and posters.
    public var playedPaths: [String] {
        var paths = [data["master"], data["mp4"]].compactMap { $0 as? String }
        paths += ((data["renditions"] as? [[String: Any]]) ?? []).compactMap { $0["playlist"] as? String }
        paths += ((data["posters"] as? [[String: Any]]) ?? []).compactMap { $0["path"] as? String }
        return paths
    }
}
