import Foundation
import Ingest

/// See ``JobQueue``'s deletion: the tombstone and the fence in one transaction, the attempt it
/// fenced out waited for until its lease ends.
extension PostgresStore: DeletionStore {
    public func recordDeletion(_ id: String, reason: DeletionReason, at: Date) async throws -> RecordedDeletion {
        try await described { try await queue.recordDeletion(Tombstone(id: id, reason: reason, at: at)) }
    }

    public func tombstone(_ id: String) async throws -> Tombstone? { try await described { try await queue.tombstone(id) } }

    public func pendingDeletions() async throws -> [Tombstone] { try await described { try await queue.pendingDeletions() } }

    public func tombstones(limit: Int) async throws -> [Tombstone] { try await described { try await queue.tombstones(limit: limit) } }

    public func deletionCounts() async throws -> [DeletionCode: Int] { try await described { try await queue.deletionCounts() } }

    public func stillWriting(_ id: String) async throws -> String? {
        guard let until = try await described({ try await queue.fencedLease(id) }) else { return nil }
        return "the attempt it fenced out may write until its lease ends at \(ISO8601DateFormatter().string(from: until))"
    }

    public func notePurge(_ tombstone: Tombstone) async throws { try await described { try await queue.saveTombstone(tombstone) } }

    public func remoteInput(_ id: String) async throws -> String? {
        guard let input = try await described({ try await queue.ownedInput(id) }), RemotePath.isRemote(input) else { return nil }
        return input
    }

    /// A spool's `queued/<id>/` (`watch --database`) where this host reaches it; with `erase`,
    /// what the rows say of the upload's files.
    public func removeUpload(_ id: String, erase: Bool) async throws {
        if let input = try await described({ try await queue.ownedInput(id) }), !RemotePath.isRemote(input) {
            let folder = (input as NSString).deletingLastPathComponent
            let queued = (folder as NSString).deletingLastPathComponent
            guard FileManager.default.fileExists(atPath: queued) else {
                throw IngestError.cannotWrite(path: folder, reason: "the spool holding the original is not mounted here: finished by a host that mounts it")
            }
            if (folder as NSString).lastPathComponent == id, FileManager.default.fileExists(atPath: folder) {
                try FileManager.default.removeItem(atPath: folder)
            }
        }
        if erase { try await described { try await queue.eraseRecords(id) } }
    }

    public func completeDeletion(_ tombstone: Tombstone) async throws { try await described { try await queue.completeDeletion(tombstone) } }
}
