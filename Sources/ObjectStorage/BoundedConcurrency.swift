/// `transform` applied to every element, at most `width` at once, results in the elements'
/// order. The first error cancels what is running and is thrown. (Parts of an upload, the
/// files of a ladder, the objects of a sweep: a bucket is fast in parallel, not unbounded.)
public func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: [Element], atMost width: Int, _ transform: @escaping @Sendable (Element) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: (Int, Result).self) { group in
        var results = [Result?](repeating: nil, count: elements.count)
        var next = 0
        func addNext() {
            guard next < elements.count else { return }
            let index = next, element = elements[index]
            next += 1
            group.addTask { (index, try await transform(element)) }
        }
        for _ in 0..<max(1, width) { addNext() }
        while let (index, result) = try await group.next() {
            results[index] = result
            addNext()
        }
        return results.map { $0! }
    }
}
