import IngestdTesting
import Foundation
import Testing
import Ingest

/// events.ndjson rotation: the log never grows past its limit, no line is lost or torn.
@Suite struct EventLogTests {
    @Test func rotatesOnceFullKeepingEveryLineWhole() throws {
        let directory = Paths.scratch("eventlog")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let log = EventLog(path: "\(directory)/events.ndjson", maxBytes: 4096)
        // Two writers at once, as two daemons on one spool would be.
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            for index in 0..<60 { log.append("tick", "w\(writer)", ["n": index, "pad": String(repeating: "x", count: 40)]) }
        }
        let current = try String(contentsOfFile: log.path, encoding: .utf8)
        let rotated = try String(contentsOfFile: log.path + ".1", encoding: .utf8)
        #expect(current.utf8.count < 4096 + 200)
        for text in [current, rotated] {
            for line in text.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["event"] as? String == "tick")
            }
        }
        // The newest lines are in the current file; the one before the rotation is in .1.
        #expect(current.contains("\"n\":59"))
        #expect(rotated.split(separator: "\n").count > 10)
    }
}
