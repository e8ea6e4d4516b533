import ArgumentParser
import Foundation
import Ingest

extension PlaybackPolicy: ExpressibleByArgument {}

/// `ingestd playback ID signed|public`: changes who may play a published video, no re-encode
/// (``PlaybackChange``, which the console calls too).
struct PlaybackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playback",
        abstract: "Make a published video signed (only signed URLs play it) or public again, without encoding it again.",
        discussion: """
        signed: the CDN's marker (CDN/<id>/.playback-signed, or the object <id>/.playback-signed \
        in a bucket) is put in place first, so the CDN refuses the next unsigned request (403 \
        with deploy/nginx/ingestd-cdn.conf); then the store records it and the signed \
        upload.playback_changed webhook names the unsigned paths a cache in front may hold, to \
        purge. public: the marker goes, and every URL plays again. The media bytes stay as they \
        are; playback-url signs URLs for a signed video.
          ingestd playback --spool /var/spool/ingestd --cdn /srv/cdn clip-1f2e3d4c5b6a7980 signed
          ingestd playback --database postgres://ingestd@db/ingestd --cdn s3://media/cdn clip-1f2e3d4c5b6a7980 public
        Exit 0: changed; 1: no such video; 75: not published yet (it is made with the policy \
        its upload asks: change it once published); 73: the CDN or the store could not be \
        written (run it again); 69: the database cannot be reached. See docs/OUTPUT.md.
        """
    )

    @OptionGroup var video: PublishedVideoOptions

    @Flag(help: "Print {\"id\", \"playback\", \"result\", \"purge\"} as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The job's id.", valueName: "id"))
    var id: String

    @Argument(help: ArgumentHelp("public or signed.", valueName: "policy"))
    var policy: PlaybackPolicy

    func run() async throws {
        let target = try video.target(json: json)
        let outcome: PlaybackChange.Outcome
        do {
            outcome = try await video.withStore(label: "ingestd.playback") { [id, policy] store in
                try await PlaybackChange(store: store, target: target).set(id, policy)
            }
        } catch {
            throw Report.fail(error, json: json)
        }
        try report(outcome)
    }

    private func report(_ outcome: PlaybackChange.Outcome) throws {
        let (result, purge, status): (String, [String], Int32) = switch outcome {
        case .changed(let purge): ("changed", purge, 0)
        case .unknown: ("unknown", [], ExitStatus.failure.rawValue)
        case .notPublished(let state): ("not_published (\(state.rawValue))", [], 75)
        }
        if json {
            let answer: [String: Any] = ["id": id, "playback": policy.rawValue, "result": result.split(separator: " ")[0], "purge": purge]
            print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self))
        } else {
            switch outcome {
            case .changed: print("\(id): \(policy.rawValue)" + (purge.isEmpty ? "" : " (\(purge.count) unsigned paths to purge from caches in front)"))
            case .unknown: print("\(id): no such video")
            case .notPublished(let state): print("\(id): \(state.rawValue), not published yet: change it once published")
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}
