/// Where the spool daemon hands its uploads when a shared job queue runs them
/// (`ingestd watch --database`): the daemon claims and checks each upload, moves it to
/// `queued/<id>/`, and queues it; the fleet's workers transcode and publish it.
public protocol JobHandOff: Sendable {
    /// Queues job `id`, whose upload is the sole entry of `holder`. Queueing an id again
    /// changes nothing, so a daemon that died between moving and queueing may simply retry.
    func enqueue(id: String, soleEntryOf holder: String) async throws
}
