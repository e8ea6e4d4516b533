import Ingest
import Logging

/// The spool daemon's hand-off to the fleet (`ingestd watch --database`): each checked upload
/// becomes a job row whose input is the spool's `queued/<id>/upload` on shared storage.
public struct QueueHandOff: JobHandOff {
    let queue: JobQueue
    /// The preset every handed-off upload is encoded with, as canonical JSON.
    let preset: String

    public init(queue: JobQueue, preset: String) {
        self.queue = queue
        self.preset = preset
    }

    public func enqueue(id: String, soleEntryOf holder: String) async throws {
        do {
            try await queue.enqueue([.init(id: id, input: holder, kind: .soleEntryOf, preset: preset,
                                           uploadID: Upload.declaredID(of: .soleEntry(of: holder)))])
        } catch {
            throw QueueError(description: describeDatabaseError(error))
        }
    }
}

/// A queue operation that failed, described in one line.
public struct QueueError: Error, CustomStringConvertible, StoreRefusal {
    public var description: String
    /// The server refused the values themselves (SQLSTATE classes 22 data exception, 23
    /// integrity violation, 42 syntax or access): the same write fails every time.
    public var isPermanent = false
    /// The server refused this client (SQLSTATE class 28 authentication, 3D000 no such
    /// database, 42501 no privilege): no retry helps until the configuration changes.
    public var isConfiguration = false
}
