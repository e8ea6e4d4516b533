import Foundation

extension JSONEncoder {
    /// How ingestd writes JSON everywhere (files and `--json` output): pretty, keys sorted, `/`
    /// unescaped, dates in ISO 8601 with milliseconds (``IngestdDate``).
    public static var ingestd: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(IngestdDate.string(from: date))
        }
        return encoder
    }
}

extension JSONDecoder {
    /// How ingestd reads its own JSON: dates in ISO 8601, with or without fractional seconds.
    public static var ingestd: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = IngestdDate.date(from: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date: \(text)"))
            }
            return date
        }
        return decoder
    }
}

/// Dates as ingestd writes them: ISO 8601 in UTC with milliseconds (`2026-11-27T04:35:12.345Z`),
/// so the stages of a job measured in different processes keep their order.
public enum IngestdDate {
    public static func string(from date: Date) -> String { formatter(fractional: true).string(from: date) }

    /// Reads a date with or without fractional seconds.
    public static func date(from text: String) -> Date? {
        formatter(fractional: true).date(from: text) ?? formatter(fractional: false).date(from: text)
    }

    private static func formatter(fractional: Bool) -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = fractional ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter
    }
}
