import Dispatch
import Ingest
import Testing

/// Runs a suite's tests, and the tasks they start in this process (database clients, deadlines),
/// on threads of their own rather than on Swift's shared pool. The pool has one thread per core
/// (two here), and the other suites' blocking tools (`Tool.run`, `Daemon.wait`) can hold both for
/// tens of seconds: a database answer then sits unread until the server ends the session
/// (`idle_in_transaction_session_timeout`), which is the tests' stall, not the product's fault.
struct OffTheSharedPool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await PreferredExecutor.run(on: DispatchTaskExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffTheSharedPool {
    static var offTheSharedPool: Self { Self() }
}

/// A task executor on a concurrent dispatch queue: unlike Swift's cooperative pool, it adds a
/// thread when its threads block, so a test blocked in a tool holds only its own.
final class DispatchTaskExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = DispatchTaskExecutor()
    private let queue = DispatchQueue(label: "ingestd-tests.off-the-shared-pool", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
