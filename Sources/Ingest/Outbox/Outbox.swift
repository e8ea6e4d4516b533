import Foundation

/// The durable webhook outbox, `SPOOL/outbox/`: one JSON file per event, moved between states
/// by `rename(2)` like the uploads themselves.
///
///     pending/<event>.json     recorded, not yet delivered (attempts, next attempt, last error)
///     pending/.<event>.json.sending-<pid>   reserved by the sender with that pid while it sends
///     delivered/<event>.json   the receiver answered 2xx (kept a week for `ingestd status`)
///     dead/<event>.json        every attempt failed; kept with its last error until an operator acts
///
/// An event is written and synced before the upload it reports is filed, so no crash loses it;
/// a crash between the two records the same event id again, which ``record(_:)`` ignores.
/// Several daemons on one spool share the outbox: a sender reserves an event by renaming it (one
/// rename wins) before it sends, so no two send the same one; a reservation whose process is gone,
/// or older than the reservation time, goes back to pending.
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

    /// Records `event` as pending unless an event with its id is already in any state (or reserved).
    public func record(_ event: OutboxEvent) throws {
        guard !State.allCases.contains(where: { FileManager.default.fileExists(atPath: path(event.id, in: $0)) }),
              reservations().allSatisfy({ $0.id != event.id }) else { return }
        try JSONFile.write(event, to: path(event.id, in: .pending))
    }

    /// Reserves up to `limit` due events for this process (none of `excluding`): each is renamed to
    /// its reservation name, so another sender cannot take it. Reservations of a process that is
    /// gone, or older than `stale`, are put back first.
    public func reserve(limit: Int, excluding: Set<String>, now: Date = Date(), stale: TimeInterval) -> [OutboxEvent] {
        for reservation in reservations() {
            var info = stat()
            let age = stat(reservation.path, &info) == 0 ? now.timeIntervalSince1970 - Double(info.st_mtim.tv_sec) : 0
            let gone = kill(reservation.pid, 0) != 0 && errno == ESRCH
            if gone || age > stale { rename(reservation.path, path(reservation.id, in: .pending)) }
        }
        var taken: [OutboxEvent] = []
        for event in pending() where taken.count < limit && event.nextAttemptAt <= now && !excluding.contains(event.id) {
            if rename(path(event.id, in: .pending), reservedPath(event.id)) == 0 { taken.append(event) }
        }
        return taken
    }

    /// Pending events, earliest due first (without those a sender has reserved).
    public func pending() -> [OutboxEvent] {
        events(in: .pending).sorted { $0.nextAttemptAt < $1.nextAttemptAt }
    }

    /// Pending events and those being sent, earliest due first: what `ingestd status` lists.
    public func undelivered() -> [OutboxEvent] {
        (events(in: .pending) + reservations().compactMap { JSONFile.read(OutboxEvent.self, from: $0.path) })
            .sorted { $0.nextAttemptAt < $1.nextAttemptAt }
    }

    public func events(in state: State) -> [OutboxEvent] {
        names(in: state).compactMap { JSONFile.read(OutboxEvent.self, from: "\(directory(state))/\($0)") }
    }

    /// Events in `state`; pending counts those being sent too.
    public func count(_ state: State) -> Int { names(in: state).count + (state == .pending ? reservations().count : 0) }

    /// Saves a failed attempt's outcome: pending again (the reservation ends).
    public func update(_ event: OutboxEvent) throws {
        try JSONFile.write(event, to: path(event.id, in: .pending))
        unlink(reservedPath(event.id))
    }

    /// Moves a pending (or reserved) event to `delivered/` or `dead/`, with its final record.
    public func settle(_ event: OutboxEvent, as state: State) throws {
        try JSONFile.write(event, to: path(event.id, in: state))
        unlink(path(event.id, in: .pending))
        unlink(reservedPath(event.id))
        try Durability.syncDirectory(directory(.pending))
    }

    /// Drops delivered events older than `cutoff`; returns how many.
    @discardableResult
    public func prune(deliveredBefore cutoff: Date) -> Int {
        var dropped = 0
        for event in events(in: .delivered) where (event.deliveredAt ?? event.createdAt) < cutoff {
            if unlink(path(event.id, in: .delivered)) == 0 { dropped += 1 }
        }
        return dropped
    }

    /// Deletion: job `job`'s pending events (not those being sent) go to `dead/`, `why` as
    /// their last error: they would name files that are gone.
    public func withdraw(job: String, why: String) {
        for var event in events(in: .pending) where event.job == job && event.type != "upload.deleted" {
            event.lastError = why
            try? settle(event, as: .dead)
        }
    }

    /// Erasure: job `job`'s delivered and dead events go (what they said of the person's files).
    public func forget(job: String) {
        for state in [State.delivered, .dead] {
            for event in events(in: state) where event.job == job && event.type != "upload.deleted" { unlink(path(event.id, in: state)) }
        }
    }

    private func path(_ id: String, in state: State) -> String { "\(directory(state))/\(id).json" }
    private func reservedPath(_ id: String) -> String { "\(directory(.pending))/.\(id).json.sending-\(getpid())" }

    /// Events some sender has reserved: id, the reserving process, the file.
    private func reservations() -> [(id: String, pid: pid_t, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory(.pending))) ?? []
        return names.compactMap { name in
            guard name.hasPrefix("."), let marker = name.range(of: ".json.sending-", options: .backwards),
                  let pid = pid_t(name[marker.upperBound...]) else { return nil }
            return (String(name[name.index(after: name.startIndex)..<marker.lowerBound]), pid, "\(directory(.pending))/\(name)")
        }
    }

    private func names(in state: State) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory(state))) ?? []).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
    }
}
