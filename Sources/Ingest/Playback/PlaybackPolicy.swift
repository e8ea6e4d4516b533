/// Who may play a video: anyone with its URL (`public`, the default), or only a viewer given a
/// URL signed with the playback key (`signed`: docs/OUTPUT.md, "Signed playback").
public enum PlaybackPolicy: String, Codable, Sendable, CaseIterable {
    case `public`
    case signed

    /// The strictest of what was asked (the host's default, the app's, the upload's own): signed
    /// when any says signed. An upload cannot make public what the app or the host signs.
    public static func strictest(_ asked: PlaybackPolicy?...) -> PlaybackPolicy {
        asked.contains(.signed) ? .signed : .public
    }

    /// The file (a directory CDN: `CDN/<id>/.playback-signed`) or object (a bucket:
    /// `<id>/.playback-signed`) that stands beside a signed video's versions while it is signed:
    /// what the CDN's rules read to refuse the video's unsigned paths. A dot-name: never served.
    public static let markerName = ".playback-signed"
}
