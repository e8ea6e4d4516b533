/// The WebVTT track that maps time ranges to cells of the storyboard sprite.
public enum Storyboard {
    public static func webVTT(sprite: String, duration: Double, storyboard: TranscodePlan.PlannedStoryboard) -> String {
        var lines = ["WEBVTT", ""]
        let cells = min(storyboard.columns * storyboard.rows,
                        max(1, Int((duration / Double(storyboard.intervalSeconds)).rounded(.up))))
        for cell in 0..<cells {
            let start = Double(cell * storyboard.intervalSeconds)
            let end = min(duration, start + Double(storyboard.intervalSeconds))
            let x = (cell % storyboard.columns) * storyboard.cellWidth
            let y = (cell / storyboard.columns) * storyboard.cellHeight
            lines.append("\(timestamp(start)) --> \(timestamp(end))")
            lines.append("\(sprite)#xywh=\(x),\(y),\(storyboard.cellWidth),\(storyboard.cellHeight)")
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    static func timestamp(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded())
        return String(format: "%02d:%02d:%02d.%03d", millis / 3_600_000, millis / 60_000 % 60, millis / 1000 % 60, millis % 1000)
    }
}
