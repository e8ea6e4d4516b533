import IngestdTesting
import Fleet
import Foundation
@testable import Ingest
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import Transcode

/// The job lifecycle's contract, run against both stores: the spool's directories and the
/// fleet's PostgreSQL queue (a real server). What differs between them is only how a job is
/// queued and how a worker disappears (``Stores``).
@Suite(.serialized, .offTheSharedPool) struct JobStoreContractTests {
    static let kinds: [StoreKind] = PostgresServer.binaries == nil ? [.spool] : StoreKind.allCases
    static let reason = Reason(code: "corrupt_input", message: "test", attempts: 1)

    @Test(arguments: kinds) func twoWorkersNeverClaimTheSameJob(_ kind: StoreKind) async throws {
        try await withStores(kind, "exclusive") { stores in
            var ids: Set<String> = []
            for index in 0..<6 { ids.insert(try await stores.submit("hdr_hlg.mp4", "u\(index).mp4")) }
            async let first = stores.first.claim(limit: 4)
            async let second = stores.second.claim(limit: 4)
            let (a, b) = try await (first, second)
            #expect(Set(a.map(\.id)).isDisjoint(with: b.map(\.id)), "\(a.map(\.id)) and \(b.map(\.id))")
            #expect(a.count + b.count == 6 && Set(a.map(\.id) + b.map(\.id)) == ids)
            #expect((a + b).allSatisfy { $0.attempt == 1 })
            #expect(try await stores.first.claim(limit: 4).isEmpty, "nothing left to claim")
        }
    }

    /// A worker that is gone (its process died; the queue's lease ran out) loses its job to the
    /// next claim, and what it still tries to record is refused by the token.
    @Test(arguments: kinds) func aGoneWorkersJobIsRescuedAndItsTokenRefused(_ kind: StoreKind) async throws {
        try await withStores(kind, "rescue") { stores in
            let id = try await stores.submit("hdr_hlg.mp4", "gone.mp4")
            let lost = try #require(try await stores.first.claim(limit: 1).first)
            try await stores.abandon(lost, stores.first)
            _ = try await stores.second.rescue(now: Date())
            let taken = try #require(try await stores.second.claim(limit: 1).first)
            #expect(taken.id == id && taken.token > lost.token)
            #expect(try await stores.first.renew(lost) == false)
            #expect(try await stores.first.finish(lost, .rejected(Self.reason), output: .none(lost), target: stores.held) == false)
            #expect(try await stores.state(id) == "running", "still the second worker's")
            #expect(try await stores.second.renew(taken))
        }
    }

    @Test(arguments: kinds) func aFailedAttemptIsRetriedThenFailedAfterMaxAttempts(_ kind: StoreKind) async throws {
        try await withStores(kind, "retry") { stores in
            let policy = RetryPolicy(maxAttempts: 2, backoff: .zero)
            let id = try await stores.submit("hdr_hlg.mp4", "flaky.mp4")
            let first = try #require(try await stores.first.claim(limit: 1).first)
            let retry = policy.end(attempt: first.attempt, Reason(code: "crashed", message: "x", attempts: first.attempt))
            #expect(retry == .retried(Reason(code: "crashed", message: "x", attempts: 1, at: retry.reason!.at), after: .zero))
            #expect(try await stores.first.finish(first, retry, output: .none(first), target: stores.held))
            #expect(try await stores.state(id) == "queued")
            let second = try #require(try await stores.second.claim(limit: 1).first)
            #expect(second.attempt == 2 && second.token > first.token)
            let end = policy.end(attempt: second.attempt, Reason(code: "crashed", message: "x", attempts: second.attempt))
            guard case .failed = end else { Issue.record("want failed after 2 attempts, got \(end)"); return }
            #expect(try await stores.second.finish(second, end, output: .none(second), target: stores.held))
            #expect(try await stores.state(id) == "failed")
            #expect(try await stores.first.claim(limit: 5).isEmpty)
        }
    }

    /// An operator's retry (the console's, #42): a failed job goes back to the queue with its
    /// attempts reset, once however often it is asked; a job in another state is left alone; a
    /// rejected one only when the operator says so.
    @Test(arguments: kinds) func anOperatorsRetryQueuesAFailedJobOnceFromItsFirstAttempt(_ kind: StoreKind) async throws {
        try await withStores(kind, "operator-retry") { stores in
            let failed = try await stores.submit("hdr_hlg.mp4", "failed.mp4")
            let rejected = try await stores.submit("broken_truncated.mp4", "bad.mp4")
            let queued = try await stores.submit("hdr_hlg.mp4", "waits.mp4")
            for job in try await stores.first.claim(limit: 3) {
                let end: JobEnd = job.id == failed ? .failed(Reason(code: "crashed", message: "x", attempts: job.attempt))
                    : job.id == rejected ? .rejected(Self.reason) : .released
                #expect(try await stores.first.finish(job, end, output: .none(job), target: stores.held))
            }
            let ended = [try await stores.state(failed), try await stores.state(rejected), try await stores.state(queued)]
            #expect(ended == ["failed", "rejected", "queued"])
            #expect(try await stores.second.retry([failed, rejected, queued, "no-such-job"], rejected: false) == [failed])
            let retried = try #require(try await stores.second.job(failed))
            #expect(retried.state == .queued && retried.attempts == 0 && retried.reason == nil, "\(retried)")
            #expect(try await stores.first.retry([failed], rejected: false).isEmpty, "retried once")
            #expect(try await stores.second.retry([rejected], rejected: true) == [rejected])
            #expect(try await stores.state(rejected) == "queued")
            let again = try await stores.second.claim(limit: 3)
            #expect(Set(again.map(\.id)) == [failed, rejected, queued] && again.allSatisfy { $0.attempt == 1 }, "\(again)")
            #expect(try await stores.journal().contains("retried"))
        }
    }

    @Test(arguments: kinds) func aRejectedJobIsNeverRetried(_ kind: StoreKind) async throws {
        try await withStores(kind, "reject") { stores in
            let id = try await stores.submit("broken_truncated.mp4", "bad.mp4")
            #expect(try await stores.first.job(id) == JobSnapshot(id: id, state: .queued, attempts: 0))
            let job = try #require(try await stores.first.claim(limit: 1).first)
            #expect(try await stores.second.job(id) == JobSnapshot(id: id, state: .running, attempts: 1, progress: 0))
            #expect(try await stores.first.finish(job, .rejected(Self.reason), output: .none(job), target: stores.held))
            #expect(try await stores.state(id) == "rejected")
            let ended = try #require(try await stores.second.job(id), "one read of a job, whatever the store")
            #expect(ended.state == .rejected && ended.attempts == 1 && ended.reason?.code == Self.reason.code
                    && ended.reason?.message == Self.reason.message)
            #expect(try await stores.second.job("no-such-job") == nil)
            #expect(try await stores.second.claim(limit: 5).isEmpty)
        }
    }

    @Test(arguments: kinds) func aReleaseChargesNoAttempt(_ kind: StoreKind) async throws {
        try await withStores(kind, "release") { stores in
            let id = try await stores.submit("hdr_hlg.mp4", "drained.mp4")
            let job = try #require(try await stores.first.claim(limit: 1).first)
            #expect(try await stores.first.release(job, target: stores.held))
            #expect(try await stores.state(id) == "queued")
            let again = try #require(try await stores.second.claim(limit: 1).first)
            #expect(again.attempt == job.attempt && again.token > job.token)
        }
    }

    /// The fence. Between "token checked" and "publish" (the store's `publish` closure, the
    /// hook) the lease runs out and another worker tries to take the job: it cannot (the queue's
    /// row and the spool's flock stay held until the end is recorded), and the output appears
    /// once. Then the lease runs out *before* the end is recorded and another worker takes the
    /// job: the first worker's publish never runs and its output never appears.
    @Test(arguments: kinds) func aWorkerThatLostItsJobNeverPublishes(_ kind: StoreKind) async throws {
        try await withStores(kind, "fence") { stores in
            let id = try await stores.submit("hdr_hlg.mp4", "fenced.mp4")
            let holder = try #require(try await stores.first.claim(limit: 1).first)
            let takenInside = Mutex<[ClaimedJob]>([])
            var output = try stores.staged(holder, "first")
            output.whilePublishing = {
                try await stores.expireLease()
                _ = try await stores.second.rescue(now: Date())
                let taken = try await stores.second.claim(limit: 1)
                takenInside.withLock { $0 = taken }
            }
            let recorded = try await stores.first.finish(holder, .published(JobResult(ok: true)), output: output, target: stores.held)
            #expect(recorded && takenInside.withLock { $0.isEmpty }, "nobody takes a job between its fence check and its publish")
            let state = try await stores.state(id)
            #expect(state == "published" && stores.output(id) == "first")

            let next = try await stores.submit("hdr_hlg.mp4", "stolen.mp4")
            let stale = try #require(try await stores.first.claim(limit: 1).first)
            try await stores.abandon(stale, stores.first)
            _ = try await stores.second.rescue(now: Date())
            let current = try #require(try await stores.second.claim(limit: 1).first)
            let ran = Mutex(false)
            var staleOutput = try stores.staged(stale, "stale")
            staleOutput.whilePublishing = { ran.withLock { $0 = true } }
            #expect(try await stores.first.finish(stale, .published(JobResult(ok: true)), output: staleOutput, target: stores.held) == false)
            #expect(!ran.withLock { $0 } && stores.output(next) == nil, "the stale attempt published nothing")
            #expect(try await stores.second.finish(current, .published(JobResult(ok: true)), output: try stores.staged(current, "current"), target: stores.held))
            let nextState = try await stores.state(next)
            #expect(stores.output(next) == "current" && nextState == "published")
        }
    }

    /// A video played while it is made, across a lost lease: the attempt that lost the job can
    /// neither show its version again nor take the video back from the attempt that replaced it,
    /// whose version alone is what `CDN/<id>/master.m3u8` plays; the store says which attempt's
    /// video is playable.
    @Test(arguments: kinds) func aStaleAttemptNeverShowsItsGrowingVersion(_ kind: StoreKind) async throws {
        try await withStores(kind, "growing") { stores in
            let id = try await stores.submit("hdr_hlg.mp4", "grows.mp4")
            let report = JobPlayable(seconds: 2, at: Date())
            let stale = try #require(try await stores.first.claim(limit: 1).first)
            let staleOutput = try stores.growing(stale, "stale")
            #expect(try await stores.first.playable(stale, output: staleOutput, target: stores.grows, report))
            #expect(stores.shown(id) == staleOutput.version)
            let shown = try #require(try await stores.second.job(id))
            #expect(shown.state == .running && shown.playable == true && shown.output == "\(stores.cdn)/\(id)", "\(shown)")

            try await stores.abandon(stale, stores.first)
            _ = try await stores.second.rescue(now: Date())
            let current = try #require(try await stores.second.claim(limit: 1).first)
            #expect(try await stores.second.job(id)?.playable == nil, "the new attempt has shown nothing yet")
            let currentOutput = try stores.growing(current, "current")
            #expect(try await stores.second.playable(current, output: currentOutput, target: stores.grows, report))
            #expect(stores.shown(id) == currentOutput.version)
            #expect(try await stores.first.playable(stale, output: staleOutput, target: stores.grows, report) == false, "fenced out")
            #expect(stores.shown(id) == currentOutput.version, "the stale attempt never takes the video back")
            #expect(try await stores.second.job(id)?.playable == true)
        }
    }

    /// SIGTERM with a job in flight: it finishes within the grace period and is published; the
    /// jobs not started stay queued, uncharged.
    @Test(arguments: kinds) func aDrainFinishesTheJobInFlightAndLeavesTheRestQueued(_ kind: StoreKind) async throws {
        try await withStores(kind, "drain") { stores in
            var ids: [String] = []
            for index in 0..<3 { ids.append(try await stores.submit("portrait_rotated.mp4", "d\(index).mp4")) }
            try await stores.runWorker(grace: .seconds(120)) {
                try await waitFor("a job in flight") { try await ids.asyncContains { try await stores.state($0) == "running" } }
            }
            var states: [String] = []
            for id in ids { states.append(try await stores.state(id)) }
            let journal = try await stores.journal()
            #expect(states.sorted() == ["published", "queued", "queued"], "\(states); the store recorded:\n\(journal)")
            let published = try #require(ids.first { FileManager.default.fileExists(atPath: "\(stores.cdn)/\($0)/manifest.json") })
            func duration(_ path: String) throws -> Double {
                (try Tool.ffprobe(["-show_entries", "format=duration", path])["format"] as? [String: Any])?.double("duration") ?? 0
            }
            let played = try duration("\(stores.cdn)/\(published)/360p/index.m3u8")
            #expect(abs(played - (try duration(Paths.sample("portrait_rotated.mp4")))) < 0.2, "the job in flight was published whole: \(played) s")
            #expect(Daemon.entries(stores.cdn) == [published], "no staging left: \(Daemon.entries(stores.cdn))")
            let rest = try await stores.second.claim(limit: 5)
            #expect(rest.count == 2 && rest.allSatisfy { $0.attempt == 1 }, "\(rest)")
        }
    }

    /// Past the grace period the job in flight is stopped and released, its attempt not charged.
    @Test(arguments: kinds) func pastTheGraceAJobIsReleasedUncharged(_ kind: StoreKind) async throws {
        try await withStores(kind, "grace") { stores in
            let id = try await stores.submit("portrait_rotated.mp4", "slow.mp4")
            try await stores.runWorker(grace: .zero) {
                try await waitFor("the job in flight") { try await stores.state(id) == "running" }
                // Frozen, its job process cannot finish before the stop reaches it (on a busy host
                // a 6 s job could, and a job done is published): only the stop ends it.
                try await waitFor("its job process") {
                    guard let job = Daemon.children(of: getpid()).first(where: {
                        Daemon.commandLine($0).replacingOccurrences(of: "\\/", with: "/").contains(stores.cdn)  // a JSON argument
                    }) else { return false }
                    return kill(job, SIGSTOP) == 0
                }
            }
            #expect(try await stores.state(id) == "queued")
            #expect(stores.output(id) == nil && Daemon.entries(stores.cdn).isEmpty, "nothing published, no staging left")
            let again = try #require(try await stores.second.claim(limit: 1).first)
            #expect(again.attempt == 1)
        }
    }

    /// kill -9 of a worker process (`ingestd watch`, `ingestd worker`) with a job in flight: a
    /// new one publishes every job, each exactly once, and leaves no staging behind.
    @Test(arguments: kinds) func aWorkerKilledMidJobLosesAndRepeatsNothing(_ kind: StoreKind) async throws {
        try await withStores(kind, "kill9") { stores in
            var ids: [String] = []
            for index in 0..<3 { ids.append(try await stores.submit(Paths.smallSample, "k\(index).mp4")) }
            var worker: WorkerProcess? = try stores.startWorkerProcess()
            // The worker runs only in the test's steps until a job's process runs and no job is
            // between its publish and its filing (a kill there repeats the event, as documented),
            // and is killed in that state, however fast or slow the host.
            let pid = worker!.pid
            try Daemon.step(pid, timeout: 240, "a job in flight, none half filed") {
                Daemon.runningJobProcess(of: pid) != nil && !ids.contains(where: stores.halfFiled)
            }
            kill(pid, SIGKILL)
            worker = nil
            worker = try stores.startWorkerProcess()
            try await waitFor("every job published", timeout: .seconds(240)) {
                var states: [String] = []
                for id in ids { states.append(try await stores.state(id)) }
                return states == ["published", "published", "published"]
            }
            for id in ids { #expect(try await stores.publications(id) == 1, "\(id) published once") }
            #expect(Daemon.entries(stores.cdn) == ids.sorted(), "only the jobs, no staging: \(Daemon.entries(stores.cdn))")
            _ = worker
        }
    }
}

/// Polls `condition` until it holds; fails after `timeout` of time in which this process ran
/// (a stall of the whole test process, its threads busy in other tests' tools, counts as one
/// second, as in ``StallTolerantClock``).
func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
    var waited = Duration.zero
    while try await !condition() {
        guard waited < timeout else { throw Tool.ProbeFailure(message: "timed out waiting for \(what)") }
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(100))
        waited += min(start.duration(to: .now), .seconds(1))
    }
}

extension Array where Element: Sendable {
    func asyncContains(_ predicate: (Element) async throws -> Bool) async rethrows -> Bool {
        for element in self where try await predicate(element) { return true }
        return false
    }
}
