import Foundation

/// The one deletion, whichever door asks (`ingestd delete`, the console, the app's API) and
/// whichever store holds the video: the tombstone and the fence first, then the CDN's files
/// (the purge list saved before they go), then the original, then the `upload.deleted` webhook
/// and the tombstone's completion. Each step is idempotent and the tombstone is recorded before
/// anything is removed, so a deletion cut short at any step (kill -9) is finished by the next
/// run: a later `delete`, or the upkeep of the daemon or worker that owns the store
/// (``finishPending()``).
public struct VideoDeletion: Sendable {
    public let store: any DeletionStore
    public let target: any OutputTarget
    /// Reaches an original the store names in a bucket (``DeletionStore/remoteInput(_:)``).
    public let inputs: (any RemoteStorage)?

    public init(store: any DeletionStore, target: any OutputTarget, inputs: (any RemoteStorage)? = nil) {
        self.store = store
        self.target = target
        self.inputs = inputs
    }

    /// Deletes each of `ids` (checked first: an id no store could have minted is refused),
    /// waiting up to `wait` for an attempt that still writes the video to stop.
    public func delete(_ ids: [String], reason: DeletionReason, wait: Duration = .zero) async -> [DeletionOutcome] {
        var outcomes: [DeletionOutcome] = []
        for id in ids {
            outcomes.append(await delete(id, reason: reason, wait: wait))
        }
        return outcomes
    }

    private func delete(_ id: String, reason: DeletionReason, wait: Duration) async -> DeletionOutcome {
        let recorded = await Self.record(id, reason: reason, in: store)
        guard recorded.result == .pending, var tombstone = recorded.tombstone else { return recorded }
        do {
            let deadline = ContinuousClock.now + wait
            while true {
                let outcome = try await finish(tombstone)
                guard outcome.result == .pending, ContinuousClock.now < deadline else { return outcome }
                tombstone = outcome.tombstone ?? tombstone  // with what it took out of view
                try await SteadyTimer.sleep(for: .milliseconds(250))
            }
        } catch {
            return DeletionOutcome(id: id, result: .failed, message: "\(error) (what is recorded stands; run the delete again)")
        }
    }

    /// The deletion's first step alone: checks `id`, records the tombstone and the fence, and
    /// answers at once (`pending`, with the tombstone). What a door that does not reach the CDN
    /// calls (the app's API, the console): the daemon or worker that owns the store completes it
    /// at its next upkeep (``finishPending()``). A deletion cut short before is `pending` under
    /// its first tombstone; a completed one is `already_deleted`.
    public static func record(_ id: String, reason: DeletionReason, in store: any DeletionStore) async -> DeletionOutcome {
        do {
            try DeletionReason.check(id: id)
            switch try await store.recordDeletion(id, reason: reason, at: Date()) {
            case .unknown:
                return DeletionOutcome(id: id, result: .unknown, message: "no such job: nothing recorded or removed")
            case .earlier(let first) where first.completedAt != nil:
                return DeletionOutcome(id: id, result: .alreadyDeleted, message: "deleted before; its first reason stands", tombstone: first)
            case .earlier(let first):
                return DeletionOutcome(id: id, result: .pending, message: "recorded before and cut short; finished under its first reason",
                                       tombstone: first)
            case .recorded(let tombstone):
                DeletionStep.recorded.reached()
                return DeletionOutcome(id: id, result: .pending, message: "recorded and fenced; the daemon or worker that owns the store completes it",
                                       tombstone: tombstone)
            }
        } catch let refused as DeletionRefused {
            return DeletionOutcome(id: id, result: .refused, message: refused.description)
        } catch {
            return DeletionOutcome(id: id, result: .failed, message: "\(error) (nothing was removed; try again)")
        }
    }

    /// Finishes the deletions recorded and not completed (the upkeep of whoever owns the store).
    @discardableResult
    public func finishPending() async -> [DeletionOutcome] {
        var outcomes: [DeletionOutcome] = []
        for tombstone in (try? await store.pendingDeletions()) ?? [] {
            do {
                outcomes.append(try await finish(tombstone))
            } catch {
                outcomes.append(DeletionOutcome(id: tombstone.id, result: .failed, message: "\(error)", tombstone: tombstone))
            }
        }
        return outcomes
    }

    /// The steps after the tombstone. While an attempt still writes the video, its files are
    /// taken out of view (new requests get 404s) and the deletion stays pending: the attempt is
    /// fenced out and stops at its next renewal, and a later run removes what it left.
    func finish(_ recorded: Tombstone) async throws -> DeletionOutcome {
        var tombstone = recorded
        let writing = try await store.stillWriting(tombstone.id)
        tombstone.purge = Array(Set(tombstone.purge).union(try await target.contents(of: tombstone.id))).sorted()
        if tombstone.purge != recorded.purge { try await store.notePurge(tombstone) }
        DeletionStep.listed.reached()
        try await target.remove(tombstone.id)
        DeletionStep.media.reached()
        if let writing {
            return DeletionOutcome(id: tombstone.id, result: .pending,
                                   message: "taken out of view; \(writing): the deletion completes once it stops", tombstone: tombstone)
        }
        let erase = tombstone.reason.code == .erasure
        var kept = erase ? try await target.oldBytesKept() : nil
        if let input = try await store.remoteInput(tombstone.id) {
            guard let inputs else { throw IngestError.cannotWrite(path: input, reason: "the original is in a bucket and no S3 client is configured") }
            if input.hasSuffix("/") { try await inputs.removeObjects(under: input) } else { try await inputs.removeObject(input) }
            if erase, try await inputs.keepsOldVersions(of: input) {
                kept = [kept, "the bucket of \(input) keeps versions: the original's old versions stay"].compactMap { $0 }.joined(separator: "; ")
            }
        }
        try await store.removeUpload(tombstone.id, erase: erase)
        DeletionStep.upload.reached()
        tombstone.erasureIncomplete = kept
        tombstone.completedAt = Date()
        try await store.completeDeletion(tombstone)
        return DeletionOutcome(id: tombstone.id, result: .deleted, message: "deleted: nothing of it is left", tombstone: tombstone)
    }
}

/// How one id's deletion ended (`delete --json`'s entries).
public struct DeletionOutcome: Codable, Sendable, Equatable {
    public enum Result: String, Codable, Sendable {
        /// Recorded and completed now (or a deletion cut short, completed now).
        case deleted
        /// Deleted before: `tombstone` is the first deletion's, unchanged.
        case alreadyDeleted = "already_deleted"
        /// Recorded and fenced, taken out of view; completes once its running attempt stops.
        case pending
        /// No such job: nothing recorded.
        case unknown
        /// Not a job id: nothing looked up.
        case refused
        /// A store or the CDN failed midway; what is recorded stands and a later run finishes it.
        case failed
    }

    public var id: String
    public var result: Result
    public var message: String
    public var tombstone: Tombstone?

    public init(id: String, result: Result, message: String, tombstone: Tombstone? = nil) {
        self.id = id
        self.result = result
        self.message = message
        self.tombstone = tombstone
    }
}

/// The steps of a deletion, where a test may have the process killed (`INGESTD_DELETE_KILL_AFTER=<step>`:
/// a real kill -9, to prove the next run finishes what it left).
enum DeletionStep: String {
    case recorded, listed, media, upload

    func reached() {
        if ProcessInfo.processInfo.environment["INGESTD_DELETE_KILL_AFTER"] == rawValue { kill(getpid(), SIGKILL) }
    }
}
