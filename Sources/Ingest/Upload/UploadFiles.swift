import Foundation
import Transcode

/// An upload directory opened by descriptor: every file it names is opened relative to it, one
/// path component at a time, never following a symbolic link, so nothing outside it is reached
/// and what is validated is what gets decoded.
final class UploadDirectory: Sendable {
    let path: String
    private let descriptor: Int32

    /// Adopts an open directory descriptor.
    init(adopting descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    enum OpenFailure: Error {
        case missing, symbolicLink, notADirectory, notARegularFile, other(String)
    }

    /// Opens `name` (relative, components separated by `/`, no `.` or `..`) for reading.
    func openFile(_ name: String) throws(OpenFailure) -> SourceFile {
        let components = name.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var current = descriptor
        defer { if current != descriptor { close(current) } }
        for (index, component) in components.enumerated() {
            let last = index == components.count - 1
            let flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY)
            let next = openat(current, component, flags)
            guard next >= 0 else {
                switch errno {
                case ENOENT: throw .missing
                case ELOOP: throw .symbolicLink
                case ENOTDIR: throw .notADirectory
                case let code: throw .other(String(cString: strerror(code)))
                }
            }
            if current != descriptor { close(current) }
            current = next
        }
        guard current != descriptor else { throw .missing }
        let opened = current
        current = descriptor  // handed to SourceFile, which closes it
        do {
            return try SourceFile(adopting: opened, path: "\(path)/\(name)")
        } catch {
            throw .notARegularFile
        }
    }

    /// Reads `name` (a regular file, not a link) whole, refusing more than `limit` bytes.
    func read(_ name: String, limit: Int) throws(OpenFailure) -> Data {
        let file = try openFile(name)
        guard file.size <= Int64(limit) else { throw .other("\(file.size) bytes is larger than the \(limit)-byte limit") }
        guard let data = file.contents() else { throw .other("unreadable") }
        return data
    }
}

/// Opens what an upload path names: the entry itself is never a symbolic link, a FIFO or a device.
enum UploadEntry {
    case file(SourceFile)
    case directory(UploadDirectory)

    /// Opens `path` as given (its last component is not followed if it is a link).
    static func open(_ path: String) throws -> UploadEntry {
        try adopt(Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), path: path)
    }

    /// Opens the one entry of `holder`, a directory that holds exactly one upload (the spool's
    /// `work/<id>/upload/`), by its raw name, whatever bytes that name has.
    static func openSole(in holder: String) throws -> UploadEntry {
        let directory = Glibc.open(holder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else { throw IngestError.inputMissing(path: holder) }
        defer { close(directory) }
        guard let listing = fdopendir(dup(directory)) else { throw IngestError.inputMissing(path: holder) }
        var names: [[UInt8]] = []
        while let entry = readdir(listing) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if raw != [0x2e], raw != [0x2e, 0x2e] { names.append(raw) }
        }
        closedir(listing)
        guard names.count == 1, let raw = names.first else { throw IngestError.inputMissing(path: holder) }
        let display = "\(holder)/\(String(decoding: raw, as: UTF8.self))"
        let descriptor = (raw + [0]).withUnsafeBufferPointer { name in
            name.withMemoryRebound(to: CChar.self) { openat(directory, $0.baseAddress!, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        }
        return try adopt(descriptor, path: display)
    }

    private static func adopt(_ descriptor: Int32, path: String) throws -> UploadEntry {
        guard descriptor >= 0 else {
            if errno == ENOENT { throw IngestError.inputMissing(path: path) }
            throw TranscodeError.cannotOpen(path: path, reason: SourceFile.openFailure(errno))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            throw IngestError.inputMissing(path: path)
        }
        if info.st_mode & S_IFMT == S_IFDIR { return .directory(UploadDirectory(adopting: descriptor, path: path)) }
        return .file(try SourceFile(adopting: descriptor, path: path))
    }
}
