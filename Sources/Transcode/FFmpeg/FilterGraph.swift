internal import CFFmpeg

/// A configured libavfilter graph. Owns the `AVFilterGraph` (which owns its filters).
///
/// Built from a textual description whose open inputs are labelled `in0`, `in1`, … and whose
/// open outputs are labelled `out0`, `out1`, …; a buffer source or sink is attached to each.
final class FilterGraph {
    struct Source {
        /// `buffer` or `abuffer`.
        var filter: String
        /// Arguments of the source filter (size, format, time base…).
        var arguments: String
    }

    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var sources: [UnsafeMutablePointer<AVFilterContext>] = []
    private var sinks: [UnsafeMutablePointer<AVFilterContext>] = []
    let description: String

    /// - Parameters:
    ///   - sinks: sink filter names (`buffersink`/`abuffersink`), one per `outN` label.
    init(description: String, sources sourceSpecs: [Source], sinks sinkNames: [String], threads: Int = 0) throws {
        self.description = description
        guard let graph = avfilter_graph_alloc() else { throw TranscodeError.internalFailure("avfilter_graph_alloc") }
        self.graph = graph
        graph.pointee.nb_threads = Int32(threads)

        var outputs: UnsafeMutablePointer<AVFilterInOut>? = nil  // open outputs of the sources
        var inputs: UnsafeMutablePointer<AVFilterInOut>? = nil   // open inputs of the sinks
        defer {
            avfilter_inout_free(&outputs)
            avfilter_inout_free(&inputs)
        }
        for (index, spec) in sourceSpecs.enumerated().reversed() {
            let context = try create(spec.filter, name: "in\(index)", arguments: spec.arguments)
            sources.insert(context, at: 0)
            outputs = link(context, label: "in\(index)", next: outputs)
        }
        for (index, filter) in sinkNames.enumerated().reversed() {
            let context = try create(filter, name: "out\(index)", arguments: nil)
            sinks.insert(context, at: 0)
            inputs = link(context, label: "out\(index)", next: inputs)
        }
        let parsed = avfilter_graph_parse_ptr(graph, description, &inputs, &outputs, nil)
        guard parsed >= 0 else {
            throw TranscodeError.internalFailure("filter graph '\(description)': \(AVResult.message(parsed))")
        }
        let configured = avfilter_graph_config(graph, nil)
        guard configured >= 0 else {
            throw TranscodeError.internalFailure("filter graph '\(description)': \(AVResult.message(configured))")
        }
    }

    deinit { avfilter_graph_free(&graph) }

    private func create(_ filter: String, name: String, arguments: String?) throws -> UnsafeMutablePointer<AVFilterContext> {
        var context: UnsafeMutablePointer<AVFilterContext>? = nil
        let result = avfilter_graph_create_filter(&context, avfilter_get_by_name(filter), name, arguments, nil, graph)
        guard result >= 0, let context else {
            throw TranscodeError.internalFailure("cannot create \(filter) (\(arguments ?? "")): \(AVResult.message(result))")
        }
        return context
    }

    private func link(_ context: UnsafeMutablePointer<AVFilterContext>, label: String,
                      next: UnsafeMutablePointer<AVFilterInOut>?) -> UnsafeMutablePointer<AVFilterInOut>? {
        let entry = avfilter_inout_alloc()!
        entry.pointee.name = av_strdup(label)
        entry.pointee.filter_ctx = context
        entry.pointee.pad_idx = 0
        entry.pointee.next = next
        return entry
    }

    /// Pushes a frame into source `index`. The graph takes a new reference; `frame` is untouched.
    func push(_ frame: Frame, into index: Int = 0) throws {
        let result = av_buffersrc_add_frame_flags(sources[index], frame.pointer, Int32(AV_BUFFERSRC_FLAG_KEEP_REF))
        guard result >= 0 else {
            throw TranscodeError.internalFailure("filter input rejected a frame: \(AVResult.message(result))")
        }
    }

    /// Ends source `index` at `pts` (in the source's time base), so `fps` emits the last frame.
    func close(_ index: Int = 0, at pts: Int64) throws {
        let result = av_buffersrc_close(sources[index], pts, UInt32(AV_BUFFERSRC_FLAG_PUSH))
        guard result >= 0 else { throw TranscodeError.internalFailure("closing filter input: \(AVResult.message(result))") }
    }

    /// Pulls the next frame from sink `index`.
    func pull(_ index: Int, into frame: Frame) throws -> StepResult {
        frame.unref()
        return try AVResult.step(av_buffersink_get_frame(sinks[index], frame.pointer)) {
            .internalFailure("filter graph output: \($0)")
        }
    }

    func sinkTimeBase(_ index: Int) -> AVRational { av_buffersink_get_time_base(sinks[index]) }

    /// Makes an audio sink return frames of exactly `samples` samples (AAC needs 1024).
    func setFrameSize(_ index: Int, samples: Int) {
        av_buffersink_set_frame_size(sinks[index], UInt32(samples))
    }
}

extension FilterGraph {
    /// A one-input audio graph whose `abuffer` matches `frame` (its rate, format, layout and time base).
    static func audio(description: String, firstFrame frame: Frame) throws -> FilterGraph {
        let f = frame.pointer.pointee
        var layout = [CChar](repeating: 0, count: 64)
        cff_frame_layout_describe(frame.pointer, &layout, layout.count)
        let format = av_get_sample_fmt_name(AVSampleFormat(rawValue: f.format)).map { String(cString: $0) } ?? "fltp"
        let arguments = "time_base=\(f.time_base.num)/\(f.time_base.den):sample_rate=\(f.sample_rate)"
            + ":sample_fmt=\(format):channel_layout=\(String(decoding: layout.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
        return try FilterGraph(description: description, sources: [Source(filter: "abuffer", arguments: arguments)],
                               sinks: ["abuffersink"])
    }
}

extension FilterGraph.Source {
    /// A `buffer` for video frames like `frame` (size, pixel format, and pixel aspect unless
    /// given; square when unset), timestamps in `timeBase`.
    static func video(like frame: Frame, timeBase: AVRational, pixelAspect: AVRational? = nil) -> Self {
        let f = frame.pointer.pointee
        let sar = pixelAspect ?? (f.sample_aspect_ratio.num > 0 ? f.sample_aspect_ratio : AVRational(num: 1, den: 1))
        return .init(filter: "buffer", arguments: "video_size=\(f.width)x\(f.height):pix_fmt=\(f.format)"
                     + ":time_base=\(timeBase.num)/\(timeBase.den):pixel_aspect=\(sar.num)/\(sar.den)")
    }

    /// An `abuffer` for audio already in the output format: planar float stereo at `sampleRate`,
    /// timestamps counted in samples.
    static func planarStereo(sampleRate rate: Int) -> Self {
        .init(filter: "abuffer", arguments: "time_base=1/\(rate):sample_rate=\(rate):sample_fmt=fltp:channel_layout=stereo")
    }
}
