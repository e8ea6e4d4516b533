import ArgumentParser
import Foundation
import Ingest
import Logging
import ObjectStorage
import Storage
import Transcode

struct TranscodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcode",
        abstract: "Transcode a video file, or join an upload's clips and sound track, into an HLS ladder, an MP4 and thumbnails.",
        discussion: """
        INPUT is a video file, or an upload directory: clip files, an optional sound track and an \
        upload.json naming them in order (with trims, the track's offset, replace or mix, gains, \
        loop) — see docs/UPLOADS.md. Clips are joined in one pass, each normalised on the way in \
        (upright, 30 fps, SDR, fitted into the first clip's frame, 48 kHz stereo); the output \
        duration is the sum of the trimmed clips.

        OUT is created atomically: files are written to a hidden staging directory beside it and \
        renamed into place when everything is done, so OUT never holds a partial result. OUT must \
        not exist (or be empty).

        Output layout:
          master.m3u8          multivariant playlist (measured BANDWIDTH)
          234p/ 360p/ 720p/ 1080p/
                               media playlists, fMP4 init.mp4 + seg_NNN.m4s
          video.mp4            H.264/AAC MP4, faststart (the top rung's encode)
          poster_WxH.jpg       posters in three sizes
          preview.webp         animated loop of the liveliest 3 s (a few hundred KB at most)
          storyboard.jpg/.vtt  scrubbing sprite and its WebVTT map
          manifest.json        the ready record (also printed with --json)

        INPUT and OUT may be in a bucket (s3://bucket/key, an upload directory as s3://bucket/prefix/; \
        credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, see docs/STORAGE.md). An s3:// OUT \
        is published as OUT/<version>/… and made visible by creating OUT/current.json last.

        Examples:
          ingestd transcode samples/portrait_rotated.mp4 --out out/portrait
          ingestd transcode samples/upload --out out/merged
          ingestd transcode clip.mov --out /srv/cdn/abc123 --json \\
            --preset Presets/default.json
          ingestd transcode s3://uploads/abc123.mp4 --out s3://media/abc123 \\
            --s3-endpoint http://127.0.0.1:8333
        """
    )

    @Argument(help: "The video file or upload directory (with upload.json) to transcode; or s3://bucket/key.")
    var input: String

    @Option(name: .long, help: ArgumentHelp("Output directory to create, or s3://bucket/prefix.", valueName: "dir"))
    var out: String

    @OptionGroup var storage: StorageOption

    @OptionGroup var presetOption: PresetOption

    @Flag(name: .long, help: "Print the ready manifest as JSON on stdout; errors as JSON on stdout too.")
    var json = false

    @Flag(name: .long, help: "Never draw the progress line, even on a terminal.")
    var noProgress = false

    func run() async throws {
        let logger = Log.make(label: "ingestd.transcode")
        let preset: Preset
        do {
            preset = try presetOption.load()
        } catch {
            throw Report.fail(error, json: json)
        }
        let (events, continuation) = AsyncStream.makeStream(of: TranscodeEvent.self, bufferingPolicy: .bufferingNewest(16))
        let display = ProgressDisplay(enabled: !noProgress && isatty(STDERR_FILENO) == 1)
        let job = TranscodeJob(input: input, destination: out, preset: preset)
        let client = S3Location.isURL(input) || S3Location.isURL(out) ? try storage.client(json: json) : nil
        let work = Task {
            guard let client else { return (try await job.run(logger: logger, events: continuation), out) }
            return try await job.run(storage: client, logger: logger, events: continuation)
        }
        let signals = SignalTrap(cancelling: work)
        for await event in events { display.show(event) }
        display.clear()
        do {
            let (manifest, published) = try await work.value
            signals.disarm()
            if json {
                FileHandle.standardOutput.write(manifest.jsonData())
                FileHandle.standardOutput.write(Data("\n".utf8))
            } else {
                Report.summary(manifest, out: published)
            }
        } catch {
            signals.disarm()
            throw Report.fail(error, json: json)
        }
    }
}
