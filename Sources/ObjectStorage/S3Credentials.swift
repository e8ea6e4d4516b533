import Foundation

/// Credentials for S3 requests: a key pair, and a session token for temporary ones.
public struct S3Credentials: Sendable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// From the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`),
    /// else from the shared credentials file every AWS SDK reads (`AWS_SHARED_CREDENTIALS_FILE`,
    /// else `~/.aws/credentials`; profile `AWS_PROFILE`, else `default`), so a secret can be
    /// mounted as a file rather than put in the environment. Nil when neither has both keys.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
           let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        }
        let file = environment["AWS_SHARED_CREDENTIALS_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { "\($0)/.aws/credentials" }
        guard let file, let data = FileManager.default.contents(atPath: file), data.count <= 64 << 10 else { return nil }
        return sharedFile(String(decoding: data, as: UTF8.self), profile: environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default")
    }

    /// The profile's keys in an AWS shared credentials file (INI: `[profile]`, `key = value`).
    static func sharedFile(_ text: String, profile: String) -> S3Credentials? {
        var section: String?
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard let id = values["aws_access_key_id"], !id.isEmpty, let secret = values["aws_secret_access_key"], !secret.isEmpty else { return nil }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }
}
