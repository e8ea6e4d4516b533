import Ingest

/// The key signed playback URLs are made with: one line `plsec_<base64>` of 24 to 64 bytes in a
/// file only its owner reads, the line itself given to nginx as `$ingestd_playback_secret`.
public struct PlaybackKey: Sendable, Equatable {
    /// `plsec_<base64>`, as the file holds it (what the signature is made with).
    public let line: String
    /// What a token names the key by: the first four letters or digits of its base64 (24 of its
    /// 192 or more bits, public by design), so the CDN can tell a rotation's two keys apart.
    public let id: String

    public static let prefix = "plsec_"

    /// Reads and checks the key file (exit 78 material: `SecretFileError`).
    public init(path: String) throws(SecretFileError) {
        let file = try SecretFile(path, prefix: Self.prefix, purpose: "playback key")
        try self.init(line: file.line, path: path)
    }

    /// A key from its line (already checked as a secret file's).
    init(line: String, path: String) throws(SecretFileError) {
        let id = String(line.dropFirst(Self.prefix.count).filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(4))
        guard id.count == 4 else { throw SecretFileError(purpose: "playback key", path: path, reason: "its base64 has fewer than four letters or digits") }
        self.line = line
        self.id = id
    }
}
