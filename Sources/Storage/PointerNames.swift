import Foundation
import Logging
import ObjectStorage

/// The single host's ``VersionNames``: each id's `current.json` (`watch --cdn`, `reprocess
/// --cdn`). A version stays while the pointer names it, and for the grace period after the
/// pointer was switched away from it (a player may still hold its master). An id with no pointer
/// names none of its versions (attempts that never got one); every version of an id whose
/// pointer exists but cannot be read or parsed stays, with a warning. Versions with not one
/// pointer among them are refused (``NoPointers``): a fleet's CDN, swept without its database.
public struct PointerNames: VersionNames {
    public let client: S3Client
    public let logger: Logger

    public init(client: S3Client, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// What an id's `current.json` says.
    enum Pointer {
        case absent
        case unreadable
        case names(String, since: Date)
    }

    public func keeper(of ids: Set<String>, under root: S3Location, cutoff: Date) async throws -> (String, VersionName) -> Bool {
        let pointers = try await concurrentMap(Array(ids), atMost: 8) { [client, logger] id in
            let output = root.appending(id)
            do {
                guard let (pointer, _) = try await BucketPublisher(client: client).pointer(output) else { return (id, Pointer.absent) }
                return (id, .names(pointer.version, since: pointer.publishedAt))
            } catch {
                logger.warning("cannot read the pointer; every version of this id is kept",
                               metadata: ["pointer": "\(output.appending(BucketPublisher.pointerName))", "error": "\(error)"])
                return (id, .unreadable)
            }
        }
        guard ids.isEmpty || pointers.contains(where: { if case .absent = $0.1 { false } else { true } }) else {
            throw NoPointers(cdn: root.description)
        }
        let pointer = Dictionary(uniqueKeysWithValues: pointers)
        return { id, version in
            switch pointer[id] ?? .absent {
            case .absent: false
            case .unreadable: true
            case .names(let named, let since): named == version.name || since >= cutoff
            }
        }
    }
}

/// A sweep without a database found versions and not one `current.json` beside them: most likely
/// a fleet's CDN (its rows are the pointers), where every published version would go.
public struct NoPointers: Error, CustomStringConvertible {
    public var cdn: String
    public var description: String {
        "\(cdn): versions but no current.json; a fleet's CDN is swept with --database (nothing deleted)"
    }
}
