import Foundation
import Ingest
import Transcode

/// What one fuzz input goes through. Every path must end in a value or a thrown error, never a
/// trap, a hang or a read outside the input: the fuzzer reports anything else as a crash.
enum FuzzTarget: String, CaseIterable {
    /// Bytes as a media file: opened by descriptor, container allow-list, probe, plan.
    case probe
    /// Bytes as `upload.json` in a directory with a real clip and sound track: manifest
    /// validation, then probe and plan with the numbers it holds.
    case upload
    /// Bytes as a preset: decoding and validation, then a plan with its numbers.
    case preset
    /// Bytes as an app's caption file (WebVTT or SRT): read, checked and cleaned, then written;
    /// what is written must read back to the same cues.
    case caption

    func run(_ data: Data) {
        switch self {
        case .probe: Self.probe(data)
        case .upload: Self.upload(data)
        case .preset: Self.preset(data)
        case .caption: Self.caption(data)
        }
    }

    private static func caption(_ data: Data) {
        guard let track = try? CaptionReader.read(data) else { return }
        guard let again = try? CaptionReader.read(Data(track.webVTT.utf8)), again == track else {
            fatalError("a cleaned caption track does not read back as itself")
        }
    }

    private static func probe(_ data: Data) {
        var template = Array("\(FileManager.default.temporaryDirectory.path)/ingestd-fuzz-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { fatalError("mkstemp: \(errno)") }
        unlink(template)  // an anonymous file, gone when closed
        _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard let file = try? SourceFile(adopting: descriptor, path: "fuzz-input") else { return }
        FFmpegLog.setLevel(.quiet)
        guard let probe = try? MediaProbe.probe(file) else { return }
        _ = try? TranscodePlan.make(clips: [ClipSource(path: probe.path)], probes: [probe], preset: .builtIn)
    }

    /// A copy of the sample upload's media (`samples/upload`, or `INGESTD_FUZZ_SAMPLES`) without
    /// its `upload.json`, made once per process.
    nonisolated(unsafe) private static var uploadDirectory: String = {
        let samples = ProcessInfo.processInfo.environment["INGESTD_FUZZ_SAMPLES"] ?? "samples/upload"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-fuzz-upload-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: samples)) ?? [] where name != Upload.manifestName {
            try? FileManager.default.copyItem(atPath: "\(samples)/\(name)", toPath: "\(directory)/\(name)")
        }
        atexit { try? FileManager.default.removeItem(atPath: FuzzTarget.uploadDirectory) }
        return directory
    }()

    private static func upload(_ data: Data) {
        let directory = uploadDirectory
        _ = FileManager.default.createFile(atPath: "\(directory)/\(Upload.manifestName)", contents: data)
        FFmpegLog.setLevel(.quiet)
        guard let upload = try? Upload.open(directory, limits: Preset.builtIn.limits) else { return }
        _ = try? Transcoder.plan(upload.request(outputDirectory: "", preset: .builtIn))
    }

    private static func preset(_ data: Data) {
        guard let preset = try? Preset.decode(data, source: "fuzz") else { return }
        let video = VideoStreamInfo(codec: "h264", width: 1080, height: 1920, rotation: 90, frameRate: 29.97)
        let probes = [SourceProbe(path: "a.mp4", container: "mov,mp4,m4a,3gp,3g2,mj2", durationSeconds: 12.5,
                                  sizeBytes: 4_000_000, streamCount: 2, video: video,
                                  audio: AudioStreamInfo(codec: "aac", sampleRate: 44100, channels: 2)),
                      SourceProbe(path: "b.webm", container: "matroska,webm", durationSeconds: 0, sizeBytes: 10_000,
                                  streamCount: 1, video: VideoStreamInfo(codec: "vp9", width: 641, height: 359, frameRate: 60),
                                  audio: nil)]
        let clips = [ClipSource(path: "a.mp4", startSeconds: 0.5, endSeconds: 9), ClipSource(path: "b.webm")]
        guard let plan = try? TranscodePlan.make(clips: clips, probes: probes, preset: preset) else { return }
        _ = (0..<min(plan.maxFrames, 10_000)).filter(plan.startsSegment(frame:)).count
        _ = plan.samples(forFrames: plan.maxFrames)
    }
}
