import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A download that would pass its limit: refused from the size S3 announces, or stopped once
/// the bytes read pass it (an object replaced after its HEAD, a lying server).
public struct S3ObjectTooLarge: Error, CustomStringConvertible, Sendable {
    public var location: S3Location
    public var size: Int64
    public var limit: Int64
    public var description: String { "\(location) is \(size) bytes or more, over the limit of \(limit) bytes" }
}

/// When a write may happen: always, only if no object has the key yet (`If-None-Match: *`),
/// or only if the object is still the one with this ETag (`If-Match`).
public enum S3WriteCondition: Sendable, Equatable {
    case always
    case ifAbsent
    case ifMatch(String)

    var headers: [(String, String)] {
        switch self {
        case .always: []
        case .ifAbsent: [("If-None-Match", "*")]
        case .ifMatch(let etag): [("If-Match", etag)]
        }
    }
}

extension S3Client {
    /// Downloads the object into a new file at `path`, reading at most `limit` bytes: a larger
    /// announced size is refused before the body is read, and reading stops as soon as the
    /// bytes pass the limit. Returns the size. On failure the file is removed.
    public func download(_ location: S3Location, to path: String, limit: Int64) async throws -> Int64 {
        do {
            return try await retrying(.GET, location) {
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard fd >= 0 else { throw FileChunks.ReadError(path: path, errno: errno) }
                defer { close(fd) }
                let response = try await execute(.GET, location)
                let status = Int(response.status.code)
                guard status == 200 else {
                    throw Self.error(.GET, location, status: status, body: Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView))
                }
                if let announced = response.headers.first(name: "content-length").flatMap(Int64.init), announced > limit {
                    throw S3ObjectTooLarge(location: location, size: announced, limit: limit)
                }
                var written: Int64 = 0
                do {
                    for try await chunk in response.body {
                        written += Int64(chunk.readableBytes)
                        guard written <= limit else { throw S3ObjectTooLarge(location: location, size: written, limit: limit) }
                        try chunk.withUnsafeReadableBytes { raw in
                            var offset = 0
                            while offset < raw.count {
                                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                                guard n > 0 else { throw FileChunks.ReadError(path: path, errno: errno) }
                                offset += n
                            }
                        }
                    }
                } catch let error as S3ObjectTooLarge {
                    throw error
                } catch let error as FileChunks.ReadError {
                    throw error
                } catch {
                    throw S3Error(method: "GET", location: location, status: nil, code: nil, message: "download cut off: \(error)")
                }
                return written
            }
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Uploads `data` as one object. Returns its ETag.
    @discardableResult
    public func upload(_ data: Data, to location: S3Location, contentType: String, cacheControl: String? = nil,
                       condition: S3WriteCondition = .always) async throws -> String {
        let response = try await send(.PUT, location, headers: Self.objectHeaders(contentType, cacheControl) + condition.headers,
                                      body: .data(data), expecting: [200])
        return response.headers.first(name: "etag") ?? ""
    }

    /// Uploads a file as one object, streamed; in parts (``partSize``, ``parallelParts`` at
    /// once) above ``multipartThreshold``. Returns its ETag.
    @discardableResult
    public func upload(file path: String, to location: S3Location, contentType: String, cacheControl: String? = nil,
                       condition: S3WriteCondition = .always) async throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FileChunks.ReadError(path: path, errno: errno) }
        let size = Int64(info.st_size)
        let headers = Self.objectHeaders(contentType, cacheControl)
        guard size > multipartThreshold else {
            let response = try await send(.PUT, location, headers: headers + condition.headers,
                                          body: .file(path: path, range: 0..<size), expecting: [200])
            return response.headers.first(name: "etag") ?? ""
        }
        return try await uploadParts(path, size: size, to: location, contentType: contentType, cacheControl: cacheControl, condition: condition)
    }

    private func uploadParts(_ path: String, size: Int64, to location: S3Location, contentType: String, cacheControl: String?,
                             condition: S3WriteCondition) async throws -> String {
        let uploadID = try await createMultipartUpload(location, contentType: contentType, cacheControl: cacheControl)
        do {
            let ranges = stride(from: Int64(0), to: size, by: Int(partSize)).map { $0..<min($0 + partSize, size) }
            let parts = try await concurrentMap(Array(ranges.enumerated()), atMost: parallelParts) { part in
                UploadedPart(number: part.offset + 1, etag: try await uploadPart(location, uploadID: uploadID, number: part.offset + 1,
                                                                                   file: path, range: part.element),
                             size: Int64(part.element.count))
            }
            return try await completeMultipartUpload(location, uploadID: uploadID, parts: parts, condition: condition)
        } catch {
            // Not in this (perhaps cancelled) task: a cancelled request would never reach S3,
            // and the parts would stay billed.
            let abort = Task { [self] in try? await abortUpload(location, uploadID: uploadID) }
            await abort.value
            throw error
        }
    }

    /// An object under a prefix, as listed.
    public struct ListedObject: Sendable, Equatable {
        public var key: String
        public var size: Int64
        public var lastModified: Date?
    }

    /// Every object whose key starts with `prefix.key`, in key order; at most `limit` of them
    /// (the listing stops there: a hostile prefix with millions of keys costs one page).
    public func list(_ prefix: S3Location, atMost limit: Int = .max) async throws -> [ListedObject] {
        var objects: [ListedObject] = []
        var token: String?
        let bucket = try S3Location(bucket: prefix.bucket, key: "")
        repeat {
            var query = "list-type=2&max-keys=\(min(1000, max(1, limit - objects.count)))&prefix=\(S3Signer.encode(prefix.key))"
            if let token { query += "&continuation-token=\(S3Signer.encode(token))" }
            let page = try await send(.GET, bucket, query: query, expecting: [200])
            for record in S3XML.records(page.body, group: "Contents") {
                guard let key = record["Key"] else { continue }
                objects.append(ListedObject(key: key, size: Int64(record["Size"] ?? "") ?? 0,
                                            lastModified: record["LastModified"].flatMap(Self.parseDate)))
            }
            token = S3XML.value("IsTruncated", in: page.body) == "true" ? S3XML.value("NextContinuationToken", in: page.body) : nil
        } while token != nil && objects.count < limit
        return Array(objects.prefix(limit))
    }

    /// A multipart upload begun and neither completed nor aborted.
    public struct PendingUpload: Sendable, Equatable {
        public var key: String
        public var uploadID: String
        public var initiated: Date?
    }

    /// Every multipart upload in progress under `prefix`, page after page (`pageSize` a page,
    /// S3's most). The next page starts after the markers S3 returned: `NextKeyMarker` and
    /// `NextUploadIdMarker` (AWS), or `NextUploadIdMarker` alone (SeaweedFS lists by upload ID).
    public func pendingUploads(_ prefix: S3Location, pageSize: Int = 1000) async throws -> [PendingUpload] {
        let bucket = try S3Location(bucket: prefix.bucket, key: "")
        var uploads: [PendingUpload] = []
        var markers: (key: String?, uploadID: String?) = (nil, nil)
        while true {
            var query = "max-uploads=\(min(1000, max(1, pageSize)))&prefix=\(S3Signer.encode(prefix.key))&uploads"
            if let key = markers.key { query += "&key-marker=\(S3Signer.encode(key))" }
            if let id = markers.uploadID { query += "&upload-id-marker=\(S3Signer.encode(id))" }
            let page = try await send(.GET, bucket, query: query, expecting: [200])
            uploads += S3XML.records(page.body, group: "Upload").compactMap { record in
                guard let key = record["Key"], let id = record["UploadId"] else { return nil }
                return PendingUpload(key: key, uploadID: id, initiated: record["Initiated"].flatMap(Self.parseDate))
            }
            let fields = S3XML.records(page.body).first ?? [:]
            let next = (key: fields["NextKeyMarker"].flatMap { $0.isEmpty ? nil : $0 },
                        uploadID: fields["NextUploadIdMarker"].flatMap { $0.isEmpty ? nil : $0 })
            // A truncated page without new markers would list the same page for ever.
            guard fields["IsTruncated"] == "true", next.key != nil || next.uploadID != nil,
                  next.key != markers.key || next.uploadID != markers.uploadID else { break }
            markers = next
        }
        return uploads
    }

    /// Aborts a multipart upload, freeing its parts.
    public func abortUpload(_ location: S3Location, uploadID: String) async throws {
        _ = try await send(.DELETE, location, query: "uploadId=\(S3Signer.encode(uploadID))", expecting: [200, 204, 404])
    }

    static func objectHeaders(_ contentType: String, _ cacheControl: String?) -> [(String, String)] {
        [("Content-Type", contentType)] + (cacheControl.map { [("Cache-Control", $0)] } ?? [])
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
