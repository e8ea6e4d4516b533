import Foundation

/// Publishes an upload's caption tracks beside the ladder it is made with: one subtitles
/// playlist and segments per language, and the track whole. A clip's cues are placed once the
/// pipeline knows where the clip landed (``clipBegan(_:atFrame:)``) and cut where it ended
/// (``clipEnded(_:frames:)``); a growing ladder lists its subtitle segments as its rungs list
/// theirs (``list(frames:)``), each written once and whole before the playlist names it.
/// Called from the pipeline's thread and the rungs' (hence the lock).
final class CaptionPublisher: @unchecked Sendable {
    private let plan: TranscodePlan
    private let layout: OutputLayout
    /// The tracks by language, in the order the upload first names each language.
    private let languages: [(language: String, sources: [CaptionSource])]
    /// Where the video's first frame is on the fMP4 timeline (seconds), which a cue at 0 is shown with.
    private let firstPTS: Double
    private let lock = NSLock()
    private var placements: [Int: CaptionTimeline.Placement] = [:]
    /// Subtitle segments written so far (the same for every language).
    private var written = 0

    init?(_ captions: [CaptionSource], plan: TranscodePlan, layout: OutputLayout, firstPTS: Double) throws {
        guard !captions.isEmpty else { return nil }
        var order: [String] = []
        for caption in captions where !order.contains(caption.language) { order.append(caption.language) }
        languages = order.map { language in (language, captions.filter { $0.language == language }) }
        self.plan = plan
        self.layout = layout
        self.firstPTS = firstPTS
        for language in order {
            let directory = "\(layout.directory)/\(OutputLayout.subtitlesDirectoryName(language))"
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw TranscodeError.writeFailed(directory, error)
            }
        }
    }

    /// Clip `index`'s first kept frame is output frame `atFrame`; until it ends, it is taken to
    /// run as long as the plan expects.
    func clipBegan(_ index: Int, atFrame: Int) {
        let clip = plan.clips[index], rate = Double(plan.frameRate)
        let from = Double(clip.startFrame) / rate
        let to = clip.estimatedSeconds > 0 ? from + clip.estimatedSeconds : clip.endFrame.map { Double($0) / rate } ?? .infinity
        lock.withLock { placements[index] = .init(from: from, to: to, at: Double(atFrame) / rate) }
    }

    /// Clip `index` put `frames` frames on the timeline.
    func clipEnded(_ index: Int, frames: Int) {
        lock.withLock {
            guard var placement = placements[index] else { return }
            placement.to = placement.from + Double(frames) / Double(plan.frameRate)
            placements[index] = placement
        }
    }

    /// The rungs list `frames` frames: the subtitle segments up to there are written, then each playlist (`EVENT`).
    func list(frames: Int) throws {
        try lock.withLock { _ = try write(frames: frames, ended: false) }
    }

    /// The video ended at `frames` frames: the last segments, `VOD` playlists, each track whole;
    /// what the manifest and the master say of them.
    func finish(frames: Int) throws -> [ReadyManifest.Caption] {
        try lock.withLock {
            let tracks = try write(frames: frames, ended: true)
            return try zip(languages, tracks).map { language, track in
                let caption = ReadyManifest.Caption(language.sources[0], track: track)
                try DurableFile.replace("\(layout.directory)/\(caption.track)", with: Data(track.webVTT.utf8))
                return caption
            }
        }
    }

    /// What the master lists before the end (a growing ladder's): the tracks as they will be published.
    var planned: [ReadyManifest.Caption] {
        languages.map { ReadyManifest.Caption($0.sources[0], track: CaptionTrack(cues: [])) }
    }

    /// Writes what is new of each language's segments, and its playlist; returns each language's track.
    private func write(frames: Int, ended: Bool) throws -> [CaptionTrack] {
        let rate = Double(plan.frameRate)
        var boundaries = [0.0]
        for count in plan.segmentFrameCounts(totalFrames: frames) { boundaries.append(boundaries.last! + Double(count) / rate) }
        let tracks = languages.map { track($0.sources, frames: ended ? frames : nil) }
        for ((language, _), track) in zip(languages, tracks) {
            let segments = CaptionSegments(track, boundaries: boundaries, firstPTS: firstPTS, ended: ended)
            let directory = "\(layout.directory)/\(OutputLayout.subtitlesDirectoryName(language))"
            // A segment listed once never changes under its name (caches keep it a year).
            for (name, text) in segments.files.dropFirst(written) {
                try DurableFile.replace("\(directory)/\(name)", with: Data(text.utf8))
            }
            try DurableFile.replace("\(directory)/index.m3u8", with: Data(segments.playlist.utf8))
        }
        written = boundaries.count - 1
        return tracks
    }

    /// One language's cues on the output timeline: each clip's placed, the whole video's as
    /// given, cut at the end once it is known (`frames`).
    private func track(_ sources: [CaptionSource], frames: Int?) -> CaptionTrack {
        let placed = sources.map { source in
            guard let clip = source.clip else { return source.track.cues }
            guard let placement = placements[clip] else { return [] }  // not reached (cut at the duration limit)
            return CaptionTimeline.place(source.track, placement)
        }
        return CaptionTimeline.merge(placed, duration: frames.map { Double($0) / Double(plan.frameRate) } ?? .infinity)
    }
}
