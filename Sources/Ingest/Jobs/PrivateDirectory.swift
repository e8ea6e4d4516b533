import Foundation

/// A scratch directory only this user can enter (`mkdtemp`, mode 0700), removed with its
/// contents when the value goes away.
public final class PrivateDirectory: Sendable {
    public let path: String

    public init(prefix: String) throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/\(prefix)XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw IngestError.cannotWrite(path: String(cString: template), reason: String(cString: strerror(errno)))
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
