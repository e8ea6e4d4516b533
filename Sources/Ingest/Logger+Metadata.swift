import Logging

extension Logger {
    /// A copy of this logger with `metadata` added.
    public func with(_ metadata: Logger.Metadata) -> Logger {
        var copy = self
        for (key, value) in metadata { copy[metadataKey: key] = value }
        return copy
    }
}
