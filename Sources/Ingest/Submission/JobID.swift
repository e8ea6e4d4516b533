import Foundation

/// The one rule for job ids made from names, for every producer: the spool's intake, `submit`,
/// the upload server, reprocess's catalog.
public enum JobID {
    /// A new job's id from an upload's name: its safe characters plus 64 random bits, so equal
    /// names never collide and no name can escape the spool or the CDN.
    public static func make(for name: String) -> String {
        let trimmed = safe((name as NSString).deletingPathExtension)
            .trimmingCharacters(in: CharacterSet(charactersIn: "_")).prefix(40)
        let suffix = String(format: "%016llx", UInt64.random(in: 0...UInt64.max))
        return (trimmed.isEmpty ? "upload" : String(trimmed)) + "-" + suffix
    }

    /// `s` with every character other than ASCII letters and digits replaced by `_`.
    static func safe(_ s: String) -> String {
        String(s.unicodeScalars.map { $0.isASCII && CharacterSet.alphanumerics.contains($0) ? Character($0) : "_" })
    }
}
