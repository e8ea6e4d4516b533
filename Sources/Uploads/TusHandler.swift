import Foundation
import HTTPTypes
import Hummingbird
import Ingest
import Logging
import Transcode

/// The tus 1.0 protocol over an ``UploadStore``, behind ``TusVersionCheck`` and
/// ``UploadAuthentication`` (the version and the token are checked before a route runs): each
/// method holds the token to its scope and upload, checks the request's headers before anything
/// is read or written, and answers with the tus headers; what it throws, ``TusRefusals`` answers.
struct TusHandler: Sendable {
    let configuration: UploadServer.Configuration
    let store: any UploadStore
    let metrics: UploadMetrics
    let logger: Logger

    static let extensions = "creation,creation-with-upload,expiration,termination,checksum"

    func options() -> Response {
        var headers = Self.tusHeaders
        headers[.tusVersion] = "1.0.0"
        headers[.tusExtension] = Self.extensions
        headers[.tusMaxSize] = "\(configuration.maxBytes)"
        headers[.tusChecksumAlgorithm] = ChecksumDigest.algorithms.joined(separator: ",")
        return Response(status: .noContent, headers: headers)
    }

    /// `POST /v1/uploads?token=`: a new upload of `Upload-Length` bytes, with its first bytes when
    /// the request has a body (`creation-with-upload`). Refused before any body is read when the
    /// length passes the token's or the server's limit.
    func create(_ request: Request, context: UploadRequestContext) async throws -> Response {
        let token = try context.token(.upload)
        guard request.headers[.uploadDeferLength] == nil else {
            throw TusRefusal(.badRequest, "deferred_length", "Upload-Defer-Length is not supported: send Upload-Length")
        }
        guard let text = request.headers[.uploadLength], let length = Int64(text), length >= 0 else {
            throw TusRefusal(.badRequest, "bad_length", "Upload-Length (a non-negative integer) is required")
        }
        let files = Admission(limits: configuration.preset.limits).maxUploadFiles
        guard token.files <= files else {
            throw TusRefusal(.contentTooLarge, "too_many_files", "this upload's link allows \(token.files) files; the preset allows at most \(files)")
        }
        let limit = min(token.maxBytes, configuration.maxBytes)
        guard length <= limit else {
            throw TusRefusal(.contentTooLarge, "too_large", "Upload-Length \(length) bytes passes this upload's limit of \(limit) bytes")
        }
        guard length > 0 else { throw TusRefusal(.badRequest, "bad_length", "an empty upload is not a video") }
        let metadata = try UploadMetadata(header: request.headers[.uploadMetadata])
        let upload = try await stored { try await store.create(token: token, limit: limit, length: length, metadata: metadata) }
        logger.info("upload created", metadata: ["id": "\(upload.id)", "part": "\(upload.part)", "of": "\(token.files)",
                                                 "length": "\(length)", "name": "\(upload.name)"])
        var headers = Self.tusHeaders
        headers[.location] = "/v1/uploads/\(upload.id)/\(upload.part)?token=\(request.uri.queryParameters["token"] ?? "")"
        headers[.uploadExpires] = Self.httpDate(Date(timeIntervalSince1970: TimeInterval(token.expires)))
        if hasBody(request) {
            // creation-with-upload: the first bytes ride on the creation. Whatever happens to
            // them, the upload exists: the client resumes with HEAD.
            _ = try? await receive(request, into: upload, at: 0)
            headers[.uploadOffset] = "\((try? await store.find(upload.id, part: upload.part))??.offset ?? 0)"
        }
        return Response(status: .created, headers: headers)
    }

    /// `HEAD /v1/uploads/{id}/{part}?token=`: where to resume.
    func head(_ request: Request, context: UploadRequestContext, id: String, part: String) async throws -> Response {
        let token = try context.token(.upload, id: id)
        let upload = try await find(id, part)
        var headers = Self.tusHeaders
        headers[.uploadOffset] = "\(upload.offset)"
        headers[.uploadLength] = "\(upload.length)"
        headers[.uploadExpires] = Self.httpDate(Date(timeIntervalSince1970: TimeInterval(token.expires)))
        headers[.cacheControl] = "no-store"
        if let metadata = upload.metadata { headers[.uploadMetadata] = metadata }
        return Response(status: .ok, headers: headers)
    }

    /// `PATCH /v1/uploads/{id}/{part}?token=`: bytes at `Upload-Offset`.
    func patch(_ request: Request, context: UploadRequestContext, id: String, part: String) async throws -> Response {
        let token = try context.token(.upload, id: id)
        let upload = try await find(id, part)
        guard let text = request.headers[.uploadOffset], let offset = Int64(text) else {
            throw TusRefusal(.badRequest, "bad_offset", "Upload-Offset (an integer) is required")
        }
        let written = try await receive(request, into: upload, at: offset)
        var headers = Self.tusHeaders
        headers[.uploadOffset] = "\(written)"
        headers[.uploadExpires] = Self.httpDate(Date(timeIntervalSince1970: TimeInterval(token.expires)))
        return Response(status: .noContent, headers: headers)
    }

    /// `DELETE /v1/uploads/{id}/{part}?token=` (termination): the whole set's bytes are removed
    /// (its files make one job, which can no longer be whole).
    func delete(_ request: Request, context: UploadRequestContext, id: String, part: String) async throws -> Response {
        _ = try context.token(.upload, id: id)
        _ = try await find(id, part)
        try await stored { try await store.terminate(id) }
        logger.info("upload terminated", metadata: ["id": "\(id)"])
        return Response(status: .noContent, headers: Self.tusHeaders)
    }

    /// `GET /v1/jobs/{id}?token=` with a status token.
    func status(context: UploadRequestContext, id: String) async throws -> Response {
        _ = try context.token(.status, id: id)
        guard let report = try await stored({ try await store.status(id) }) else {
            throw TusRefusal(.notFound, "unknown", "no upload or job \(id)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(report)) ?? Data()
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    private func hasBody(_ request: Request) -> Bool {
        request.headers[.contentType] == "application/offset+octet-stream"
            && (request.headers[.contentLength].flatMap { Int64($0) } ?? 1) > 0
    }

    // MARK: Checks

    /// The upload `part` of `id`: 404 for one never made or whose set was terminated. A set whose
    /// files are all complete but not yet enqueued (a crash came between) is enqueued first.
    private func find(_ id: String, _ part: String) async throws -> PartialUpload {
        guard let part = Int(part), UploadToken.isValidID(id) else { throw TusRefusal(.notFound, "unknown", "no such upload") }
        guard let found = try await stored({ try await store.find(id, part: part) }) else { throw TusRefusal(.notFound, "unknown", "no such upload") }
        return found
    }

    /// The store's answer; its own failures (the database or the bucket unreachable) are 503s.
    func stored<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let refusal as TusRefusal { throw refusal } catch {
            throw TusRefusal(.serviceUnavailable, "storage", "upload storage unavailable, retry shortly: \(error)")
        }
    }

    static var tusHeaders: HTTPFields { [.tusResumable: "1.0.0"] }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

extension HTTPField.Name {
    static let tusResumable = Self("Tus-Resumable")!
    static let tusVersion = Self("Tus-Version")!
    static let tusExtension = Self("Tus-Extension")!
    static let tusMaxSize = Self("Tus-Max-Size")!
    static let tusChecksumAlgorithm = Self("Tus-Checksum-Algorithm")!
    static let uploadLength = Self("Upload-Length")!
    static let uploadOffset = Self("Upload-Offset")!
    static let uploadMetadata = Self("Upload-Metadata")!
    static let uploadExpires = Self("Upload-Expires")!
    static let uploadChecksum = Self("Upload-Checksum")!
    static let uploadDeferLength = Self("Upload-Defer-Length")!
}
