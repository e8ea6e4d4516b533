import Crypto
import Foundation
import Ingest
import NIOCore
import NIOPosix

/// Writes one request's body into a spool upload at its acknowledged offset, holding the upload's
/// lock; the bytes are fsynced before the new offset is recorded.
final class UploadWriter: UploadBodyWriter, @unchecked Sendable {
    private(set) var upload: PartialUpload
    private let directory: UploadDirectory
    private let lock: JobLock
    private var file: BlockFile

    /// Takes the upload's lock (409 when another request holds it) and cuts the data file back
    /// to the acknowledged offset (a killed server may have left unacknowledged bytes).
    init(_ upload: PartialUpload, in directory: UploadDirectory) throws(TusRefusal) {
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
        file = BlockFile(fd: fd, at: current.offset)
    }

    deinit {
        close(file.fd)
        lock.release()
    }

    var received: Int64 { file.end - upload.offset }

    func append(_ bytes: ByteBuffer) async throws { try await file.append(bytes) }

    /// fsync, then the new offset recorded; the set becomes a job if this was the last of its
    /// bytes. `interrupted`: the body ended early (the next `PATCH` at this offset is a resume).
    func commit(interrupted: Bool) async throws -> Bool {
        try await file.sync()
        upload.offset = file.written
        upload.interrupted = interrupted
        let directory = directory, snapshot = upload
        return try await NIOThreadPool.singleton.runIfActive {
            try directory.save(snapshot)
            return snapshot.isComplete ? try directory.enqueueIfComplete(snapshot.id) : false
        }
    }

    func release() async {}
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
