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
        let steps = trimmed.dropFirst("s3://".count).split(separator: "/", omittingEmptySubsequences: false)
        guard let bucket = steps.first, !bucket.isEmpty, !Self.hasBadStep(steps.dropFirst()) else {
            throw Invalid(description: "--uploads \(url): must be s3://bucket or s3://bucket/prefix, with no empty, . or .. step")
        }
        prefix = trimmed
    }

    /// Why the `s3://` input may not be run from this root; nil when it is inside.
    public func refusal(for url: String) -> UploadPrecheck.Refusal? {
        let outside = UploadPrecheck.Refusal(code: "outside_uploads", message: "\(url): not under the uploads root \(prefix)/")
        guard url.hasPrefix(prefix + "/") else { return outside }
        var steps = url.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        if steps.count > 1, steps.last == "" { steps.removeLast() }  // an upload directory: prefix/
        guard !steps.isEmpty, !Self.hasBadStep(steps[...]) else { return outside }
        return nil
    }

    private static func hasBadStep(_ steps: ArraySlice<Substring>) -> Bool {
        steps.contains { $0.isEmpty || $0 == "." || $0 == ".." || $0.contains("\0") }
    }
}
