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
