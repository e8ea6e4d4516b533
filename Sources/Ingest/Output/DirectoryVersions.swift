import Foundation
import Transcode

/// A directory CDN's versions by preset, for reprocess (``StagedDirectoryTarget``): new
/// versions of `CDN/<id>/` published without breaking players that hold the old one.
///
/// Each version lives in `CDN/<id>/v<presetHash>/`. `CDN/<id>/master.m3u8` and `manifest.json`
/// point into the current version and are replaced by rename, so a new player gets the new
/// version while one that loaded the old master keeps fetching the old files. Files no longer
/// referenced are listed in `CDN/<id>/.retired.json` and deleted once the grace period is over.
struct DirectoryVersions: Sendable {
    let cdn: String
    let graceSeconds: Double

    init(cdn: String, graceSeconds: Double) {
        self.cdn = URL(fileURLWithPath: cdn).standardizedFileURL.path
        self.graceSeconds = graceSeconds
    }

    static func versionName(presetHash: String) -> String { "v\(presetHash)" }

    func directory(_ id: String) -> String { "\(cdn)/\(id)" }

    /// The preset hash `CDN/<id>/` is currently published with, if any.
    func currentPresetHash(_ id: String) -> String? {
        JSONFile.read(ReadyManifest.self, from: "\(directory(id))/manifest.json")?.preset.hash
    }

    /// The version directory `CDN/<id>/` is published from now (`v<presetHash>`), if complete.
    func currentVersion(_ id: String) -> String? {
        guard let hash = currentPresetHash(id), hash.allSatisfy({ $0.isHexDigit }) else { return nil }
        let version = Self.versionName(presetHash: hash)
        return versionIsComplete(id, version: version) ? version : nil
    }

    /// The directory of the version players get now: the one `CDN/<id>/master.m3u8` points to,
    /// or `CDN/<id>` itself (a `--hold` video); nil when there is no complete one.
    func playingVersion(_ id: String) -> String? {
        guard let master = try? DurableFile.read("\(directory(id))/master.m3u8", limit: 1 << 20) else { return nil }
        if let version = VersionPointer.version(ofMaster: String(decoding: master, as: UTF8.self)),
           versionIsComplete(id, version: version) { return "\(directory(id))/\(version)" }
        return FileManager.default.fileExists(atPath: "\(directory(id))/manifest.json") ? directory(id) : nil
    }

    /// True when the version directory is complete (a previous run published it but was
    /// interrupted before switching).
    func versionIsComplete(_ id: String, version: String) -> Bool {
        FileManager.default.fileExists(atPath: "\(directory(id))/\(version)/manifest.json")
    }

    /// Removes staging left by killed job processes for `id`.
    func removeStaging(_ id: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory(id))) ?? []
        for name in names where name.hasPrefix(".") && name.contains(".staging-") {
            try? FileManager.default.removeItem(atPath: "\(directory(id))/\(name)")
        }
    }

    /// Makes `version` current: rewrites master.m3u8 and manifest.json to point into it (each by
    /// rename; the manifest last, since it records the preset hash), then retires the rest.
    func activate(_ id: String, version: String) throws {
        let root = directory(id)
        try VersionPointer.point(root, version: version)
        try retireEverything(in: root, except: [version, "master.m3u8", "manifest.json"])
    }

    struct Retired: Codable {
        var entries: [String: Date]
    }

    /// Records every other visible entry as retired now (keeping earlier retirement times).
    private func retireEverything(in root: String, except keep: Set<String>) throws {
        let ledger = "\(root)/.retired.json"
        var retired = JSONFile.read(Retired.self, from: ledger) ?? Retired(entries: [:])
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for name in names where !name.hasPrefix(".") && !keep.contains(name) && retired.entries[name] == nil {
            retired.entries[name] = Date()
        }
        for name in keep { retired.entries[name] = nil }
        try JSONFile.write(retired, to: ledger)
    }

    /// Deletes retired entries whose grace period is over; returns how many were removed.
    @discardableResult
    func collectGarbage(_ id: String, now: Date = Date()) -> Int {
        let root = directory(id)
        let ledger = "\(root)/.retired.json"
        guard var retired = JSONFile.read(Retired.self, from: ledger) else { return 0 }
        var removed = 0
        for (name, at) in retired.entries where now.timeIntervalSince(at) >= graceSeconds {
            try? FileManager.default.removeItem(atPath: "\(root)/\(name)")
            retired.entries[name] = nil
            removed += 1
        }
        try? JSONFile.write(retired, to: ledger)
        return removed
    }
}
