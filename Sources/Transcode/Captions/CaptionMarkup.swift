/// A cue line with only WebVTT's own cue markup: its tags (`c`, `i`, `b`, `u`, `v`, `lang`,
/// `ruby`, `rt` and timestamp tags) kept, with their classes and annotation (`<v Alice>`,
/// `<c.yellow>`) but never an attribute; every other tag (HTML, SRT's `<font>`, a script) is
/// dropped, its text kept; a `<` that starts no tag (`a < b`), a `>`, and a `&` that starts no
/// entity are escaped.
enum CaptionMarkup {
    static let tags: Set<String> = ["c", "i", "b", "u", "v", "lang", "ruby", "rt"]
    static let entities = ["&amp;", "&lt;", "&gt;", "&lrm;", "&rlm;", "&nbsp;"]

    static func clean(_ line: String) -> String {
        var out = "", rest = Substring(line)
        while let index = rest.firstIndex(where: { $0 == "<" || $0 == "&" || $0 == ">" }) {
            out += rest[..<index]
            rest = rest[index...]
            if rest.first == ">" {
                out += "&gt;"
                rest = rest.dropFirst()
            } else if rest.first == "&" {
                let entity = entities.first { rest.hasPrefix($0) }
                out += entity ?? "&amp;"
                rest = rest.dropFirst(entity?.count ?? 1)
            } else if let next = rest.dropFirst().first, next.isASCII, next.isLetter || next.isNumber || next == "/",
                      let close = rest.firstIndex(of: ">") {
                out += tag(String(rest[rest.index(after: rest.startIndex)..<close]))
                rest = rest[rest.index(after: close)...]
            } else {
                out += "&lt;"
                rest = rest.dropFirst()
            }
        }
        return out + rest
    }

    /// A tag's inside (between `<` and `>`) as it may be published, or nothing.
    static func tag(_ inside: String) -> String {
        let closing = inside.hasPrefix("/")
        let body = closing ? inside.dropFirst() : Substring(inside)
        // A timestamp tag: <00:01.500> or <00:00:01.500>.
        if !closing, CaptionReader.seconds(String(body)) != nil { return "<\(body)>" }
        let name = body.prefix { $0.isASCII && ($0.isLetter || $0.isNumber) }.lowercased()
        guard tags.contains(name) else { return "" }
        if closing { return "</\(name)>" }
        let after = body.dropFirst(name.count)
        // Classes (.yellow.big), letters and digits only; then `v`'s and `lang`'s annotation.
        var classes = ""
        var cursor = after
        while cursor.first == "." {
            let name = cursor.dropFirst().prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            guard !name.isEmpty else { break }
            classes += "." + name
            cursor = cursor.dropFirst(1 + name.count)
        }
        var annotation = ""
        if ["v", "lang"].contains(name), cursor.first == " " || cursor.first == "\t" {
            let kept = String(cursor.filter { !"<>&\"'=/".contains($0) }).trimmingCharacters(in: .whitespaces)
            annotation = kept.isEmpty ? "" : " " + kept
        }
        return "<\(name)\(classes)\(annotation)>"
    }
}

extension CaptionMarkup {
    /// A cleaned track's words as plain text: tags left out, entities read, a cue's lines joined
    /// by a space, a line per cue.
    static func words(of track: CaptionTrack) -> String {
        track.cues.map { cue in
            var text = "", inTag = false
            for character in cue.text {
                if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { text.append(character) }
            }
            for (entity, plain) in [("&lt;", "<"), ("&gt;", ">"), ("&nbsp;", " "), ("&lrm;", ""), ("&rlm;", ""), ("&amp;", "&")] {
                text = text.replacingOccurrences(of: entity, with: plain)
            }
            return text.replacingOccurrences(of: "\n", with: " ")
        }.joined(separator: "\n")
    }
}
