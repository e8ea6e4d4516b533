import Foundation

/// One blocking piece of work on a thread of its own, beside the pipeline's; ``join()`` waits
/// for it and returns its result (or rethrows its error), as often as it is called.
///
/// The work may capture values that are not `Sendable` (frames): the caller hands them over and
/// does not touch them again until ``join()`` returns.
final class WorkerThread<Value>: @unchecked Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private var result: Result<Value, Error>?

    init(name: String, _ work: @escaping () throws -> Value) {
        nonisolated(unsafe) let work = work
        startThread(named: name) { [self] in
            result = Result { try work() }
            finished.signal()
        }
    }

    func join() throws -> Value {
        finished.wait()
        finished.signal()  // the next join returns at once
        return try result!.get()
    }
}
