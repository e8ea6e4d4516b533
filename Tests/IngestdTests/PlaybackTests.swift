import IngestdTesting
import Foundation
import Testing
import Transcode

/// The ladder served over HTTP on 127.0.0.1 and played to the end by independent players.
@Suite struct PlaybackTests {
    /// A static file server (Python's http.server) on a free loopback port, stopped on deinit.
    final class Server {
        let process = Process()
        let port: Int

        init(root: String) throws {
            port = Int.random(in: 20000...60000)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", root]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<50 {
                if (try? Tool.run("python3", ["-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:\(port)/')"]))?.status == 0 { return }
                usleep(100_000)
            }
            throw Tool.ProbeFailure(message: "http server did not start")
        }

        deinit {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// A rotated phone recording (every rung encoded) and an app upload (top rung passed through).
    static func source(_ name: String) async throws -> String {
        name == "app" ? try await PassthroughTests.appUpload() : Paths.sample("portrait_rotated.mp4")
    }

    @Test(arguments: ["portrait_rotated", "app"])
    func ffmpegPlaysEveryRungToTheEndOverHTTP(_ name: String) async throws {
        let output = try await Fixtures.shared.output(Self.source(name))
        let server = try Server(root: output.directory)
        let expectedFrames = Int((output.manifest.durationSeconds * 30).rounded())
        for rendition in output.manifest.renditions {
            let url = "http://127.0.0.1:\(server.port)/\(rendition.playlist)"
            let json = try Tool.ffprobe(["-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", url])
            let video = try #require(json.list("streams").first { $0.string("codec_type") == "video" })
            #expect(video.int("nb_read_frames") == expectedFrames, "\(rendition.name) over HTTP")
            let play = try Tool.run("ffmpeg", ["-v", "warning", "-i", url, "-f", "null", "-"])
            #expect(play.status == 0)
            #expect(play.stderr.isEmpty, "decode warnings for \(rendition.name): \(play.stderr)")
        }
        // The master playlist too: ffmpeg opens every variant from it.
        let master = try Tool.ffprobe(["-show_entries", "stream=codec_type,width,height", "http://127.0.0.1:\(server.port)/master.m3u8"])
        #expect(master.list("streams").filter { $0.string("codec_type") == "video" }.count == 4)
    }

    @Test(.enabled(if: Tool.exists("gst-launch-1.0"), "GStreamer is not installed"), arguments: ["portrait_rotated", "app"])
    func gstreamerPlaybinPlaysTheMasterPlaylist(_ name: String) async throws {
        let output = try await Fixtures.shared.output(Self.source(name))
        let server = try Server(root: output.directory)
        let played = try GStreamerPlayback.play("http://127.0.0.1:\(server.port)/master.m3u8")
        #expect(played.ended, "playbin3 did not play the video to the end: \(played.summary)")
    }
}
