import ArgumentParser
import Ingest

@main
struct Ingestd: AsyncParsableCommand {
    /// A job process confines itself here, on the main thread before any other thread exists
    /// (Landlock confines the calling thread and the threads it creates later).
    static func main() async {
        JobRunCommand.confineFirst(CommandLine.arguments)
        await main(nil)
    }

    static let configuration = CommandConfiguration(
        commandName: "ingestd",
        abstract: "Turns uploaded phone videos into HLS ladders, an MP4 and thumbnails, in-process with FFmpeg's libraries.",
        discussion: """
        An upload is one video file, or a directory of recorded clips plus a sound track described \
        by upload.json (see docs/UPLOADS.md); clips are joined in sync on the way in. Every source is \
        decoded once; every rung of the ladder (234p to 1080p), the progressive MP4, posters and storyboard \
        all come from that one pass.

        Start with `ingestd help transcode` (one upload from the shell), `ingestd help watch` (the \
        spool daemon), `ingestd help reprocess` (re-encode an archive with a new preset) or \
        `ingestd help worker` (a fleet of workers on one PostgreSQL job queue, fed by `submit`). \
        Inputs and outputs may be in an S3 bucket (s3://bucket/key; docs/STORAGE.md). Phones can \
        upload straight to `ingestd serve` (tus, resumable) with URLs from `ingestd upload-url`.

        EXIT STATUS
          0   success
          64  usage error (bad flags or arguments)
          65  the input is not acceptable: corrupt media, no video stream, unsupported,
              over a limit, an upload.json mistake (the message names the field)
          66  the input file (or object) does not exist, or storage refused to read it
          69  the job queue's database or object storage cannot be reached
          70  internal error (a bug: please report it with the log)
          73  the output could not be written (exists, permissions, a bucket refused it)
          75  a file system is full or over quota: run it again once space is freed
          78  configuration: the preset is invalid (the message names the field), a
              configured root is missing, a secret file others can read,
              s3:// without credentials
          130 interrupted (SIGINT/SIGTERM); nothing was published
        """,
        version: IngestdVersion.current,
        subcommands: [TranscodeCommand.self, WatchCommand.self, SubmitCommand.self, WorkerCommand.self, StatusCommand.self, RetryCommand.self, DeleteCommand.self, PlaybackCommand.self, CaptionsCommand.self, PlaybackURLCommand.self, ConsoleCommand.self,
                      ReprocessCommand.self, ProbeCommand.self, PresetCommand.self, URLCommand.self, SweepCommand.self, ServeCommand.self, UploadURLCommand.self, DatabaseCommand.self, JobRunCommand.self, SandboxCheckCommand.self, QueueBenchCommand.self]
    )
}
