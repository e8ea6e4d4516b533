import Foundation
import Hummingbird
import NIOCore

extension TusHandler {
    /// Streams the request's body into `upload` at `offset` and acknowledges what landed; returns
    /// the new offset. A body that breaks off keeps what arrived (unless it carried a checksum,
    /// which can then not be checked); one whose checksum does not match is discarded (460).
    func receive(_ request: Request, into upload: PartialUpload, at offset: Int64) async throws -> Int64 {
        guard request.headers[.contentType] == "application/offset+octet-stream" else {
            throw TusRefusal(.unsupportedMediaType, "bad_content_type", "Content-Type must be application/offset+octet-stream")
        }
        let checksum = try ChecksumDigest(header: request.headers[.uploadChecksum])
        guard !upload.isComplete else {
            throw TusRefusal(.conflict, "bad_offset", "the upload is complete (\(upload.length) bytes)")
        }
        guard metrics.enter(limit: configuration.maxUploads) else {
            throw TusRefusal(.serviceUnavailable, "busy", "too many uploads in progress; retry shortly")
        }
        defer { metrics.leave() }
        let writer = try await stored { try await store.writer(upload) }
        do {
            let written = try await receive(request, into: writer, at: offset, checksum: checksum)
            await writer.release()
            return written
        } catch {
            await writer.release()
            throw error
        }
    }

    func receive(_ request: Request, into writer: any UploadBodyWriter, at offset: Int64, checksum: ChecksumDigest?) async throws -> Int64 {
        let upload = writer.upload
        guard offset == upload.offset else {
            throw TusRefusal(.conflict, "bad_offset", "Upload-Offset \(offset) does not match the upload's offset \(upload.offset)")
        }
        if let declared = request.headers[.contentLength].flatMap({ Int64($0) }), offset + declared > upload.length {
            throw TusRefusal(.contentTooLarge, "over_length", "the body (\(declared) bytes at \(offset)) passes Upload-Length (\(upload.length) bytes)")
        }
        if upload.interrupted, offset > 0 { metrics.resumed() }
        var digest = checksum
        var window = RateWindow(seconds: configuration.readTimeout.seconds, minBytesPerSecond: configuration.minBytesPerSecond)
        do {
            for try await chunk in request.body {
                guard offset + writer.received + Int64(chunk.readableBytes) <= upload.length else {
                    throw TusRefusal(.contentTooLarge, "over_length", "the body passes Upload-Length (\(upload.length) bytes)")
                }
                chunk.withUnsafeReadableBytes { digest?.update($0) }
                try await writer.append(chunk)
                guard window.admit(chunk.readableBytes) else {
                    throw TusRefusal(.requestTimeout, "too_slow",
                                     "fewer than \(configuration.minBytesPerSecond) bytes/s over \(Int(configuration.readTimeout.seconds)) s")
                }
            }
        } catch {
            // Broken off (or too slow): what arrived is kept and acknowledged, so a resume re-sends
            // nothing that was received; a body with a checksum cannot be checked and goes.
            let received = writer.received
            if checksum == nil, received > 0, (try? await writer.commit(interrupted: true)) != nil {
                metrics.received(received)
                logger.info("upload request broke off; received bytes kept", metadata: ["id": "\(upload.id)", "part": "\(upload.part)",
                                                                                       "offset": "\(offset + received)", "error": "\(error)"])
            }
            throw error
        }
        guard digest?.matches() ?? true else {
            throw TusRefusal(TusRefusal.checksumMismatch, "checksum_mismatch", "Upload-Checksum does not match the body; its \(writer.received) bytes were discarded")
        }
        let received = writer.received
        let enqueued: Bool
        do { enqueued = try await writer.commit(interrupted: false) } catch let refusal as TusRefusal { throw refusal } catch {
            throw TusRefusal(.internalServerError, "storage", "cannot store the upload: \(error)")
        }
        metrics.received(received)
        if enqueued {
            metrics.completedOne()
            logger.info("upload complete: queued as a job", metadata: ["id": "\(upload.id)"])
        }
        return offset + received
    }
}

/// At least `minBytesPerSecond` over each window of `seconds`: a body trickling slower (slowloris)
/// is ended, one that stalls altogether is closed by the server's idle timeout.
struct RateWindow {
    let seconds: Double
    let minBytesPerSecond: Int
    private var start = ContinuousClock.now
    private var bytes = 0

    init(seconds: Double, minBytesPerSecond: Int) {
        self.seconds = seconds
        self.minBytesPerSecond = minBytesPerSecond
    }

    mutating func admit(_ count: Int) -> Bool {
        bytes += count
        guard (ContinuousClock.now - start).seconds >= seconds else { return true }
        defer { start = .now; bytes = 0 }
        return Double(bytes) >= Double(minBytesPerSecond) * seconds
    }
}

