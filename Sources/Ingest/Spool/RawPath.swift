import Foundation

/// A path as bytes (NUL-terminated), so that names which are not UTF-8 survive every call.
struct RawPath {
    let bytes: [CChar]

    init(_ directory: String, _ raw: [UInt8]) {
        bytes = (Array(directory.utf8) + [UInt8(ascii: "/")] + raw + [0]).map { CChar(bitPattern: $0) }
    }

    init(bytes: [CChar]) { self.bytes = bytes }

    func appending(_ raw: [UInt8]) -> RawPath {
        RawPath(bytes: bytes.dropLast() + ([UInt8(ascii: "/")] + raw + [0]).map { CChar(bitPattern: $0) })
    }

    func lstat() -> stat? {
        var info = stat()
        return Glibc.lstat(bytes, &info) == 0 ? info : nil
    }

    /// The raw names in `directory` (without `.` and `..`).
    static func entries(of directory: String) -> [[UInt8]] {
        guard let listing = opendir(directory) else { return [] }
        defer { closedir(listing) }
        var names: [[UInt8]] = []
        while let entry = readdir(listing) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if raw != [0x2e], raw != [0x2e, 0x2e] { names.append(raw) }
        }
        return names
    }
}
