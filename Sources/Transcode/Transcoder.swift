import Foundation

/// What a running transcode reports, in order: the plan, progress updates, the ready manifest.
public enum TranscodeEvent: Sendable {
    case planned(TranscodePlan)
    case progress(TranscodeProgress)
    /// A growing ladder (``TranscodeRequest/growing``) can be played: its master is written and
    /// every rung lists this many seconds of video.
    case playable(seconds: Double)
    /// After ``playable(seconds:)``: every rung now lists this many seconds (`ended`: all of it).
    case listed(seconds: Double, ended: Bool)
    case finished(ReadyManifest)
}

/// A transcode to run: the clips to join (one for a plain video file), an optional sound
/// track, the output directory and the preset.
///
/// Every input is already open (``SourceFile``): the descriptors validated by the caller are the
/// ones probed and decoded; no input is opened again by name.
public struct TranscodeRequest: Sendable {
    public var clips: [ClipSource]
    public var music: MusicSource?
    /// The clips' files, in the order of `clips`.
    public var clipFiles: [SourceFile]
    public var musicFile: SourceFile?
    /// Caption tracks to publish beside the ladder (read and cleaned: ``CaptionReader``).
    public var captions: [CaptionSource] = []
    public var outputDirectory: String
    public var preset: Preset
    /// The upload's own id (from `upload.json`), recorded in `manifest.json`.
    public var uploadID: String?
    /// Passed through to `manifest.json` untouched.
    public var metadata: [String: JSONValue]
    /// The video's playback policy (`public`, `signed`), recorded in `manifest.json`.
    public var playback: String?
    /// The version directory already published for this video, whose H.264 rungs, MP4 and sound
    /// are kept (copied) while only the preset's other codecs are encoded; nil: encode everything.
    public var publishedVersion: String?
    /// The ladder is played while it is made: each media playlist is an `EVENT` playlist that
    /// grows as segments land, and the master is written as soon as every rung lists enough to
    /// play on (``TranscodeEvent/playable(seconds:)``). Otherwise (false) the playlists are
    /// `VOD`, written at the end.
    public var growing = false

    public init(clips: [(ClipSource, SourceFile)], music: (MusicSource, SourceFile)? = nil, outputDirectory: String,
                preset: Preset, uploadID: String? = nil, metadata: [String: JSONValue] = [:]) {
        self.uploadID = uploadID
        self.clips = clips.map(\.0)
        clipFiles = clips.map(\.1)
        self.music = music?.0
        musicFile = music?.1
        self.outputDirectory = outputDirectory
        self.preset = preset
        self.metadata = metadata
    }

    /// One video file.
    public init(input: SourceFile, outputDirectory: String, preset: Preset, metadata: [String: JSONValue] = [:]) {
        self.init(clips: [(ClipSource(path: input.path), input)], outputDirectory: outputDirectory, preset: preset,
                  metadata: metadata)
    }
}

/// Runs transcodes. FFmpeg calls block, so each job runs on a dedicated thread, never on
/// Swift's cooperative pool. Events go out of band into an `AsyncStream` the caller owns.
public enum Transcoder {
    /// Runs `request` on its own thread and returns the ready manifest.
    ///
    /// Cancelling the calling task stops the pipeline at the next packet; this function still
    /// returns only after the worker thread has stopped touching the output directory.
    public static func run(_ request: TranscodeRequest,
                           events: AsyncStream<TranscodeEvent>.Continuation? = nil) async throws -> ReadyManifest {
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<ReadyManifest, Error>) in
                startThread(named: "transcode", stackSize: 8 << 20) {
                    do {
                        let manifest = try runBlocking(request, cancellation: cancellation) { events?.yield($0) }
                        events?.yield(.finished(manifest))
                        events?.finish()
                        done.resume(returning: manifest)
                    } catch {
                        events?.finish()
                        done.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Runs a transcode on the calling thread, reporting events to `emit`.
    public static func runBlocking(_ request: TranscodeRequest, cancellation: CancellationFlag = CancellationFlag(),
                                   emit: @escaping @Sendable (TranscodeEvent) -> Void) throws -> ReadyManifest {
        let clock = ContinuousClock.now
        var plan = try plan(request)
        plan.reusesPublishedLadder = request.publishedVersion != nil
        emit(.planned(plan))
        let layout = OutputLayout(directory: request.outputDirectory)
        let published = try request.publishedVersion.map { try PublishedLadder(directory: $0, plan: plan) }
        try published?.copyH264(plan, into: layout)
        let progress: @Sendable (TranscodeProgress) -> Void = { emit(.progress($0)) }
        let growing: @Sendable (Double) -> Void = { emit(.playable(seconds: $0)) }
        let playable = request.growing ? growing : nil
        let listed: @Sendable (Double, Bool) -> Void = { emit(.listed(seconds: $0, ended: $1)) }
        let pipeline = try Pipeline(plan: plan, clipFiles: request.clipFiles, musicFile: request.musicFile,
                                    captions: request.captions, layout: layout,
                                    published: published, cancellation: cancellation, progress: progress, playable: playable,
                                    listed: request.growing ? listed : nil)
        let result = try pipeline.run()
        return try ManifestWriter.write(plan: plan, layout: layout, result: result, wallSeconds: (ContinuousClock.now - clock).seconds,
                                        uploadID: request.uploadID, metadata: request.metadata, playback: request.playback)
    }

    /// Probes every input (headers only) and plans the transcode.
    public static func plan(_ request: TranscodeRequest) throws -> TranscodePlan {
        let probes = try request.clipFiles.map(MediaProbe.probe)
        let musicProbe = try request.musicFile.map(MediaProbe.probe)
        return try TranscodePlan.make(clips: request.clips, probes: probes, music: request.music,
                                      musicProbe: musicProbe, preset: request.preset)
    }
}
