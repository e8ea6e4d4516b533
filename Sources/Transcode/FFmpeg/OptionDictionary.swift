internal import CFFmpeg

/// The options of one FFmpeg open call, as the `AVDictionary` it takes, freed once. The call
/// removes what it consumes, so ``leftover`` names the options FFmpeg ignored.
final class OptionDictionary {
    var pointer: OpaquePointer?

    init(_ options: [String: String]) {
        for (key, value) in options.sorted(by: { $0.key < $1.key }) { av_dict_set(&pointer, key, value, 0) }
    }

    deinit { av_dict_free(&pointer) }

    /// Options still present after the call (nobody consumed them).
    var leftover: [String] {
        var keys: [String] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(pointer, "", entry, AV_DICT_IGNORE_SUFFIX) {
            keys.append(String(cString: next.pointee.key))
            entry = next
        }
        return keys
    }
}
