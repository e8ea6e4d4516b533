import Foundation

/// The append-only `events.ndjson`: one JSON object per line, written with `O_APPEND` so lines
/// from several processes never interleave.
public struct EventLog: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Appends `{"time": …, "event": name, "id": id, …fields}`.
    public func append(_ event: String, _ id: String? = nil, _ fields: [String: any Sendable] = [:]) {
        var object: [String: Any] = ["time": ISO8601DateFormatter().string(from: Date()), "event": event]
        if let id { object["id"] = id }
        for (key, value) in fields { object[key] = value }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0a)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
