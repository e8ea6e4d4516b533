import ArgumentParser
import Foundation
import Ingest
import Transcode
import Uploads

struct UploadURLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload-url",
        abstract: "Sign the upload and status URLs for one direct upload from a phone (for the app's backend).",
        discussion: """
        Prints the tus creation URL a stock tus client (TUSKit, tus-android-client, tus-js-client, \
        tuspy) uploads to, and the URL of the job's status. The token in each is an HMAC (the \
        upload secret) over the job's id, the most bytes allowed and the expiry: `ingestd serve` \
        refuses any other, an expired or a reused one. The job gets ID as its id; an id that was deleted (`ingestd delete`) is refused by serve (410 deleted), whatever the link says. With --files N \
        the upload is a directory (upload.json, its clips and sound track): N tus uploads to the \
        same URL, each named by its tus filename; the job starts when all N are complete. The status URL \
        stays valid 7 days past the upload's expiry. Nothing is sent anywhere: the backend can \
        call this (or UploadLink in Swift) for every upload it allows.
        With --delete ID instead of --id: the URL the backend sends DELETE to when the video's \
        owner deletes it (a token for that video and for deletion; body, optional: \
        {"code": "owner", "reason": "…"}). serve records the deletion and answers 202 with the \
        tombstone; the daemon or worker that owns the store completes it (docs/DELETION.md).

        Examples:
          ingestd upload-url --id abc123 --server https://uploads.example.com --upload-secret-file /etc/ingestd/upload.secret
          ingestd upload-url --id abc123 --server http://127.0.0.1:8080 --upload-secret-file upload.secret --max-bytes 10000000 --expires 1h --json
          ingestd upload-url --delete abc123 --server https://uploads.example.com --upload-secret-file /etc/ingestd/upload.secret --expires 10m
        """)

    @Option(help: ArgumentHelp("The job's id: 1 to 64 of A-Z a-z 0-9 _ -.", valueName: "id"))
    var id: String?

    @Option(name: .customLong("delete"), help: ArgumentHelp("Sign the deletion of this job's video instead: its DELETE URL.", valueName: "id"))
    var deleteID: String?

    @Option(help: ArgumentHelp("The public URL of `ingestd serve` as phones reach it.", valueName: "url"))
    var server: String

    @OptionGroup var secret: UploadSecretOption

    @OptionGroup var presetOption: PresetOption

    @Option(help: ArgumentHelp("Most bytes this upload may have (default and ceiling: the preset's limit, 50 MiB for the built-in one).",
                               valueName: "bytes"))
    var maxBytes: Int64?

    @Option(help: ArgumentHelp("Files in the upload: 1 for a video file; for clips + sound track, upload.json and each file it names (all to the same upload URL, each with its tus filename).", valueName: "n"))
    var files = 1

    @Option(help: ArgumentHelp("How long the upload URL stays valid: 90s, 30m, 1h, 2d (at most 7d).", valueName: "duration"))
    var expires: String = "24h"

    @Option(help: ArgumentHelp("signed: the video plays only through signed URLs (ingestd playback-url), signed into the link so the phone cannot make it public.", valueName: "policy"))
    var playback: PlaybackPolicy?

    @Flag(help: "Print {\"upload_url\", \"status_url\", \"expires_at\"} as JSON.")
    var json = false

    func validate() throws {
        guard (id == nil) != (deleteID == nil) else { throw ValidationError("give --id ID (an upload) or --delete ID (a deletion), one of them") }
    }

    func run() throws {
        guard let seconds = Self.seconds(expires) else {
            throw ValidationError("--expires \(expires): a number with s, m, h or d (such as 30m or 24h)")
        }
        let key = try secret.key()
        if let deleteID { return try printDeletion(deleteID, key: key, seconds: seconds) }
        let id = id ?? ""
        let limits = try Report.catching { try presetOption.load().limits }
        let link: UploadLink
        do {
            link = try UploadLink(id: id, server: server, secret: key, limits: limits, maxBytes: maxBytes, files: files, expiresIn: seconds,
                                  playback: playback)
        } catch {
            throw ValidationError(error.description)
        }
        try printLink(link, "upload: \(link.uploadURL)\nstatus: \(link.statusURL)", expiresAt: link.expiresAt)
    }

    private func printDeletion(_ id: String, key: [UInt8], seconds: TimeInterval) throws {
        let link: DeletionLink
        do {
            link = try DeletionLink(id: id, server: server, secret: key, expiresIn: seconds)
        } catch {
            throw ValidationError(error.description.replacingOccurrences(of: "--id", with: "--delete"))
        }
        try printLink(link, "delete: \(link.deleteURL)", expiresAt: link.expiresAt)
    }

    /// A signed link as JSON (`--json`), or its `lines` and when it expires.
    private func printLink(_ link: some Encodable, _ lines: String, expiresAt: Date) throws {
        guard json else { return print("\(lines)\nexpires: \(ISO8601DateFormatter().string(from: expiresAt))") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(link), as: UTF8.self))
    }

    /// `90s`, `30m`, `1h`, `2d` or plain seconds.
    static func seconds(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let last = text.last, let unit = units[last], let value = Double(text.dropLast()), value > 0 { return value * unit }
        return Double(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
