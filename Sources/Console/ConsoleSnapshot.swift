import Foundation
import Ingest
import Logging
import ServiceLifecycle
import Transcode

/// The one read of the store every console viewer shares (as River UI and Oban Web learned to
/// do: a count per viewer per second made their UIs the database's load). Refreshed when the
/// store says a job changed (at most once per `minimumGap`), and at least every `interval`;
/// each refresh is pushed to every open event stream. Its tabs' first pages answer page loads
/// too, so a viewer costs the store nothing until it filters or pages.
public actor ConsoleSnapshot: Service {
    /// What one refresh read.
    public struct Shared: Sendable {
        /// Grows by one each time what was read changed.
        public var version: Int
        public var takenAt: Date
        public var overview: JobOverview
        /// Each tab's first page, by state (`""`: every state).
        public var tabs: [String: [JobRow]]
        /// The charts' windows: the hour read with every refresh, the day at most once a minute.
        public var activity: [ActivityWindow: JobActivity]
    }

    let browser: any JobBrowser
    let interval: Duration
    let minimumGap: Duration
    let pageSize: Int
    let logger: Logger
    private var current: Shared?
    /// When each window was last read, and how long that took in seconds.
    private var activityReads: [ActivityWindow: (at: Date, took: Double)] = [:]
    private var subscribers: [Int: AsyncStream<Shared>.Continuation] = [:]
    private var nextSubscriber = 0
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// Refreshes made (for the benchmark: store reads do not grow with viewers).
    public private(set) var refreshes = 0

    public init(browser: any JobBrowser, interval: Duration, minimumGap: Duration = .seconds(1), pageSize: Int = 50, logger: Logger) {
        self.browser = browser
        self.interval = interval
        self.minimumGap = minimumGap
        self.pageSize = pageSize
        self.logger = logger
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Something changed (a notification, this console's own write): refresh soon.
    public nonisolated func wake() { wakeup.yield() }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { [browser, wakeup] in await browser.changes { wakeup.yield() } }
            group.addTask { await self.refreshLoop() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        for subscriber in subscribers.values { subscriber.finish() }
        subscribers = [:]
    }

    private func refreshLoop() async {
        while !Task.isCancelled {
            let started = ContinuousClock.now
            await refresh()
            // Woken or not, at least `minimumGap` apart and at most `interval`.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [wakeups] in for await _ in wakeups { return } }
                group.addTask { [interval] in try? await SteadyTimer.sleep(for: interval) }
                await group.next()
                group.cancelAll()
            }
            let gap = minimumGap - (ContinuousClock.now - started)
            if gap > .zero { try? await SteadyTimer.sleep(for: gap) }
        }
    }

    /// Reads the store once and tells every subscriber (each gets every refresh, changed or not:
    /// an unchanged one keeps its stream alive).
    func refresh() async {
        do {
            let overview = try await browser.overview(cap: 100_000)
            let latest = try await browser.latest(perState: pageSize)
            let activity = try await activity(queued: overview.states[.queued])
            var tabs = Dictionary(grouping: latest) { $0.state.rawValue }
            for state in JobSnapshot.State.allCases where tabs[state.rawValue] == nil { tabs[state.rawValue] = [] }
            tabs[""] = Array(latest.sorted { $0.cursor > $1.cursor }.prefix(pageSize))
            refreshes += 1
            let changed = current.map { $0.overview != overview || $0.tabs != tabs || $0.activity != activity } ?? true
            let shared = Shared(version: (current?.version ?? 0) + (changed ? 1 : 0), takenAt: Date(), overview: overview, tabs: tabs,
                                activity: activity)
            current = shared
            for subscriber in subscribers.values { subscriber.yield(shared) }
        } catch where !Task.isCancelled {
            logger.warning("console: the store did not answer", metadata: ["error": "\(error)"])
        } catch {
            // stopping
        }
    }

    /// Each window's activity, read again when due: the hour with every refresh, the day once a
    /// minute, and either no sooner than 20 times its last read's duration after it (the charts'
    /// statement grows with the window's events: it takes at most a twentieth of the store's time).
    private func activity(queued: Int) async throws -> [ActivityWindow: JobActivity] {
        var windows = current?.activity ?? [:]
        for window in ActivityWindow.allCases {
            let now = Date()
            if let last = activityReads[window], now.timeIntervalSince(last.at) < max(window == .day ? 60 : 0, 20 * last.took) { continue }
            let started = ContinuousClock.now
            let tallies = try await browser.activity(since: window.start(now: now), step: window.step)
            windows[window] = JobActivity(window: window, now: now, tallies: tallies, queuedNow: queued)
            activityReads[window] = (now, (ContinuousClock.now - started).seconds)
        }
        return windows
    }

    /// The latest read (made now when there is none yet).
    public func latest() async -> Shared? {
        if current == nil { await refresh() }
        return current
    }

    /// The latest read, or an error saying there is none (the store never answered).
    func shared() async throws -> Shared {
        guard let shared = await latest() else { throw StoreSilent() }
        return shared
    }

    struct StoreSilent: Error, CustomStringConvertible {
        var description: String { "no snapshot could be read yet" }
    }

    /// Every refresh from now on, the latest first, until the console stops.
    public func subscribe() -> AsyncStream<Shared> {
        let (stream, continuation) = AsyncStream.makeStream(of: Shared.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        if let current { continuation.yield(current) }
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    public var viewers: Int { subscribers.count }
}
