import Foundation
import Transcode

/// Captions in a directory CDN: the revision is applied to the version `CDN/<id>/master.m3u8`
/// points to, then the pointers are written again (a `--hold` video, flat, is revised in place).
extension StagedDirectoryTarget {
    public func reviseCaptions(at place: PlaybackPlace, _ revision: CaptionRevision) async throws -> ReadyManifest? {
        let video = directory(place.id)
        guard let playing = versions.playingVersion(place.id) else { throw IngestError.inputMissing(path: "\(video)/master.m3u8") }
        guard let revised = try revision.apply(to: playing) else { return nil }
        guard playing != video else { return revised.manifest }
        let version = (playing as NSString).lastPathComponent
        try VersionPointer.point(video, version: version)
        return VersionPointer.manifest(revised.manifest, version: version)
    }
}

extension GrowingDirectoryTarget {
    public func reviseCaptions(at place: PlaybackPlace, _ revision: CaptionRevision) async throws -> ReadyManifest? {
        try await staged.reviseCaptions(at: place, revision)
    }
}

/// Captions in a bucket: what the revision reads of the version (its manifest, masters, and the
/// first H.264 rung's playlist, init section and first segment) is fetched into private
/// scratch, the revision applied there, and what it wrote uploaded under the version's prefix,
/// the masters and manifest last (they are served `max-age=60`: players see the new master
/// within a minute).
extension HeldBucketTarget {
    public func reviseCaptions(at place: PlaybackPlace, _ revision: CaptionRevision) async throws -> ReadyManifest? {
        let version = place.recorded
        let scratch = try PrivateDirectory(prefix: "ingestd-captions-")
        let copy = "\(scratch.path)/version"
        func fetch(_ relative: String) async throws -> Data {
            guard let data = try await storage.read("\(version)/\(relative)", limit: 64 << 20) else {
                throw IngestError.inputMissing(path: "\(version)/\(relative)")
            }
            try FileManager.default.createDirectory(atPath: ("\(copy)/\(relative)" as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: "\(copy)/\(relative)"))
            return data
        }
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: try await fetch("manifest.json"))
        for name in [manifest.master] + (manifest.codecMasters ?? [:]).values.sorted() where !name.contains("/") { _ = try await fetch(name) }
        if case .add = revision.change, let rung = manifest.renditions.first(where: { ($0.videoCodec ?? .h264) == .h264 }),
           !rung.name.contains("/"), !rung.name.hasPrefix(".") {
            let playlist = try MediaPlaylist(parsing: String(decoding: try await fetch("\(rung.name)/index.m3u8"), as: UTF8.self))
            for name in [playlist.map ?? OutputLayout.initSegmentName] + playlist.segments.prefix(1).map(\.uri) where !name.contains("/") {
                _ = try await fetch("\(rung.name)/\(name)")
            }
        }
        guard let revised = try revision.apply(to: copy) else { return nil }
        let send = "\(scratch.path)/send"
        for relative in revised.written {
            try FileManager.default.createDirectory(atPath: ("\(send)/\(relative)" as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: "\(copy)/\(relative)", toPath: "\(send)/\(relative)")
        }
        _ = try await storage.upload(send, to: version, while: { true })
        return revised.manifest
    }
}

extension GrowingBucketTarget {
    public func reviseCaptions(at place: PlaybackPlace, _ revision: CaptionRevision) async throws -> ReadyManifest? {
        try await held.reviseCaptions(at: place, revision)
    }
}
