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
    /// The token's name in the tokens file (its third field), else its hash: who a deletion's
    /// tombstone says asked (`console:<name>`).
    public var name: String

    public init(role: ConsoleRole, tokenHash: String, name: String? = nil) {
        self.role = role
        self.tokenHash = tokenHash
        self.name = name ?? tokenHash
    }
}

/// `--console-tokens-file`: one `ROLE TOKEN [NAME]` per line (`read` or `operate`; `#` comments and
/// blank lines skipped; NAME says who in a deletion's tombstone), in a file only its owner can read, like every secret file. Tokens are
/// compared in constant time.
public struct ConsoleTokens: Sendable {
    /// Each token's role and SHA-256 (tokens are compared by digest: swift-crypto's `==` on
    /// digests takes the same time wherever they differ).
    let entries: [(role: ConsoleRole, digest: SHA256.Digest, name: String?)]

    /// Reads and checks `path`; the error names the file and the line.
    public init(path: String) throws(SecretFileError) {
        func refuse(_ reason: String) -> SecretFileError { SecretFileError(purpose: "console tokens file", path: path, reason: reason) }
        let text = String(decoding: try SecretFile.ownerOnly(path, purpose: "console tokens file"), as: UTF8.self)
        var entries: [(ConsoleRole, SHA256.Digest, String?)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            guard fields.count == 2 || fields.count == 3, let role = ConsoleRole(rawValue: String(first)) else {
                throw refuse("line \(number + 1): expected `read TOKEN` or `operate TOKEN` (and a name, optional)")
            }
            guard fields[1].utf8.count >= 16 else { throw refuse("line \(number + 1): a token needs at least 16 characters (openssl rand -hex 24)") }
            entries.append((role, SHA256.hash(data: Array(fields[1].utf8)), fields.count == 3 ? String(fields[2]) : nil))
        }
        guard !entries.isEmpty else { throw refuse("no tokens in it (one `read TOKEN` or `operate TOKEN` per line)") }
        self.entries = entries
    }

    /// The identity `token` gives, or nil for an unknown token.
    public func identity(_ token: some StringProtocol) -> ConsoleIdentity? {
        let given = SHA256.hash(data: Array(token.utf8))
        guard let entry = entries.first(where: { $0.digest == given }) else { return nil }
        return ConsoleIdentity(role: entry.role, tokenHash: given.prefix(6).map { String(format: "%02x", $0) }.joined(), name: entry.name)
    }
}
