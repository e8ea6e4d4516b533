import Foundation

/// Deletion in a directory CDN: `CDN/<id>/` (every version, pointer and ledger) and the
/// stagings of its attempts beside it. `CDN/<id>` is first renamed aside (`.<id>.deleting-…`),
/// so the whole video disappears at once for new requests, then removed.
extension StagedDirectoryTarget {
    /// The names beside `CDN/<id>` that belong to the video: stagings and an aside copy being removed.
    func leftoverNames(of id: String) -> [String] {
        let staging = StagedDirectory.stagingPrefix(of: id)
        return ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .filter { $0.hasPrefix(staging) || $0.hasPrefix(Self.deletingPrefix(of: id)) }.sorted()
    }

    /// Names `CDN/<id>` is renamed to before it is removed (one per pass: a pass cut short
    /// leaves its own, and a writer may have made `CDN/<id>` again meanwhile).
    static func deletingPrefix(of id: String) -> String { ".\(id).deleting-" }

    public func contents(of id: String) async throws -> [String] {
        var paths: [String] = []
        for name in [id] + leftoverNames(of: id) {
            let base = "\(root)/\(name)"
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: base, isDirectory: &isDirectory) else { continue }
            // Paths as the CDN served them: an aside copy's under `<id>/`.
            let served = name.hasPrefix(Self.deletingPrefix(of: id)) ? id : name
            guard isDirectory.boolValue else {
                paths.append(served)
                continue
            }
            for case let relative as String in FileManager.default.enumerator(atPath: base) ?? FileManager.DirectoryEnumerator() {
                var info = stat()
                if lstat("\(base)/\(relative)", &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { paths.append("\(served)/\(relative)") }
            }
        }
        return paths.sorted()
    }

    public func remove(_ id: String) async throws {
        let aside = "\(root)/\(Self.deletingPrefix(of: id))\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        if rename(directory(id), aside) != 0, errno != ENOENT {
            throw IngestError.cannotWrite(path: directory(id), reason: String(cString: strerror(errno)))
        }
        try Durability.syncDirectory(root)
        for name in leftoverNames(of: id) {
            do {
                try FileManager.default.removeItem(atPath: "\(root)/\(name)")
            } catch where FileManager.default.fileExists(atPath: "\(root)/\(name)") {
                throw IngestError.cannotWrite(path: "\(root)/\(name)", reason: "\(error)")
            }
        }
    }
}

extension GrowingDirectoryTarget {
    public func contents(of id: String) async throws -> [String] { try await staged.contents(of: id) }
    public func remove(_ id: String) async throws { try await staged.remove(id) }
}
