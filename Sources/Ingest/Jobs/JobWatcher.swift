import Foundation

/// The one channel from a running job process to the worker (``JobRunner/run(input:output:jobDirectory:stageOnly:attempt:publishedVersion:captionsFrom:growing:watcher:logTail:stop:)``):
/// that it started, and, when it grows its output in view, each report it wrote of what its
/// ladder lists (``JobPlayable``). The watcher (the worker's, in the lifecycle) decides what that
/// means and says how long it held the process back, which is not charged to its time limit.
public protocol JobWatcher: Sendable {
    /// The job process `pid` was spawned at `at`.
    func started(pid: Int32, at: Date)
    /// The growing job's latest report; true once its video is shown.
    func reported(_ report: JobPlayable) async -> Bool
    /// How long the process has been held back so far.
    var waited: Duration { get }
    /// The process is being stopped, or has ended: nothing holds it back any more (a stopped
    /// process could not hear SIGTERM).
    func ending()
}
