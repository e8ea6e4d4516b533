import Foundation
import Hummingbird
import Ingest

/// The console's answers: a page, JSON for a script, a refusal as one line of text.
extension Response {
    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONEncoder.ingestd.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An error as one line of text.
    static func problem(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        var response = Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
        response.headers[.contentType] = "text/plain; charset=utf-8"
        return response
    }

    /// `303` to `location` (a console page).
    static func seeOther(_ location: String) -> Response { Response(status: .seeOther, headers: [.location: location]) }
}

extension Request {
    /// A script asking (`Accept: application/json`), not a browser.
    var wantsJSON: Bool { headers[.accept]?.contains("application/json") ?? false }
}

/// `GET /console/jobs` for a script (`Accept: application/json`).
struct JobsAnswer: Encodable {
    struct Row: Encodable {
        var id, state, input: String
        var host, code: String?
        var attempts: Int
        var createdAt, updatedAt: Date
        var progress: Int?
        var playable: Bool
    }

    var jobs: [Row]
    /// The next page's `after=`.
    var next: String?

    init(_ page: JobPage) {
        jobs = page.rows.map { Row(id: $0.id, state: $0.state.rawValue, input: $0.input, host: $0.host, code: $0.code, attempts: $0.attempts,
                                   createdAt: $0.createdAt, updatedAt: $0.updatedAt, progress: $0.progress, playable: $0.playable) }
        next = page.next?.text
    }
}

/// `GET /console/jobs/<id>` for a script.
struct JobAnswer: Encodable {
    struct Event: Encodable {
        var at: Date
        var event: String
        var data: String
    }

    var job: JobSnapshot
    var history: [Event]

    init(job: JobSnapshot, history: [JobHistoryEvent]) {
        self.job = job
        self.history = history.map { Event(at: $0.at, event: $0.event, data: $0.data) }
    }
}

/// `GET /console/?window=hour|day` for a script: the charts' figures, bucket by bucket.
struct ActivityAnswer: Encodable {
    struct Figures: Encodable {
        var start: Date?
        var published, rejected, failed, playable: Int
        var playableP50, playableP95: Double?
        /// Jobs waiting at the bucket's end (the fleet's, not a host's).
        var queued: Int?

        init(_ tally: ActivityTally, start: Date? = nil, queued: Int? = nil) {
            (self.start, published, rejected, failed, playable) = (start, tally.published, tally.rejected, tally.failed, tally.playable)
            (playableP50, playableP95, self.queued) = (tally.playableP50, tally.playableP95, queued)
        }
    }

    struct Host: Encodable {
        var name: String
        var total: Figures
        var buckets: [Figures]
    }

    var window: String?
    var stepSeconds: Int?
    var total: Figures?
    var buckets: [Figures] = []
    var hosts: [Host] = []

    init(_ activity: JobActivity?) {
        guard let activity else { return }
        (window, stepSeconds) = (activity.window.rawValue, activity.window.step)
        total = Figures(activity.total)
        buckets = activity.buckets.map { Figures($0.tally, start: $0.start, queued: $0.depth) }
        hosts = activity.hosts.map { host in Host(name: host.name, total: Figures(host.total), buckets: host.buckets.map { Figures($0.tally, start: $0.start) }) }
    }
}
