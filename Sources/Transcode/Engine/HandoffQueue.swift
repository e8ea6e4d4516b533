import Foundation

/// A small bounded FIFO between two threads. `put` blocks while full, `take` while empty, so a
/// fast producer is held back by a slow consumer instead of buffering frames without limit.
final class HandoffQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func put(_ element: Element) {
        condition.lock()
        while items.count >= capacity { condition.wait() }
        items.append(element)
        condition.broadcast()
        condition.unlock()
    }

    func take() -> Element {
        condition.lock()
        while items.isEmpty { condition.wait() }
        let element = items.removeFirst()
        condition.broadcast()
        condition.unlock()
        return element
    }
}
