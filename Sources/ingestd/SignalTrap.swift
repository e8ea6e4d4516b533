import Dispatch
import Foundation

/// Turns SIGINT/SIGTERM into task cancellation, so the job cleans up its staging directory.
final class SignalTrap: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []

    convenience init(cancelling task: Task<some Sendable, some Error>) {
        self.init { task.cancel() }
    }

    init(_ handler: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
    }

    func disarm() {
        sources.forEach { $0.cancel() }
        sources.removeAll()
    }
}
