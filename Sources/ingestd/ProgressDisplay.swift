import Foundation
import Transcode

/// A one-line progress display on stderr: percent, bar, fps, speed, ETA.
final class ProgressDisplay {
    private let enabled: Bool
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ event: TranscodeEvent) {
        guard enabled, case .progress(let progress) = event else { return }
        let width = 24
        let filled = Int(progress.fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let eta = progress.etaSeconds.map { String(format: "%d:%02d", Int($0) / 60, Int($0) % 60) } ?? "--:--"
        let line = String(format: "\r\u{1B}[2K%3.0f%% [%@] %6.1f fps %5.2fx ETA %@  %.1f/%.1f s",
                          progress.fraction * 100, bar as NSString, progress.framesPerSecond, progress.speed,
                          eta as NSString, progress.outputSeconds, progress.totalSeconds)
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    func clear() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}
