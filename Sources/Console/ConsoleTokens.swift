import Crypto
import Foundation
import Ingest

/// What a console token may do.
public enum ConsoleRole: String, Sendable, Comparable {
    /// See every page.
    case read
    /// Also act: retry jobs.
    case operate

    public static func < (a: ConsoleRole, b: ConsoleRole) -> Bool { a == .read && b == .operate }
}

/// Who a request is: the role of the token it carried and the token's short hash (for logs;
/// the token itself is never logged).
public struct ConsoleIdentity: Sendable, Equatable {
    public var role: ConsoleRole
    /// The first 12 hex digits of the token's SHA-256.
    public var tokenHash: String
}

/// `--console-tokens-file`: one `ROLE TOKEN` per line (`read` or `operate`; `#` comments and
/// blank lines skipped), in a file only its owner can read, like every secret file. Tokens are
/// compared in constant time.
public struct ConsoleTokens: Sendable {
    let entries: [(role: ConsoleRole, token: [UInt8], hash: String)]

    /// Reads and checks `path`; the error names the file and the line.
    public init(path: String) throws(SecretFileError) {
        func refuse(_ reason: String) -> SecretFileError { SecretFileError(purpose: "console tokens file", path: path, reason: reason) }
        let text = String(decoding: try SecretFile.ownerOnly(path, purpose: "console tokens file"), as: UTF8.self)
        var entries: [(ConsoleRole, [UInt8], String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            guard fields.count == 2, let role = ConsoleRole(rawValue: String(first)) else {
                throw refuse("line \(number + 1): expected `read TOKEN` or `operate TOKEN`")
            }
            guard fields[1].utf8.count >= 16 else { throw refuse("line \(number + 1): a token needs at least 16 characters (openssl rand -hex 24)") }
            entries.append((role, Array(fields[1].utf8), Self.hash(Array(fields[1].utf8))))
        }
        guard !entries.isEmpty else { throw refuse("no tokens in it (one `read TOKEN` or `operate TOKEN` per line)") }
        self.entries = entries
    }

    /// The identity `token` gives, or nil for an unknown token.
    public func identity(_ token: some StringProtocol) -> ConsoleIdentity? {
        let given = Array(token.utf8)
        var found: ConsoleIdentity?
        for entry in entries where Self.equal(entry.token, given) {
            found = ConsoleIdentity(role: entry.role, tokenHash: entry.hash)
        }
        return found
    }

    /// Compares every byte whatever differs first (no timing hints at a token's prefix).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func hash(_ token: [UInt8]) -> String {
        SHA256.hash(data: token).prefix(6).map { String(format: "%02x", $0) }.joined()
    }
}
