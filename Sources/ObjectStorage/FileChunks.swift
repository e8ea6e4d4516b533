import Foundation
import NIOCore

/// A file's byte range for a request body: up to ``S3Client/bufferedBodyLimit`` read once into
/// one buffer, hashed for the signature and sent as bytes; larger ranges as an async sequence of
/// buffers (256 KiB reads). A streamed body is pulled by a task on Swift's shared pool, one per
/// request, and stalls while that pool is busy: parts and small objects never need one.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String
    let range: Range<Int64>
    static let chunk = 256 << 10

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: Result<FileDescriptorBox, ReadError>
        var offset: Int64
        let end: Int64

        mutating func next() async throws -> ByteBuffer? {
            guard offset < end else { return nil }
            let fd = try file.get()
            let want = Int(Swift.min(Int64(FileChunks.chunk), end - offset))
            var buffer = ByteBufferAllocator().buffer(capacity: want)
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                let n = pread(fd.fd, raw.baseAddress, want, off_t(offset))
                guard n > 0 else { throw FileChunks.ReadError(path: fd.path, errno: n == 0 ? EIO : errno) }
                return n
            }
            offset += Int64(read)
            return buffer
        }
    }

    struct ReadError: Error, CustomStringConvertible {
        var path: String
        var errno: Int32
        var description: String { "cannot read \(path): \(String(cString: strerror(errno)))" }
    }

    /// Closes its descriptor once the last iterator is gone.
    final class FileDescriptorBox: Sendable {
        let fd: Int32
        let path: String
        init(_ path: String) throws {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            self.path = path
            guard fd >= 0 else { throw ReadError(path: path, errno: errno) }
        }
        deinit { close(fd) }
    }

    func makeAsyncIterator() -> AsyncIterator {
        // A file that cannot be opened fails the first read.
        AsyncIterator(file: Result { try FileDescriptorBox(path) }.mapError { $0 as! ReadError }, offset: range.lowerBound, end: range.upperBound)
    }

    static func sha256Hex(_ path: String, range: Range<Int64>) throws -> String {
        let box = try FileDescriptorBox(path)
        var hasher = S3Signer.Hasher()
        var offset = range.lowerBound
        var buffer = [UInt8](repeating: 0, count: chunk)
        while offset < range.upperBound {
            let want = Int(Swift.min(Int64(chunk), range.upperBound - offset))
            let n = buffer.withUnsafeMutableBytes { pread(box.fd, $0.baseAddress, want, off_t(offset)) }
            guard n > 0 else { throw ReadError(path: path, errno: n == 0 ? EIO : errno) }
            hasher.update(buffer[0..<n])
            offset += Int64(n)
        }
        return hasher.finalize()
    }

    static func read(_ path: String, range: Range<Int64>) throws -> ByteBuffer {
        let box = try FileDescriptorBox(path)
        var buffer = ByteBufferAllocator().buffer(capacity: Int(range.count))
        var offset = range.lowerBound
        while offset < range.upperBound {
            let want = Int(range.upperBound - offset)
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                let n = pread(box.fd, raw.baseAddress, want, off_t(offset))
                guard n > 0 else { throw ReadError(path: path, errno: n == 0 ? EIO : errno) }
                return n
            }
            offset += Int64(read)
        }
        return buffer
    }
}
