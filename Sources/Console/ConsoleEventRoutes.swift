import Foundation
import Hummingbird
import Ingest
import ServiceLifecycle

/// `GET /console/events?view=…` (behind ``ConsoleAuthentication``): `text/event-stream`, one
/// `snapshot` event per changed snapshot (counts, the read time, and for a tab or the overview
/// its HTML), a comment for each unchanged one.
struct ConsoleEventRoutes {
    let snapshot: ConsoleSnapshot
    let pages: ConsolePages

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.get("/console/events", use: events)
    }

    func events(_ request: Request, context: ConsoleRequestContext) throws -> Response {
        let view = try request.query(as: EventsQuery.self).view ?? ""
        let (snapshot, pages, canRetry) = (snapshot, pages, try context.requireIdentity().role >= .operate)
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: .init { writer in
            var sent = -1
            for await shared in await snapshot.subscribe().cancelOnGracefulShutdown() {
                guard shared.version != sent else {
                    try await writer.write(ByteBuffer(string: ": unchanged\n\n"))
                    continue
                }
                sent = shared.version
                var event: [String: Any] = ["version": shared.version, "taken": ConsolePages.time(shared.takenAt),
                                            "counts": ConsolePages.counts(shared.overview)]
                if view == "overview" { event["html"] = pages.overview(shared, window: .hour) }
                if view.hasPrefix("overview:"), let window = ActivityWindow(rawValue: String(view.dropFirst(9))) {
                    event["html"] = pages.overview(shared, window: window)
                }
                if view.hasPrefix("tab:"), let rows = shared.tabs[String(view.dropFirst(4))] { event["html"] = pages.rowsHTML(rows, canRetry: canRetry) }
                let data = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
                try await writer.write(ByteBuffer(string: "event: snapshot\ndata: \(String(decoding: data, as: UTF8.self))\n\n"))
            }
            try await writer.finish(nil)
        })
    }
}
