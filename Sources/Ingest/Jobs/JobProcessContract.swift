import Foundation
import Transcode

// What passes between a worker (``JobRunner``) and its job process (`ingestd job-run`), all in
// this file: the request (the process's one argument, JSON), the progress it writes while it
// runs, and the result it leaves before it exits.

/// What a job process is asked to do.
public struct JobRequest: Codable, Sendable, Equatable {
    public var input: TranscodeJob.Input
    /// Where the output goes: `CDN/<id>`.
    public var output: String
    /// The preset's name or path.
    public var preset: String
    /// Where to write the ``JobResult`` and the ``JobProgress``.
    public var resultPath: String
    public var progressPath: String
    public var limits: ChildLimits
    /// Stage the output and leave it (named in the result) for the parent to publish.
    public var stageOnly: Bool
    /// The attempt's fencing token, which names the staging (`.<id>.staging-t<attempt>`).
    public var attempt: Int64?
    /// The version directory published now, whose H.264 ladder and sound are kept
    /// (``TranscodeJob/publishedVersion``); the job may read it.
    public var publishedVersion: String?
    /// The version directory published now, whose caption tracks a re-encode keeps
    /// (``TranscodeJob/captionsFrom``); the job may read it.
    public var captionsFrom: String?
    /// How the output comes into view: whole at the end, or growing.
    public var mode = OutputMode.whole
    /// The video's playback policy, for its manifest (absent: public).
    public var playback: PlaybackPolicy?

    /// How a job's output comes into view.
    public enum OutputMode: Codable, Sendable, Equatable {
        /// Whole, once the job is done.
        case whole
        /// Played while it is made: `output` is the attempt's version directory, written in
        /// place (``TranscodeJob/growing``), and a ``JobPlayable`` is written to `reports` once
        /// its ladder can be played, and again each time it lists more.
        case growing(reports: String)

        /// Where a growing job writes its reports.
        public var reports: String? {
            guard case .growing(let reports) = self else { return nil }
            return reports
        }
    }

    public init(input: TranscodeJob.Input, output: String, preset: String, resultPath: String, progressPath: String,
                limits: ChildLimits, stageOnly: Bool, attempt: Int64?, publishedVersion: String? = nil) {
        self.publishedVersion = publishedVersion
        self.input = input
        self.output = output
        self.preset = preset
        self.resultPath = resultPath
        self.progressPath = progressPath
        self.limits = limits
        self.stageOnly = stageOnly
        self.attempt = attempt
    }

    /// The request as the job process's argument.
    public func argument() throws -> String { String(decoding: try JSONEncoder().encode(self), as: UTF8.self) }

    public init(argument: String) throws {
        self = try JSONDecoder().decode(JobRequest.self, from: Data(argument.utf8))
    }
}

/// Progress of a job in flight (the spool's `work/<id>/progress.json`, read by `ingestd status`).
public struct JobProgress: Codable, Sendable {
    public var fraction: Double
    public var outputSeconds: Double
    public var speed: Double
    public var etaSeconds: Double?
    public var updatedAt: Date
    /// A shown video's running report (what every rung lists), added by the worker.
    public var listing: JobListing?

    public init(fraction: Double, outputSeconds: Double, speed: Double, etaSeconds: Double?, updatedAt: Date) {
        self.fraction = fraction
        self.outputSeconds = outputSeconds
        self.speed = speed
        self.etaSeconds = etaSeconds
        self.updatedAt = updatedAt
    }
}

/// What a job process reports of its growing ladder: the seconds every rung lists, and whether
/// every rung has ended (the worker judges how far a shown video is ahead from it).
public struct JobListing: Codable, Sendable, Equatable {
    public var seconds: Double
    public var ended: Bool
    /// The video's planned length (nil: not said).
    public var totalSeconds: Double?

    public init(seconds: Double, ended: Bool, totalSeconds: Double? = nil) {
        self.seconds = seconds
        self.ended = ended
        self.totalSeconds = totalSeconds
    }
}

/// What a growing job's process writes once its ladder can be played (``JobRequest/OutputMode/growing(reports:)``),
/// and again each time every rung lists more: its running report.
public struct JobPlayable: Codable, Sendable, Equatable {
    /// Seconds of video every rung lists.
    public var seconds: Double
    /// Every rung has ended (nil: not yet, or a process that did not say).
    public var ended: Bool?
    /// When the ladder could be played.
    public var at: Date
    /// When the job process started, and when it had probed its input and planned the job: the
    /// stages before the first segments (nil from a process that did not say).
    public var startedAt: Date?
    public var plannedAt: Date?
    /// The video's planned length (nil from a process that did not say).
    public var totalSeconds: Double?

    public init(seconds: Double, at: Date, startedAt: Date? = nil, plannedAt: Date? = nil, totalSeconds: Double? = nil) {
        self.seconds = seconds
        self.at = at
        self.startedAt = startedAt
        self.plannedAt = plannedAt
        self.totalSeconds = totalSeconds
    }

    /// The report as far as the worker believes it: the job process decodes hostile input and
    /// may lie. Its instants are kept within `since` (the process's start) and `now`, in order;
    /// its seconds within 0 and a day.
    public func bounded(since: Date, now: Date = Date()) -> JobPlayable {
        func clamp(_ date: Date, from earliest: Date) -> Date { min(max(date, earliest), now) }
        let started = startedAt.map { clamp($0, from: since) }
        let planned = plannedAt.map { clamp($0, from: started ?? since) }
        var bounded = JobPlayable(seconds: Self.withinADay(seconds), at: clamp(at, from: planned ?? started ?? since),
                                  startedAt: started, plannedAt: planned, totalSeconds: totalSeconds.map(Self.withinADay))
        bounded.ended = ended
        return bounded
    }

    /// Seconds a report may say: within 0 and a day (0 for what is not a number).
    static func withinADay(_ seconds: Double) -> Double { seconds.isFinite ? min(max(seconds, 0), 86_400) : 0 }

    /// What the report says of the ladder's length now, its seconds and length kept within 0 and
    /// a day (the job process decodes hostile input and may lie).
    public var listing: JobListing {
        JobListing(seconds: Self.withinADay(seconds), ended: ended ?? false, totalSeconds: totalSeconds.map(Self.withinADay))
    }

    /// Seconds spent in each stage before the video could be shown, from `received` (the upload's
    /// arrival as the store saw it) to `shown`: to the job process's start (claim, input checks,
    /// the process and its sandbox), the probe and plan, the first segments of every rung (the
    /// encoders opened, the gate), and the show (noticed, fenced, pointed). Milliseconds.
    public func stages(received: Date, shown: Date) -> [String: Double] {
        func seconds(_ from: Date?, _ to: Date?) -> Double? { from.flatMap { from in to.map { (($0.timeIntervalSince(from)) * 1000).rounded() / 1000 } } }
        var stages: [String: Double] = [:]
        stages["toJobProcess"] = seconds(received, startedAt)
        stages["probe"] = seconds(startedAt, plannedAt)
        stages["firstSegments"] = seconds(plannedAt ?? startedAt, at)
        stages["show"] = seconds(at, shown)
        return stages
    }
}

/// What a job process reports before it exits.
public struct JobResult: Codable, Sendable, Equatable {
    public var ok: Bool
    /// Error code (`corrupt_input`, `too_long`, …) when not ok.
    public var code: String?
    public var message: String?
    public var durationSeconds: Double?
    public var speed: Double?
    /// For a job run with `stageOnly`: the staging directory left for the parent to publish.
    public var staging: String?

    public init(ok: Bool, code: String? = nil, message: String? = nil, durationSeconds: Double? = nil, speed: Double? = nil) {
        self.ok = ok
        self.code = code
        self.message = message
        self.durationSeconds = durationSeconds
        self.speed = speed
    }

    public init(manifest: ReadyManifest, staging: String? = nil) {
        ok = true
        self.staging = staging
        durationSeconds = manifest.durationSeconds
        speed = manifest.timings.speed
    }

    public init(error: Error) {
        ok = false
        code = IngestError.code(of: error)
        message = "\(error)"
    }
}
