import Foundation

/// JSON decoding that rejects fields the schema does not know, and explains errors by path.
public enum StrictJSON {
    public struct UnknownField: Error { public var path: String }

    public static func decode<T: Decodable & Encodable>(_ type: T.Type, from data: Data) throws -> T {
        let value = try JSONDecoder().decode(T.self, from: data)
        // Round-trip: any key present in the input but absent from the re-encoded value is unknown.
        let known = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        let given = try JSONSerialization.jsonObject(with: data)
        if let path = firstUnknown(given: given, known: known, path: "") { throw UnknownField(path: path) }
        return value
    }

    private static func firstUnknown(given: Any, known: Any, path: String) -> String? {
        if let given = given as? [String: Any], let known = known as? [String: Any] {
            for key in given.keys.sorted() {
                let child = path.isEmpty ? key : "\(path).\(key)"
                guard let knownChild = known[key] else { return child }
                if let found = firstUnknown(given: given[key]!, known: knownChild, path: child) { return found }
            }
        } else if let given = given as? [Any], let known = known as? [Any] {
            for (index, (g, k)) in zip(given, known).enumerated() {
                if let found = firstUnknown(given: g, known: k, path: "\(path)[\(index)]") { return found }
            }
        }
        return nil
    }

    public static func explain(_ error: DecodingError) -> (field: String, reason: String) {
        func render(_ path: [CodingKey]) -> String {
            path.reduce("") { partial, key in
                if let index = key.intValue { return "\(partial)[\(index)]" }
                return partial.isEmpty ? key.stringValue : "\(partial).\(key.stringValue)"
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return (render(context.codingPath + [key]), "required field is missing")
        case .typeMismatch(let type, let context):
            return (render(context.codingPath), "expected \(type)")
        case .valueNotFound(let type, let context):
            return (render(context.codingPath), "expected \(type), found null")
        case .dataCorrupted(let context):
            let field = render(context.codingPath)
            return (field.isEmpty ? "(document)" : field, "not valid JSON: \(context.debugDescription)")
        @unknown default:
            return ("(document)", "\(error)")
        }
    }
}
