internal import CFFmpeg
import Foundation

/// Where a muxer's files appear whole (see `cff_durable_files`): each file the muxer closes is
/// written as ``DurableFile`` writes (a hidden temporary name beside its final one, flushed to
/// disk, renamed into place, its directory flushed). FFmpeg 5.1's hls muxer writes segments in place and never
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
        let result = DurableFile.write(path, data)
        if result == 0 { landed.append(path) }
        return result
    }
}
