import Foundation
@testable import Ingest
import Testing

/// A growing job's report comes from a process that decodes hostile input: the worker believes
/// it only within bounds it knows.
struct JobPlayableTests {
    let spawned = Date(timeIntervalSince1970: 1_000_000)
    var now: Date { spawned.addingTimeInterval(10) }

    @Test func aLyingReportIsBoundedByWhatTheWorkerSaw() {
        let lying = JobPlayable(seconds: 1e300, at: spawned.addingTimeInterval(-86_400 * 365),
                                startedAt: spawned.addingTimeInterval(3600), plannedAt: .distantPast)
        let bounded = lying.bounded(since: spawned, now: now)
        #expect(bounded.seconds == 86_400)
        #expect(bounded.startedAt == now, "not after now")
        #expect(bounded.plannedAt == now && bounded.at == now, "in order: never before the start it follows")
        #expect(JobPlayable(seconds: -5, at: now).bounded(since: spawned, now: now).seconds == 0)
        #expect(JobPlayable(seconds: .infinity, at: now).bounded(since: spawned, now: now).seconds == 0)
        let stages = bounded.stages(received: spawned, shown: now)
        #expect(stages.values.allSatisfy { $0 >= 0 }, "\(stages)")
    }

    /// The running report the margin guard keeps: a length or a listing no video has (negative,
    /// not a number, longer than a day) is kept within 0 and a day, as the show report is.
    @Test func aLyingListingIsBounded() {
        var lying = JobPlayable(seconds: .nan, at: now, totalSeconds: -20)
        #expect(lying.listing == Margin.Listing(seconds: 0, ended: false, totalSeconds: 0))
        lying.seconds = 1e300
        lying.totalSeconds = .infinity
        #expect(lying.listing == Margin.Listing(seconds: 86_400, ended: false, totalSeconds: 0))
        lying.totalSeconds = 1e12
        #expect(lying.bounded(since: spawned, now: now).totalSeconds == 86_400)
        #expect(JobPlayable(seconds: 3, at: now, totalSeconds: 20).listing == Margin.Listing(seconds: 3, ended: false, totalSeconds: 20))
    }

    @Test func anHonestReportIsKeptAndSplitIntoStages() {
        let honest = JobPlayable(seconds: 2, at: spawned.addingTimeInterval(1.5), startedAt: spawned.addingTimeInterval(0.1),
                                 plannedAt: spawned.addingTimeInterval(0.3))
        #expect(honest.bounded(since: spawned, now: now) == honest)
        let stages = honest.stages(received: spawned.addingTimeInterval(-0.05), shown: spawned.addingTimeInterval(1.52))
        #expect(stages == ["toJobProcess": 0.15, "probe": 0.2, "firstSegments": 1.2, "show": 0.02], "\(stages)")
    }
}
