import IngestdTesting
import Foundation
@testable import Ingest
import Testing
import Transcode

/// Every entry renamed or written into `incoming/` is taken, whatever the interleaving of
/// inotify's events and the daemon's listings (issue #27). The first two tests drive the real
/// watcher and tracker in-process, placing the race exactly; the others run the daemon.
@Suite(.serialized) struct SpoolArrivalTests {
    /// An empty spool, a watcher on its `incoming/` and a tracker (settle 0.2 s) that has taken
    /// its start-up listing.
    func watchedSpool(_ name: String) throws -> (spool: Spool, watcher: DirectoryWatcher, tracker: ArrivalTracker) {
        let root = Paths.scratch("arrival-\(name)")
        try? FileManager.default.removeItem(atPath: root)
        let spool = Spool(layout: SpoolLayout(root: root))
        try FileManager.default.createDirectory(atPath: spool.layout.incoming, withIntermediateDirectories: true)
        let watcher = DirectoryWatcher(directory: spool.layout.incoming) {}
        #expect(watcher.isActive)
        var tracker = ArrivalTracker(settleSeconds: 0.2, admission: Admission(limits: Preset.builtIn.limits), watcher: watcher)
        _ = tracker.scan(spool.arrivals)
        return (spool, watcher, tracker)
    }

    func awaitEvent(_ watcher: DirectoryWatcher, _ name: String, _ state: DirectoryWatcher.State) throws {
        try Daemon.wait(timeout: 60, "inotify's \(state) for \(name)") { watcher.state(of: name) == state }
    }

    /// The race of issue #27, placed on purpose: an upload renamed in after `incoming/` was
    /// listed, whose event the watcher applies before the tracker trims what it knows to the
    /// listing. Before the fix the trim dropped that event and, with no event, a file that was
    /// not there at start-up never completed.
    @Test func anEventThatLandsWhileIncomingIsListedIsKept() throws {
        var (spool, watcher, tracker) = try watchedSpool("race")
        defer { watcher.stop() }
        let outside = "\(spool.layout.root)/late.mp4"
        try FileManager.default.copyItem(atPath: Paths.sample("hdr_hlg.mp4"), toPath: outside)
        let during = tracker.scan {
            let listed = spool.arrivals()
            rename(outside, "\(spool.layout.incoming)/late.mp4")
            try? awaitEvent(watcher, "late.mp4", .renamedIn)
            return listed
        }
        #expect(during.arrivals.isEmpty, "listed before the rename")
        let late = try #require(tracker.scan(spool.arrivals).arrivals.first)
        #expect(tracker.verdict(late, now: Date()) == .complete(announced: true), "renamed in: complete at once")
    }

    /// The safety net under inotify: an entry no event announced completes once it has settled
    /// (and says so, for the metric), unless the last event says it is being written; an empty
    /// file waits ten times the settle time.
    @Test func anEntryNoEventAnnouncedCompletesBySettling() throws {
        var (spool, watcher, tracker) = try watchedSpool("unannounced")
        defer { watcher.stop() }
        let incoming = spool.layout.incoming
        let outside = "\(spool.layout.root)/quiet.mp4"
        try FileManager.default.copyItem(atPath: Paths.sample("hdr_hlg.mp4"), toPath: outside)
        rename(outside, "\(incoming)/quiet.mp4")
        try awaitEvent(watcher, "quiet.mp4", .renamedIn)
        watcher.forgetAll()  // as if the event had been lost
        // Written in place and still open: its last event says so.
        let descriptor = open("\(incoming)/open.mp4", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(repeating: 7, count: 1000))
        try awaitEvent(watcher, "open.mp4", .beingWritten)
        // Created in place, nothing written yet.
        #expect(close(open("\(incoming)/empty.mp4", O_WRONLY | O_CREAT | O_EXCL, 0o644)) == 0)
        try awaitEvent(watcher, "empty.mp4", .closedAfterWriting)

        let start = Date()
        func verdicts(after seconds: Double) -> [String: ArrivalTracker.Verdict] {
            let arrivals = tracker.scan(spool.arrivals).arrivals
            return Dictionary(uniqueKeysWithValues: arrivals.map { ($0.name, tracker.verdict($0, now: start.addingTimeInterval(seconds))) })
        }
        #expect(verdicts(after: 0) == ["quiet.mp4": .waiting, "open.mp4": .waiting, "empty.mp4": .waiting], "first seen")
        #expect(verdicts(after: 0.1) == ["quiet.mp4": .waiting, "open.mp4": .waiting, "empty.mp4": .waiting], "not settled")
        #expect(verdicts(after: 0.3) == ["quiet.mp4": .complete(announced: false), "open.mp4": .waiting, "empty.mp4": .waiting])
        #expect(verdicts(after: 60)["open.mp4"] == .waiting, "still open for writing")
        #expect(verdicts(after: 60)["empty.mp4"] == .complete(announced: true), "empty: after ten times the settle time")
        try handle.close()
        try awaitEvent(watcher, "open.mp4", .closedAfterWriting)
        #expect(verdicts(after: 60.3)["open.mp4"] == .complete(announced: true), "closed, then settled")
    }

    /// Ten bursts of 300 renames into `incoming/`, each a mix of what phones and strangers send
    /// (uploads over the size limit, links, directories without upload.json, junk bytes, real
    /// clips, upload directories with upload.json), one daemon throughout: every entry is taken
    /// and ends where its kind says, with the reason's code; nothing stays in `incoming/`.
    @Test func burstsOfRenamesAreAllTaken() throws {
        let base = Paths.scratch("arrival-bursts")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn", staging = "\(base)/staging"
        var preset = Preset.builtIn
        preset.limits.maxBytes = 1_000_000
        let presetPath = "\(base)/preset.json"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try preset.canonicalJSON().write(to: URL(fileURLWithPath: presetPath))
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--preset", presetPath, "--jobs", "2"])
        try Daemon.wait(timeout: 30, "the daemon to watch") { Daemon.events(spool).contains { $0["event"] as? String == "started" } }

        // What each kind of entry becomes: nil for published.
        let kinds: [(prefix: String, count: Int, code: String?)] = [
            ("big", 250, "too_large"), ("link", 20, "symlink"), ("nomanifest", 12, "bad_upload"),
            ("junk", 12, "corrupt_input"), ("clip", 1, nil), ("upload", 1, nil),
        ]
        let clip = try Data(contentsOf: URL(fileURLWithPath: Paths.sample("upload/clip1.mp4")))
        var expected: [String: String?] = [:]
        var waits: [Double] = []
        for burst in 0..<10 {
            var names: [String] = []
            for kind in kinds {
                for index in 0..<kind.count {
                    let name = "b\(burst)-\(kind.prefix)\(index)" + (["nomanifest", "upload"].contains(kind.prefix) ? "" : ".mp4")
                    let path = "\(staging)/\(name)"
                    switch kind.prefix {
                    case "big": try makeSparse(path, bytes: 2_000_000)
                    case "link": #expect(symlink(Paths.sample("hdr_hlg.mp4"), path) == 0)
                    case "junk": try Data(String(repeating: "\(name): not a video\n", count: 20).utf8).write(to: URL(fileURLWithPath: path))
                    case "clip": try clip.write(to: URL(fileURLWithPath: path))
                    default:
                        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                        try clip.write(to: URL(fileURLWithPath: "\(path)/clip1.mp4"))
                        if kind.prefix == "upload" {
                            try Data(#"{"id": "\#(name)", "clips": [{"file": "clip1.mp4"}]}"#.utf8).write(to: URL(fileURLWithPath: "\(path)/upload.json"))
                        }
                    }
                    names.append(name)
                    expected[name] = kind.code
                }
            }
            names.shuffle()
            for name in names { #expect(rename("\(staging)/\(name)", "\(spool)/incoming/\(name)") == 0) }
            let renamed = Date()
            try Daemon.wait(timeout: 120, "burst \(burst) to leave incoming/ (left: \(Daemon.entries("\(spool)/incoming").count))") {
                Daemon.entries("\(spool)/incoming").isEmpty
            }
            waits.append(Date().timeIntervalSince(renamed))
        }
        try Daemon.wait(timeout: 300, "every upload to end") {
            Daemon.settled(spool) && ["archive", "rejected", "failed"].map { Daemon.entries("\(spool)/\($0)").count }.reduce(0, +) == expected.count
        }
        print("bursts: last entry of each burst left incoming/ after (s): \(waits.map { String(format: "%.2f", $0) })")

        // Each entry was claimed once and ended as its kind says.
        let claimed = Daemon.events(spool).filter { $0["event"] as? String == "claimed" }
        var ids: [String: String] = [:]
        for event in claimed { if let name = event["name"] as? String, let id = event["id"] as? String { ids[name] = id } }
        #expect(claimed.count == expected.count && ids.count == expected.count, "each entry claimed once: \(claimed.count)")
        var wrong: [String] = []
        for (name, code) in expected {
            guard let id = ids[name] else { wrong.append("\(name): never claimed"); continue }
            if let code {
                let reason = JSONFile.read(Reason.self, from: "\(spool)/rejected/\(id)/reason.json")
                if reason?.code != code { wrong.append("\(name): \(reason?.code ?? "not in rejected/"), want \(code)") }
            } else if !FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json")
                        || !FileManager.default.fileExists(atPath: "\(spool)/archive/\(id)") {
                wrong.append("\(name): not published")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong: \(wrong.sorted().prefix(20))")
        let published = Daemon.entries("\(spool)/archive")
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(published[0])/manifest.json")))
        let probed = try Tool.ffprobe(["-show_entries", "format=duration", "\(cdn)/\(published[0])/\(manifest.mp4)"])
        let duration = try #require((probed["format"] as? [String: Any])?.double("duration"))
        #expect(duration > 1.9 && abs(duration - manifest.durationSeconds) < 0.2, "published output plays its length: \(duration) s")
        let metrics = try String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)
        #expect(metrics.contains("ingestd_spool_rescan_found_total 0"), "every entry was announced by an event")
        #expect(kill(daemon.pid, 0) == 0, "the daemon is still running")
    }

    /// inotify's queue overflows while the daemon is frozen (SIGSTOP): the close of a file
    /// written in place and a handful of renames are lost. The daemon counts the overflow, drops
    /// what it knew (the file's stale "being written") and takes every entry by settling.
    @Test func aQueueOverflowDropsStaleStatesAndEveryEntryIsTaken() throws {
        let base = Paths.scratch("arrival-overflow")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)  // --settle 0.5
        try Daemon.wait(timeout: 30, "the daemon to watch") { Daemon.events(spool).contains { $0["event"] as? String == "started" } }
        let incoming = "\(spool)/incoming"
        let video = try Data(contentsOf: URL(fileURLWithPath: Paths.sample("hdr_hlg.mp4")))
        let descriptor = open("\(incoming)/held.mp4", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        let held = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try held.write(contentsOf: video.prefix(10_000))
        sleep(2)
        #expect(Daemon.entries(incoming).contains("held.mp4"), "not taken while open for writing")

        #expect(kill(daemon.pid, SIGSTOP) == 0)
        // kill() returns before the stop takes effect: wait until every thread is stopped, so
        // the watcher cannot drain the queue while it is flooded.
        try Daemon.wait(timeout: 10, "the daemon to stop") {
            Daemon.entries("/proc/\(daemon.pid)/task").allSatisfy { task in
                let stat = (try? String(contentsOfFile: "/proc/\(daemon.pid)/task/\(task)/stat", encoding: .utf8)) ?? ""
                return stat.split(separator: ")").last?.split(separator: " ").first == "T"
            }
        }
        // More events than the kernel queues (fs.inotify.max_queued_events): writes alternating
        // between two hidden files, which the kernel cannot merge.
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        let noise: [Int32] = [".noise-a", ".noise-b"].map { (name: String) -> Int32 in open("\(incoming)/\(name)", O_WRONLY | O_CREAT, 0o644) }
        for index in 0...(2 * limit) { _ = write(noise[index % 2], "x", 1) }
        noise.forEach { close($0) }
        try held.write(contentsOf: video.dropFirst(10_000))
        try held.close()
        for index in 0..<3 { try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: spool, as: "lost\(index).webm") }
        #expect(kill(daemon.pid, SIGCONT) == 0)

        try Daemon.wait(timeout: 120, "every entry to be published") {
            Daemon.entries(incoming).filter { !$0.hasPrefix(".") }.isEmpty && Daemon.entries("\(spool)/work").isEmpty
                && Daemon.entries("\(spool)/archive").count == 4
        }
        #expect(Daemon.entries("\(spool)/rejected").isEmpty && Daemon.entries("\(spool)/failed").isEmpty)
        let heldID = try #require(Daemon.events(spool).first { $0["event"] as? String == "claimed" && $0["name"] as? String == "held.mp4" }?["id"] as? String)
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(heldID)/manifest.json")))
        #expect(manifest.durationSeconds > 1.9, "the whole file was transcoded (\(manifest.durationSeconds) s)")
        let metrics = try String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)
        #expect(metrics.contains("ingestd_spool_watch_overflows_total 1"), "overflow counted")
        #expect(metrics.contains("ingestd_spool_rescan_found_total 0"), "entries after an overflow are not a watcher bug")
    }

    func makeSparse(_ path: String, bytes: off_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        defer { close(descriptor) }
        guard descriptor >= 0, ftruncate(descriptor, bytes) == 0 else { throw Tool.ProbeFailure(message: "cannot make \(path)") }
    }
}
