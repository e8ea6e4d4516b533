import Foundation

/// The bucket prefix a fleet's `s3://` inputs may come from (`--uploads s3://bucket/prefix`),
/// the bucket's counterpart of ``UploadsRoot``: a job row or a `submit` naming any other object
/// is refused, so a queue row cannot make a worker fetch whatever its credentials can read. An
/// input must be spelt below the prefix, with no empty, `.` or `..` step (S3 keys are literal,
/// but a proxy or a path-style gateway may resolve them).
public struct BucketUploadsRoot: Sendable, CustomStringConvertible {
    /// `s3://bucket` or `s3://bucket/prefix`, without a trailing slash.
    public let prefix: String

    public var description: String { prefix }

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ url: String) throws {
        let trimmed = String(url.reversed().drop { $0 == "/" }.reversed())
        guard RemotePath.isRemote(trimmed) else { throw Invalid(description: "--uploads \(url): not an s3://bucket/prefix URL") }
        let steps = Array(trimmed.utf8.dropFirst("s3://".count)).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard let bucket = steps.first, !bucket.isEmpty, !Self.hasBadStep(steps.dropFirst()) else {
            throw Invalid(description: "--uploads \(url): must be s3://bucket or s3://bucket/prefix, with no empty, . or .. step")
        }
        prefix = trimmed
    }

    /// Why the `s3://` input may not be run from this root; nil when it is inside.
    /// Compared byte by byte, as S3 compares keys (never as Unicode-equivalent characters).
    public func refusal(for url: String) -> UploadPrecheck.Refusal? {
        let outside = UploadPrecheck.Refusal(code: "outside_uploads", message: "\(url): not under the uploads root \(prefix)/")
        let root = Array(prefix.utf8) + [UInt8(ascii: "/")], bytes = Array(url.utf8)
        guard bytes.starts(with: root) else { return outside }
        var steps = bytes.dropFirst(root.count).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        if steps.count > 1, steps.last?.isEmpty == true { steps.removeLast() }  // an upload directory: prefix/
        guard !steps.isEmpty, !Self.hasBadStep(steps[...]) else { return outside }
        return nil
    }

    private static func hasBadStep<Bytes: Collection<UInt8>>(_ steps: ArraySlice<Bytes>) -> Bool {
        steps.contains { $0.isEmpty || $0.elementsEqual([0x2E]) || $0.elementsEqual([0x2E, 0x2E]) || $0.contains(0) }
    }
}
