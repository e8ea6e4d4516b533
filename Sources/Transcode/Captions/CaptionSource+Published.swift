import Foundation

extension CaptionSource {
    /// The caption tracks the published version at `directory` plays, each read from its whole
    /// track as an upload's is (nothing trusted by name: only tracks named as ingestd names them),
    /// as tracks for the whole video: what a re-encode of the same upload keeps.
    public static func published(in directory: String) throws -> [CaptionSource] {
        try (ReadyManifest(published: directory).captions ?? []).map { caption in
            let path = "\(directory)/\(caption.track)"
            guard OutputLayout.captionFiles(caption) != nil, isValidLanguage(caption.language), isValidName(caption.name),
                  let text = try PublishedLadder.regularFile(path).contents() else {
                throw TranscodeError.publishedMismatch(path: path, detail: "a caption track named as ingestd names none")
            }
            do {
                return CaptionSource(language: caption.language, name: caption.name, track: try CaptionReader.read(text), origin: caption.source)
            } catch let refusal as CaptionTrack.Refusal {
                throw TranscodeError.publishedMismatch(path: path, detail: refusal.reason)
            }
        }
    }
}
