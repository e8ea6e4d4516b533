import Foundation
import Logging
import Transcode

/// One transcode into a directory that appears atomically, with events out of band.
public struct TranscodeJob: Sendable {
    public var input: String
    public var destination: String
    public var preset: Preset
    public var metadata: [String: String]

    public init(input: String, destination: String, preset: Preset, metadata: [String: String] = [:]) {
        self.input = input
        self.destination = destination
        self.preset = preset
        self.metadata = metadata
    }

    /// Runs the job, yielding the plan and progress into `events`. The output is published only
    /// on success; on failure or cancellation nothing is left behind.
    public func run(logger: Logger, events: AsyncStream<TranscodeEvent>.Continuation? = nil) async throws -> ReadyManifest {
        guard FileManager.default.fileExists(atPath: input) else {
            events?.finish()
            throw IngestError.inputMissing(path: input)
        }
        let staged: StagedDirectory
        do {
            staged = try StagedDirectory(destination: destination)
        } catch {
            events?.finish()
            throw error
        }
        logger.info("transcode started", metadata: ["input": "\(input)", "staging": "\(staged.staging)"])
        do {
            let request = TranscodeRequest(input: input, outputDirectory: staged.staging, preset: preset, metadata: metadata)
            let manifest = try await Transcoder.run(request, events: events)
            try staged.publish()
            logger.info("published", metadata: ["output": "\(destination)", "duration": "\(manifest.durationSeconds)",
                                                "speed": "\(String(format: "%.2f", manifest.timings.speed))"])
            return manifest
        } catch {
            staged.discard()
            throw error
        }
    }
}
