import Foundation
import IngestdTesting
import Testing

/// The margin guard in the daemon as the shipped unit runs it: an unprivileged user with no
/// capabilities (`setpriv`). A shown video whose job process the test freezes runs short; the
/// daemon says so in `metrics.prom`, claims nothing meanwhile, and once the video goes on both
/// uploads are published.
@Suite(.serialized, .offTheSharedPool) struct ShownMarginDaemonTests {
    static let nobody = "65534"

    @Test func aShownVideoThatRunsShortHoldsTheClaimsOfAnUnprivilegedDaemon() async throws {
        let base = Paths.scratch("shown-margin")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        for directory in ["\(spool)/incoming", cdn] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        // A copy of the binary where the other user can reach it: the checkout may sit under a
        // directory only root may enter (mktemp -d makes 0700 ones).
        let binary = "\(base)/ingestd"
        try FileManager.default.copyItem(atPath: Paths.binary, toPath: binary)
        // One small rung: its gate opens long before the end, however busy the host.
        let (long, preset) = try await GrowingVideoTests.lightUpload(presetPath: "\(base)/light.json")
        _ = try Tool.run("chown", ["-R", "\(Self.nobody):\(Self.nobody)", base])
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "2", "--margin", "4", "--preset", preset], launcher: [
            "/usr/bin/setpriv", "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", "--inh-caps=-all", "--",
        ], binary: binary)
        func status() -> String { (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? "" }
        try Daemon.wait(timeout: 30, "setpriv to exec the daemon") { Daemon.commandLine(daemon.pid).hasPrefix(binary + " watch ") }
        #expect(status().contains("Uid:\t\(Self.nobody)") && status().contains("CapEff:\t0000000000000000"), "\(status())")

        try Daemon.drop(long, into: spool, as: "shown.mp4")
        let jobProcess = try Daemon.jobProcess(of: daemon.pid)
        // The job runs only in 50 ms steps the test gives it until its video shows, then stays
        // frozen (the host gives it nothing more: its earliest viewer catches up). So it cannot
        // list much more after its gate opened, which the light preset opens early.
        defer { kill(jobProcess, SIGCONT) }
        try Daemon.step(jobProcess, timeout: 240, "the first video shown") { !Self.ids(spool, event: "playable").isEmpty }
        let shown = try #require(Self.ids(spool, event: "playable").first)
        try Daemon.wait(timeout: 120, "the shown video counted as run short") {
            Self.metric(spool, "ingestd_shown_ran_short_total") == 1
        }
        #expect((Self.metric(spool, "ingestd_shown_margin_seconds") ?? 0) < 0)

        try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: spool, as: "later.mp4")
        try await Task.sleep(for: .seconds(3))  // a busy host can only hide a claim here, never make one
        #expect(Self.ids(spool, event: "attempt").count == 1, "nothing claimed while a shown video is short")

        kill(jobProcess, SIGCONT)
        try Daemon.wait(timeout: 400, "both published and filed") {
            Self.ids(spool, event: "published").count == 2 && Daemon.entries("\(spool)/archive").count == 2
        }
        #expect(Self.ids(spool, event: "attempt").count == 2, "one attempt each: the wait charged nothing")
        #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(shown)/manifest.json"))
        _ = daemon
    }

    /// Ids with an `event` line in the spool's events, in order.
    static func ids(_ spool: String, event: String) -> [String] {
        Daemon.events(spool).filter { $0["event"] as? String == event }.compactMap { $0["id"] as? String }
    }

    /// A sample's value in the spool's `metrics.prom`.
    static func metric(_ spool: String, _ name: String) -> Double? {
        let text = (try? String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix("\(name) ") }.flatMap { Double($0.split(separator: " ").last!) }
    }
}
