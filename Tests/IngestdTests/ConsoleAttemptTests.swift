@testable import Console
import Foundation
import Ingest
import Testing

/// The console's attempts table is read from either store's events (no server needed).
struct ConsoleAttemptTests {
    func event(_ seconds: Double, _ name: String, _ data: String) -> JobHistoryEvent {
        JobHistoryEvent(at: Date(timeIntervalSince1970: 1_800_000_000 + seconds), event: name, data: data)
    }

    @Test func theQueuesEventsMakeOneRowPerAttempt() {
        let rows = AttemptRow.attempts(in: [
            event(0, "queued", #"{"input": "/u/a.mp4"}"#),
            event(1, "claimed", #"{"worker": "h1/10", "attempt": 1}"#),
            event(5, "retry", #"{"attempt": "1", "code": "crashed", "log": "Fatal error"}"#),
            event(6, "claimed", #"{"worker": "h2/20", "attempt": 2}"#),
            event(7, "playable", #"{"output": "cdn/x"}"#),
            event(9, "published", #"{"attempt": 2, "output": "cdn/x"}"#),
            event(10, "retried", #"{"from": "failed"}"#),
            event(11, "claimed", #"{"worker": "h1/10", "attempt": 1}"#),
        ])
        #expect(rows.map(\.host) == ["h1/10", "h2/20", "h1/10"])
        #expect(rows.map(\.number) == [1, 2, 1])
        #expect(rows.map(\.result) == ["retry", "published", nil], "the last one runs")
        #expect(rows[0].code == "crashed" && rows[0].log == "Fatal error" && rows[0].ended == Date(timeIntervalSince1970: 1_800_000_005))
    }

    @Test func theSpoolIntakesClaimIsNoAttempt() {
        // A spool job published on its first attempt, as the daemon logs it (issue #70: the
        // intake's `claimed` was drawn as a second, never-ending attempt).
        let history = [
            event(0, "claimed", #"{"name": "a.mp4", "pid": 7}"#),
            event(0.2, "queued", #"{"upload": "/s/queued/a/upload"}"#),
            event(30.4, "attempt", #"{"attempt": 1, "token": 1, "pid": 7}"#),
            event(31.5, "playable", #"{"listedSeconds": 2, "playableAfterSeconds": 1.146, "stages": {"firstSegments": 1.06, "probe": 0.05}}"#),
            event(33, "published", #"{"output": "/cdn/a", "duration": 4}"#),
        ]
        let rows = AttemptRow.attempts(in: history)
        #expect(rows.count == 1 && rows[0].number == 1 && rows[0].result == "published")
        #expect(abs((rows[0].waited ?? 0) - 30.2) < 0.01, "queued 30.2 s before its attempt: \(rows[0].waited ?? -1)")
        #expect(history.map(HistorySentence.of) == [
            "Taken in from incoming/ as a.mp4 by the daemon (pid 7)", "Queued", "Attempt 1 started on \(HostName.current) (pid 7)",
            "Playable after 1.15 s (probe 0.05 s, first segments 1.06 s); 2 s listed", "Published to /cdn/a: 4.00 s of video",
        ])
    }

    @Test func theSpoolsEventsToo() {
        let rows = AttemptRow.attempts(in: [
            event(0, "attempt", #"{"attempt": 1, "token": 1, "pid": 42}"#),
            event(3, "rejected", #"{"attempts": 1, "code": "corrupt_input", "message": "x"}"#),
            event(4, "rejected", #"{"attempts": 1, "code": "corrupt_input", "message": "x"}"#),
        ])
        #expect(rows.count == 1 && rows[0].result == "rejected" && rows[0].code == "corrupt_input")
        #expect(rows[0].host?.hasSuffix("(pid 42)") == true, "an end without an open attempt is not one")
    }
}
