/// The one rule for what a token's next upload may be, in either store: at most the token's
/// `files` uploads (409 past them, or once the set was terminated), each file of a set named by
/// its tus `filename` (required, safe, unique in the set: 400/409), and the declared lengths
/// together within `limit` (413). A lone video file keeps a safe `filename`, else `upload`.
enum UploadSetRule {
    /// The next upload's name, or the refusal.
    static func nextName(files: Int, terminated: Bool, made: [(name: String, length: Int64)], length: Int64, limit: Int64,
                         metadata: UploadMetadata) throws(TusRefusal) -> String {
        guard !terminated, made.count < files else {
            throw TusRefusal(.conflict, "token_used", files == 1
                ? "this token already started an upload; resume it with HEAD and PATCH"
                : "this token's \(files) uploads are all created")
        }
        var name = metadata.fileName ?? "upload"
        if files > 1 {
            guard let given = metadata.fileName else {
                throw TusRefusal(.badRequest, "bad_metadata", metadata.unsafeName
                    ? "filename must be one name of 1-128 bytes: no /, no control characters, not starting with ."
                    : "an upload set needs each file's name: Upload-Metadata filename (the name upload.json uses)")
            }
            guard !made.contains(where: { $0.name == given }) else { throw TusRefusal(.conflict, "token_used", "\(given) is already being uploaded") }
            // A fleet upload keeps its unsent bytes beside its object as `<name>.tail.*`.
            guard !given.contains(".tail.") else {
                throw TusRefusal(.badRequest, "bad_metadata", "filename must not contain .tail. (kept for an upload's unsent bytes)")
            }
            name = given
        }
        let total = made.reduce(length) { $0 + $1.length }
        guard total <= limit else {
            throw TusRefusal(.contentTooLarge, "too_large", "the upload's files would hold \(total) bytes, over its limit of \(limit) bytes")
        }
        return name
    }
}
