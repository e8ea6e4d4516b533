internal import CFFmpeg

/// Owns an `AVAudioFifo` of planar-float samples: decoded audio waits here until the video
/// decides how much of it belongs to the timeline.
final class AudioFIFO {
    private let fifo: OpaquePointer
    let sampleRate: Int
    let channels: Int

    init(sampleRate: Int, channels: Int) {
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, Int32(channels), Int32(sampleRate)) else {
            fatalError("av_audio_fifo_alloc: out of memory")
        }
        self.fifo = fifo
        self.sampleRate = sampleRate
        self.channels = channels
    }

    deinit { av_audio_fifo_free(fifo) }

    /// Samples held.
    var count: Int { Int(av_audio_fifo_size(fifo)) }

    /// Appends a frame's samples (the frame must be planar float with `channels` channels).
    func write(_ frame: Frame) throws {
        let written = cff_fifo_write(fifo, frame.pointer)
        guard written >= 0 else { throw TranscodeError.internalFailure("audio FIFO write: \(AVResult.message(written))") }
    }

    /// Discards everything held.
    func drop() throws {
        let dropped = av_audio_fifo_drain(fifo, av_audio_fifo_size(fifo))
        guard dropped >= 0 else { throw TranscodeError.internalFailure("audio FIFO drain: \(AVResult.message(dropped))") }
    }

    /// Removes up to `samples` samples from the front and returns them as a frame stamped `pts`.
    func read(_ samples: Int, pts: Int64) throws -> Frame {
        let frame = try makeFrame(samples: min(samples, count), pts: pts)
        let read = cff_fifo_read(fifo, frame.pointer)
        guard read >= 0 else { throw TranscodeError.internalFailure("audio FIFO read: \(AVResult.message(read))") }
        return frame
    }

    /// Copies `samples` samples starting at `offset` without removing them.
    func peek(_ samples: Int, at offset: Int, pts: Int64) throws -> Frame {
        let frame = try makeFrame(samples: samples, pts: pts)
        let read = cff_fifo_peek_at(fifo, frame.pointer, Int32(offset))
        guard read >= 0 else { throw TranscodeError.internalFailure("audio FIFO peek: \(AVResult.message(read))") }
        return frame
    }

    /// A frame of `samples` samples of silence stamped `pts`.
    func silence(_ samples: Int, pts: Int64) throws -> Frame {
        let frame = try makeFrame(samples: samples, pts: pts)
        cff_frame_silence(frame.pointer)
        return frame
    }

    private func makeFrame(samples: Int, pts: Int64) throws -> Frame {
        let frame = Frame()
        let allocated = cff_frame_alloc_audio(frame.pointer, Int32(sampleRate), Int32(channels), Int32(max(1, samples)))
        guard allocated >= 0 else { throw TranscodeError.internalFailure("audio frame: \(AVResult.message(allocated))") }
        frame.pointer.pointee.nb_samples = Int32(samples)
        frame.pointer.pointee.pts = pts
        frame.pointer.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        return frame
    }
}
