import Foundation

/// The durable webhook outbox, `SPOOL/outbox/`: one JSON file per event, moved between states
/// by `rename(2)` like the uploads themselves.
///
///     pending/<event>.json     recorded, not yet delivered (attempts, next attempt, last error)
///     delivered/<event>.json   the receiver answered 2xx (kept a week for `ingestd status`)
///     dead/<event>.json        every attempt failed; kept with its last error until an operator acts
///
/// An event is written and synced before the upload it reports is filed, so no crash loses it;
/// a crash between the two records the same event id again, which ``record(_:)`` ignores.
public struct Outbox: Sendable {
    public enum State: String, Sendable, CaseIterable {
        case pending, delivered, dead
    }

    public let root: String

    public init(root: String) {
        self.root = root
    }

    public func directory(_ state: State) -> String { "\(root)/\(state.rawValue)" }

    public func create() throws {
        for state in State.allCases {
            try FileManager.default.createDirectory(atPath: directory(state), withIntermediateDirectories: true)
        }
    }

    /// Records `event` as pending unless an event with its id is already in any state.
    public func record(_ event: OutboxEvent) throws {
        guard !State.allCases.contains(where: { FileManager.default.fileExists(atPath: path(event.id, in: $0)) }) else { return }
        try JSONFile.write(event, to: path(event.id, in: .pending))
    }

    /// Pending events, earliest due first.
    public func pending() -> [OutboxEvent] {
        events(in: .pending).sorted { $0.nextAttemptAt < $1.nextAttemptAt }
    }

    public func events(in state: State) -> [OutboxEvent] {
        names(in: state).compactMap { JSONFile.read(OutboxEvent.self, from: "\(directory(state))/\($0)") }
    }

    public func count(_ state: State) -> Int { names(in: state).count }

    /// Saves a failed attempt's outcome (still pending).
    public func update(_ event: OutboxEvent) throws {
        try JSONFile.write(event, to: path(event.id, in: .pending))
    }

    /// Moves a pending event to `delivered/` or `dead/`, with its final record.
    public func settle(_ event: OutboxEvent, as state: State) throws {
        try JSONFile.write(event, to: path(event.id, in: state))
        unlink(path(event.id, in: .pending))
        try Durability.syncDirectory(directory(.pending))
    }

    /// Drops delivered events older than `age` seconds.
    public func prune(deliveredBefore cutoff: Date) {
        for event in events(in: .delivered) where (event.deliveredAt ?? event.createdAt) < cutoff {
            unlink(path(event.id, in: .delivered))
        }
    }

    private func path(_ id: String, in state: State) -> String { "\(directory(state))/\(id).json" }

    private func names(in state: State) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory(state))) ?? []).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
    }
}
