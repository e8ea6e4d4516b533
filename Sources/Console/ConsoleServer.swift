import Foundation
import Hummingbird
import Ingest
import Logging
import Playback
import Transcode

/// `ingestd console`: the operator's pages over a job store (the spool's or the fleet's queue),
/// served by Hummingbird under `/console/`. Processes no jobs itself.
public enum ConsoleServer {
    /// A worker host whose last heartbeat is older than this is shown gone.
    static let hostGone: TimeInterval = 90

    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var tokens: ConsoleTokens
        /// Where players and posters are fetched from (`--cdn-url`); none: from ``media``, if given.
        public var cdnURL: String?
        /// The CDN the console serves read-only under `/console/media/` (`--cdn`).
        public var media: ConsoleMediaSource?
        /// The CDN as a target, for changes of a video's playback policy (`--cdn`); none: no change.
        public var target: (any OutputTarget)?
        /// Signs the player's URL of a signed video played from `--cdn-url` (`--playback-key-file`).
        public var playbackKey: PlaybackKey?
        /// The store is the fleet's queue (hosts and their banner shown).
        public var fleet: Bool
        /// The limits each job's probe is shown against.
        public var limits: Preset.Limits
        /// The shared snapshot is read again at least this often.
        public var refresh: Duration
        /// The most jobs one "retry all matching" retries.
        public var retryCap: Int

        public init(host: String, port: Int, tokens: ConsoleTokens, cdnURL: String? = nil, media: ConsoleMediaSource? = nil, fleet: Bool,
                    limits: Preset.Limits, refresh: Duration = .seconds(5), retryCap: Int = 10_000) {
            self.host = host
            self.port = port
            self.tokens = tokens
            self.cdnURL = cdnURL
            self.media = media
            self.fleet = fleet
            self.limits = limits
            self.refresh = refresh
            self.retryCap = retryCap
        }
    }

    /// The console as a Hummingbird application (its snapshot among its services): run it as a
    /// service, or drive it with HummingbirdTesting (`app.test(.router)`).
    public static func make(_ configuration: Configuration, store: any JobStore & JobBrowser & PlaybackStore,
                            logger: Logger) throws -> some ApplicationProtocol {
        let snapshot = ConsoleSnapshot(browser: store, interval: configuration.refresh, logger: logger)
        let pages = try ConsolePages(fleet: configuration.fleet, cdnURL: configuration.cdnURL, mediaRoot: configuration.media?.root,
                                     limits: configuration.limits, playbackKey: configuration.playbackKey, canChangePlayback: configuration.target != nil)
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: ConsoleHeaders(cdnURL: configuration.cdnURL))
        router.add(middleware: ConsoleErrors(logger: logger))
        ConsoleLoginRoutes(tokens: configuration.tokens, pages: pages, logger: logger).addRoutes(to: router)
        let signedIn = router.group().add(middleware: ConsoleAuthentication(tokens: configuration.tokens, pages: pages))
        ConsolePageRoutes(store: store, snapshot: snapshot, pages: pages, retryCap: configuration.retryCap).addRoutes(to: signedIn)
        ConsoleEventRoutes(snapshot: snapshot, pages: pages).addRoutes(to: signedIn)
        if let media = configuration.media { ConsoleMediaRoutes(source: media).addRoutes(to: signedIn) }
        let writes = signedIn.group().add(middleware: ConsoleWriteCheck(logger: logger))
        ConsoleRetryRoutes(store: store, snapshot: snapshot, retryCap: configuration.retryCap, logger: logger).addRoutes(to: writes)
        ConsoleDeleteRoutes(store: store, snapshot: snapshot, logger: logger).addRoutes(to: writes)
        if let target = configuration.target {
            ConsolePlaybackRoutes(store: store, target: target, snapshot: snapshot, logger: logger).addRoutes(to: writes)
        }
        router.get("/console/assets/console.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.script)))
        }
        router.get("/console/assets/console.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.stylesheet)))
        }
        router.get("/healthz") { _, _ -> String in "ok\n" }
        return Application(router: router, configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ingestd"),
                           services: [snapshot], logger: logger)
    }
}
