import Foundation

/// A directory CDN's `.playback-signed` in a video's directory: there while the video is signed
/// (nginx then refuses its unsigned paths), made and removed durably. A dot-name: never served.
struct PlaybackMarker {
    let directory: String

    var path: String { "\(directory)/\(PlaybackPolicy.markerName)" }

    var isSet: Bool { FileManager.default.fileExists(atPath: path) }

    /// Makes the marker (`signed`) or removes it (`public`), and syncs the directory.
    func set(_ policy: PlaybackPolicy) throws {
        switch policy {
        case .signed:
            let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard fd >= 0 else { throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
            close(fd)
        case .public:
            guard unlink(path) == 0 || errno == ENOENT else { throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        }
        try Durability.syncDirectory(directory)
    }
}
