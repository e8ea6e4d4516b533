import Foundation
import IngestdTesting
import Testing

extension FleetUploadTests {
    /// While a real worker transcodes a fleet upload, `GET /v1/jobs/{id}` on a fleet host says
    /// `processing` with the job's own progress (written to its queue row under the fence): seen
    /// strictly between 0 and 100, never going back, then `completed` at 100.
    @Test func aFleetJobsStatusGivesItsProgressWhileProcessing() throws {
        let fleet = try Fleet("fleet-progress", hosts: 1, extra: [])
        let host = fleet.hosts[0]
        // Long enough (12 s of 720p) for several of the worker's 2 s reports.
        let source = "\(fleet.base)/long.mp4"
        let made = try Tool.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=12",
                                           "-f", "lavfi", "-i", "sine=frequency=440:duration=12", "-c:v", "libx264", "-preset", "ultrafast",
                                           "-crf", "32", "-c:a", "aac", "-shortest", source])
        #expect(made.status == 0, "\(made.stderr)")
        let size = Int(Checks.size(source))
        let link = try host.link("fleet-progress")
        let upload = host.url + (try #require(try HTTP.create(link.upload, length: size).headers["location"]))
        #expect(try HTTP.patch(upload, offset: 0, file: source).status == 204)

        let worker = try BucketFleetTests.Worker(["worker", "--database", fleet.database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads",
                                                  "--jobs", "1", "--poll", "0.5", "--lease", "20", "--s3-endpoint", fleet.s3.endpoint],
                                                 environment: fleet.s3.environment, name: "fleet-progress")
        var seen: [Int] = [], last: [String: Any] = [:], listed: [String: Any]?
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let body = try HTTP.request("GET", link.status).body
            last = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
            if last["state"] as? String == "processing" { seen.append(try #require(last["progress"] as? Int, "\(last)")) }
            if listed == nil, let now = seen.last, now > 0, now < 100 {  // `ingestd status` lists it too
                let status = try Tool.run(Paths.binary, ["status", "--database", fleet.database.url, "--json"])
                let jobs = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["jobs"] as? [[String: Any]]
                listed = try #require(jobs?.first { $0["id"] as? String == "fleet-progress" }, "\(status.stdout)")
                #expect(listed?["state"] as? String != "running" || (listed?["progress"] as? Int ?? -1) >= now, "\(listed ?? [:])")
            }
            if ["completed", "rejected", "failed"].contains(last["state"] as? String ?? "") { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        _ = worker
        #expect(last["state"] as? String == "completed" && last["progress"] as? Int == 100, "\(last)")
        #expect(seen.contains { $0 > 0 && $0 < 100 }, "a progress between 0 and 100 while processing: \(seen)\n\(worker.output)")
        #expect(seen == seen.sorted(), "never going back: \(seen)")
        #expect(try fleet.sql("SELECT progress_token = token FROM ingestd_jobs WHERE id = 'fleet-progress'") == "t", "written under the attempt's token")
    }
}
