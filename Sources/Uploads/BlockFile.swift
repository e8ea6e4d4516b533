import Ingest
import NIOCore
import NIOPosix

/// Bytes appended to a file from an offset, gathered into 256 KiB blocks and written on NIO's
/// blocking-I/O thread pool (never on the pool that runs the server's tasks): memory per upload
/// in progress stays about one block.
struct BlockFile {
    let fd: Int32
    /// Where the next block goes: everything before it is written.
    private(set) var written: Int64
    private var pending = ByteBuffer()

    init(fd: Int32, at offset: Int64) {
        self.fd = fd
        written = offset
    }

    /// What is gathered before a write.
    static let block = 256 << 10

    /// The end of what was appended (written or pending).
    var end: Int64 { written + Int64(pending.readableBytes) }

    mutating func append(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        pending.writeBuffer(&bytes)
        if pending.readableBytes >= Self.block { try await flush() }
    }

    mutating func flush() async throws {
        guard pending.readableBytes > 0 else { return }
        let block = pending, at = written, fd = fd
        pending = ByteBuffer()
        try await NIOThreadPool.singleton.runIfActive {
            try block.withUnsafeReadableBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(at) + off_t(done))
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { throw IngestError.cannotWrite(path: "upload data", reason: String(cString: strerror(errno))) }
                    done += n
                }
            }
        }
        written += Int64(block.readableBytes)
    }

    /// Flushes and fsyncs.
    mutating func sync() async throws {
        try await flush()
        let fd = fd
        try await NIOThreadPool.singleton.runIfActive {
            guard fsync(fd) == 0 else { throw IngestError.cannotWrite(path: "upload data", reason: String(cString: strerror(errno))) }
        }
    }
}
