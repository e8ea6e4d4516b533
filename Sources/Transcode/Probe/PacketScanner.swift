internal import CFFmpeg

extension InputContext {
    /// Most frames a scan reads before giving up (four minutes at 60 fps; uploads are far shorter).
    static let maxScannedFrames = 14_400

    /// Reads every packet of H.264 stream `index` without decoding it: presentation times, IDR
    /// pictures (from the NAL unit types) and sizes. Nil — the stream cannot be copied as it is —
    /// when it is not H.264 with avcC (length-prefixed) samples, or any packet is empty, is marked
    /// for discarding (an edit list's tail), lacks timestamps, has a decode time that does not
    /// increase or is after its presentation time, carries parameter sets or new extradata (a
    /// mid-stream change of format), cannot be read, or there are implausibly many.
    /// Consumes the input: call it last.
    func scanH264(stream index: Int) -> VideoPacketScan? {
        let st = stream(index)
        let par = st.pointee.codecpar.pointee
        let rate = av_guess_frame_rate(format, st, nil)
        guard par.codec_id == AV_CODEC_ID_H264, rate.num > 0, rate.den > 0,
              let extradata = par.extradata, par.extradata_size >= 7, extradata[0] == 1 else { return nil }
        let lengthSize = Int(extradata[4] & 3) + 1
        let timeBase = av_q2d(st.pointee.time_base)
        let start = Double(startTime) / Double(cff_time_base())
        var times: [Double] = [], idrs: [Double] = [], sizes: [Int] = []
        let packet = Packet()
        var lastDTS = Int64.min
        while true {
            guard let more = try? read(into: packet) else { return nil }
            guard more else { break }
            guard packet.streamIndex == index else { continue }
            let p = packet.pointer.pointee
            let pts = p.pts, dts = p.dts
            guard pts != cff_nopts(), dts != cff_nopts(), dts > lastDTS, dts <= pts, times.count < Self.maxScannedFrames,
                  p.flags & cff_pkt_flag_discard() == 0, p.side_data_elems == 0,
                  let idr = Self.hasIDR(p, lengthSize: lengthSize) else { return nil }
            lastDTS = dts
            let seconds = Double(pts) * timeBase - start
            times.append(seconds)
            sizes.append(Int(packet.pointer.pointee.size))
            if idr { idrs.append(seconds) }
        }
        guard let first = times.min() else { return nil }
        let sorted = times.sorted()
        let gaps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }
        // Bits in every run of one second's worth of frames, in the order the decoder gets them.
        let window = max(1, Int(av_q2d(rate).rounded()))
        var peakBits = 0, sum = 0
        for (i, size) in sizes.enumerated() {
            sum += size
            if i >= window { sum -= sizes[i - window] }
            peakBits = max(peakBits, sum * 8)
        }
        let windowSeconds = Double(min(window, sizes.count)) / av_q2d(rate)
        return VideoPacketScan(frames: times.count, firstFrameSeconds: first,
                               minFrameSeconds: gaps.min() ?? 0, maxFrameSeconds: gaps.max() ?? 0,
                               idrSeconds: idrs.sorted(), peakKbps: Int((Double(peakBits) / windowSeconds / 1000).rounded(.up)))
    }

    /// Whether a length-prefixed H.264 sample holds an IDR slice (NAL unit type 5); nil when it
    /// is empty, its NAL units do not exactly fill it, or it carries a parameter set (types 7, 8:
    /// the stream's format must stay the one in avcC).
    private static func hasIDR(_ packet: AVPacket, lengthSize: Int) -> Bool? {
        guard let data = packet.data, packet.size > 0 else { return nil }
        let size = Int(packet.size)
        var offset = 0, idr = false
        while offset < size {
            guard size - offset > lengthSize else { return nil }
            var length = 0
            for i in 0..<lengthSize { length = length << 8 | Int(data[offset + i]) }
            offset += lengthSize
            guard length > 0, length <= size - offset else { return nil }
            switch data[offset] & 0x1f {
            case 5: idr = true
            case 7, 8: return nil
            default: break
            }
            offset += length
        }
        return idr
    }
}
