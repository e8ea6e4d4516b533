import Foundation

/// Where a video plays, relative to the CDN root: the one rule for every reader of it (the
/// webhooks, `status --json`, the status API, the console).
///
/// A directory CDN plays a video at `<id>/`: its pointers (`master.m3u8`, `manifest.json`) name
/// whichever version is current. A bucket has no such pointers a player follows: a video plays
/// at its version's own prefix, `<id>/t<token>/`, which `CDN/<id>/current.json` (or the job's
/// row) names.
public struct PlaybackPlace: Codable, Sendable, Equatable {
    /// The directory the manifest's paths start from, relative to the CDN root.
    public var base: String

    public init(base: String) { self.base = base }

    /// The place of job `id` whose output was recorded as `output` (`CDN/<id>`, or a bucket's
    /// version `s3://…/<id>/t<token>`).
    public init(id: String, recorded output: String) {
        let last = (output as NSString).lastPathComponent
        base = last != id && AttemptVersion.token(of: last) != nil ? "\(id)/\(last)" : id
    }

    /// `relative` (a manifest's path) from the CDN root.
    public func path(_ relative: String) -> String { "\(base)/\(relative)" }

    /// `relative` under the CDN's public URL (`cdnURL`, with or without its trailing slash).
    public func url(_ relative: String, cdnURL: String) -> String {
        (cdnURL.hasSuffix("/") ? cdnURL : cdnURL + "/") + path(relative)
    }

    /// The master playlist.
    public var master: String { path("master.m3u8") }
}
