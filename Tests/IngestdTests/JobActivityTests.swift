import Foundation
@testable import Ingest
import Testing

/// The console's charts from either store's tallies (no server needed): buckets aligned as
/// `date_bin` aligns them, percentiles by nearest rank, the queue's depth walked back from now.
struct JobActivityTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000 + 45)  // 45 s into a minute

    func at(_ minutesAgo: Int, _ kind: ActivityEvent.Kind, host: String? = "h1") -> ActivityEvent {
        ActivityEvent(at: ActivityWindow.hour.start(now: now).addingTimeInterval(TimeInterval((59 - minutesAgo) * 60 + 10)), kind: kind,
                      host: kind == .entered ? nil : host)
    }

    @Test func bucketsPercentilesAndDepth() {
        let start = ActivityWindow.hour.start(now: now)
        #expect(Int(start.timeIntervalSince1970) % 60 == 0 && now.timeIntervalSince(start) < 3_600 && now.timeIntervalSince(start) >= 3_540)
        let events = [
            at(2, .entered), at(2, .entered), at(2, .entered), at(1, .claimed), at(1, .claimed, host: "h2"),
            at(1, .playable(after: 1.0)), at(1, .playable(after: 3.0)), at(1, .playable(after: 2.0), host: "h2"),
            at(0, .published), at(0, .published, host: "h2"), at(0, .rejected), at(0, .failed, host: "h2"),
            ActivityEvent(at: start.addingTimeInterval(-1), kind: .published, host: "h1"),  // before the window
        ]
        let tallies = ActivityTally.tally(events, since: start, step: 60)
        let activity = JobActivity(window: .hour, now: now, tallies: tallies, queuedNow: 1)
        #expect(activity.buckets.count == 60 && activity.buckets[59].start == start.addingTimeInterval(59 * 60))
        #expect((activity.total.published, activity.total.rejected, activity.total.failed) == (2, 1, 1))
        let minute = activity.buckets[58].tally
        #expect(minute.playable == 3 && minute.playableP50 == 2.0 && minute.playableP95 == 3.0, "\(minute)")
        // 1 queued now; 2 claimed a minute ago, 3 entered before: 3 at the end of minute 57, 1 after.
        #expect(activity.buckets.suffix(4).map(\.depth) == [0, 3, 1, 1])
        #expect(activity.hosts.map(\.name) == ["h1", "h2"])
        #expect(activity.hosts[1].total.published == 1 && activity.hosts[1].total.failed == 1 && activity.hosts[1].buckets[58].tally.playableP50 == 2.0)
        #expect(ActivityTally.percentile(0.95, of: (1...20).map(Double.init)) == 19 && ActivityTally.percentile(0.5, of: [4]) == 4)
    }

    @Test func theEventLogIsReadBackwardsAcrossChunks() throws {
        let path = NSTemporaryDirectory() + "tail-\(UUID().uuidString).ndjson"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let lines = (0..<100).map { "{\"n\":\(String(repeating: "x", count: $0 % 13)),\"i\":\($0)}" }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        for chunk in [7, 37, 1 << 16] {
            var read: [String] = []
            #expect(EventLogTail.lines(of: path, chunk: chunk) { read.append(String($0)); return true } == false)
            #expect(read == lines.reversed(), "chunk \(chunk)")
            var some = 0
            #expect(EventLogTail.lines(of: path, chunk: chunk) { _ in some += 1; return some < 10 } == true && some == 10)
        }
    }
}
