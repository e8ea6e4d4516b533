import IngestdTesting
import Foundation
@testable import Ingest
import Testing

extension JobStoreContractTests {
    /// A deletion fences the job in either store: the attempt holding it can neither renew,
    /// show nor publish, its video is out of view at once, no claim or retry takes it again,
    /// and the deletion completes once the attempt is gone (``VideoDeletion``).
    @Test(arguments: JobStoreContractTests.kinds) func aDeletedJobIsFencedOutOfEveryStep(_ kind: StoreKind) async throws {
        try await withStores(kind, "deletion") { stores in
            let ids = [try await stores.submit("hdr_hlg.mp4", "a.mp4"), try await stores.submit("hdr_hlg.mp4", "b.mp4")]
            let holder = try #require(try await stores.first.claim(limit: 1).first)
            let queued = try #require(ids.first { $0 != holder.id })
            let report = JobPlayable(seconds: 2, at: Date())
            let output = try stores.growing(holder, "held")
            #expect(try await stores.first.playable(holder, output: output, target: stores.grows, report))
            let deletions = try #require(stores.second as? any DeletionStore)
            let deletion = VideoDeletion(store: deletions, target: stores.grows)
            let reason = try DeletionReason(code: .moderation, text: "removed", by: "test")
            // The holder still holds it: its lease (1 s on the queue) renewed just now, whatever the host's load.
            #expect(try await stores.first.renew(holder))
            let outcomes = await deletion.delete([holder.id, queued], reason: reason)
            #expect(outcomes.map(\.result) == [.pending, .deleted], "\(outcomes)")
            #expect(stores.shown(holder.id) == nil && !FileManager.default.fileExists(atPath: "\(stores.cdn)/\(holder.id)"), "out of view at once")
            #expect(try await stores.first.renew(holder) == false)
            #expect(try await stores.first.playable(holder, output: output, target: stores.grows, report) == false)
            let late = try stores.staged(holder, "late")
            #expect(try await stores.first.finish(holder, .published(JobResult(ok: true)), output: late, target: stores.held) == false)
            #expect(stores.output(holder.id) == nil, "never published")
            #expect(try await stores.second.claim(limit: 2).isEmpty)
            #expect(try await stores.second.retry(ids, rejected: true).isEmpty)
            for id in ids { #expect(try await stores.second.job(id)?.state == .deleted) }
            await stores.held.discard(late)  // what the worker does with a publish fenced out
            try await stores.abandon(holder, stores.first)
            let finished = await deletion.finishPending()
            #expect(finished.map(\.result) == [.deleted], "\(finished)")
            let left = (try FileManager.default.contentsOfDirectory(atPath: stores.cdn)).filter { name in ids.contains { name.contains($0) } }
            #expect(left.isEmpty, "\(left)")
            let again = await deletion.delete([holder.id], reason: try DeletionReason(code: .other, text: "twice", by: "test"))
            #expect(again.first?.result == .alreadyDeleted && again.first?.tombstone?.reason == reason)
        }
    }
}
