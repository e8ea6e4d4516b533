import Foundation
import Hummingbird
import Ingest
import Logging
import ServiceLifecycle

/// `--http ADDR:PORT`: `/metrics` (Prometheus exposition), `/healthz` (the process is up) and
/// `/readyz` (the job store answered recently).
public enum HealthServer {
    public static func make(host: String, port: Int, metrics: WorkerMetrics, readyWindow: Duration,
                            logger: Logger) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.registry.emitToString())))
        }
        router.get("/healthz") { _, _ -> String in "ok\n" }
        router.get("/readyz") { _, _ -> Response in
            let problem = metrics.notReady(within: readyWindow)
            return Response(status: problem == nil ? .ok : .serviceUnavailable,
                            body: .init(byteBuffer: ByteBuffer(string: "\(problem ?? "ready")\n")))
        }
        return Application(router: router, configuration: .init(address: .hostname(host, port: port)), logger: logger)
    }
}
