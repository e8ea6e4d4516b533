import Foundation

/// The free space a host keeps on its CDN's file system (and its scratch's, when that is
/// another one) before it claims a job: `--min-free`, as Postfix's `queue_minfree`.
///
/// A size (`2G`, `500M`, `0`) or a share of the volume (`5%`). The default, ``standard``, is 1 %
/// of the volume and at most 1 GiB: a production volume stops taking jobs while a gigabyte is
/// still free, a small one (a 64 MB tmpfs) keeps working.
public enum FreeSpaceFloor: Sendable, Equatable, CustomStringConvertible {
    case bytes(Int64)
    /// `percent` of the volume's size, at most `cap` bytes.
    case share(percent: Double, cap: Int64?)

    public static let standard = FreeSpaceFloor.share(percent: 1, cap: 1 << 30)

    /// `auto` (``standard``), `N%`, or a size: bytes, or with K, M, G, T.
    public init?(_ text: String) {
        let trimmed = text.uppercased().trimmingCharacters(in: .whitespaces)
        if trimmed == "AUTO" {
            self = .standard
        } else if trimmed.hasSuffix("%") {
            guard let percent = Double(trimmed.dropLast()), percent.isFinite, (0...100).contains(percent) else { return nil }
            self = .share(percent: percent, cap: nil)
        } else {
            let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
            guard let last = trimmed.last else { return nil }
            let scale = units[last] ?? 1
            guard let number = Double(units[last] == nil ? trimmed : String(trimmed.dropLast())), number.isFinite, number >= 0,
                  number * Double(scale) < 9e18 else { return nil }
            self = .bytes(Int64(number * Double(scale)))
        }
    }

    /// The floor in bytes on a volume of `volume` bytes.
    public func bytes(ofVolume volume: Int64) -> Int64 {
        switch self {
        case .bytes(let bytes): bytes
        case .share(let percent, let cap): min(Int64(Double(volume) * percent / 100), cap ?? .max)
        }
    }

    public var description: String {
        switch self {
        case .bytes(let bytes): "\(bytes) bytes"
        case .share(let percent, nil): "\(percent.formatted())% of the volume"
        case .share(let percent, let cap?): "\(percent.formatted())% of the volume, at most \(cap) bytes"
        }
    }
}
