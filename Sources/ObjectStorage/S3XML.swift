import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The few values read from S3's XML answers: every element's text by name, in document order
/// (`Key`, `Size`, `UploadId`, `Code`, `Message`, `NextContinuationToken`, …), grouped by the
/// element that contains them when asked (`Contents`, `Upload`).
struct S3XML {
    /// Per `group` element (or one group for the whole document), the text of each leaf element.
    static func records(_ data: Data, group: String? = nil) -> [[String: String]] {
        let reader = Reader(group: group)
        let parser = XMLParser(data: data)
        parser.delegate = reader
        parser.shouldResolveExternalEntities = false
        _ = parser.parse()
        return group == nil ? [reader.current] : reader.records
    }

    static func value(_ name: String, in data: Data) -> String? { records(data).first?[name] }

    private final class Reader: NSObject, XMLParserDelegate {
        let group: String?
        var records: [[String: String]] = []
        var current: [String: String] = [:]
        var text = ""

        init(group: String?) { self.group = group }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if name == group { current = [:] }
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == group {
                records.append(current)
                current = [:]
            } else if current[name] == nil {
                current[name] = text
            }
            text = ""
        }
    }
}
