import Foundation

/// One archived video to (re)publish.
public struct ArchivedVideo: Sendable, Codable, Equatable {
    public var id: String
    /// The video file or upload directory, or (``holdsUpload``) the directory holding it.
    public var source: String
    /// True for a daemon archive entry: `source` is its `upload/` directory, whose one entry is
    /// the original under the exact name it arrived with.
    public var holdsUpload: Bool

    public init(id: String, source: String, holdsUpload: Bool = false) {
        self.id = id
        self.source = source
        self.holdsUpload = holdsUpload
    }

    /// What the job process is given.
    public var input: TranscodeJob.Input { holdsUpload ? .soleEntry(of: source) : .path(source) }
}

/// Finds the videos of an archive: the daemon's `archive/<id>/` (the original alone in `upload/`), or
/// any directory tree of videos and upload directories (holding `upload.json`, one upload each),
/// whose ids derive deterministically from their relative paths.
public enum ReprocessCatalog {
    static let videoExtensions: Set<String> = ["mp4", "mov", "m4v", "webm", "mkv", "avi", "3gp", "mpg", "mpeg", "ts"]

    public static func scan(_ root: String) -> [ArchivedVideo] {
        let base = URL(fileURLWithPath: root).standardizedFileURL.path
        let fm = FileManager.default
        var videos: [ArchivedVideo] = []
        var claimed = Set<String>()
        // Daemon archive entries first.
        for id in ((try? fm.contentsOfDirectory(atPath: base)) ?? []).sorted() {
            guard JSONFile.read(JobRecord.self, from: "\(base)/\(id)/job.json") != nil,
                  RawPath.entries(of: "\(base)/\(id)/upload").count == 1 else { continue }
            videos.append(ArchivedVideo(id: id, source: "\(base)/\(id)/upload", holdsUpload: true))
            claimed.insert("\(base)/\(id)")
        }
        let tree = (fm.enumerator(atPath: base)?.allObjects as? [String] ?? [])
            .filter { !$0.split(separator: "/").contains(where: { $0.hasPrefix(".") }) }
        // Upload directories: their clips and music belong to them.
        for relative in tree where (relative as NSString).lastPathComponent == Upload.manifestName {
            let directory = (relative as NSString).deletingLastPathComponent
            let path = directory.isEmpty ? base : "\(base)/\(directory)"
            guard !claimed.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) else { continue }
            let name = directory.isEmpty ? (base as NSString).lastPathComponent : directory
            videos.append(ArchivedVideo(id: id(forRelativePath: name + ".upload"), source: path))
            claimed.insert(path)
        }
        // Any other video file in the tree.
        for relative in tree {
            let path = "\(base)/\(relative)"
            guard videoExtensions.contains((relative as NSString).pathExtension.lowercased()),
                  !claimed.contains(where: { path.hasPrefix($0 + "/") }) else { continue }
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            videos.append(ArchivedVideo(id: id(forRelativePath: relative), source: path))
        }
        return videos.sorted { $0.id < $1.id }
    }

    /// `dir/My Clip.mov` → `dir_My_Clip-<8 hex of the path>`: stable across runs and machines.
    public static func id(forRelativePath relative: String) -> String {
        let safe = JobID.safe((relative as NSString).deletingPathExtension)
        var hash: UInt32 = 0x811c_9dc5
        for byte in relative.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return String(safe.suffix(48)) + "-" + String(format: "%08x", hash)
    }
}
