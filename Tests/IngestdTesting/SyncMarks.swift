import Foundation

/// Sync marks: clips made with a white flash and a 1 kHz beep at the same instant, and the
/// ffmpeg-decoded measurements that find them again in an output.
public enum SyncMarks {
    /// ffmpeg arguments for a clip with a flash + beep at `mark` seconds (beep omitted without audio).
    public static func clip(width: Int, height: Int, fps: String, seconds: Double, mark: Double = 1,
                     sampleRate: Int? = 48000, channels: Int = 2, video: [String], audio: [String] = ["-c:a", "aac"],
                     extraFilter: String = "") -> [String] {
        let flash = "drawbox=c=white:t=fill:enable='between(t,\(mark),\(mark + 0.099))'"
        var arguments = ["-f", "lavfi", "-i", "color=c=0x101010:s=\(width)x\(height):r=\(fps):d=\(seconds),\(flash)\(extraFilter)"]
        if let sampleRate {
            let tone = "if(between(t\\,\(mark)\\,\(mark + 0.1))\\,0.5*sin(2*PI*1000*t)\\,0)"
            let expression = Array(repeating: tone, count: channels).joined(separator: "|")
            arguments += ["-f", "lavfi", "-i", "aevalsrc=\(expression):s=\(sampleRate):d=\(seconds)"] + audio
        }
        return arguments + video
    }

    /// Start times of white flashes (mean luma jumps above `threshold`), in seconds at `fps`.
    public static func flashes(_ path: String, fps: Double = 30, threshold: Double = 60) throws -> [Double] {
        let result = try raw(["-i", path, "-map", "0:v", "-vf", "scale=8:8,format=gray", "-f", "rawvideo", "-"])
        let frames = stride(from: 0, to: result.count - 63, by: 64).map { start in
            Double(result[start..<start + 64].reduce(0) { $0 + Int($1) }) / 64
        }
        return frames.indices.dropFirst().filter { frames[$0] > threshold && frames[$0 - 1] <= threshold }.map { Double($0) / fps }
    }

    /// Onsets of 1 kHz beeps (through a narrow band-pass, so music under them does not count: the
    /// first sample above a quarter of the loudest, after ≥ 0.2 s without one). The filter delays
    /// the onset by ~2 ms.
    public static func beeps(_ path: String, sampleRate: Double = 48000) throws -> [Double] {
        let samples = try pcm(path, sampleRate: sampleRate, filter: "bandpass=f=1000:width_type=q:width=20")
        let peak = samples.lazy.map(abs).max() ?? 0
        guard peak > 0 else { return [] }
        var onsets: [Double] = [], last = -Int.max / 2
        for (index, sample) in samples.enumerated() where abs(sample) > peak / 4 {
            if index - last > Int(sampleRate / 5) { onsets.append(Double(index) / sampleRate) }
            last = index
        }
        return onsets
    }

    /// RMS of the decoded mono mix between two times.
    public static func rms(_ path: String, from start: Double, to end: Double, sampleRate: Double = 48000) throws -> Double {
        let samples = try pcm(path, sampleRate: sampleRate)
        let range = Int(start * sampleRate)..<min(samples.count, Int(end * sampleRate))
        guard !range.isEmpty else { return 0 }
        return (samples[range].reduce(0) { $0 + Double($1) * Double($1) } / Double(range.count)).squareRoot()
    }

    public static func pcm(_ path: String, sampleRate: Double, filter: String = "anull") throws -> [Float] {
        let data = try raw(["-i", path, "-map", "0:a", "-af", filter, "-ac", "1", "-ar", String(Int(sampleRate)), "-f", "f32le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    private static func raw(_ arguments: [String]) throws -> Data {
        let out = Paths.scratch("raw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try Tool.run("sh", ["-c", "ffmpeg -v error \(arguments.map { "'\($0)'" }.joined(separator: " ")) > '\(out)'"])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: result.stderr) }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }
}
