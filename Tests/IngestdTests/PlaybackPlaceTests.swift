import Foundation
import Testing
import Transcode
@testable import Ingest

/// Where a video plays, one value: made by each kind of target, recorded and read back as it is.
struct PlaybackPlaceTests {
    @Test func eachTargetSaysWhereItsVideoPlays() {
        let attempt = AttemptOutput(id: "clip-1", token: 7)
        let directory = OutputTargets.make(cdn: "/srv/cdn", growing: true, storage: nil, pointer: true).place(attempt)
        #expect(directory == PlaybackPlace(root: "/srv/cdn", id: "clip-1"))
        #expect(directory.master == "clip-1/master.m3u8" && directory.recorded == "/srv/cdn/clip-1")
        #expect(directory.readableManifest == "/srv/cdn/clip-1/manifest.json")
        let bucket = PlaybackPlace(root: "s3://media/cdn", id: "clip-1", version: attempt.version)  // a bucket target's (BucketWatchTests)
        #expect(bucket.master == "clip-1/t7/master.m3u8" && bucket.recorded == "s3://media/cdn/clip-1/t7")
        #expect(bucket.video == "s3://media/cdn/clip-1" && bucket.readableManifest == nil)
        #expect(bucket.url("360p/index.m3u8", cdnURL: "https://cdn.example") == "https://cdn.example/clip-1/t7/360p/index.m3u8")
        #expect(bucket.eventFields["version"] as? String == "s3://media/cdn/clip-1/t7")
        #expect(directory.eventFields["version"] == nil && directory.eventFields["output"] as? String == "/srv/cdn/clip-1")
    }

    /// A record written before places names its output alone: every kind of version reads back.
    @Test func aRecordFromBeforePlacesReadsBackWithItsVersion() {
        #expect(PlaybackPlace.recordedBefore(id: "a", output: "/srv/cdn/a") == PlaybackPlace(root: "/srv/cdn", id: "a"))
        #expect(PlaybackPlace.recordedBefore(id: "a", output: "s3://media/cdn/a/t3") == PlaybackPlace(root: "s3://media/cdn", id: "a", version: "t3"))
        #expect(PlaybackPlace.recordedBefore(id: "a", output: "s3://media/cdn/a/v0123abcd")
            == PlaybackPlace(root: "s3://media/cdn", id: "a", version: "v0123abcd"), "a reprocessed version")
        let place = PlaybackPlace(root: "s3://media/cdn", id: "a", version: "t3")
        let decoded = try? JSONDecoder().decode(PlaybackPlace.self, from: JSONEncoder().encode(place))
        #expect(decoded == place, "recorded as it is")
    }

    /// One poster stands for the video, the largest, wherever it is asked for.
    @Test func theLargestPosterStandsForTheVideo() throws {
        let json = #"{"posters": [{"path": "poster-360.jpg", "width": 360, "height": 640}, {"path": "poster-1080.jpg", "width": 1080, "height": 1920}]}"#
        struct Posters: Decodable { var posters: [ReadyManifest.Image] }
        let posters = try JSONDecoder().decode(Posters.self, from: Data(json.utf8)).posters
        let place = PlaybackPlace(root: "/cdn", id: "a", version: "t2")
        #expect(place.poster(among: posters) == "a/t2/poster-1080.jpg")
    }
}
