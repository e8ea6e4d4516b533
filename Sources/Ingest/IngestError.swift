import Transcode

/// Failures of the ingest layer itself (as opposed to the media engine's ``TranscodeError``).
public enum IngestError: Error, Sendable, Equatable, CustomStringConvertible {
    case outputExists(path: String)
    case cannotWrite(path: String, reason: String)
    /// A file of the worker's own (a spool record) that exists but cannot be read now.
    case cannotRead(path: String, reason: String)
    case inputMissing(path: String)
    /// `upload.json` is invalid; `field` is the JSON path of the offending value.
    case badUpload(path: String, field: String, reason: String)
    /// A caption track the upload names is refused (``CaptionReader``), or its entry is.
    case badCaptions(path: String, field: String, reason: String)
    case cancelled

    /// A stable machine code for JSON output.
    public var code: String {
        switch self {
        case .outputExists: "output_exists"
        case .cannotWrite(_, let reason) where TranscodeError.isOutOfSpace(reason): "no_space"
        case .cannotWrite: "output_failed"
        case .cannotRead: "read_failed"
        case .inputMissing: "input_missing"
        case .badUpload: "bad_upload"
        case .badCaptions: "bad_captions"
        case .cancelled: "cancelled"
        }
    }

    public var description: String {
        switch self {
        case .outputExists(let path): "\(path): output directory exists and is not empty"
        case .cannotWrite(let path, let reason): "\(path): cannot write: \(reason)"
        case .cannotRead(let path, let reason): "\(path): cannot read: \(reason)"
        case .inputMissing(let path): "\(path): no such \(path.hasPrefix("s3://") ? "object" : "file")"
        case .badUpload(let path, let field, let reason), .badCaptions(let path, let field, let reason):
            "\(path): field '\(field)': \(reason)"
        case .cancelled: "cancelled"
        }
    }
}

extension IngestError {
    /// The machine code of any error the ingest path reports (`internal` for the unexpected).
    public static func code(of error: Error) -> String {
        (error as? TranscodeError)?.code ?? (error as? IngestError)?.code ?? "internal"
    }
}

/// Process exit statuses, following sysexits(3) so scripts can tell who must act.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    /// A job failed (batch commands: at least one item failed).
    case failure = 1
    case usage = 64
    /// The input is not acceptable media (corrupt, no video, over a limit, unsupported).
    case badInput = 65
    case inputMissing = 66
    /// A service the command needs (the job queue's database) cannot be reached.
    case unavailable = 69
    case internalError = 70
    /// The output could not be created or written.
    case cannotWrite = 73
    /// A file system is full or over quota (`no_space`): nothing wrong with the job; try again
    /// once space is freed (EX_TEMPFAIL).
    case noSpace = 75
    /// The preset, or another configuration file such as the webhook secret, is invalid (EX_CONFIG).
    case badPreset = 78
    case interrupted = 130

    /// The status an error maps to.
    public init(for error: Error) {
        if IngestError.code(of: error) == "no_space" {
            self = .noSpace
            return
        }
        switch error {
        case let error as TranscodeError:
            switch error.category {
            case .badInput: self = .badInput
            case .badPreset: self = .badPreset
            case .output: self = .cannotWrite
            case .cancelled: self = .interrupted
            case .internal: self = .internalError
            }
        case let error as IngestError:
            switch error {
            case .outputExists, .cannotWrite: self = .cannotWrite
            case .inputMissing: self = .inputMissing
            case .cannotRead: self = .internalError
            case .badUpload, .badCaptions: self = .badInput
            case .cancelled: self = .interrupted
            }
        default: self = .internalError
        }
    }
}
