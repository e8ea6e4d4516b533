import Foundation

/// Measures the finished outputs and writes `master.m3u8` (with other codecs, also one master per
/// codec) and `manifest.json`.
enum ManifestWriter {
    static func write(plan: TranscodePlan, layout: OutputLayout, result: PipelineResult, wallSeconds: Double,
                      uploadID: String?, metadata: [String: JSONValue], playback: String? = nil) throws -> ReadyManifest {
        var variants: [VariantStream] = []
        var iFrameStreams: [IFrameStream] = []
        var renditions: [ReadyManifest.Rendition] = []
        for rung in plan.allRungs {
            guard let codec = result.codecs[rung.directoryName] else {
                throw TranscodeError.internalFailure("\(rung.directoryName): no codec string")
            }
            let directory = layout.rungDirectory(rung)
            let text = try String(contentsOfFile: layout.playlist(rung), encoding: .utf8)
            let playlist = try MediaPlaylist(parsing: text)
            let sizes = try playlist.segments.map { try fileSize("\(directory)/\($0.uri)") }
            let bandwidth = RenditionBandwidth(playlist: playlist, sizes: sizes)
            let uri = "\(rung.directoryName)/index.m3u8"
            let codecs = "\(codec),mp4a.40.2"
            variants.append(VariantStream(uri: uri, bandwidth: bandwidth, codecs: codecs, width: rung.width,
                                          height: rung.height, frameRate: Double(plan.frameRate), videoCodec: rung.codec))
            let iFrames = try iFramePlaylist(playlist, directory: directory)
            try write(iFrames.render(), to: layout.iFramePlaylist(rung))
            let iFrameURI = "\(rung.directoryName)/\(OutputLayout.iFramePlaylistName)"
            iFrameStreams.append(IFrameStream(uri: iFrameURI, bandwidth: iFrames.bandwidth, codecs: codec,
                                              width: rung.width, height: rung.height, videoCodec: rung.codec))
            renditions.append(.init(name: rung.directoryName, playlist: uri, iFramePlaylist: iFrameURI, width: rung.width,
                                    height: rung.height, bandwidth: bandwidth.peak, averageBandwidth: bandwidth.average,
                                    codecs: codecs, segments: playlist.segments.count, videoCodec: rung.codec))
        }
        try write(MasterPlaylist.render(variants, iFrameStreams: iFrameStreams, captions: result.captions), to: layout.master)
        // With other codecs, each codec's ladder alone too: for players that switch between any
        // two variants they can decode, whatever the codec (Chromium's own HLS player refuses the
        // switch from AV1 to H.264 mid-stream), the app picks the master of a codec it knows the
        // device plays.
        var codecMasters: [String: String]?
        if !plan.codecRungs.isEmpty {
            codecMasters = [:]
            for codec in VideoCodec.allCases where variants.contains(where: { $0.videoCodec == codec }) {
                let name = OutputLayout.codecMasterName(codec)
                try write(MasterPlaylist.render(variants.filter { $0.videoCodec == codec },
                                                iFrameStreams: iFrameStreams.filter { $0.videoCodec == codec },
                                                captions: result.captions),
                          to: "\(layout.directory)/\(name)")
                codecMasters?[codec.rawValue] = name
            }
        }
        let top = plan.topRung
        let manifest = ReadyManifest(
            durationSeconds: result.videoSeconds,
            width: top.width,
            height: top.height,
            frameRate: plan.frameRate,
            master: "master.m3u8",
            codecMasters: codecMasters,
            renditions: renditions,
            audio: .init(codec: "aac", sampleRate: plan.audio.sampleRate, channels: plan.audio.channels,
                         clipSound: plan.audio.clipSound, music: plan.music != nil, durationSeconds: result.audioSeconds),
            mp4: OutputLayout.mp4Name,
            posters: plan.posters.map { .init(path: OutputLayout.posterName($0), width: $0.width, height: $0.height) },
            storyboard: .init(image: OutputLayout.storyboardImageName, track: "storyboard.vtt",
                              columns: plan.storyboard.columns, rows: plan.storyboard.rows,
                              intervalSeconds: plan.storyboard.intervalSeconds),
            preview: result.preview.map { preview in
                .init(path: OutputLayout.previewName, width: preview.written.width, height: preview.written.height,
                      frames: preview.written.frames, fps: preview.written.fps,
                      durationSeconds: preview.written.durationSeconds, bytes: preview.written.bytes,
                      startSeconds: preview.startSeconds)
            },
            uploadID: uploadID,
            sources: plan.clips.map(\.source),
            music: plan.music?.source,
            trimmedToLimit: result.trimmedToLimit,
            topRung: .init(mode: plan.topRungDecision.mode, reason: plan.topRungDecision.reason),
            preset: .init(name: plan.presetName, hash: plan.presetHash),
            timings: .init(wallSeconds: wallSeconds, speed: wallSeconds > 0 ? result.videoSeconds / wallSeconds : 0,
                           posterAtSeconds: result.posterSeconds),
            metadata: metadata,
            captions: result.captions.isEmpty ? nil : result.captions,
            playback: playback
        )
        try write(String(decoding: manifest.jsonData(), as: UTF8.self), to: layout.manifest)
        return manifest
    }

    /// The master of a ladder still being made (``TranscodeRequest/growing``): each variant's
    /// `BANDWIDTH` is its rung's cap (video and sound; 20 Mbit/s of video for an uncapped rung),
    /// an upper bound until the end replaces it with the measured one.
    static func writeGrowingMaster(plan: TranscodePlan, layout: OutputLayout, codecs: [String: String],
                                   captions: [ReadyManifest.Caption]) throws {
        let variants = try plan.writtenRungs.map { rung in
            guard let codec = codecs[rung.directoryName] else {
                throw TranscodeError.internalFailure("\(rung.directoryName): no codec string")
            }
            let cap = ((rung.isCapped ? rung.maxrateKbps : 20_000) + rung.audioBitrateKbps) * 1000
            return VariantStream(uri: "\(rung.directoryName)/index.m3u8", bandwidth: RenditionBandwidth(peak: cap, average: cap),
                                 codecs: "\(codec),mp4a.40.2", width: rung.width, height: rung.height,
                                 frameRate: Double(plan.frameRate), videoCodec: rung.codec)
        }
        try write(MasterPlaylist.render(variants, captions: captions), to: layout.master)
    }

    /// Indexes the IDR frame that starts each segment (every segment starts with one, by plan).
    private static func iFramePlaylist(_ playlist: MediaPlaylist, directory: String) throws -> IFramePlaylist {
        let map = playlist.map ?? OutputLayout.initSegmentName
        guard let header = FileManager.default.contents(atPath: "\(directory)/\(map)"),
              let track = FragmentIndex.videoTrackID(initSegment: [UInt8](header)) else {
            throw TranscodeError.internalFailure("\(directory)/\(map): no video track in the init segment")
        }
        let entries = try playlist.segments.map { segment in
            // The boxes that matter sit at the front: read 256 KiB, not the whole segment.
            let path = "\(directory)/\(segment.uri)"
            let handle = FileHandle(forReadingAtPath: path)
            defer { try? handle?.close() }
            guard let handle, let head = try? handle.read(upToCount: 256 << 10),
                  let range = FragmentIndex.firstSampleRange(segment: [UInt8](head), fileSize: try fileSize(path), trackID: track) else {
                throw TranscodeError.internalFailure("\(directory)/\(segment.uri): no video sample to index")
            }
            return IFramePlaylist.Entry(uri: segment.uri, offset: range.lowerBound, length: range.count, duration: segment.duration)
        }
        return IFramePlaylist(map: map, entries: entries)
    }

    private static func fileSize(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Replaces `path` whole (a growing video's master is already in view when the end rewrites it).
    private static func write(_ text: String, to path: String) throws {
        try DurableFile.replace(path, with: Data(text.utf8))
    }
}

extension ReadyManifest {
    /// Pretty, key-sorted JSON.
    public func jsonData() -> Data {
        (try? JSONEncoder.ingestd.encode(self)) ?? Data()
    }
}
