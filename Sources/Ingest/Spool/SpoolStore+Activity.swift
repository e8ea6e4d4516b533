import Foundation
import Transcode

/// The console's charts over the spool: the event log read backwards from its end (and the
/// rotated `.1` after it) until the window's start, so a read costs the window's lines only.
extension SpoolStore {
    public func activity(since: Date, step: Int) async throws -> [ActivityTally] {
        let host = HostName.current
        let oldest = ISO8601DateFormatter().string(from: since)
        var events: [ActivityEvent] = []
        for path in [layout.events, layout.events + ".1"] {
            let reachedStart = EventLogTail.lines(of: path) { line in
                guard let time = Self.field("time", in: line) else { return true }
                guard time >= oldest else { return false }
                if let event = Self.activityEvent(line, host: host) { events.append(event) }
                return true
            }
            if reachedStart { break }
        }
        return ActivityTally.tally(events, since: since, step: step)
    }

    /// What one log line counts for, if anything.
    static func activityEvent(_ line: Substring, host: String) -> ActivityEvent? {
        guard let name = field("event", in: line), let time = field("time", in: line).flatMap({ IngestdDate.date(from: String($0)) })
        else { return nil }
        let kind: ActivityEvent.Kind
        switch name {
        // The intake's `claimed` (no `worker`) takes an upload into the spool's queue; an attempt
        // takes it out, as does `queued` (handed on to the fleet's queue by `watch --database`).
        case "claimed", "retried", "retry", "interrupted": kind = .entered
        case "attempt", "queued": kind = .claimed
        case "published": kind = .published
        case "rejected": kind = .rejected
        case "failed": kind = .failed
        case "playable":
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let after = object["playableAfterSeconds"] as? Double else { return nil }
            kind = .playable(after: after)
        default: return nil
        }
        return ActivityEvent(at: time, kind: kind, host: kind == .entered || name == "queued" ? nil : host)
    }

    /// A string field's value in a log line (written with sorted keys and no escapes in these).
    static func field(_ key: String, in line: Substring) -> Substring? {
        guard let range = line.range(of: "\"\(key)\":\"") else { return nil }
        let rest = line[range.upperBound...]
        return rest.firstIndex(of: "\"").map { rest[..<$0] }
    }
}

/// A file's lines from its last to its first, read in chunks from the end.
enum EventLogTail {
    /// Calls `each` with every line, newest first, until it returns false (then: true, the
    /// reader stopped before the file's start) or the file's start (false). A missing file: false.
    static func lines(of path: String, chunk: Int = 256 << 10, _ each: (Substring) -> Bool) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard var offset = try? handle.seekToEnd() else { return false }
        var carry = Data()
        while offset > 0 {
            let length = min(UInt64(chunk), offset)
            offset -= length
            guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.read(upToCount: Int(length)) else { return false }
            var buffer = data + carry
            // The first line may be cut by the chunk's start: keep it for the next, earlier chunk.
            if offset > 0, let newline = buffer.firstIndex(of: 0x0a) {
                carry = buffer[..<newline]
                buffer = buffer[(newline + 1)...]
            } else if offset > 0 {
                carry = buffer
                continue
            } else {
                carry = Data()
            }
            let text = String(decoding: buffer, as: UTF8.self)
            for line in text.split(separator: "\n").reversed() where !each(line) { return true }
        }
        return false
    }
}
