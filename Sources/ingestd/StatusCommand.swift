import ArgumentParser
import Foundation
import Ingest

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a spool's queue depth, jobs in flight with progress, and recent failures.",
        discussion: """
        Reads the spool directory only; works whether or not a daemon is running.
          ingestd status --spool /var/spool/ingestd
          ingestd status --spool /var/spool/ingestd --json | jq .inFlight
        """
    )

    @Option(help: ArgumentHelp("Spool directory.", valueName: "dir"))
    var spool: String

    @Flag(help: "Print the status as JSON.")
    var json = false

    func run() throws {
        guard FileManager.default.fileExists(atPath: spool) else {
            FileHandle.standardError.write(Data("ingestd: error: \(spool): no such spool\n".utf8))
            throw ExitCode(ExitStatus.inputMissing.rawValue)
        }
        let status = SpoolStatus(layout: SpoolLayout(root: spool))
        if json {
            let encoder = JSONEncoder.iso
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
            return
        }
        print("queue depth: \(status.queueDepth)")
        print("totals: " + status.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        print("in flight: \(status.inFlight.count)")
        for job in status.inFlight {
            let progress = job.progress.map { String(format: "%3.0f%% %.2fx", $0.fraction * 100, $0.speed) } ?? "starting"
            print("  \(job.id)  \(progress)  attempt \(job.attempts + 1)  \(job.original)")
        }
        if !status.recentFailures.isEmpty {
            print("recent failures:")
            for failure in status.recentFailures {
                print("  \(failure.state)/\(failure.id)  \(failure.reason.code): \(failure.reason.message)")
            }
        }
    }
}
