/// Which containers an upload may be, by the demuxer libavformat detects from the bytes (never
/// by the file name).
///
/// Only demuxers that read one self-contained file are allowed: what phones, cameras and audio
/// apps write. Playlists (`hls`, `dash`), concat lists, image sequences, `tee` and every other
/// demuxer that can open a second input are refused as `unsupported_container`.
public enum ContainerPolicy {
    /// libavformat demuxer names (`AVInputFormat.name`) an upload may be read with.
    public static let allowed: Set<String> = [
        "mov,mp4,m4a,3gp,3g2,mj2",  // iPhone/Android recordings, M4A sound tracks
        "matroska,webm",
        "avi",                      // cameras (MJPEG + PCM)
        "mpegts", "mpeg",           // camcorders (AVCHD .mts, MPEG-PS .mpg/.vob)
        "dv",
        "flv",
        "ogg", "wav", "w64", "mp3", "aac", "flac", "caf", "amr",  // sound tracks
    ]

    /// What to do with a file libavformat detected as `demuxer`.
    enum Verdict: Equatable {
        case allowed
        /// A single picture or a picture sequence, not a recording.
        case stillImage
        case refused
    }

    static func verdict(forDemuxer demuxer: String) -> Verdict {
        if allowed.contains(demuxer) { return .allowed }
        if demuxer == "image2" || demuxer.hasSuffix("_pipe") { return .stillImage }
        return .refused
    }
}
