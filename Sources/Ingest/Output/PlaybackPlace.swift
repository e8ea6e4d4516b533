import Foundation
import Transcode

/// Where a video plays: made by the ``OutputTarget`` that showed or published it, recorded as
/// it is by every store (the spool's `job.json`, the fleet's row), and read back by every
/// reader (the webhooks, `status --json`, the status API, the console) without parsing a name.
///
/// A directory CDN plays a video at `<id>/`: its pointers (`master.m3u8`, `manifest.json`) name
/// whichever version is current, so the place names no version. A bucket has no pointer a
/// player follows: a video plays at its version's own prefix, `<id>/t<token>/` (an attempt's)
/// or `<id>/v<hash>/` (reprocess's). Deletion takes down everything under ``video``; signed
/// playback signs ``base``.
public struct PlaybackPlace: Codable, Sendable, Equatable {
    /// The CDN root the video lies under: a directory, or an `s3://` prefix.
    public var root: String
    /// The video's id: its directory or prefix under the root.
    public var id: String
    /// The version a player is sent to (`t<token>`, `v<hash>`); nil where the video's own
    /// pointers name its version.
    public var version: String?

    public init(root: String, id: String, version: String? = nil) {
        self.root = root
        self.id = id
        self.version = version
    }

    /// The directory the manifest's paths start from, relative to the CDN root: `<id>` or
    /// `<id>/<version>`.
    public var base: String { version.map { "\(id)/\($0)" } ?? id }

    /// `CDN/<id>`: everything of the video, every version and pointer.
    public var video: String { "\(root)/\(id)" }

    /// Where the manifest's paths start, under the CDN root (`CDN/<id>`, or a bucket's version
    /// prefix `s3://…/<id>/t<token>`): what the stores and the events call the job's output.
    public var recorded: String { "\(root)/\(base)" }

    /// `relative` (a manifest's path) from the CDN root.
    public func path(_ relative: String) -> String { "\(base)/\(relative)" }

    /// `relative` under the CDN's public URL (`cdnURL`, with or without its trailing slash).
    public func url(_ relative: String, cdnURL: String) -> String { Self.url(path(relative), cdnURL: cdnURL) }

    /// A path from the CDN root (`fromRoot`) under the CDN's public URL.
    public static func url(_ fromRoot: String, cdnURL: String) -> String {
        (cdnURL.hasSuffix("/") ? cdnURL : cdnURL + "/") + fromRoot
    }

    /// The master playlist.
    public var master: String { path("master.m3u8") }

    /// The poster that stands for the video (the largest of a manifest's `posters`), from the CDN root.
    public func poster(among posters: [ReadyManifest.Image]) -> String? {
        posters.max { $0.width < $1.width }.map { path($0.path) }
    }

    /// The manifest of the version a player gets, where this host reads it (a directory CDN's
    /// own, through its pointers); nil in a bucket.
    public var readableManifest: String? { RemotePath.isRemote(root) ? nil : "\(recorded)/manifest.json" }

    /// The fields an event names the place with: `output`, the video (`CDN/<id>`), and where it
    /// names a version of its own, `version`, that version's prefix.
    public var eventFields: [String: any Sendable] {
        var fields: [String: any Sendable] = ["output": video]
        if version != nil { fields["version"] = recorded }
        return fields
    }

    /// The place of a record written before places were recorded, which named only its output
    /// (`CDN/<id>`, or a version `CDN/<id>/<version>`); read once, where such a record is read.
    public static func recordedBefore(id: String, output: String) -> PlaybackPlace {
        func split(_ path: Substring) -> (parent: Substring, last: Substring) {
            guard let slash = path.lastIndex(of: "/") else { return ("", path) }
            return (path[..<slash], path[path.index(after: slash)...])
        }
        let (parent, last) = split(Substring(output))
        if last != id, split(parent).last == id {
            return PlaybackPlace(root: String(split(parent).parent), id: id, version: String(last))
        }
        return PlaybackPlace(root: String(parent), id: id)
    }
}
