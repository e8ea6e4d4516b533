import Foundation
import Ingest
import ObjectStorage
import Transcode

/// Copies a growing output directory (its job process writes it in place) into its version
/// prefix while it grows, so a reader of the bucket sees only what a reader of the directory
/// could: a segment or init section is sent once a media playlist names it (whole by then: the
/// job process renames it into place first), and a playlist only after everything it names.
/// Growing playlists and the master are sent `no-cache`; segments are immutable from the start.
/// The job process decodes hostile input: only the directory's own regular files are sent,
/// whatever its playlists name. One sync at a time, in the order asked: an older snapshot of a
/// playlist never lands after a newer one.
actor BucketMirror: RemoteMirror {
    private let client: S3Client
    private let directory: String
    private let version: S3Location
    /// Asked before each object: once it says no (the attempt lost its lease), nothing more is
    /// sent and ``IngestError/cancelled`` is thrown.
    private let stillWanted: @Sendable () -> Bool
    /// Media objects sent (paths below `directory`).
    private var sent: Set<String> = []
    /// Each playlist's text as last sent.
    private var playlists: [String: Data] = [:]
    private var bytes: Int64 = 0
    /// The sync under way (or the last one): each waits for the one before it.
    private var tail: Task<Void, Never>?

    init(client: S3Client, directory: String, version: S3Location, while stillWanted: @escaping @Sendable () -> Bool) {
        self.client = client
        self.directory = directory
        self.version = version
        self.stillWanted = stillWanted
    }

    func sync(master: Bool) async throws {
        try await serially { try await self.sendNew(master: master) }
    }

    func finish() async throws -> (objects: Int, bytes: Int64) {
        try await serially { try await self.sendRest() }
        return (try BucketPublisher.files(in: directory).count, bytes)
    }

    /// Runs `body` once every sync asked before it has ended (an actor alone would interleave
    /// them at each upload).
    private func serially(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let previous = tail
        let task = Task {
            await previous?.value
            try await body()
        }
        tail = Task { _ = try? await task.value }
        try await task.value
    }

    private func sendNew(master: Bool) async throws {
        // The playlists are read first and the files listed after: whatever a playlist names was
        // renamed into place before it was written, so it is listed, whole.
        let snapshot = try BucketPublisher.files(in: directory).map(\.relative).filter { $0.contains("/") && $0.hasSuffix(".m3u8") }
            .compactMap { relative in (try? DurableFile.read("\(directory)/\(relative)", limit: 1 << 20)).map { (relative, $0) } }
        let files = Dictionary(try BucketPublisher.files(in: directory).map { ($0.relative, $0.size) }) { first, _ in first }
        var ready: [(String, Data)] = [], named = Set<String>()
        for (relative, text) in snapshot {
            let names = Self.names(in: text, of: relative)
            guard names.allSatisfy({ files[$0] != nil }) else { continue }  // names what is not its own: never sent
            ready.append((relative, text))
            named.formUnion(names)
        }
        try await send(named.subtracting(sent).sorted(), files: files, cacheControl: ObjectHeaders.immutable)
        for (relative, text) in ready where playlists[relative] != text {
            try await put(text, relative, cacheControl: ObjectHeaders.growing)
            playlists[relative] = text
        }
        if master { try await put(try DurableFile.read("\(directory)/master.m3u8", limit: 1 << 20), "master.m3u8", cacheControl: ObjectHeaders.growing) }
    }

    private func sendRest() async throws {
        let all = try BucketPublisher.files(in: directory)
        let files = Dictionary(all.map { ($0.relative, $0.size) }) { first, _ in first }
        let rest = all.map(\.relative).filter { !sent.contains($0) && !BucketPublisher.lastNames.contains($0) }
        // Media and images first, then the playlists that name them (ended: never changed again),
        // then the master and the manifest, in that order.
        try await send(rest.filter { !$0.hasSuffix(".m3u8") }, files: files, cacheControl: nil)
        try await send(rest.filter { $0.hasSuffix(".m3u8") }, files: files, cacheControl: ObjectHeaders.immutable)
        for name in BucketPublisher.lastNames where files[name] != nil { try await send([name], files: files, cacheControl: nil) }
    }

    /// Uploads `relatives` (with their own headers, or `cacheControl`), eight at a time.
    private func send(_ relatives: [String], files: [String: Int64], cacheControl: String?) async throws {
        let (client, directory, version, stillWanted) = (client, directory, version, stillWanted)
        let sizes = try await concurrentMap(relatives, atMost: 8) { relative in
            guard stillWanted() else { throw IngestError.cancelled }
            let headers = ObjectHeaders(name: relative)
            try await client.upload(file: "\(directory)/\(relative)", to: version.appending(relative), contentType: headers.contentType,
                                    cacheControl: cacheControl ?? headers.cacheControl)
            return files[relative] ?? 0
        }
        sent.formUnion(relatives)
        bytes += sizes.reduce(0, +)
    }

    private func put(_ data: Data, _ relative: String, cacheControl: String) async throws {
        guard stillWanted() else { throw IngestError.cancelled }
        try await client.upload(data, to: version.appending(relative), contentType: ObjectHeaders(name: relative).contentType,
                                cacheControl: cacheControl)
        bytes += Int64(data.count)
    }

    /// The files a playlist at `path` names (its URI lines and `URI="…"` attributes), as paths
    /// below the directory; names that would leave it are dropped.
    static func names(in playlist: Data, of path: String) -> [String] {
        let base = (path as NSString).deletingLastPathComponent
        return String(decoding: playlist, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
            if !line.hasPrefix("#") { return String(line) }
            guard let start = line.range(of: "URI=\"") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }.compactMap { uri in
            let parts = uri.split(separator: "/", omittingEmptySubsequences: false)
            guard !uri.isEmpty, !uri.contains(":"), !uri.hasPrefix("/"), !parts.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) else { return nil }
            return base.isEmpty ? uri : "\(base)/\(uri)"
        }
    }
}
