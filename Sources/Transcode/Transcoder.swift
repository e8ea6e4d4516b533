import Foundation

/// What a running transcode reports, in order: the plan, progress updates, the ready manifest.
public enum TranscodeEvent: Sendable {
    case planned(TranscodePlan)
    case progress(TranscodeProgress)
    case finished(ReadyManifest)
}

/// A transcode to run: one source file, one output directory, one preset.
public struct TranscodeRequest: Sendable {
    public var input: String
    public var outputDirectory: String
    public var preset: Preset
    public var metadata: [String: String]

    public init(input: String, outputDirectory: String, preset: Preset, metadata: [String: String] = [:]) {
        self.input = input
        self.outputDirectory = outputDirectory
        self.preset = preset
        self.metadata = metadata
    }
}

/// Runs transcodes. FFmpeg calls block, so each job runs on a dedicated thread, never on
/// Swift's cooperative pool; events come back on an `AsyncThrowingStream`.
public enum Transcoder {
    public static func run(_ request: TranscodeRequest) -> AsyncThrowingStream<TranscodeEvent, Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TranscodeEvent.self,
                                                                    bufferingPolicy: .bufferingNewest(64))
        let thread = Thread {
            do {
                let manifest = try runBlocking(request) { continuation.yield($0) }
                continuation.yield(.finished(manifest))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.name = "ingestd.transcode"
        thread.stackSize = 8 << 20
        thread.start()
        return stream
    }

    /// Runs a transcode on the calling thread, reporting events to `emit`.
    public static func runBlocking(_ request: TranscodeRequest,
                                   emit: @escaping @Sendable (TranscodeEvent) -> Void) throws -> ReadyManifest {
        let clock = ContinuousClock.now
        let input = try InputContext(path: request.input)
        let plan = try TranscodePlan.make(probe: input.probe(), preset: request.preset)
        emit(.planned(plan))
        let layout = OutputLayout(directory: request.outputDirectory)
        let pipeline = try Pipeline(plan: plan, input: input, layout: layout) { emit(.progress($0)) }
        let result = try pipeline.run()
        let elapsed = ContinuousClock.now - clock
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let manifest = try ManifestWriter.write(plan: plan, layout: layout, result: result, wallSeconds: wall,
                                                metadata: request.metadata)
        return manifest
    }
}
