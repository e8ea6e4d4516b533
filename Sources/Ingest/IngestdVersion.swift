/// This build's version: `ingestd --version`, and each worker's heartbeat.
public enum IngestdVersion {
    public static let current = "0.2.0"
}
