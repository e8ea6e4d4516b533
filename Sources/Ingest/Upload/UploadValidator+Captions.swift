import Foundation
import Transcode

/// The caption tracks of `upload.json`: each entry checked (language, name, file), each file
/// read as a stranger's (``CaptionReader``). Every refusal is `bad_captions` and names the field.
extension UploadValidator {
    private func bad(_ field: String, _ reason: String) -> IngestError {
        .badCaptions(path: manifestPath, field: field, reason: reason)
    }

    func captions(_ manifest: UploadManifest) throws -> [CaptionSource] {
        var lists = [("captions", nil as Int?, manifest.captions ?? [])]
        for (index, clip) in manifest.clips.enumerated() { lists.append(("clips[\(index)].captions", index, clip.captions ?? [])) }
        let count = lists.map(\.2.count).reduce(0, +)
        guard count <= Admission.maxCaptionFiles else {
            throw bad("captions", "\(count) caption files, over the limit of \(Admission.maxCaptionFiles) per upload")
        }
        var sources: [CaptionSource] = [], whole: [String: String] = [:], names: [String: String] = [:]
        for (list, clip, entries) in lists {
            var seen = Set<String>()
            for (index, entry) in entries.enumerated() {
                let field = "\(list)[\(index)]"
                let source = try caption(entry, clip: clip, field: field)
                guard seen.insert(source.language).inserted else {
                    throw bad("\(field).language", "\(source.language) is given twice for \(clip == nil ? "the whole video" : "this clip")")
                }
                if let other = whole[source.language], clip != nil {
                    throw bad("\(field).language", "\(source.language) already has a track for the whole video (\(other))")
                }
                if clip == nil { whole[source.language] = field }
                if let name = names[source.language], name != source.name {
                    throw bad("\(field).name", "\"\(source.name)\": the other \(source.language) track is named \"\(name)\"")
                }
                if let (language, _) = names.first(where: { $0.key != source.language && $0.value == source.name }) {
                    throw bad("\(field).name", "\"\(source.name)\" already names the \(language) track (each language needs its own name)")
                }
                names[source.language] = source.name
                sources.append(source)
            }
        }
        guard names.count <= Admission.maxCaptionLanguages else {
            throw bad("captions", "\(names.count) languages, over the limit of \(Admission.maxCaptionLanguages)")
        }
        return sources
    }

    private func caption(_ entry: UploadManifest.Captions, clip: Int?, field: String) throws -> CaptionSource {
        guard CaptionSource.isValidLanguage(entry.language) else {
            throw bad("\(field).language", "must be \(CaptionSource.languageRule)")
        }
        if let name = entry.name, !CaptionSource.isValidName(name) {
            throw bad("\(field).name", "must be \(CaptionSource.nameRule)")
        }
        let file: SourceFile
        do {
            file = try open(entry.file, field: "\(field).file")
        } catch IngestError.badUpload(_, let field, let reason) {
            throw bad(field, reason)
        }
        do {
            return CaptionSource(language: entry.language, name: entry.name, clip: clip, track: try CaptionReader.read(file))
        } catch {
            throw bad("\(field).file", "\(entry.file): \(error.reason)")
        }
    }
}
