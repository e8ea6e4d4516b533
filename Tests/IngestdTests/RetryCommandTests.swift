import Foundation
import Ingest
import IngestdTesting
import Testing

/// `ingestd retry` on a spool its daemon is running: an operator's retry puts a refused upload
/// back, the daemon runs it again, and a retry of a job in another state changes nothing.
@Suite(.offTheSharedPool)
struct RetryCommandTests {
    @Test func aRetriedUploadRunsAgainAndAJobNotEndedThatWayIsLeftAlone() throws {
        let base = Paths.scratch("retry-command")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "bad.mp4")
        // The folder is filed before the daemon lets go of the job's lock, and a retry skips a
        // job another process holds: wait for both.
        try Daemon.wait(timeout: 60, "the upload rejected and let go") {
            Daemon.entries("\(spool)/rejected").count == 1
                && Daemon.entries("\(spool)/rejected").allSatisfy { !JobLock.isHeld(directory: "\(spool)/rejected/\($0)") }
        }
        let id = try #require(Daemon.entries("\(spool)/rejected").first)

        let refused = try Tool.run(Paths.binary, ["retry", "--spool", spool, "--json", id])
        #expect(refused.status == 1, "not failed: skipped unless --rejected (\(refused.stderr))")
        #expect(refused.stdout.contains("\"skipped\"") && Daemon.entries("\(spool)/rejected") == [id])

        let run = try Tool.run(Paths.binary, ["retry", "--spool", spool, "--rejected", "--json", id])
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: [String]], "\(run.stderr)")
        #expect(run.status == 0 && answer["retried"] == [id] && answer["skipped"] == [], "\(run.stdout) \(run.stderr)")
        // The event is appended before the folder is filed (at least once): wait for both.
        try Daemon.wait(timeout: 60, "the daemon to run it again and file it") {
            Daemon.events(spool).filter { $0["event"] as? String == "rejected" }.count == 2 && Daemon.entries("\(spool)/rejected") == [id]
        }
        let events = Daemon.events(spool).filter { $0["id"] as? String == id }.compactMap { $0["event"] as? String }
        #expect(events.filter { $0 == "retried" }.count == 1 && events.last == "rejected", "\(events)")
        #expect(Daemon.entries("\(spool)/rejected") == [id] && Daemon.entries("\(spool)/work").isEmpty)
        _ = daemon
    }
}
