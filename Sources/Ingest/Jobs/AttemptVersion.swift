import Foundation

/// The one version-name rule: an attempt's staging suffix, its growing version directory and
/// its bucket version prefix are `t<token>`, so each attempt's are its own and a larger token is
/// a newer attempt.
public enum AttemptVersion {
    /// The version name of the attempt holding fencing token `token`.
    public static func name(token: Int64) -> String { "t\(token)" }

    /// The token a version name carries (`t` and the token's own decimal: no sign, no leading
    /// zero); nil for a name of another kind.
    public static func token(of name: some StringProtocol) -> Int64? {
        guard name.hasPrefix("t"), let token = Int64(name.dropFirst()), self.name(token: token) == name else { return nil }
        return token
    }
}
