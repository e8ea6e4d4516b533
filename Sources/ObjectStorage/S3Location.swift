import Foundation

/// An object or a key prefix in a bucket: `s3://bucket/key`. Parsed strictly: a bucket name as
/// S3 allows it (3–63 characters of `a-z 0-9 . -`), a key of valid UTF-8 with no control
/// characters, at most 1,024 bytes.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    public var bucket: String
    /// The object's key, or a prefix (no leading slash; may be empty for the whole bucket).
    public var key: String

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(bucket: String, key: String) throws {
        guard bucket.count >= 3, bucket.count <= 63,
              bucket.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D }),
              bucket.first != "-", bucket.first != ".", bucket.last != "-", bucket.last != "." else {
            throw Invalid(description: "not a bucket name S3 allows: \(bucket.debugDescription) (3–63 characters of a-z, 0-9, '.', '-')")
        }
        guard key.utf8.count <= 1024 else { throw Invalid(description: "object key longer than 1,024 bytes") }
        if let bad = key.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw Invalid(description: "object key \(key.debugDescription) holds the control character U+\(String(format: "%04X", bad.value))")
        }
        self.bucket = bucket
        self.key = key
    }

    /// `s3://bucket/key`; nil when `text` does not start with `s3://`.
    public init?(url text: String) throws {
        guard text.hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let key = slash == rest.endIndex ? "" : String(rest[rest.index(after: slash)...])
        try self.init(bucket: String(rest[..<slash]), key: key)
    }

    /// True for `s3://…` arguments.
    public static func isURL(_ text: String) -> Bool { text.hasPrefix("s3://") }

    public var description: String { "s3://\(bucket)/\(key)" }

    /// The key below this one: `prefix/name` (a prefix ending in `/` or empty is not doubled).
    public func appending(_ name: String) -> S3Location {
        var copy = self
        copy.key = key.isEmpty || key.hasSuffix("/") ? key + name : "\(key)/\(name)"
        return copy
    }

    /// The last component of the key.
    public var name: String { String(key.split(separator: "/").last ?? "") }
}
