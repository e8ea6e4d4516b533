import Crypto
import Foundation
import Ingest

/// A signed playback URL: the video's own paths with one segment after its id,
/// `p-<key id>-<expires>-<signature>`, so every URI a player resolves against the master
/// (variants, init sections, segments) carries it. `expires` is Unix seconds; the signature is
/// base64url, unpadded, of MD5(`<expires><id> <key line>`): what nginx's `secure_link_md5
/// "$ingestd_expires$ingestd_id $ingestd_secret"` checks (docs/OUTPUT.md gives the recipe).
public enum PlaybackToken {
    /// The longest a URL may live: a week.
    public static let longest = 7 * 86_400

    /// The token segment for video `id`.
    public static func segment(id: String, expires: Int, key: PlaybackKey) -> String {
        let digest = Insecure.MD5.hash(data: Data("\(expires)\(id) \(key.line)".utf8))
        let signature = Data(digest).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "p-\(key.id)-\(expires)-\(signature)"
    }

    /// When a URL asked to live `lifetime` seconds from `now` expires: rounded up to a whole
    /// `window`, so every viewer of a video in one window gets the same URL (and a cache in front
    /// keeps one copy for all of them).
    public static func expiry(now: Date, lifetime: Int, window: Int = 600) -> Int {
        let at = Int(now.timeIntervalSince1970) + lifetime
        return (at + window - 1) / window * window
    }

    /// `relative` (a manifest's path, `master.m3u8` by default) of the video at `place`, signed,
    /// under `base` (the CDN's public URL).
    public static func url(base: String, place: PlaybackPlace, relative: String = "master.m3u8", expires: Int, key: PlaybackKey) -> String {
        let signed = "\(place.id)/\(segment(id: place.id, expires: expires, key: key))"
        let rest = place.path(relative).dropFirst(place.id.count)
        return PlaybackPlace.url(signed + rest, cdnURL: base)
    }
}
