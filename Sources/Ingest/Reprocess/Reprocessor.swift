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

/// Where a reprocess run publishes.
public enum ReprocessTarget: Sendable {
    /// A CDN directory: `CDN/<id>/` switched to each new version by rename (``VersionedPublisher``).
    case directory(VersionedPublisher)
    /// A bucket prefix (`s3://bucket/prefix`): each video under a new version prefix, its
    /// `<id>/current.json` switched to it only if still the one read (If-Match).
    case bucket(cdn: String, storage: any RemoteStorage)
}

/// Re-encodes an archive with a preset, resumably: videos already published with the preset's
/// hash are skipped, each video is published as a new version atomically, and one bad video
/// does not stop the batch.
public struct Reprocessor: Sendable {
    public var target: ReprocessTarget
    public var preset: Preset
    public var runner: JobRunner
    public var jobs: Int

    public init(target: ReprocessTarget, preset: Preset, runner: JobRunner, jobs: Int) {
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
            do {
                switch try await currentPresetHash(video.id) {
                case preset.contentHash?: (item.action, item.why) = (.skip, "already published with preset \(preset.contentHash)")
                case let other?:
                    item.why = "published with preset \(other)"
                    if let ladders = preset.codecLadders, !ladders.isEmpty, case .directory = target {
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

    /// The preset hash `id` is published with now, if any.
    private func currentPresetHash(_ id: String) async throws -> String? {
        switch target {
        case .directory(let publisher): publisher.currentPresetHash(id)
        case .bucket(let cdn, let storage): try await storage.pointer(of: "\(cdn)/\(id)")?.presetHash
        }
    }

    /// Runs the plan with `jobs` videos at a time; `progress` receives an update per video.
    public func run(_ plan: [ReprocessItem], stop: StopFlag, progress: AsyncStream<ReprocessProgress>.Continuation? = nil) async -> [ReprocessItem] {
        let started = ContinuousClock.now
        var results = plan
        var done = 0, failed = 0
        for index in results.indices where results[index].action == .skip {
            results[index].result = .skipped
            if case .directory(let publisher) = target { publisher.collectGarbage(results[index].id) }
        }
        let pending = results.indices.filter { results[$0].action == .process }
        await withTaskGroup(of: (Int, ReprocessItem).self) { group in
            var next = pending.makeIterator()
            func launch() -> Bool {
                guard !stop.value, let index = next.next() else { return false }
                let item = results[index]
                group.addTask {
                    switch target {
                    case .directory(let publisher): (index, await self.process(item, publisher: publisher, stop: stop))
                    case .bucket(let cdn, let storage): (index, await self.process(item, cdn: cdn, storage: storage, stop: stop))
                    }
                }
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

    private func process(_ initial: ReprocessItem, publisher: VersionedPublisher, stop: StopFlag) async -> ReprocessItem {
        var item = initial
        let started = ContinuousClock.now
        let version = VersionedPublisher.versionName(presetHash: preset.contentHash)
        let root = publisher.directory(item.id)
        publisher.removeStaging(item.id)
        do {
            // CDN/<id> only: the CDN root itself must exist (it is never created).
            guard mkdir(root, 0o755) == 0 || errno == EEXIST else {
                throw IngestError.cannotWrite(path: root, reason: String(cString: strerror(errno)))
            }
            if !publisher.versionIsComplete(item.id, version: version) {
                try? FileManager.default.removeItem(atPath: "\(root)/\(version)")
                // The job's own files (result, progress) go to a private directory no one else can plant names in.
                let scratch = try PrivateDirectory(prefix: "ingestd-reprocess-")
                // A preset with other codecs keeps the H.264 ladder and sound published now, and adds to them.
                let published = preset.codecLadders?.isEmpty == false ? publisher.currentVersion(item.id).map { "\(root)/\($0)" } : nil
                let outcome = await runner.run(input: item.input, output: "\(root)/\(version)", jobDirectory: scratch.path,
                                               publishedVersion: published) { stop.value }
                publisher.removeStaging(item.id)
                switch outcome {
                case .published: break
                case .rejected(let code, let message), .retryable(let code, let message):
                    // A killed run's job may still have completed this same version in its last
                    // instants; that output is as good as this run's.
                    if publisher.versionIsComplete(item.id, version: version) { break }
                    rmdir(root)  // a video never published leaves no trace in the CDN
                    item.result = .failed
                    item.error = "\(code): \(message)"
                    item.seconds = (ContinuousClock.now - started).seconds
                    return item
                case .interrupted:
                    item.result = .interrupted
                    return item
                }
            }
            try publisher.activate(item.id, version: version)
            publisher.collectGarbage(item.id)
            (item.result, item.version) = (.published, "\(root)/\(version)")
        } catch {
            item.result = .failed
            item.error = "\(error)"
        }
        item.seconds = (ContinuousClock.now - started).seconds
        return item
    }
}
