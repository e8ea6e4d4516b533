import Foundation

extension JSONEncoder {
    /// How ingestd writes JSON everywhere (files and `--json` output): pretty, keys sorted, `/`
    /// unescaped, dates in ISO 8601.
    public static var ingestd: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
