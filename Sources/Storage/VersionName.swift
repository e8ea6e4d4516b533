import Foundation
import Ingest

/// The name of a version prefix below an output, in one of the two shapes ingestd writes. Any
/// other name is not a version: a sweep never touches what is under it.
public enum VersionName: Hashable, Sendable {
    /// `t<token>`: an attempt's, named by its fencing token (`watch`, `worker`; the rule is
    /// ``AttemptVersion``'s).
    case attempt(token: Int64)
    /// `v<yyyyMMdd>T<HHmmss>Z-<8 hex digits>`: a publish's (`transcode`, `reprocess`).
    case stamped(String)

    /// Parses exactly the two shapes (`t` and the token's own decimal, no sign or leading zero).
    public init?(_ name: some StringProtocol) {
        let bytes = Array(name.utf8)
        let digit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let hex = { (byte: UInt8) in digit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) }
        if let token = AttemptVersion.token(of: name) {
            self = .attempt(token: token)
        } else if bytes.count == 26, bytes[0] == UInt8(ascii: "v"), bytes[1...8].allSatisfy(digit), bytes[9] == UInt8(ascii: "T"),
                  bytes[10...15].allSatisfy(digit), bytes[16] == UInt8(ascii: "Z"), bytes[17] == UInt8(ascii: "-"),
                  bytes[18...].allSatisfy(hex) {
            self = .stamped(String(name))
        } else {
            return nil
        }
    }

    /// A new stamped name: sortable by time, unique (`v20261125T093000Z-1a2b3c4d`).
    static func fresh(at date: Date = Date()) -> VersionName {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return .stamped("v\(formatter.string(from: date))-\(String(format: "%08x", UInt32.random(in: 0...UInt32.max)))")
    }

    /// The prefix's name, as it appears in keys.
    public var name: String {
        switch self {
        case .attempt(let token): AttemptVersion.name(token: token)
        case .stamped(let name): name
        }
    }
}
