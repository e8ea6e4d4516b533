import Foundation

/// S3's multipart upload, one call at a time, for callers that send the parts themselves over
/// time and from different processes (``S3Client/upload(file:to:contentType:cacheControl:condition:)``
/// uses them for one large file): every part but the last at least ``minimumPartSize``.
extension S3Client {
    /// S3's smallest part (all but the last).
    public static let minimumPartSize: Int64 = 5 << 20

    /// One part as ``completeMultipartUpload(_:uploadID:parts:condition:)`` names it.
    public struct UploadedPart: Sendable, Equatable, Codable {
        public var number: Int
        public var etag: String
        public var size: Int64

        public init(number: Int, etag: String, size: Int64) {
            self.number = number
            self.etag = etag
            self.size = size
        }
    }

    /// Begins a multipart upload of `location`; returns its upload ID.
    public func createMultipartUpload(_ location: S3Location, contentType: String, cacheControl: String? = nil) async throws -> String {
        let created = try await send(.POST, location, query: "uploads", headers: Self.objectHeaders(contentType, cacheControl), expecting: [200])
        guard let uploadID = S3XML.value("UploadId", in: created.body), !uploadID.isEmpty else {
            throw S3Error(method: "POST", location: location, status: created.status, code: nil, message: "no UploadId in the answer")
        }
        return uploadID
    }

    /// Uploads `range` of the file at `path` as part `number` (1…10000), streamed; returns its ETag.
    /// Sending a number again replaces that part.
    public func uploadPart(_ location: S3Location, uploadID: String, number: Int, file path: String, range: Range<Int64>) async throws -> String {
        let response = try await send(.PUT, location, query: "partNumber=\(number)&uploadId=\(S3Signer.encode(uploadID))",
                                      body: .file(path: path, range: range), expecting: [200])
        // Without its ETag a part cannot be named at completion: fail the write, not the upload later.
        guard let etag = response.headers.first(name: "etag"), !etag.isEmpty else {
            throw S3Error(method: "PUT", location: location, status: 200, code: nil, message: "part \(number) stored without an ETag")
        }
        return etag
    }

    /// Joins the parts into the object; returns its ETag. S3 may answer 200 with an error in
    /// the body: that is thrown too.
    @discardableResult
    public func completeMultipartUpload(_ location: S3Location, uploadID: String, parts: [UploadedPart],
                                        condition: S3WriteCondition = .always) async throws -> String {
        let list = parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(Self.xmlEscaped($0.etag))</ETag></Part>" }
        let body = Data("<CompleteMultipartUpload>\(list.joined())</CompleteMultipartUpload>".utf8)
        let done = try await send(.POST, location, query: "uploadId=\(S3Signer.encode(uploadID))",
                                  headers: [("Content-Type", "application/xml")] + condition.headers, body: .data(body), expecting: [200])
        if let code = S3XML.value("Code", in: done.body), S3XML.value("ETag", in: done.body) == nil {
            throw S3Error(method: "POST", location: location, status: 200, code: code, message: S3XML.value("Message", in: done.body) ?? "")
        }
        return S3XML.value("ETag", in: done.body) ?? ""
    }
}
