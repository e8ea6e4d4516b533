import Crypto
import Foundation
import Ingest
import NIOCore
import NIOPosix

/// Writes one request's body into an upload at its acknowledged offset, holding the upload's
/// lock: bytes are gathered into 256 KiB blocks and written (and at the end fsynced) on NIO's
/// blocking-I/O thread pool, never on the pool that runs the server's tasks.
final class UploadWriter: @unchecked Sendable {
    private(set) var upload: PartialUpload
    private let directory: UploadDirectory
    private let lock: JobLock
    private let fd: Int32
    private var pending = ByteBuffer()
    private var written: Int64
    private var digest: ChecksumDigest?

    /// Takes the upload's lock (409 when another request holds it) and cuts the data file back
    /// to the acknowledged offset (a killed server may have left unacknowledged bytes).
    init(_ upload: PartialUpload, in directory: UploadDirectory, checksum: ChecksumDigest?) throws(TusRefusal) {
        guard let lock = JobLock(directory: directory.part(upload.id, upload.part)) else {
            throw TusRefusal(.conflict, "locked", "another request is writing this upload; retry after it ends")
        }
        // Re-read under the lock: the offset may have moved while we waited for it.
        guard let current = directory.read(upload.id, part: upload.part) else { throw TusRefusal(.notFound, "unknown", "no such upload") }
        let fd = open(directory.data(current), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0, ftruncate(fd, off_t(current.offset)) == 0 else {
            if fd >= 0 { close(fd) }
            throw TusRefusal(.internalServerError, "storage", "cannot open the upload's data: \(String(cString: strerror(errno)))")
        }
        self.upload = current
        self.directory = directory
        self.lock = lock
        self.fd = fd
        written = current.offset
        digest = checksum
    }

    deinit {
        close(fd)
        lock.release()
    }

    /// Bytes received in this request so far.
    var received: Int64 { written + Int64(pending.readableBytes) - upload.offset }

    /// Appends `bytes`; refused (413) when they would pass the upload's declared length.
    func append(_ bytes: ByteBuffer) async throws {
        guard upload.offset + received + Int64(bytes.readableBytes) <= upload.length else {
            throw TusRefusal(.contentTooLarge, "over_length", "the body passes Upload-Length (\(upload.length) bytes)")
        }
        bytes.withUnsafeReadableBytes { digest?.update($0) }
        var bytes = bytes
        pending.writeBuffer(&bytes)
        if pending.readableBytes >= Self.block { try await flush() }
    }

    /// What is gathered before a write: memory per upload in progress stays about this.
    static let block = 256 << 10

    private func flush() async throws {
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

    /// Whether the body matched the client's `Upload-Checksum` (true when it sent none).
    func checksumMatches() -> Bool { digest?.matches() ?? true }

    /// Makes what was received durable and acknowledges it: fsync, then the new offset recorded;
    /// the set becomes a job if this was the last of its bytes. `interrupted`: the body ended
    /// early (the next `PATCH` at this offset is a resume). Returns whether the job is enqueued.
    func commit(interrupted: Bool = false) async throws -> Bool {
        try await flush()
        let fd = fd
        try await NIOThreadPool.singleton.runIfActive {
            guard fsync(fd) == 0 else { throw IngestError.cannotWrite(path: "upload data", reason: String(cString: strerror(errno))) }
        }
        upload.offset = written
        upload.interrupted = interrupted
        let directory = directory, snapshot = upload
        return try await NIOThreadPool.singleton.runIfActive {
            try directory.save(snapshot)
            return snapshot.isComplete ? try directory.enqueueIfComplete(snapshot.id) : false
        }
    }
}

/// The `Upload-Checksum` of one request (tus checksum extension): the algorithm and the digest
/// the client expects, computed while the body streams through.
struct ChecksumDigest: @unchecked Sendable {
    static let algorithms = ["sha1", "sha256", "md5"]
    private var function: any HashFunction
    private let expected: Data

    /// Parses `sha1 <base64>`; nil for a header absent, throws 400 for one malformed or unsupported.
    init?(header: String?) throws(TusRefusal) {
        guard let header else { return nil }
        let parts = header.split(separator: " ")
        guard parts.count == 2, let expected = Data(base64Encoded: String(parts[1])) else {
            throw TusRefusal(.badRequest, "bad_checksum", "Upload-Checksum must be '<algorithm> <base64>'")
        }
        switch parts[0] {
        case "sha1": function = Insecure.SHA1()
        case "sha256": function = SHA256()
        case "md5": function = Insecure.MD5()
        default: throw TusRefusal(.badRequest, "bad_checksum", "unsupported checksum algorithm \(parts[0]); use one of \(Self.algorithms.joined(separator: ", "))")
        }
        self.expected = expected
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) { function.update(bufferPointer: bytes) }

    func matches() -> Bool {
        var copy = function
        return Data(Self.finalize(&copy)) == expected
    }

    private static func finalize(_ function: inout some HashFunction) -> [UInt8] { Array(function.finalize()) }
}
