import IngestdTesting
import Foundation
import Synchronization
import Testing
@testable import Ingest

/// The one hand-over from the intake to the worker: a claimed upload reaches the next claim
/// with its lock held all along, is queued (not running) meanwhile, and is let go for any
/// daemon of the spool when the worker has no room for it.
struct SpoolHandOverTests {
    /// A spool with `count` uploads claimed by the intake from `incoming/`.
    static func claimed(_ name: String, count: Int) throws -> (SpoolStore, [(JobRecord, JobLock)]) {
        let root = Paths.scratch(name)
        try? FileManager.default.removeItem(atPath: root)
        let layout = SpoolLayout(root: root)
        try layout.create()
        let spool = Spool(layout: layout)
        for index in 0..<count {
            try Data("upload \(index)".utf8).write(to: URL(fileURLWithPath: "\(layout.incoming)/clip\(index).mp4"))
        }
        let claimed = try spool.arrivals().map { try #require(try spool.claim($0, cdn: nil)) }
        return (SpoolStore(layout: layout), claimed)
    }

    @Test func aHandedOverJobIsClaimedWithTheLockItCameWith() async throws {
        let (store, claimed) = try Self.claimed("hand-over-kept", count: 1)
        let (record, lock) = claimed[0]
        let woken = WakeCount()
        await store.listen { woken.add() }
        store.take(record, lock)
        #expect(woken.count == 1, "the worker is woken")
        let directory = store.layout.job(record.id)
        #expect(JobLock.isHeld(directory: directory), "never let go")
        #expect(try await store.job(record.id)?.state == .queued && SpoolStore.status(of: store.layout).queued == 1)
        let jobs = try await store.claim(limit: 2)
        #expect(jobs.map(\.id) == [record.id] && jobs.first?.token == 1)
        #expect(try await store.job(record.id)?.state == .running)
        await store.abandon(jobs[0])
        #expect(!JobLock.isHeld(directory: directory))
    }

    /// A worker without room: what the intake hands over waits in `work/` unlocked, and a claim
    /// asking for fewer than were handed over lets the rest go.
    @Test func aWorkerWithoutRoomLeavesTheUploadToAnyDaemon() async throws {
        let (store, claimed) = try Self.claimed("hand-over-let-go", count: 3)
        store.take(claimed[0].0, claimed[0].1)
        let first = try await store.claim(limit: 1)  // full: it asked for one and got it
        #expect(first.map(\.id) == [claimed[0].0.id])
        store.take(claimed[1].0, claimed[1].1)
        #expect(!JobLock.isHeld(directory: store.layout.job(claimed[1].0.id)), "let go at once")
        await store.abandon(first[0])
        let next = try await store.claim(limit: 1)
        #expect(next.count == 1, "a queued job in work/ is claimed as every other")
        await store.abandon(next[0])
    }
}

/// How many times a worker was woken.
final class WakeCount: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
