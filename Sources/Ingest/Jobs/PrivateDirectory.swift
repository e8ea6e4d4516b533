import Foundation

/// A scratch directory only this user can enter (`mkdtemp`, mode 0700), removed with its
/// contents when the value goes away.
public final class PrivateDirectory: Sendable {
    public let path: String

    public init(prefix: String) throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/\(prefix)XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw IngestError.cannotWrite(path: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                                          reason: String(cString: strerror(errno)))
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
