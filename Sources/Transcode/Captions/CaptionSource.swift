import Foundation

/// One caption track an upload brings, already read and cleaned: for the whole video (`clip`
/// nil, on the output timeline) or for one clip (on that clip's own timeline, moved and cut with
/// its trim and its place in the join). Tracks of one language are published as one.
public struct CaptionSource: Sendable, Equatable {
    /// A BCP 47 tag (`en`, `pt-BR`): it names the published files, so ``isValidLanguage(_:)`` holds.
    public var language: String
    /// What a player's menu shows.
    public var name: String
    /// The clip (index in the upload's clips) the track is timed on; nil: the whole video.
    public var clip: Int?
    public var track: CaptionTrack
    /// Who made it: `app` (the upload brought it).
    public var origin: String

    public init(language: String, name: String? = nil, clip: Int? = nil, track: CaptionTrack, origin: String = "app") {
        self.language = language
        self.name = name ?? Self.defaultName(language)
        self.clip = clip
        self.track = track
        self.origin = origin
    }

    /// A language tag of the shape BCP 47 gives: 2–3 letters, then up to three subtags of 1–8
    /// letters or digits (`en`, `pt-BR`, `zh-Hant-TW`), at most 35 characters.
    public static func isValidLanguage(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard tag.count <= 35, let first = parts.first, (2...3).contains(first.count), parts.count <= 4,
              first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// ``isValidLanguage(_:)``'s rule in words, for refusals.
    public static let languageRule = "a language tag such as en or pt-BR (2-3 letters, then up to 3 subtags of 1-8 letters or digits)"
    /// ``isValidName(_:)``'s rule in words, for refusals.
    public static let nameRule = "1-64 characters, with no control character and no \""

    /// A name a player may show: 1–64 characters, none a control character or `"` (it is an
    /// HLS quoted string).
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count) && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "\"" }
    }

    /// The language's English name (`en` → English, `pt-BR` → Portuguese (Brazil)), or the tag
    /// when none is known.
    public static func defaultName(_ language: String) -> String {
        let english = Locale(identifier: "en")
        guard english.localizedString(forLanguageCode: String(language.split(separator: "-")[0])) != nil else { return language }
        return english.localizedString(forIdentifier: language.replacingOccurrences(of: "-", with: "_")) ?? language
    }
}

extension ReadyManifest.Caption {
    /// `source` as published: `track` (its cues on the video) in files named with `revision`
    /// (nil: the upload's own names, ``OutputLayout/subtitlesPlaylistName(_:revision:)``).
    init(_ source: CaptionSource, revision: String? = nil, track: CaptionTrack) {
        self.init(language: source.language, name: source.name, source: source.origin,
                  playlist: OutputLayout.subtitlesPlaylistName(source.language, revision: revision),
                  track: OutputLayout.captionsTrackName(source.language, revision: revision),
                  cues: track.cues.count, text: CaptionMarkup.words(of: track))
    }
}
