import ArgumentParser
import Foundation
import Ingest
import Transcode

/// `ingestd captions ID add FILE --language L` / `remove --language L`: changes a published
/// video's caption tracks without encoding it again (``CaptionChange``).
struct CaptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "captions",
        abstract: "Add a caption track to a published video (or replace its language's), or remove one, without encoding it again.",
        discussion: """
        add: FILE (WebVTT or SRT, timed on the published video) is read as an upload's track is \
        (bad_captions, exit 65, says why), cut into subtitle segments beside the video's and \
        written under names of its own; then a new version of the master lists it, then the \
        manifest; the store records it and the upload.captions webhook names the new master. \
        remove: the language leaves the master and the manifest (its files stay for players \
        that loaded the master before). Players that loaded the old master keep playing it.
          ingestd captions --spool /var/spool/ingestd --cdn /srv/cdn clip-1f2e3d4c5b6a7980 add fr.vtt --language fr --name Français
          ingestd captions --database postgres://ingestd@db/ingestd --cdn s3://media/cdn clip-1f2e3d4c5b6a7980 remove --language fr
        Exit 0: changed; 1: no such video, or no track in that language to remove; 65: a bad \
        track; 75: not published yet; 73: the CDN or the store could not be written (run it \
        again: it is idempotent); 69: the database cannot be reached. See docs/OUTPUT.md.
        """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable { case add, remove }

    @OptionGroup var video: PublishedVideoOptions

    @Option(help: ArgumentHelp("The track's language: a BCP 47 tag such as en or pt-BR.", valueName: "tag"))
    var language: String

    @Option(help: ArgumentHelp("What a player's menu shows (add; default: the language's English name).", valueName: "text"))
    var name: String?

    @Flag(help: "Print {\"id\", \"result\", \"captions\"} as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The job's id.", valueName: "id"))
    var id: String

    @Argument(help: ArgumentHelp("add or remove.", valueName: "action"))
    var action: Action

    @Argument(help: ArgumentHelp("The track to add (WebVTT or SRT).", valueName: "file"))
    var file: String?

    func validate() throws {
        guard (file != nil) == (action == .add) else { throw ValidationError(action == .add ? "add needs the track's FILE" : "remove takes no FILE") }
        guard CaptionSource.isValidLanguage(language) else { throw ValidationError("--language must be \(CaptionSource.languageRule)") }
        if let name, !CaptionSource.isValidName(name) { throw ValidationError("--name must be \(CaptionSource.nameRule)") }
    }

    func run() async throws {
        let outcome: CaptionChange.Outcome
        do {
            let revision = CaptionRevision(try change())
            let target = try video.target(json: json)
            outcome = try await video.withStore(label: "ingestd.captions") { [id] store in
                try await CaptionChange(store: store, target: target).apply(id, revision)
            }
        } catch {
            throw Report.fail(error, json: json)
        }
        try report(outcome)
    }

    /// The change asked: a track read as an upload's is, or a language to take out.
    private func change() throws -> CaptionRevision.Change {
        guard let file else { return .remove(language: language) }
        let source = try SourceFile(path: file)
        do {
            return .add(CaptionSource(language: language, name: name, track: try CaptionReader.read(source)))
        } catch {
            throw IngestError.badCaptions(path: file, field: "file", reason: error.reason)
        }
    }

    private func report(_ outcome: CaptionChange.Outcome) throws {
        let (result, status): (String, Int32) = switch outcome {
        case .changed: ("changed", 0)
        case .unknown: ("unknown", ExitStatus.failure.rawValue)
        case .noTrack: ("no_track", ExitStatus.failure.rawValue)
        case .notPublished(let state): ("not_published (\(state.rawValue))", 75)
        }
        let captions = if case .changed(let list) = outcome { list } else { [ReadyManifest.Caption]() }
        if json {
            let answer: [String: Any] = ["id": id, "result": result.split(separator: " ")[0],
                                         "captions": captions.map { ["language": $0.language, "name": $0.name, "source": $0.source] }]
            print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self))
        } else {
            switch outcome {
            case .changed: print("\(id): captions \(captions.isEmpty ? "none" : captions.map(\.language).joined(separator: ", "))")
            case .unknown: print("\(id): no such video")
            case .noTrack: print("\(id): no \(language) track to remove")
            case .notPublished(let state): print("\(id): \(state.rawValue), not published yet: change its captions once published")
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}
