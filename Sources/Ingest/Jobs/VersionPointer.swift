import Foundation
import Transcode

/// `CDN/<id>/master.m3u8` and `CDN/<id>/manifest.json` when they point into a version directory
/// `CDN/<id>/<version>/`: the version's own files with every path moved into it. What a player or
/// the app follows; the version's files never move. Each is replaced whole (``DurableFile``),
/// the manifest last. The version's files may come from a job process (a growing version is
/// written in place): they are read as regular files of bounded size, never through a link.
public enum VersionPointer {
    /// The version's master with each URI line and `URI="…"` attribute (I-frame streams) moved
    /// into `version`.
    public static func master(_ text: String, version: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            if line.isEmpty { return String(line) }
            if line.hasPrefix("#") { return line.replacingOccurrences(of: "URI=\"", with: "URI=\"\(version)/") }
            return "\(version)/\(line)"
        }.joined(separator: "\n")
    }

    /// The version's manifest with every path moved into `version`.
    public static func manifest(_ manifest: ReadyManifest, version: String) -> ReadyManifest {
        var manifest = manifest
        manifest.master = "master.m3u8"
        for index in manifest.renditions.indices {
            manifest.renditions[index].playlist = "\(version)/\(manifest.renditions[index].playlist)"
            manifest.renditions[index].iFramePlaylist = "\(version)/\(manifest.renditions[index].iFramePlaylist)"
        }
        manifest.mp4 = "\(version)/\(manifest.mp4)"
        manifest.codecMasters = manifest.codecMasters?.mapValues { "\(version)/\($0)" }
        for index in manifest.posters.indices { manifest.posters[index].path = "\(version)/\(manifest.posters[index].path)" }
        manifest.storyboard.image = "\(version)/\(manifest.storyboard.image)"
        manifest.storyboard.track = "\(version)/\(manifest.storyboard.track)"
        if let preview = manifest.preview { manifest.preview?.path = "\(version)/\(preview.path)" }
        manifest.captions = manifest.captions?.map { caption in
            var moved = caption
            moved.playlist = "\(version)/\(caption.playlist)"
            moved.track = "\(version)/\(caption.track)"
            return moved
        }
        return manifest
    }

    /// The version a master pointer names (the first directory of its first URI), if any.
    public static func version(ofMaster text: String) -> String? {
        text.split(separator: "\n").first { !$0.hasPrefix("#") && !$0.isEmpty }?.split(separator: "/").first.map(String.init)
    }

    /// Writes `master.m3u8` into `root`, pointing into `root/<version>`.
    public static func pointMaster(_ root: String, version: String) throws {
        let own = "\(root)/\(version)/master.m3u8"
        guard let text = String(data: try ownFile(own, limit: 1 << 20), encoding: .utf8) else {
            throw IngestError.cannotWrite(path: own, reason: "no master to point to")
        }
        try replace("\(root)/master.m3u8", with: Data(master(text, version: version).utf8))
    }

    /// Writes `master.m3u8`, then `manifest.json`, into `root`, pointing into `root/<version>`.
    public static func point(_ root: String, version: String) throws {
        try pointMaster(root, version: version)
        let own = "\(root)/\(version)/manifest.json"
        guard let manifest = try? JSONDecoder().decode(ReadyManifest.self, from: try ownFile(own, limit: 8 << 20)) else {
            throw IngestError.cannotWrite(path: own, reason: "unreadable manifest")
        }
        try replace("\(root)/manifest.json", with: Self.manifest(manifest, version: version).jsonData())
    }

    /// Replaces `path` with `data`: a reader sees the old file or the new one, whole.
    static func replace(_ path: String, with data: Data) throws {
        do {
            try DurableFile.replace(path, with: data)
        } catch {
            throw IngestError.cannotWrite(path: path, reason: "\(error)")
        }
    }

    /// A file of the version: a regular file in a real directory (not a link to elsewhere).
    private static func ownFile(_ path: String, limit: Int) throws -> Data {
        var info = stat()
        let directory = (path as NSString).deletingLastPathComponent
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw IngestError.cannotWrite(path: directory, reason: "not a directory of its own")
        }
        do {
            return try DurableFile.read(path, limit: limit)
        } catch {
            throw IngestError.cannotWrite(path: path, reason: "\(error)")
        }
    }
}
