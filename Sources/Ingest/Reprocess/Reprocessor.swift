import Foundation
import Transcode

/// What a reprocess run decided, and then did, for one video.
public struct ReprocessItem: Sendable, Codable {
    public enum Action: String, Sendable, Codable {
        case process, skip
    }

    public enum Result: String, Sendable, Codable {
        case published, skipped, failed, interrupted
    }

    public var id: String
    public var source: String
    public var holdsUpload: Bool
    public var action: Action
    /// Why: "not published yet", "published with preset 1a2b…", "already published with this preset".
    public var why: String
    public var result: Result?
    public var error: String?
    public var seconds: Double?
    /// Where it is published now: the version directory or prefix the run switched to.
    public var version: String?

    /// What the job process is given.
    var input: TranscodeJob.Input { ArchivedVideo(id: id, source: source, holdsUpload: holdsUpload).input }

    /// A daemon archive's job folder (`SPOOL/archive/<id>`), whose lock a deletion waits for.
    var jobDirectory: String? { holdsUpload ? (source as NSString).deletingLastPathComponent : nil }

    /// Whether the spool beside the archive deleted it (its tombstone).
    var isDeleted: Bool {
        guard let jobDirectory else { return false }
        let spool = ((jobDirectory as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        return SpoolLayout(root: spool).isDeleted(id)
    }
}

/// Progress of a batch, sent out of band after every finished video.
public struct ReprocessProgress: Sendable {
    public var done: Int
    public var total: Int
    public var failed: Int
    public var elapsedSeconds: Double

    public var etaSeconds: Double? {
        done > 0 ? elapsedSeconds / Double(done) * Double(total - done) : nil
    }
}

/// Re-encodes an archive with a preset, resumably: videos already published with the preset's
/// hash are skipped, each video is published as a new version atomically, and one bad video
/// does not stop the batch.
public struct Reprocessor: Sendable {
    /// Where the videos are published (``OutputTarget/republish(_:presetHash:encode:)``).
    public var target: any OutputTarget
    public var preset: Preset
    public var runner: JobRunner
    public var jobs: Int

    public init(target: any OutputTarget, preset: Preset, runner: JobRunner, jobs: Int) {
        self.target = target
        self.preset = preset
        self.runner = runner
        self.jobs = jobs
    }

    /// Decides, for each video, whether it needs work.
    public func plan(_ videos: [ArchivedVideo]) async -> [ReprocessItem] {
        var items: [ReprocessItem] = []
        for video in videos {
            var item = ReprocessItem(id: video.id, source: video.source, holdsUpload: video.holdsUpload, action: .process, why: "not published yet")
            if item.isDeleted {
                (item.action, item.why) = (.skip, "deleted: never republished")
                items.append(item)
                continue
            }
            do {
                switch try await target.publishedPreset(of: video.id) {
                case preset.contentHash?: (item.action, item.why) = (.skip, "already published with preset \(preset.contentHash)")
                case let other?:
                    item.why = "published with preset \(other)"
                    if let ladders = preset.codecLadders, !ladders.isEmpty, target.keepsPublishedLadders {
                        item.why += ": adds \(ladders.map(\.codec.rawValue).joined(separator: ", ")) beside its H.264 ladder, kept"
                    }
                case nil: break
                }
            } catch {
                item.why = "cannot read what is published: \(error)"
            }
            items.append(item)
        }
        return items
    }

    /// Runs the plan with `jobs` videos at a time; `progress` receives an update per video.
    public func run(_ plan: [ReprocessItem], stop: StopFlag, progress: AsyncStream<ReprocessProgress>.Continuation? = nil) async -> [ReprocessItem] {
        let started = ContinuousClock.now
        var results = plan
        var done = 0, failed = 0
        for index in results.indices where results[index].action == .skip {
            results[index].result = .skipped
            target.collectRetired(results[index].id)
        }
        let pending = results.indices.filter { results[$0].action == .process }
        await withTaskGroup(of: (Int, ReprocessItem).self) { group in
            var next = pending.makeIterator()
            func launch() -> Bool {
                guard !stop.value, let index = next.next() else { return false }
                let item = results[index]
                group.addTask { (index, await self.process(item, stop: stop)) }
                return true
            }
            for _ in 0..<jobs where !launch() { break }
            while let (index, item) = await group.next() {
                results[index] = item
                done += 1
                if item.result == .failed { failed += 1 }
                progress?.yield(ReprocessProgress(done: done, total: pending.count, failed: failed,
                                                  elapsedSeconds: (ContinuousClock.now - started).seconds))
                _ = launch()
            }
        }
        progress?.finish()
        for index in results.indices where results[index].result == nil { results[index].result = .interrupted }
        return results
    }

    /// Publishes one video's new version through the target. A daemon archive's video is done
    /// under its job's lock and not at all once deleted: a deletion waits for the lock, and one
    /// recorded meanwhile stops the switch to the new version.
    private func process(_ initial: ReprocessItem, stop: StopFlag) async -> ReprocessItem {
        var item = initial
        var lock: JobLock?
        if let directory = item.jobDirectory {
            lock = JobLock(directory: directory)
            guard lock != nil, !item.isDeleted else {
                (item.result, item.why) = (.skipped, lock == nil ? "its job is held by another process (a deletion or a retry)" : "deleted: never republished")
                return item
            }
        }
        defer { lock?.release() }
        let started = ContinuousClock.now
        let input = item.input
        // A signed video stays signed: its marker stays beside the versions, and the new manifest says so.
        var signedRunner = runner
        signedRunner.playback = item.jobDirectory.flatMap { JSONFile.read(JobRecord.self, from: "\($0)/job.json")?.playback }
        let runner = signedRunner
        // A preset with other codecs keeps the H.264 ladder and sound published now, and adds to them.
        let adds = preset.codecLadders?.isEmpty == false
        let deleted: @Sendable () -> Bool = { [item] in item.isDeleted }
        let republished = await target.republish(item.id, presetHash: preset.contentHash) { directory, published, playing in
            // The job's own files (result, progress) go to a private directory no one else can plant names in.
            guard let scratch = try? PrivateDirectory(prefix: "ingestd-reprocess-") else {
                return .retryable(code: "no_scratch", message: "cannot make a private scratch directory")
            }
            let outcome = await runner.run(input: input, output: directory, jobDirectory: scratch.path,
                                           publishedVersion: adds ? published : nil,
                                           captionsFrom: adds ? nil : playing) { stop.value }
            return deleted() ? .interrupted : outcome  // deleted while it ran: never put in view
        }
        if deleted() {
            (item.result, item.why) = (.skipped, "deleted while it was reprocessed: never republished")
            return item
        }
        switch republished {
        case .published(let version): (item.result, item.version) = (.published, version)
        case .skipped(let why, let version): (item.result, item.why, item.version) = (.skipped, why, version)
        case .failed(let error): (item.result, item.error) = (.failed, error)
        case .interrupted:
            item.result = .interrupted
            return item
        }
        item.seconds = (ContinuousClock.now - started).seconds
        return item
    }
}
