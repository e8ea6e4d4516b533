import ArgumentParser
import Foundation
import Ingest
import ObjectStorage
import Transcode

struct ReprocessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reprocess",
        abstract: "Re-encode archived videos with a (new) preset and republish them atomically; resumable.",
        discussion: """
        ARCHIVE is the daemon's SPOOL/archive/ (ids and originals from job.json) or any directory \
        tree of videos (ids derived from the relative path, stable across runs).

        Each video is encoded into CDN/<id>/v<presetHash>/ by a job process, then CDN/<id>/master.m3u8 \
        and manifest.json are switched to it by rename. A player that loaded the old master keeps \
        fetching the old files; they are deleted by a later run once --grace has passed. \
        Videos already published with this preset's hash are skipped, so an interrupted run \
        (even kill -9) continues where it stopped when run again.

        With a bucket CDN (--cdn s3://bucket/prefix; credentials in the environment, see \
        docs/STORAGE.md) each video is uploaded under a new version prefix CDN/<id>/v<time>-<random>/ \
        (master.m3u8 last), then its pointer CDN/<id>/current.json is switched to it only if it is \
        still the one read (If-Match its ETag; created with If-None-Match: * when absent). A pointer \
        another writer changed meanwhile is left as it is and the video reported failed \
        (pointer_moved), or skipped if that writer published this preset. Old versions stay in the \
        bucket (--grace applies to a directory CDN only).

        Hot videos (--preset hot, Presets/hot.json: a preset with codecLadders): the AV1 and HEVC \
        ladders are encoded from the original and added beside the H.264 ladder published now, \
        which is kept byte for byte with its sound (the new rungs carry that sound, copied), on the \
        same keyframes and segment boundaries; the new master lists AV1, HEVC, then H.264 at each \
        size (docs/OUTPUT.md). A video not published yet gets all three ladders. Directory CDN only.

        Exit status: 0 when nothing failed, 1 when at least one video failed (see the report), \
        130 when interrupted, 78 for a bad preset.

        Examples:
          ingestd reprocess /var/spool/ingestd/archive --cdn /srv/cdn --preset Presets/v2.json --dry-run
          ingestd reprocess /var/spool/ingestd/archive --cdn /srv/cdn --preset v2 --jobs 2 --json > report.json
          ingestd reprocess /var/spool/ingestd/archive --cdn s3://media/cdn --s3-endpoint http://seaweed:8333 --preset v2
          ingestd reprocess /var/spool/ingestd/archive --cdn /srv/cdn --preset hot --only 7f3a 91c2 --job-memory-mb 16384
        """
    )

    @Argument(help: "Archive directory.")
    var archive: String

    @Option(help: ArgumentHelp("CDN root, or a bucket prefix s3://bucket/prefix; videos are published as CDN/<id>/.", valueName: "dir"))
    var cdn: String

    @OptionGroup var storage: StorageOption

    @OptionGroup var presetOption: PresetOption

    @Option(help: "Videos encoded at once.")
    var jobs: Int = 1

    @Flag(help: "Print what would be processed or skipped, and why; change nothing.")
    var dryRun = false

    @Option(parsing: .upToNextOption, help: "Only these ids.")
    var only: [String] = []

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    @Option(help: "Seconds an old version stays available after the switch (a directory CDN).")
    var grace: Double = 600

    @OptionGroup var limits: JobLimitsOption

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
    }

    func run() async throws {
        let preset: Preset
        do {
            preset = try presetOption.load()
        } catch {
            throw Report.fail(error, json: json)
        }
        guard FileManager.default.fileExists(atPath: archive) else {
            throw Report.fail(IngestError.inputMissing(path: archive), json: json)
        }
        var videos = ReprocessCatalog.scan(archive)
        if !only.isEmpty { videos = videos.filter { only.contains($0.id) } }
        let root: String, bucket: (any RemoteStorage)?
        if S3Location.isURL(cdn) {
            if preset.codecLadders?.isEmpty == false {
                throw Report.fail(ValidationError("--preset \(preset.name) adds codecs beside the published H.264 ladder, "
                    + "which only a directory CDN keeps today; a bucket CDN needs a preset without codecLadders"), json: json)
            }
            (root, bucket) = try storage.bucket(cdn, json: json)
        } else {
            // A configured root is never created: a missing mount would fill the root disk.
            try WorkerOptions.requireRoot("--cdn", URL(fileURLWithPath: cdn).standardizedFileURL.path)
            (root, bucket) = (URL(fileURLWithPath: cdn).standardizedFileURL.path, nil)
        }
        // Reprocess publishes through the worker's targets: a new version, switched to at once.
        let target = OutputTargets.make(cdn: root, growing: false, storage: bucket, pointer: true, retiredGrace: grace)
        let runner = limits.runner(presetArgument: presetOption.resolvedArgument())
        let reprocessor = Reprocessor(target: target, preset: preset, runner: runner, jobs: jobs)
        let plan = await reprocessor.plan(videos)
        if dryRun {
            output(plan, preset: preset, dryRun: true)
            return
        }
        let stop = StopFlag()
        let signals = SignalTrap { stop.set() }
        let (progress, continuation) = AsyncStream.makeStream(of: ReprocessProgress.self)
        let display = Task { [json] in
            let terminal = !json && isatty(STDERR_FILENO) == 1
            for await update in progress where terminal {
                let eta = update.etaSeconds.map { String(format: "%d:%02d", Int($0) / 60, Int($0) % 60) } ?? "--:--"
                FileHandle.standardError.write(Data(String(format: "\r\u{1B}[2K%d/%d done, %d failed, ETA %@",
                                                           update.done, update.total, update.failed, eta as NSString).utf8))
            }
            if terminal { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
        }
        let results = await reprocessor.run(plan, stop: stop, progress: continuation)
        await display.value
        signals.disarm()
        output(results, preset: preset, dryRun: false)
        if results.contains(where: { $0.result == .interrupted }) { throw ExitCode(ExitStatus.interrupted.rawValue) }
        if results.contains(where: { $0.result == .failed }) { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    private func output(_ items: [ReprocessItem], preset: Preset, dryRun: Bool) {
        if json {
            struct Report: Encodable {
                var preset: String, presetHash: String, dryRun: Bool, counts: [String: Int], items: [ReprocessItem]
            }
            var counts: [String: Int] = [:]
            for item in items { counts[item.result?.rawValue ?? item.action.rawValue, default: 0] += 1 }
            let encoder = JSONEncoder.ingestd
            let report = Report(preset: preset.name, presetHash: preset.contentHash, dryRun: dryRun, counts: counts, items: items)
            print(String(decoding: (try? encoder.encode(report)) ?? Data(), as: UTF8.self))
            return
        }
        let width = max(10, items.map(\.id.count).max() ?? 10)
        print("\("id".padding(toLength: width, withPad: " ", startingAt: 0))  \(dryRun ? "action " : "result     ")  seconds  why / error")
        for item in items {
            let state = dryRun ? item.action.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
                               : (item.result?.rawValue ?? "-").padding(toLength: 11, withPad: " ", startingAt: 0)
            let seconds = item.seconds.map { String(format: "%7.1f", $0) } ?? "      -"
            print("\(item.id.padding(toLength: width, withPad: " ", startingAt: 0))  \(state)  \(seconds)  \(item.error ?? item.why)")
        }
        var counts: [String: Int] = [:]
        for item in items { counts[item.result?.rawValue ?? item.action.rawValue, default: 0] += 1 }
        print(counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
    }
}
