import Foundation
import IngestdTesting
import Testing

/// The ladder's files appear only whole (#41's first step): a reader polling the staging
/// directory every millisecond while `ingestd transcode` writes it never sees an init section
/// or a segment that is shorter than it ends up, and no temporary name survives.
@Suite(.offTheSharedPool)
struct DurableSegmentTests {
    @Test func segmentsAppearOnlyWhole() throws {
        let base = Paths.scratch("whole-segments")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let out = "\(base)/out"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.binary)
        process.arguments = ["transcode", Paths.smallSample, "--out", out]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var firstSeen: [String: Int] = [:]  // path in the ladder → its size when first listed
        var looks = 0
        while process.isRunning {
            for staging in Daemon.entries(base) where staging.hasPrefix(".out.staging-") {
                let root = "\(base)/\(staging)"
                for case let relative as String in FileManager.default.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator()
                where relative.hasSuffix(".m4s") || relative.hasSuffix("init.mp4") {
                    guard firstSeen[relative] == nil,
                          let size = (try? FileManager.default.attributesOfItem(atPath: "\(root)/\(relative)"))?[.size] as? Int else { continue }
                    firstSeen[relative] = size
                }
            }
            looks += 1
            usleep(1000)
        }
        #expect(process.terminationStatus == 0)
        #expect(firstSeen.count >= 8 && looks > 100, "the reader saw the ladder grow: \(firstSeen.count) files in \(looks) looks")
        for (relative, size) in firstSeen.sorted(by: { $0.key < $1.key }) {
            let final = (try? FileManager.default.attributesOfItem(atPath: "\(out)/\(relative)"))?[.size] as? Int
            #expect(final == size, "\(relative): \(size) bytes when first seen, \(final ?? -1) at the end")
        }
        let leftovers = (FileManager.default.enumerator(atPath: out)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
