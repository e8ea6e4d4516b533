import Ingest
import Logging

/// The spool daemon's hand-off to the fleet (`ingestd watch --database`): each checked upload
/// becomes a job row whose input is the spool's `queued/<id>/upload` on shared storage.
public struct QueueHandOff: JobHandOff {
    let store: PostgresStore
    /// The door every upload goes through, with the daemon's preset.
    let submitter: Submitter

    public init(store: PostgresStore, submitter: Submitter) {
        self.store = store
        self.submitter = submitter
    }

    public func enqueue(id: String, soleEntryOf holder: String) async throws {
        try await submitter.submit([submitter.job(.soleEntry(of: holder), id: id, owned: true)], to: store)
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
