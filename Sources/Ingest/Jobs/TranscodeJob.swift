import Foundation
import Logging
import Transcode

/// One upload (a video file or an upload directory) transcoded into a directory that appears
/// atomically, with events out of band.
public struct TranscodeJob: Sendable {
    /// Where the upload is.
    public enum Input: Codable, Sendable, Equatable {
        /// A video file or an upload directory (not a link).
        case path(String)
        /// The one entry of a directory that holds a single upload under the name it arrived
        /// with (the spool's `work/<id>/upload/`), whatever bytes that name is made of.
        case soleEntry(of: String)

        public var description: String {
            switch self {
            case .path(let path): path
            case .soleEntry(let holder): holder
            }
        }
    }

    public var input: Input
    public var destination: String
    public var preset: Preset
    /// For a job process: the parent (daemon or reprocess run) it works for. The output is only
    /// published while that process is still its parent, so an orphan of a killed run can never
    /// publish late, over the work of the run that replaced it.
    public var parent: pid_t?
    /// The queue attempt (fencing token) this job runs for, which names its staging.
    public var attempt: Int64?
    /// The version directory published now for this video, when a preset with other codecs
    /// (``Preset/codecLadders``) is to keep its H.264 ladder, MP4 and sound and add only the
    /// other codecs' rungs (``TranscodeRequest/publishedVersion``).
    public var publishedVersion: String?
    /// The version directory published now for this video, whose caption tracks a re-encode
    /// keeps, in place of the upload's of the same language (tracks added after publish included).
    public var captionsFrom: String?
    /// The video's playback policy, recorded in its manifest.
    public var playback: PlaybackPolicy?
    /// The video is played while it is made: `destination` is this attempt's version directory
    /// (`CDN/<id>/t<token>`), written in place, whose parent (`CDN/<id>`) the attempt's worker
    /// points into once the ladder can be played (``TranscodeEvent/playable(seconds:)``).
    public var growing = false

    public init(input: Input, destination: String, preset: Preset, parent: pid_t? = nil, attempt: Int64? = nil) {
        self.input = input
        self.destination = destination
        self.preset = preset
        self.parent = parent
        self.attempt = attempt
    }

    public init(input: String, destination: String, preset: Preset, parent: pid_t? = nil) {
        self.init(input: .path(input), destination: destination, preset: preset, parent: parent)
    }

    /// Runs the job, yielding the plan and progress into `events`. The output is published only
    /// on success; on failure or cancellation nothing is left behind.
    public func run(logger: Logger, events: AsyncStream<TranscodeEvent>.Continuation? = nil) async throws -> ReadyManifest {
        let (manifest, staged) = try await stage(logger: logger, events: events)
        do {
            try staged.publish { parent.map { getppid() == $0 } ?? true }
        } catch {
            staged.discard()
            throw error
        }
        logger.info("published", metadata: ["output": "\(destination)", "duration": "\(manifest.durationSeconds)",
                                            "speed": "\(String(format: "%.2f", manifest.timings.speed))"])
        return manifest
    }

    /// Transcodes into a staging directory beside the destination and stops there: whoever
    /// holds the right to publish (a queue worker, under its fence) renames it into place.
    /// On failure or cancellation nothing is left behind.
    public func stage(logger: Logger, events: AsyncStream<TranscodeEvent>.Continuation? = nil) async throws
        -> (ReadyManifest, StagedDirectory) {
        let upload: Upload
        let staged: StagedDirectory
        do {
            switch input {
            case .path(let path): upload = try Upload.open(path, limits: preset.limits)
            case .soleEntry(let holder): upload = try Upload.openSole(in: holder, limits: preset.limits)
            }
            staged = growing ? try Self.version(destination) : try StagedDirectory(destination: destination, attempt: attempt)
        } catch {
            events?.finish()
            throw error
        }
        logger.info("transcode started", metadata: ["input": "\(upload.path)", "clips": "\(upload.clips.count)",
                                                    "staging": "\(staged.staging)"])
        do {
            var request = upload.request(outputDirectory: staged.staging, preset: preset)
            request.publishedVersion = publishedVersion
            if let captionsFrom {
                let kept = try CaptionSource.published(in: captionsFrom)
                request.captions = request.captions.filter { own in !kept.contains { $0.language == own.language } } + kept
            }
            request.playback = playback?.rawValue
            request.growing = growing
            return (try await Transcoder.run(request, events: events), staged)
        } catch {
            // A growing version may be shown: its worker takes the pointer away first, then the files.
            if !growing { staged.discard() }
            throw error
        }
    }

    /// A growing job's version directory, made empty in place (its parent `CDN/<id>` too, in an
    /// existing CDN root): what it writes is visible as it lands, and named only once whole.
    private static func version(_ destination: String) throws -> StagedDirectory {
        let url = URL(fileURLWithPath: destination).standardizedFileURL
        let root = url.deletingLastPathComponent().path
        do {
            if !FileManager.default.fileExists(atPath: root) {
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
            }
            try FileManager.default.createDirectory(atPath: url.path, withIntermediateDirectories: false)
        } catch {
            throw IngestError.cannotWrite(path: url.path, reason: TranscodeError.writeFailure(error))
        }
        return StagedDirectory(destination: url.path, staging: url.path)
    }
}
