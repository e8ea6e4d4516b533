import Foundation
import Transcode

/// The one door through which every producer turns an upload into a job in a ``JobStore``:
/// `ingestd submit`, the spool's hand-off to the queue, and both upload stores of `serve`.
/// It makes every job the same way (checked, its id minted, its upload id read) and holds the
/// preset the upload was held to: a queued job is encoded with it, while the spool runs every
/// job with its daemon's own preset (give `serve` the same one).
public struct Submitter: Sendable {
    public let preset: Preset
    private let presetJSON: String
    /// `signed`: every job this producer makes is signed (`submit --playback`, `serve --playback`);
    /// `public`: only those the upload's link or the upload asks to be.
    public let playback: PlaybackPolicy

    public init(preset: Preset, playback: PlaybackPolicy = .public) {
        self.preset = preset
        self.playback = playback
        presetJSON = String(decoding: preset.canonicalJSON(), as: UTF8.self)
    }

    public var limits: Preset.Limits { preset.limits }

    /// Checks an upload on this host's storage as a worker will before it runs it: its kind and
    /// size (``UploadPrecheck``), that it is under `uploads` when given, and an upload
    /// directory's manifest, by field (every value bound for the queue included: no U+0000).
    public func check(_ path: String, uploads: UploadsRoot?) throws(UploadPrecheck.Refusal) {
        if let refusal = uploads?.refusal(for: .path(path)) ?? UploadPrecheck.check(path, limits: limits) { throw refusal }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
        do {
            _ = try Upload.open(path, limits: limits)
        } catch {
            throw UploadPrecheck.Refusal(code: IngestError.code(of: error), message: "\(error)")
        }
    }

    /// Checks an upload in a bucket (`s3://…`) from the storage's answers alone, under `root`
    /// when given, and returns its job; the storage's own errors (unreachable, refused) pass.
    public func job(remote url: String, storage: any RemoteStorage, root: BucketUploadsRoot?) async throws -> NewJob {
        if let refusal = root?.refusal(for: url) { throw refusal }
        let (canonical, name, uploadID) = try await storage.check(url, limits: limits)
        return job(.path(canonical), name: name.isEmpty ? "upload" : name, uploadID: uploadID)
    }

    /// The job for `input`: `id` as given or minted from `name` (``JobID/make(for:)``); the
    /// upload's own id as given or, for a local upload directory, read from its `upload.json`;
    /// `owned`: the input is ingestd's own (``NewJob/ownsInput``).
    public func job(_ input: TranscodeJob.Input, id: String? = nil, name: String = "upload", uploadID: String? = nil,
                    owned: Bool = false, playback: PlaybackPolicy? = nil) -> NewJob {
        let local = !RemotePath.isRemote(input.description)
        let asked: PlaybackPolicy? = self.playback == .signed || playback == .signed ? .signed : playback
        return NewJob(id: id ?? JobID.make(for: name), input: input, uploadID: uploadID ?? (local ? Upload.declaredID(of: input) : nil),
                      preset: presetJSON, ownsInput: owned, playback: asked)
    }

    /// Queues `jobs` in `store`, all or none where the store can; queueing an id again changes
    /// nothing, so a producer that died after queueing may simply queue again.
    public func submit(_ jobs: [NewJob], to store: any JobStore) async throws {
        try await store.enqueue(jobs)
    }
}
