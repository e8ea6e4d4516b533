import Crypto
import Foundation
import Ingest

/// What the app's backend hands a phone: permission to upload job `id` as `files` files (one
/// video, or clips + sound track + `upload.json`), at most `maxBytes` in all, until `expires`
/// (scope `upload`), to read that job's status (scope `status`), or to delete its video (scope
/// `delete`, the app's backend's own).
///
/// Written `v1.<scope>.<id>.<maxBytes>.<files>.<expires>.<mac>`, or with `.signed` before the MAC
/// when the video is to play only through signed URLs (``playback``): the MAC is HMAC-SHA256
/// under the upload secret over everything before it, base64url without padding, so the token
/// travels in a URL as is.
public struct UploadToken: Sendable, Equatable {
    public enum Scope: String, Sendable { case upload, status, delete }

    public var scope: Scope
    /// The job's id: 1 to 64 of `A–Z a–z 0–9 _ -`, not starting with `-`.
    public var id: String
    public var maxBytes: Int64
    /// How many tus uploads make the job: 1 for a video file; more for an upload directory.
    public var files: Int
    /// Seconds since 1970.
    public var expires: Int64
    /// `signed`: the app signed the video's playback policy into the link (`upload-url
    /// --playback signed`); the phone's metadata cannot make it public.
    public var playback: PlaybackPolicy?

    public init(scope: Scope, id: String, maxBytes: Int64, files: Int = 1, expires: Int64, playback: PlaybackPolicy? = nil) {
        self.playback = playback
        self.scope = scope
        self.id = id
        self.maxBytes = maxBytes
        self.files = files
        self.expires = expires
    }

    /// Whether `id` can name a job (and so a directory and an object key) as it is.
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && !id.hasPrefix("-")
            && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F || $0 == 0x2D }
    }

    private var signed: String { "v1.\(scope.rawValue).\(id).\(maxBytes).\(files).\(expires)" + (playback == .signed ? ".signed" : "") }

    /// The token as it goes into a URL.
    public func encoded(secret: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: secret))
        return signed + "." + Self.base64URL(Data(mac))
    }

    /// Why a token was refused.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case missing, malformed, forged, expired, wrongScope, wrongID
        public var description: String {
            switch self {
            case .missing: "no token (the URL's ?token=)"
            case .malformed: "the token is malformed"
            case .forged: "the token's signature does not match"
            case .expired: "the token has expired"
            case .wrongScope: "the token is not for this kind of request"
            case .wrongID: "the token is for another upload"
            }
        }
    }

    /// Checks `text`'s MAC (in constant time), its expiry against `now` and its scope.
    public init(verifying text: String?, secret: [UInt8], scope: Scope, now: Date = Date()) throws(Refusal) {
        try self.init(verifying: text, secret: secret, now: now)
        guard self.scope == scope else { throw .wrongScope }
    }

    /// Checks `text`'s MAC (in constant time) and its expiry against `now`, not yet its scope
    /// (`serve`'s `UploadAuthentication` verifies so; each route checks the scope it needs).
    public init(verifying text: String?, secret: [UInt8], now: Date = Date()) throws(Refusal) {
        guard let text, !text.isEmpty else { throw .missing }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 7 || (parts.count == 8 && parts[6] == "signed"), parts[0] == "v1", let parsedScope = Scope(rawValue: String(parts[1])),
              Self.isValidID(String(parts[2])), let maxBytes = Int64(parts[3]), maxBytes > 0,
              let files = Int(parts[4]), files >= 1,
              let expires = Int64(parts[5]), let mac = Self.data(base64URL: String(parts.last!)) else { throw .malformed }
        let signed = parts.dropLast().joined(separator: ".")
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(signed.utf8), using: SymmetricKey(data: secret)) else {
            throw .forged
        }
        guard Int64(now.timeIntervalSince1970) < expires else { throw .expired }
        self.init(scope: parsedScope, id: String(parts[2]), maxBytes: maxBytes, files: files, expires: expires,
                  playback: parts.count == 8 ? .signed : nil)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(base64URL text: String) -> Data? {
        guard text.utf8.count == 43 else { return nil }  // 32 bytes
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
        return Data(base64Encoded: standard)
    }
}
