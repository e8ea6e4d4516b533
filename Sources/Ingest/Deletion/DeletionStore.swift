import Foundation

/// What a store does for a deletion (``VideoDeletion`` holds the order of the steps): each call
/// is idempotent, so a deletion cut short at any step is finished by running it again.
public protocol DeletionStore: Sendable {
    /// Records the tombstone and fences the job in one step: from then on no attempt of it
    /// publishes, shows or is claimed, `retry` refuses it and `status` says `deleted`. Nothing
    /// is recorded for an id the store never had.
    func recordDeletion(_ id: String, reason: DeletionReason, at: Date) async throws -> RecordedDeletion
    /// The tombstone of `id`, if it was deleted.
    func tombstone(_ id: String) async throws -> Tombstone?
    /// The latest `limit` tombstones, latest first (`status --deleted`: the audit trail).
    func tombstones(limit: Int) async throws -> [Tombstone]
    /// Tombstones by reason code (the `ingestd_videos_deleted` metric).
    func deletionCounts() async throws -> [DeletionCode: Int]
    /// Deletions recorded and not completed (cut short, or waiting for an attempt to stop).
    func pendingDeletions() async throws -> [Tombstone]
    /// Why the video's files cannot be removed yet (an attempt or a reprocess may still write
    /// them); nil once nothing of it runs.
    func stillWriting(_ id: String) async throws -> String?
    /// Saves the purge list before the CDN's files are removed.
    func notePurge(_ tombstone: Tombstone) async throws
    /// The upload's original where it lies in a bucket and ingestd owns it (`serve` received it):
    /// an object, or a prefix ending in `/`; removed before ``removeUpload(_:erase:)``.
    func remoteInput(_ id: String) async throws -> String?
    /// Removes what the store keeps of the upload: the original, the job's files, an upload in
    /// progress; with `erase`, also what its records say of the person's files beyond the tombstone.
    func removeUpload(_ id: String, erase: Bool) async throws
    /// Marks the deletion complete, with its `upload.deleted` webhook (recorded for whichever
    /// daemon or worker sends the store's webhooks); webhooks still pending for the video are
    /// withdrawn (they would name files that are gone).
    func completeDeletion(_ tombstone: Tombstone) async throws
}

/// What ``DeletionStore/recordDeletion(_:reason:at:)`` found.
public enum RecordedDeletion: Sendable, Equatable {
    /// Recorded now.
    case recorded(Tombstone)
    /// Deleted before: its first tombstone, unchanged.
    case earlier(Tombstone)
    /// No such job in this store.
    case unknown
}
