import Foundation
import Hummingbird
import Ingest

/// `GET /console/media/<id>/<path>` (behind ``ConsoleAuthentication``: any logged-in role): the
/// published files of the CDN the console was given (`--cdn`), read-only, so a job's page shows
/// its poster and plays its ladder without a public CDN URL. Confined to that root: a path is
/// at most eight plain names (letters, digits, `.`, `_`, `-`, none starting with a dot, so no
/// `..` and no deletion's or staging's hidden directory), starting with a job id and ending in a
/// media file's extension; a directory CDN's file must be a regular file whose real path is the
/// one asked for (no link anywhere on the way). Anything else is a 404. A request from another
/// site is refused as a write would be (403), and every answer is `Cross-Origin-Resource-Policy:
/// same-origin`, so no other page can embed what an operator may see.
struct ConsoleMediaRoutes {
    let source: ConsoleMediaSource

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.get("/console/media/**", use: media)
    }

    func media(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        _ = try context.requireIdentity()
        if let foreign = ConsoleWriteCheck.crossSite(request) { return .problem(.forbidden, "refused: a request from another site (\(foreign))") }
        let components = context.parameters.getCatchAll().map(String.init)
        guard let type = Self.confined(components) else { return .problem(.notFound, "not a published file under the CDN root") }
        guard let data = try await source.read(components.joined(separator: "/")) else { return .problem(.notFound, "no such file") }
        return Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The content type of a path that may be served, or nil.
    static func confined(_ components: [String]) -> String? {
        guard (2...8).contains(components.count), UploadManifest.isValidID(components[0]),
              components.allSatisfy(isPlainName), let dot = components.last!.lastIndex(of: ".") else { return nil }
        return types[String(components.last![components.last!.index(after: dot)...])]
    }

    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "."), name.utf8.count <= 128 else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")].contains(byte)
        }
    }

    static let types = [
        "m3u8": "application/vnd.apple.mpegurl", "m4s": "video/iso.segment", "mp4": "video/mp4", "m4a": "audio/mp4",
        "jpg": "image/jpeg", "webp": "image/webp", "png": "image/png", "json": "application/json", "vtt": "text/vtt; charset=utf-8",
    ]
}

/// Where ``ConsoleMediaRoutes`` reads: a directory CDN's root, or a bucket CDN's prefix through
/// its storage.
public struct ConsoleMediaSource: Sendable {
    /// The root as jobs record it (``PlaybackPlace/root``).
    public let root: String
    let storage: (any RemoteStorage)?
    /// The largest file served (a whole MP4 of the longest video fits).
    static let limit = 256 << 20

    public init(root: String, storage: (any RemoteStorage)?) {
        self.root = String(root.reversed().drop { $0 == "/" }.reversed())
        self.storage = storage
    }

    /// `relative` under the root (already confined), nil when absent.
    func read(_ relative: String) async throws -> Data? {
        if let storage { return try await storage.read("\(root)/\(relative)", limit: Self.limit) }
        let path = "\(root)/\(relative)"
        // The real path must be the path asked for: no symbolic link on the way out of the root.
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        guard let realRoot = realpath(root, nil) else { return nil }
        defer { free(realRoot) }
        guard String(cString: real) == String(cString: realRoot) + "/" + relative else { return nil }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= Self.limit else { return nil }
        return try handle.readToEnd() ?? Data()
    }
}
