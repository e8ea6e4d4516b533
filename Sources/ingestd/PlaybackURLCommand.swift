import ArgumentParser
import Foundation
import Ingest
import Playback

/// `ingestd playback-url ID`: a signed URL of a video's master, for the app's backend to hand a
/// viewer (``PlaybackToken``; docs/OUTPUT.md gives the same rule in a few lines of Python).
struct PlaybackURLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playback-url",
        abstract: "Print a signed URL that plays a signed video until it expires.",
        discussion: """
        The token lives in the path, /<id>/p-<key id>-<expires>-<signature>/master.m3u8, so every \
        playlist, init section and segment a player resolves from the master carries it: no \
        cookie, no query string, no playlist rewritten per viewer. It opens every file of that \
        one video until it expires (rounded up to 10 minutes, so viewers in one window share a \
        URL and a cache's copy); nginx with deploy/nginx/ingestd-cdn.conf checks it on every \
        request. Give a viewing the video's length plus pauses: an hour is plenty for a 60 s video.
          ingestd playback-url clip-1f2e3d4c5b6a7980 --expires 3600 --key-file /etc/ingestd/playback.key --base https://media.example.com
        The key file (mode 600) holds one line plsec_<base64> of 24 to 64 bytes \
        (echo plsec_$(openssl rand -base64 32)); nginx gets the same line (docs/DEPLOY.md). \
        Exit 78 when the key file is missing, readable by others or malformed.
        """
    )

    @Argument(help: ArgumentHelp("The video's id.", valueName: "id"))
    var id: String

    @Option(help: ArgumentHelp("Seconds the URL plays for (at most 604800, a week).", valueName: "seconds"))
    var expires: Int

    @Option(help: ArgumentHelp("The playback key: one line plsec_<base64> of 24 to 64 bytes, mode 600.", valueName: "file"))
    var keyFile: String

    @Option(help: ArgumentHelp("The CDN's public URL (default: print the path alone).", valueName: "url"))
    var base: String?

    @Option(help: ArgumentHelp("The file under the video to sign (a bucket version's master: t3/master.m3u8).", valueName: "path"))
    var path = "master.m3u8"

    @Flag(help: "Print {\"url\", \"expires_at\"} as JSON.")
    var json = false

    func validate() throws {
        guard UploadManifest.isValidID(id) else { throw ValidationError("\(id.debugDescription) is not a video id") }
        guard (1...PlaybackToken.longest).contains(expires) else { throw ValidationError("--expires must be 1 to \(PlaybackToken.longest) seconds") }
        guard !path.isEmpty, !path.hasPrefix("/"), !path.split(separator: "/").contains(where: { $0.hasPrefix(".") || $0.isEmpty }) else {
            throw ValidationError("--path must be a relative path of plain names, such as master.m3u8")
        }
        if let base, URL(string: base).map({ ["http", "https"].contains($0.scheme ?? "") && $0.host != nil }) != true {
            throw ValidationError("--base must be an http:// or https:// URL, got \(base)")
        }
    }

    func run() throws {
        let key = try Report.catching { try PlaybackKey(path: keyFile) }
        let at = PlaybackToken.expiry(now: Date(), lifetime: expires)
        let url = PlaybackToken.url(base: base ?? "/", place: PlaybackPlace(root: "", id: id), relative: path, expires: at, key: key)
        if json {
            let answer = ["url": url, "expires_at": ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(at)))]
            print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self))
        } else {
            print(url)
        }
    }
}
