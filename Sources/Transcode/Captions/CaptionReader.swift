import Foundation

/// Reads a WebVTT or SRT file into a ``CaptionTrack``: UTF-8 only (a BOM and CRLF or CR line
/// ends accepted); a WebVTT file is one whose first line is `WEBVTT`, anything else is read as
/// SRT. Refused: bytes that are not UTF-8 or hold control characters, a file or cue count or
/// line over the limits, a timestamp that cannot be read or is past the limit, a cue out of
/// time order, a cue with more lines than allowed. Removed (as a WebVTT player ignores them):
/// `NOTE`, `STYLE` and `REGION` blocks, cue settings, cue identifiers, a cue that ends before
/// it starts, and any tag that is not one of WebVTT's (`c`, `i`, `b`, `u`, `v`, `lang`,
/// `ruby`, `rt`, timestamps) with its attributes, so no markup a browser would run survives.
public enum CaptionReader {
    public static func read(_ data: Data, limits: CaptionTrack.Limits = .init()) throws(CaptionTrack.Refusal) -> CaptionTrack {
        guard data.count <= limits.maxBytes else { throw refuse("\(data.count) bytes, over the limit of \(limits.maxBytes)") }
        guard var text = String(validating: data, as: UTF8.self) else { throw refuse("not UTF-8 text") }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        if let control = text.unicodeScalars.first(where: { ($0.value < 0x20 && ![0x09, 0x0A, 0x0D].contains($0.value)) || $0.value == 0x7F }) {
            throw refuse("a control character (U+\(String(format: "%04X", control.value))) in the text")
        }
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let webVTT = lines.first.map { $0 == "WEBVTT" || $0.hasPrefix("WEBVTT ") || $0.hasPrefix("WEBVTT\t") } ?? false
        var cues: [CaptionTrack.Cue] = []
        // A WebVTT header runs to the first blank line or timing line (`WEBVTT`, then metadata such as X-TIMESTAMP-MAP).
        let header = webVTT ? lines.prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.contains("-->") }.count : 0
        for block in blocks(Array(lines.dropFirst(header)), after: header) {
            guard let cue = try self.cue(block, limits: limits, webVTT: webVTT) else { continue }
            if let last = cues.last, cue.start < last.start {
                throw refuse("line \(block.first!.number): the cue at \(CaptionTrack.timestamp(cue.start)) comes after one at \(CaptionTrack.timestamp(last.start)): cues must be in time order")
            }
            cues.append(cue)
            guard cues.count <= limits.maxCues else { throw refuse("more than \(limits.maxCues) cues") }
        }
        let track = CaptionTrack(cues: cues)
        // Escaping grows the text: what is published must still fit the limit it is read with.
        guard track.webVTT.utf8.count <= limits.maxBytes else { throw refuse("over the limit of \(limits.maxBytes) bytes once its markup is cleaned") }
        return track
    }

    static func refuse(_ reason: String) -> CaptionTrack.Refusal { CaptionTrack.Refusal(reason: reason) }

    /// Reads `file` as ``read(_:limits:)`` does, refusing one over the byte limit before reading it.
    public static func read(_ file: SourceFile, limits: CaptionTrack.Limits = .init()) throws(CaptionTrack.Refusal) -> CaptionTrack {
        guard file.size <= Int64(limits.maxBytes) else { throw refuse("\(file.size) bytes, over the limit of \(limits.maxBytes)") }
        guard let data = file.contents() else { throw refuse("unreadable") }
        return try read(data, limits: limits)
    }

    /// The file's blocks: runs of non-empty lines, each with its line number in the file (1-based;
    /// `lines` start after `skipped` lines of it).
    static func blocks(_ lines: [String], after skipped: Int) -> [[(number: Int, text: String)]] {
        var blocks: [[(number: Int, text: String)]] = [], current: [(number: Int, text: String)] = []
        for (index, line) in lines.enumerated() {
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                if !current.isEmpty { blocks.append(current) }
                current = []
            } else {
                current.append((skipped + index + 1, line))
            }
        }
        if !current.isEmpty { blocks.append(current) }
        return blocks
    }

    /// A block's cue, or nil for what is removed (a header, a note, a style, a cue ending before it starts).
    static func cue(_ block: [(number: Int, text: String)], limits: CaptionTrack.Limits, webVTT: Bool) throws(CaptionTrack.Refusal) -> CaptionTrack.Cue? {
        let first = block[0].text
        if webVTT, first == "NOTE" || first.hasPrefix("NOTE ") || first.hasPrefix("NOTE\t") || first == "STYLE" || first == "REGION" { return nil }
        // The timing line: the first, or the second after an identifier (SRT's counter, WebVTT's id).
        guard let timing = block.prefix(2).firstIndex(where: { $0.text.contains("-->") }) else {
            throw refuse("line \(block[0].number): a block with no `start --> end` timing line")
        }
        let line = block[timing]
        let parts = line.text.components(separatedBy: "-->")
        guard parts.count == 2 else { throw refuse("line \(line.number): one `-->` per timing line") }
        let endField = parts[1].trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        guard let start = seconds(parts[0].trimmingCharacters(in: .whitespaces)), let end = seconds(endField) else {
            throw refuse("line \(line.number): \(line.text.prefix(80).debugDescription) is not `HH:MM:SS.mmm --> HH:MM:SS.mmm`")
        }
        guard start <= limits.maxSeconds, end <= limits.maxSeconds else {
            throw refuse("line \(line.number): a time past \(Int(limits.maxSeconds)) s")
        }
        let text = Array(block.dropFirst(timing + 1))
        guard text.count <= limits.maxLinesPerCue else { throw refuse("line \(line.number): a cue of \(text.count) lines, over \(limits.maxLinesPerCue)") }
        // The limit holds for the line as published (escaped `<` `>` `&` grow it), so what is
        // written reads back. A line left blank by the cleaning goes (it would end the cue).
        var published: [String] = []
        for row in text {
            let line = CaptionMarkup.clean(row.text)
            guard line.utf8.count <= limits.maxLineBytes else {
                throw refuse("line \(row.number): \(line.utf8.count) bytes once its markup is cleaned, over the limit of \(limits.maxLineBytes) a line")
            }
            if !line.trimmingCharacters(in: .whitespaces).isEmpty { published.append(line) }
        }
        let cleaned = published.joined(separator: "\n")
        guard end > start, !cleaned.isEmpty else { return nil }
        return CaptionTrack.Cue(start: start, end: end, text: cleaned)
    }

    /// `HH:MM:SS.mmm`, `MM:SS.mmm` (WebVTT) or `HH:MM:SS,mmm` (SRT), in seconds; nil otherwise.
    static func seconds(_ text: String) -> Double? {
        let clock = text.replacingOccurrences(of: ",", with: ".").split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(clock.count) else { return nil }
        let fraction = clock.last!.split(separator: ".", omittingEmptySubsequences: false)
        guard fraction.count == 2, fraction[0].count == 2, fraction[1].count == 3 else { return nil }
        let digits = clock.dropLast().map(String.init) + fraction.map(String.init)
        guard digits.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
        let values = digits.compactMap { Int($0) }
        let (hours, minutes, whole, millis) = clock.count == 3 ? (values[0], values[1], values[2], values[3]) : (0, values[0], values[1], values[2])
        guard minutes < 60, whole < 60, clock.count == 2 ? digits[0].count == 2 : digits[1].count == 2 else { return nil }
        return Double(hours * 3600 + minutes * 60 + whole) + Double(millis) / 1000
    }
}
