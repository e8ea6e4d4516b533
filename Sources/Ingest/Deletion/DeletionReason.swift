import Foundation

/// Why a video is taken down: one of a fixed set of codes (what metrics count by) and the
/// operator's own words.
public enum DeletionCode: String, Codable, Sendable, CaseIterable {
    /// Its owner deleted it.
    case owner
    /// A rights holder's notice.
    case notice
    /// Moderation removed it.
    case moderation
    /// The person asked for their data to be erased: what the records say of their files goes too.
    case erasure
    case other
}

/// The reason a deletion records, checked before anything is recorded or removed.
public struct DeletionReason: Codable, Sendable, Equatable {
    public var code: DeletionCode
    /// The operator's words: 1 to ``maxLength`` characters.
    public var text: String
    /// Who asked (`cli:user@host`, the console's user, the app's key).
    public var by: String

    public static let maxLength = 1000

    /// Refuses an empty text, one over ``maxLength`` characters, or one holding NUL.
    public init(code: DeletionCode, text: String, by: String) throws {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw DeletionRefused("the reason is empty: say why the video is taken down (1 to \(Self.maxLength) characters)")
        }
        guard text.count <= Self.maxLength else {
            throw DeletionRefused("the reason has \(text.count) characters; at most \(Self.maxLength) are kept")
        }
        guard !text.unicodeScalars.contains("\u{0}") else { throw DeletionRefused("the reason holds a NUL character") }
        self.code = code
        self.text = text
        self.by = by
    }

    /// Refuses an id no store could have minted (`/`, `..`, NUL, a leading dot, too long):
    /// nothing is looked up or removed for it.
    public static func check(id: String) throws {
        guard UploadManifest.isValidID(id), !id.contains("..") else {
            throw DeletionRefused("\(id.debugDescription) is not a job id (1 to 128 of A-Z a-z 0-9 . _ -, no leading dot, no `..`)")
        }
    }
}

/// A deletion refused before anything was recorded: what is wrong with it.
public struct DeletionRefused: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
