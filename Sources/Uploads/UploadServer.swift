import Foundation
import Hummingbird
import Ingest
import Logging
import NIOCore
import ServiceLifecycle
import Transcode

/// `ingestd serve`: a tus 1.0 server for the app's phones (core protocol plus `creation`,
/// `creation-with-upload`, `expiration`, `termination` and `checksum`), the job status API the
/// app polls, `/openapi.yaml`, `/metrics` and `/healthz`. Every upload and status request
/// carries a token signed by the app's backend (``UploadLink``).
public enum UploadServer {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// The spool (`watch --spool`) that completed uploads are handed to.
        public var spool: String
        /// The public URL in front of the CDN: completed jobs' statuses name their master
        /// playlist and poster under it (else paths from the CDN root, or in a bucket `s3://` URLs).
        public var publicURL: String?
        public var secret: [UInt8]
        /// The preset uploads are held to (`serve --preset`): no upload may declare more bytes
        /// than its limit (a token may allow less), nor more files; a fleet queues each upload
        /// with it.
        public var preset: Preset
        /// `serve --playback signed`: every upload is signed (else those whose link or metadata ask).
        public var playback = PlaybackPolicy.public
        public var maxBytes: Int64 { preset.limits.maxBytes }
        /// Requests writing bytes at once; more are answered 503 with `Retry-After`.
        public var maxUploads: Int
        /// A connection that sends nothing for this long is closed; a body must bring at least
        /// `minBytesPerSecond` over each such window or the request ends there (what arrived is kept).
        public var readTimeout: Duration
        public var minBytesPerSecond: Int

        public init(host: String, port: Int, spool: String, publicURL: String? = nil, secret: [UInt8],
                    preset: Preset = .builtIn, maxUploads: Int = 256, readTimeout: Duration = .seconds(30), minBytesPerSecond: Int = 1024) {
            self.host = host
            self.port = port
            self.spool = spool
            self.publicURL = publicURL
            self.secret = secret
            self.preset = preset
            self.maxUploads = maxUploads
            self.readTimeout = readTimeout
            self.minBytesPerSecond = minBytesPerSecond
        }
    }

    /// The single-host server (`serve --spool`), with the sweeper of expired uploads beside it:
    /// run it as a service, or drive it with HummingbirdTesting (`app.test(.router)`, no port).
    /// Creates the spool's subdirectories (the spool itself must exist).
    public static func make(_ configuration: Configuration, metrics: UploadMetrics, logger: Logger) throws -> some ApplicationProtocol {
        let directory = UploadDirectory(layout: SpoolLayout(root: configuration.spool), submitter: Submitter(preset: configuration.preset, playback: configuration.playback))
        try directory.prepare()
        let store = SpoolUploadStore(directory: directory, publicURL: configuration.publicURL)
        return application(configuration, store: store, services: [UploadUpkeep(store: store, metrics: metrics, logger: logger)],
                           metrics: metrics, logger: logger)
    }

    static func application(_ configuration: Configuration, store: any UploadStore, services: [any Service], metrics: UploadMetrics,
                            logger: Logger) -> some ApplicationProtocol {
        let router = Router(context: UploadRequestContext.self)
        addRoutes(to: router, TusHandler(configuration: configuration, store: store, metrics: metrics, logger: logger))
        let timeout = TimeAmount.nanoseconds(Int64(configuration.readTimeout.seconds * 1e9))
        return Application(router: router, server: .http1(configuration: .init(additionalChannelHandlers: [CloseAfterRefusal()], idleTimeout: timeout)),
                           configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ingestd"),
                           services: services, logger: logger)
    }

    /// The routes: those with a token in groups behind ``TusRefusals`` and ``UploadAuthentication``
    /// (the tus ones behind ``TusVersionCheck`` first); `OPTIONS`, `/openapi.yaml`, `/metrics`
    /// and `/healthz` outside them.
    static func addRoutes(to router: Router<UploadRequestContext>, _ tus: TusHandler) {
        let refusals = TusRefusals(metrics: tus.metrics, logger: tus.logger)
        let credential = UploadAuthentication(secret: tus.configuration.secret)
        router.on("/v1/uploads", method: .options) { _, _ in tus.options() }
        router.group("/v1/uploads").add(middleware: refusals).add(middleware: TusVersionCheck()).add(middleware: credential)
            .post { request, context in try await tus.create(request, context: context) }
            .head(":id/:part") { request, context in try await tus.head(request, context: context, id: context.pathID, part: context.pathPart) }
            .patch(":id/:part") { request, context in try await tus.patch(request, context: context, id: context.pathID, part: context.pathPart) }
            .delete(":id/:part") { request, context in try await tus.delete(request, context: context, id: context.pathID, part: context.pathPart) }
        router.group("/v1/jobs").add(middleware: refusals).add(middleware: credential)
            .get(":id") { _, context in try await tus.status(context: context, id: context.pathID) }
            .delete(":id") { request, context in try await JobDeletionRoute(handler: tus).delete(request, context: context, id: context.pathID) }
        router.get("/openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: tus.metrics.registry.emitToString())))
        }
        router.get("/healthz") { _, _ -> String in "ok\n" }
    }
}

extension UploadRequestContext {
    /// The path's `:id` and `:part` ("" when absent, as no route lacks them).
    fileprivate var pathID: String { parameters.get("id") ?? "" }
    fileprivate var pathPart: String { parameters.get("part") ?? "" }
}
