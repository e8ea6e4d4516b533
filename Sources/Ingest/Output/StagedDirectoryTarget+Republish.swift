import Foundation

/// Reprocess in a directory CDN: each preset's version is `CDN/<id>/v<hash>`, written in place
/// by its job process, then switched to by rename (``DirectoryVersions``).
extension StagedDirectoryTarget {
    public func publishedPreset(of id: String) async throws -> String? { versions.currentPresetHash(id) }

    public func republish(_ id: String, presetHash: String, encode: VersionEncoder) async -> Republished {
        let versions = versions
        let version = DirectoryVersions.versionName(presetHash: presetHash)
        let video = versions.directory(id)
        versions.removeStaging(id)
        do {
            // CDN/<id> only: the CDN root itself must exist (it is never created).
            guard mkdir(video, 0o755) == 0 || errno == EEXIST else {
                throw IngestError.cannotWrite(path: video, reason: String(cString: strerror(errno)))
            }
            if !versions.versionIsComplete(id, version: version) {
                try? FileManager.default.removeItem(atPath: "\(video)/\(version)")
                let outcome = await encode("\(video)/\(version)", versions.currentVersion(id).map { "\(video)/\($0)" },
                                           versions.playingVersion(id))
                versions.removeStaging(id)
                switch outcome {
                case .published: break
                case .rejected(let code, let message), .retryable(let code, let message):
                    // A killed run's job may still have completed this same version in its last
                    // instants; that output is as good as this run's.
                    if versions.versionIsComplete(id, version: version) { break }
                    rmdir(video)  // a video never published leaves no trace in the CDN
                    return .failed("\(code): \(message)")
                case .interrupted:
                    return .interrupted
                }
            }
            try versions.activate(id, version: version)
            versions.collectGarbage(id)
            return .published(version: "\(video)/\(version)")
        } catch {
            return .failed("\(error)")
        }
    }

    public func collectRetired(_ id: String) { versions.collectGarbage(id) }
}
