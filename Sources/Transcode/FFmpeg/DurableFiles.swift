internal import CFFmpeg
import Foundation

/// Where a muxer's files appear whole (see `cff_durable_files`): each file the muxer closes is
/// written under a hidden temporary name beside its final one, flushed to disk, renamed into
/// place and its directory flushed. FFmpeg 5.1's hls muxer writes segments in place and never
/// fsyncs; through this, a reader never sees a partial init section or segment, and nothing it
/// saw changes afterwards. The muxer's own playlists (`.m3u8`) are dropped: ingestd writes the
/// media playlists itself, as segments land (``RungSegments``).
final class DurableFiles {
    /// The muxer's side: its I/O callbacks' state, the first write error first.
    let io: UnsafeMutablePointer<cff_durable_io>
    /// The files made visible since the last ``takeLanded()``, in order.
    private var landed: [String] = []

    init() {
        io = .allocate(capacity: 1)
        io.initialize(to: cff_durable_io())
        io.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        io.pointee.finished = { owner, url, data, size in
            let files = Unmanaged<DurableFiles>.fromOpaque(owner!).takeUnretainedValue()
            return files.finished(String(cString: url!), UnsafeRawBufferPointer(start: data, count: Int(max(0, size))))
        }
    }

    deinit {
        cff_durable_release(io)
        io.deinitialize(count: 1)
        io.deallocate()
    }

    /// The first error of a file the muxer wrote, 0 when none.
    var error: Int32 { io.pointee.error }

    /// The files made visible since the last call, in order (called on the muxer's thread).
    func takeLanded() -> [String] {
        defer { landed.removeAll() }
        return landed
    }

    private func finished(_ path: String, _ data: UnsafeRawBufferPointer) -> Int32 {
        if path.hasSuffix(".m3u8") { return 0 }
        let result = Self.write(path, data)
        if result == 0 { landed.append(path) }
        return result
    }

    /// Replaces `path` with `data` durably and atomically: a reader sees the old file or the new
    /// one, whole.
    static func replace(_ path: String, with data: Data) throws {
        let result = data.withUnsafeBytes { write(path, $0) }
        guard result == 0 else { throw TranscodeError.writeFailed(path, errno: -result) }
    }

    /// Writes `data` as `path`, durably; returns 0 or a negative errno (FFmpeg's `AVERROR`).
    private static func write(_ path: String, _ data: UnsafeRawBufferPointer) -> Int32 {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = "\(directory)/.\(url.lastPathComponent).partial"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return -errno }
        func failed() -> Int32 {
            let code = errno
            close(fd)
            unlink(temporary)
            return -code
        }
        var offset = 0
        while offset < data.count {
            let count = Glibc.write(fd, data.baseAddress! + offset, data.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return failed()
            }
            offset += count
        }
        guard fsync(fd) == 0 else { return failed() }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            return -code
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            defer { close(directoryFD) }
            guard fsync(directoryFD) == 0 else { return -errno }
        }
        return 0
    }
}
