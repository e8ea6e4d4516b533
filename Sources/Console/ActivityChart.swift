import Foundation
import Ingest

/// The overview's charts as server-rendered SVG (no script, no style: the CSP allows neither
/// inline). Each series is its own labelled strip, so none is told by colour alone; every
/// bucket carries its figures in a `<title>` (the browser's hover) and in `data-` attributes.
struct ActivityChart {
    let activity: JobActivity
    static let width = 720.0, strip = 54.0, left = 44.0

    /// The window's strips: published, rejected, failed; time to playable (p50 solid, p95
    /// dashed); queue depth.
    var svg: String {
        let buckets = activity.buckets
        var parts = ["published", "rejected", "failed"].map { series in
            bars(series, buckets.map { Double(value(series, $0.tally)) })
        }
        parts.append(playable(buckets))
        parts.append(bars("queued", buckets.map { Double($0.depth ?? 0) }, label: "jobs queued"))
        return parts.joined(separator: "\n") + axis
    }

    func value(_ series: String, _ tally: ActivityTally) -> Int {
        switch series {
        case "published": tally.published
        case "rejected": tally.rejected
        default: tally.failed
        }
    }

    var barWidth: Double { (Self.width - Self.left) / Double(activity.buckets.count) }

    /// One strip of bars, highest value on its scale.
    func bars(_ series: String, _ values: [Double], label: String? = nil) -> String {
        let top = max(1, values.max() ?? 0), height = Self.strip - 14
        let per = series == "queued" ? "at the end of each \(stepName)" : "per \(stepName)"
        var svg = header(series, label: "\(label ?? series) \(per): up to \(Self.number(top))")
        for (index, value) in values.enumerated() {
            let x = Self.left + Double(index) * barWidth, h = value / top * height
            svg += "<g class=\"bucket\"><title>\(title(index)): \(Self.number(value)) \(label ?? series)</title>"
            svg += "<rect class=\"hover\" x=\"\(f(x))\" y=\"12\" width=\"\(f(barWidth))\" height=\"\(f(height))\" fill=\"transparent\"/>"
            if value > 0 {
                svg += "<rect data-start=\"\(ConsolePages.time(activity.buckets[index].start))\" data-value=\"\(Self.number(value))\" "
                    + "x=\"\(f(x + 0.5))\" y=\"\(f(12 + height - h))\" width=\"\(f(max(1, barWidth - 1)))\" height=\"\(f(h))\" fill=\"\(Self.fill[series] ?? "#3a4560")\"/>"
            }
            svg += "</g>"
        }
        return svg + "</svg>"
    }

    /// Time to playable: p50 a solid line, p95 a dashed one, each labelled at its last point.
    func playable(_ buckets: [JobActivity.Bucket]) -> String {
        let top = max(1, buckets.compactMap(\.tally.playableP95).max() ?? 0), height = Self.strip - 14
        var svg = header("playable", label: "time to playable, s (p50 solid, p95 dashed): up to \(Self.seconds(top))")
        for (key, path, dash) in [("p50", \ActivityTally.playableP50, ""), ("p95", \ActivityTally.playableP95, " stroke-dasharray=\"4 3\"")] {
            let points = buckets.enumerated().compactMap { index, bucket in
                bucket.tally[keyPath: path].map { (Self.left + (Double(index) + 0.5) * barWidth, 12 + height - $0 / top * height) }
            }
            guard let last = points.last else { continue }
            let d = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            svg += "<polyline data-series=\"\(key)\" points=\"\(d)\" fill=\"none\" stroke=\"#1d2330\" stroke-width=\"1.5\"\(dash)/>"
            svg += points.count == 1 ? "<circle cx=\"\(f(last.0))\" cy=\"\(f(last.1))\" r=\"2\" fill=\"#1d2330\"/>" : ""
            let y = key == "p50" ? min(last.1 + 10, Self.strip - 3) : max(last.1 - 3, 20)
            svg += "<text x=\"\(f(min(last.0 + 3, Self.width - 22)))\" y=\"\(f(y))\" font-size=\"9\">\(key)</text>"
        }
        for (index, bucket) in buckets.enumerated() where bucket.tally.playable > 0 {
            let t = bucket.tally
            svg += "<g class=\"bucket\"><title>\(title(index)): \(t.playable) playable, p50 \(Self.seconds(t.playableP50 ?? 0)), "
                + "p95 \(Self.seconds(t.playableP95 ?? 0))</title><rect x=\"\(f(Self.left + Double(index) * barWidth))\" y=\"12\" "
                + "width=\"\(f(barWidth))\" height=\"\(f(height))\" fill=\"transparent\"/></g>"
        }
        return svg + "</svg>"
    }

    func header(_ series: String, label: String) -> String {
        "<svg class=\"chart\" data-series=\"\(series)\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.strip))\" role=\"img\" aria-label=\"\(label)\">"
            + "<text x=\"0\" y=\"9\" font-size=\"10\" fill=\"#5a6478\">\(label)</text>"
            + "<line x1=\"\(Self.left)\" y1=\"\(Self.strip - 2)\" x2=\"\(Self.width)\" y2=\"\(Self.strip - 2)\" stroke=\"#c5cad4\"/>"
    }

    /// The time axis: the window's start, middle and end, in UTC.
    var axis: String {
        let start = activity.start, span = TimeInterval(activity.window.step * activity.buckets.count)
        let marks = [(Self.left, start, "start"), ((Self.left + Self.width) / 2, start + span / 2, "middle"), (Self.width, start + span, "end")]
        let labels = marks.map { x, date, anchor in
            "<text x=\"\(f(x))\" y=\"10\" font-size=\"9\" fill=\"#5a6478\" text-anchor=\"\(anchor)\">\(Self.clock(date))</text>"
        }
        return "<svg class=\"chart axis\" viewBox=\"0 0 \(Int(Self.width)) 12\" aria-hidden=\"true\">\(labels.joined())</svg>"
    }

    /// A tiny strip of one host's published attempts, for its row.
    static func sparkline(_ host: JobActivity.Host) -> String {
        let values = host.buckets.map { Double($0.tally.published) }, top = max(1, values.max() ?? 0)
        let step = 120.0 / Double(max(1, values.count))
        let bars = values.enumerated().filter { $0.element > 0 }.map { index, value in
            "<rect x=\"\(String(format: "%.1f", Double(index) * step))\" y=\"\(String(format: "%.1f", 16 - value / top * 16))\" "
                + "width=\"\(String(format: "%.1f", max(1, step - 0.3)))\" height=\"\(String(format: "%.1f", value / top * 16))\" fill=\"#1f7a3a\"/>"
        }
        return "<svg class=\"spark\" viewBox=\"0 0 120 16\" width=\"120\" height=\"16\" role=\"img\" aria-label=\"published per bucket\">\(bars.joined())</svg>"
    }

    var stepName: String { activity.window == .hour ? "minute" : "15 min" }

    func title(_ index: Int) -> String {
        let start = activity.buckets[index].start
        return "\(Self.clock(start))–\(Self.clock(start + TimeInterval(activity.window.step))) UTC"
    }

    static let fill = ["published": "#1f7a3a", "rejected": "#a15c00", "failed": "#b3261e", "queued": "#3a4560"]

    func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func number(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value) }

    static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    static func clock(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970) % 86_400
        return String(format: "%02d:%02d", seconds / 3_600, seconds % 3_600 / 60)
    }
}
