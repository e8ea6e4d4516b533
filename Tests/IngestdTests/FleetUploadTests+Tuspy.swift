import Foundation
import IngestdTesting
import Testing

extension FleetUploadTests {
    /// A stock client across the fleet: tuspy sends 30 MB in 2 MiB chunks to host A (parts and
    /// tails), A is killed with SIGKILL after 4 of them, and tuspy resumes on host B from the
    /// offset B reports, exactly what A had acknowledged, sending no byte twice.
    @Test(.enabled(if: UploadServerProcess.tuspyAvailable, "tuspy is not installed (make test-deps-python)"))
    func tuspyResumesOnAnotherHostAfterAKill() throws {
        let fleet = try Fleet("fleet-tuspy", hosts: 2)
        let (a, b) = (fleet.hosts[0], fleet.hosts[1])
        let source = "\(fleet.base)/clip.mp4"
        #expect(try Tool.run("sh", ["-c", "head -c 30000000 /dev/urandom > '\(source)'"]).status == 0)
        let chunk = 2 << 20
        let link = try a.link("fleet-tuspy")
        let client = try PausedUpload(link.upload, source: source, chunk: chunk, pauseAfter: 4, go: "\(fleet.base)/go",
                                      resumeAt: b.url, log: a.log)
        #expect(client.paused().hasPrefix("paused"))

        a.kill9()
        let report = client.resume()
        let result = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any], "\(String(decoding: report, as: UTF8.self))")
        #expect(client.process.terminationStatus == 0)
        #expect(result["resumed_from"] as? Int == 4 * chunk, "resumed on B exactly where A had acknowledged: \(result)")
        #expect(result["sent"] as? Int == 30_000_000, "no byte sent twice: \(result)")

        #expect(try fleet.sql("SELECT count(*) || ' ' || min(input) FROM ingestd_jobs WHERE id = 'fleet-tuspy'") == "1 s3://media/uploads/fleet-tuspy/clip.mp4")
        let copy = "\(fleet.base)/copy"
        _ = try S3Check.run(fleet.s3, ["get", fleet.s3.bucket, "uploads/fleet-tuspy/clip.mp4", copy])
        #expect(try UploadServerTests.sha256(copy) == (try UploadServerTests.sha256(source)))
        #expect(try fleet.keys("uploads/") == ["uploads/fleet-tuspy/clip.mp4"] && fleet.pending().isEmpty)
    }
}
